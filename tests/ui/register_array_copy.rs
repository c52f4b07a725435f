#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let mut acc = T.registers::<f32>([4]);
    let saved = acc;
    out[0] = saved[0];
}
fn main() {}
