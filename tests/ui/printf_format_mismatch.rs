#[phaser::kernel(target = "sm_90a")]
fn k(x: &[f32]) {
    let t = T.thread_idx();
    T.printf("thread %d: %d\n", [t, x[t]]);
}
fn main() {}
