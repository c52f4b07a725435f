// A 64-wide K is four k16 steps: 0..4.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([128, 64], "128B");
    let mut acc = T.registers::<f32>([64]);
    T.ptx.wgmma.mma_async(acc, a, b, 4, true);
}
fn main() {}
