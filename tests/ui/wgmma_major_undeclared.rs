// The MMA reads V as MN-major but V's map declares no `major`: its tiles are K-major, and the
// help says what to declare.
#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [64, 64], swizzle = "128B")] v: TensorMap<bf16, 2>) {
    T.require_block(128, 1, 1);
    let v_tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    T.tma.load(v_tile, v, [0, 0], bar);
    let mut acc = T.registers::<f32>([32]);
    let p = T.registers::<u32>([4]);
    T.ptx.wgmma.mma_async_rs(acc, p, v_tile, 0, false, "mn");
}
fn main() {}
