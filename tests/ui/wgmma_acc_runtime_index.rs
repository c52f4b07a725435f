// The accumulator stays in registers only when it is indexed at compile time.
#[phaser::kernel(target = "sm_90a")]
fn k(j: u32) {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([64, 64], "128B");
    let mut acc = T.registers::<f32>([2, 32]);
    T.ptx.wgmma.mma_async(acc[j], a, b, 0, false);
}
fn main() {}
