#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.init(bars.ptr_to([0]), 0);
    let phase = 0;
    phase = 1;
    out[0] = T.thread_idx() + 1.0;
}
fn main() {}
