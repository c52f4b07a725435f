#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    #[unroll(4)]
    for i in 0..8 {
        out[i] = i;
    }
    #[inline]
    for i in 0..8 {
        out[i] = i;
    }
}
fn main() {}
