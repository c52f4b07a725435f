// An element of an FP8 buffer is not a value (nor a parameter of FP8 type).
#[phaser::kernel(target = "sm_90a")]
fn k(a: &[e4m3], out: &mut [f32], s: e5m2) {
    let x = a[0];
    out[0] = x as f32;
}
fn main() {}
