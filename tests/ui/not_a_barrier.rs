#[phaser::kernel(target = "sm_90a")]
fn k() {
    let tid = T.thread_idx();
    T.ptx.mbarrier.try_wait(tid, 0);
}
fn main() {}
