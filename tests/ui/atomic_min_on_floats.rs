#[phaser::kernel(target = "sm_90a")]
fn k(best: &mut [f32], x: &[f32]) {
    T.atomic.min(best, 0, x[T.thread_idx()]);
}
fn main() {}
