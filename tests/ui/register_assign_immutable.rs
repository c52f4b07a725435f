#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let acc = T.registers::<f32>([4]);
    acc[0] = 1.0;
    out[0] = acc[0];
}
fn main() {}
