#[phaser::kernel(target = "sm_90a")]
fn k(data: &[u64], out: &mut [u64]) {
    let lane = T.lane_idx();
    out[lane] = T.ptx.shfl.sync.down(data[lane], 1);
}
fn main() {}
