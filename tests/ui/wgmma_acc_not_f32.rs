// The accumulator is f32 (the D fragment); an A fragment is u32.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let b = T.alloc_shared::<bf16>([64, 64], "128B");
    let mut acc = T.registers::<u32>([32]);
    let mut frag = T.registers::<f32>([4]);
    T.ptx.wgmma.mma_async_rs(acc, frag, b, 0, false);
}
fn main() {}
