#[phaser::kernel(target = "sm_90a")]
fn k(x: &[f32], out: &mut [f32]) {
    let v = T.ld.v4(x, 2);
    out[0] = v[0];
}
fn main() {}
