#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let lane = T.lane_idx();
    out[lane] = T.ptx.shfl.sync.bfly(lane, 1, 12);
}
fn main() {}
