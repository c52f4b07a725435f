#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    out[T.thread_idx()] = 1;
    T.cuda.syncwarp();
}
fn main() {}
