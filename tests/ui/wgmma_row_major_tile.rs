// A descriptor describes swizzled tiles: a row-major B has none.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([64, 64]);
    let mut acc = T.registers::<f32>([32]);
    T.ptx.wgmma.mma_async(acc, a, b, 0, false);
}
fn main() {}
