#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [64, 32], swizzle = "128B")] a: TensorMap<bf16, 2>) {
    let tile = T.alloc_shared::<bf16>([64, 32], "64B");
    let bars = T.alloc_barriers(1);
    T.tma.load(tile, a, [0, 0], bars.ptr_to([0]));
}
fn main() {}
