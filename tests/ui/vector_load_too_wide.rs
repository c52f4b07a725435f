#[phaser::kernel(target = "sm_90a")]
fn k(x: &[f64], out: &mut [f64]) {
    let v = T.ld.v4(x, 0);
    out[0] = v[0];
}
fn main() {}
