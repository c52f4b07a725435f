#[phaser::kernel(target = "sm_90a")]
fn k(x: &[f32], out: &mut [f32]) {
    let lane = T.lane_idx();
    out[lane] = T.ptx.redux.sync.add(x[lane]);
}
fn main() {}
