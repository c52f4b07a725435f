#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.cluster_dims(2, 1, 1);
    let full = T.alloc_barriers(1);
    T.ptx.mbarrier.complete_tx_remote(full.ptr_to([0]), 16);
}
fn main() {}
