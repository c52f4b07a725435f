#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let mut acc = T.registers::<f32>([4, 8]);
    acc[0] = 1.0;
    out[0] = acc[0][0];
}
fn main() {}
