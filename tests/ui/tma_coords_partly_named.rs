// Every coordinate named, or none.
#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [64, 64], swizzle = "128B", dims = [m, k])] a: TensorMap<bf16, 2>, m0: i32, k0: i32) {
    let tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
    T.tma.load(tile, a, [m = m0, k0], bar);
}
fn main() {}
