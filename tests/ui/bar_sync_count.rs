// A named barrier's id is in 0..=15 and its thread count a non-zero multiple of 32 (whole
// warps): literal arguments are checked at their span (`arch::limits`).
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.ptx.bar.sync(16, 64);
    T.ptx.bar.arrive(1, 48);
}
fn main() {}
