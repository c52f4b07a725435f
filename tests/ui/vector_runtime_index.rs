#[phaser::kernel(target = "sm_90a")]
fn k(x: &[u32], out: &mut [u32]) {
    let v = T.ld.v4(x, 0);
    let i = T.thread_idx() % 4;
    out[0] = v[i];
}
fn main() {}
