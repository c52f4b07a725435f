#[phaser::kernel(target = "sm_90a")]
fn k(x: &[u32], out: &mut [u32]) {
    let v = T.ld.v2(x, 0);
    v[1] = 3;
    out[0] = v[0];
}
fn main() {}
