#[phaser::kernel(target = "sm_90a")]
fn k() {
    let bars = T.alloc_barriers(1);
    T.mbarrier.wait(bars.ptr_to([0]), 0);
}
fn main() {}
