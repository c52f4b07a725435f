#[phaser::kernel(target = "sm_90a")]
fn k(d: u32, a: u64, b: u64) {
    if T.thread_idx() == 0 {
        T.ptx.tcgen05.mma(d, a, b, true, "bf16", 128, 256);
    }
}
fn main() {}
