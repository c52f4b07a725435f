#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.printf("name: %s\n", [T.thread_idx()]);
}
fn main() {}
