// wgmma pairs FP8 with FP8: an e4m3 A with a bf16 B is refused.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<e4m3>([64, 128], "128B");
    let b = T.alloc_shared::<bf16>([64, 64], "128B");
    let mut acc = T.registers::<f32>([32]);
    T.ptx.wgmma.mma_async(acc, a, b, 0, false);
}
fn main() {}
