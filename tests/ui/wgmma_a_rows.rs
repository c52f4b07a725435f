// An m64 wgmma reads one warpgroup's 64 rows of A; a 128-row stage holds two slabs.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([128, 64], "128B");
    let b = T.alloc_shared::<bf16>([256, 64], "128B");
    let mut acc = T.registers::<f32>([128]);
    T.ptx.wgmma.mma_async(acc, a, b, 0, false);
}
fn main() {}
