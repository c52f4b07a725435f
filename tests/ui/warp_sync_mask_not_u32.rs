#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32], mask: u64) {
    T.cuda.warp_sync(mask);
    out[0] = 1;
}
fn main() {}
