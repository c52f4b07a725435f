#[phaser::kernel(target = "sm_90a")]
fn k(a: TensorMap<2>) {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.arrive.expect_tx(bars.ptr_to([0]), a.box_bytes());
}
fn main() {}
