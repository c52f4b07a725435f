// FP8 wgmma operands are K-major only: a tile TMA fills MN-major is refused, naming the rule.
#[phaser::kernel(target = "sm_90a")]
fn k(
    #[tma(box = [64, 128], swizzle = "128B")] a: TensorMap<e4m3, 2>,
    #[tma(box = [64, 128], swizzle = "128B", major = "mn")] b: TensorMap<e4m3, 2>,
) {
    T.require_block(128, 1, 1);
    let a_tile = T.alloc_shared::<e4m3>([64, 128], "128B");
    let b_tile = T.alloc_shared::<e4m3>([64, 128], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    T.tma.load(a_tile, a, [0, 0], bar);
    T.tma.load(b_tile, b, [0, 0], bar);
    let mut acc = T.registers::<f32>([32]);
    T.ptx.wgmma.mma_async(acc, a_tile, b_tile, 0, false);
}
fn main() {}
