#[phaser::kernel(target = "sm_90a")]
fn k(flags: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    out[lane] = T.ptx.vote.sync.ballot(flags[lane]);
}
fn main() {}
