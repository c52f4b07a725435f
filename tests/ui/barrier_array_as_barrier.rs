#[phaser::kernel(target = "sm_90a")]
fn k() {
    let full = T.alloc_barriers(2);
    T.ptx.mbarrier.arrive(full);
}
fn main() {}
