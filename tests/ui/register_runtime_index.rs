#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let mut acc = T.registers::<f32>([32]);
    let lane = T.lane_idx();
    acc[lane] = 1.0;
    out[lane] = acc[0];
}
fn main() {}
