#[phaser::kernel(target = "sm_90a")]
fn k(x: &[u32], out: &mut [u32]) {
    let v = T.ld.v4(x, 0);
    out[0] = v[4];
}
fn main() {}
