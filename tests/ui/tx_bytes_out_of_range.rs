#[phaser::kernel(target = "sm_90a")]
fn k() {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.arrive.expect_tx(bars.ptr_to([0]), 2000000);
}
fn main() {}
