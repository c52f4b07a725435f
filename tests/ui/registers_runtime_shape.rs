#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32], n: u32) {
    let acc = T.registers::<f32>([n]);
    let big = T.registers::<f32>([2, 0]);
    out[0] = acc[0];
}
fn main() {}
