#[phaser::kernel(target = "sm_90a")]
fn k() {
    let bars = T.alloc_barriers(1);
    T.ptx.tcgen05.commit(bars.ptr_to([0]));
}
fn main() {}
