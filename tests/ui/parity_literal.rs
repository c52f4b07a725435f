#[phaser::kernel(target = "sm_90a")]
fn k() {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.try_wait(bars.ptr_to([0]), 2);
}
fn main() {}
