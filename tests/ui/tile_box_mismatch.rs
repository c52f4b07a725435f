const ROWS: u32 = 64;

#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [32, 64], swizzle = "128B")] a: TensorMap<bf16, 2>) {
    let tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
    T.tma.load(tile, a, [0, 0], bar);
}
fn main() {}
