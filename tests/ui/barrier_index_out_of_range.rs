const STAGES: u32 = 2;

#[phaser::kernel(target = "sm_90a")]
fn k() {
    let bars = T.alloc_barriers(2);
    let n = 2;
    T.ptx.mbarrier.init(bars.ptr_to([n]), 1);
    // A `const` item's value is rustc's: checked when the kernel is built.
    T.ptx.mbarrier.init(bars.ptr_to([STAGES - 1]), 1);
}
fn main() {}
