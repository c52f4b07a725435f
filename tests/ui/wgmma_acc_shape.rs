// The accumulator's N (2 x its length) must be B's N: a 64-row K-major B gives N = 64.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([64, 64], "128B");
    let mut acc = T.registers::<f32>([64]);
    T.ptx.wgmma.fence();
    T.ptx.wgmma.mma_async(acc, a, b, 0, false);
}
fn main() {}
