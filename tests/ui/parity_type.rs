// A wait parity is a u32 0 or 1, or a bool (true = 1): one rule (`arch::parity`), stated by
// the op table and by this message. A u64 or a float is refused.
#[phaser::kernel(target = "sm_90a")]
fn k(p: u64, f: f32) {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.try_wait(bars.ptr_to([0]), p);
    T.ptx.mbarrier.test_wait(bars.ptr_to([0]), f);
}
fn main() {}
