// wgmma exists on sm_90a only (the "a" features), not on plain sm_90.
#[phaser::kernel(target = "sm_90")]
fn k() {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([64, 64], "128B");
    let mut acc = T.registers::<f32>([32]);
    T.ptx.wgmma.fence();
    T.ptx.wgmma.mma_async(acc, a, b, 0, false);
}
fn main() {}
