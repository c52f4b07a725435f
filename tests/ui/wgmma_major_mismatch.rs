// V's map declares its box MN-major (N contiguous); the MMA reads the tile as K-major.
#[phaser::kernel(target = "sm_90a")]
fn k(
    #[tma(box = [64, 64], swizzle = "128B")] q: TensorMap<bf16, 2>,
    #[tma(box = [64, 64], swizzle = "128B", major = "mn")] v: TensorMap<bf16, 2>,
) {
    T.require_block(128, 1, 1);
    let q_tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let v_tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    T.tma.load(q_tile, q, [0, 0], bar);
    T.tma.load(v_tile, v, [0, 0], bar);
    let mut acc = T.registers::<f32>([32]);
    T.ptx.wgmma.mma_async(acc, q_tile, v_tile, 0, false, "k");
}
fn main() {}
