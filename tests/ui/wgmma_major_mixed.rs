// One tile filled from a K-major and an MN-major map: an MMA of it must say which it reads.
#[phaser::kernel(target = "sm_90a")]
fn k(
    #[tma(box = [64, 64], swizzle = "128B")] b_nk: TensorMap<bf16, 2>,
    #[tma(box = [64, 64], swizzle = "128B", major = "mn")] b_kn: TensorMap<bf16, 2>,
    #[comptime] FORM: u32,
) {
    T.require_block(128, 1, 1);
    let b_tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    if FORM == 1 {
        T.tma.load(b_tile, b_kn, [0, 0], bar);
    } else {
        T.tma.load(b_tile, b_nk, [0, 0], bar);
    }
    let mut acc = T.registers::<f32>([32]);
    let p = T.registers::<u32>([4]);
    T.ptx.wgmma.mma_async_rs(acc, p, b_tile, 0, false);
}
fn main() {}
