// A misspelt Rust method gets the nearest one the kernel has.
#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32], x: &[f32]) {
    out[0] = x[T.thread_idx()].exp3();
}
fn main() {}
