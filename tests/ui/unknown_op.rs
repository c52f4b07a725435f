#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.try_wiat(bars.ptr_to([0]), 0);
}
fn main() {}
