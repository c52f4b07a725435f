// A box of [64, 128] (outermost first) into a tile of [128, 64]: the box written in PTX's
// order (innermost first) or the tile transposed.
#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [64, 128])] a: TensorMap<bf16, 2>) {
    let tile = T.alloc_shared::<bf16>([128, 64]);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
    T.tma.load(tile, a, [0, 0], bar);
}
fn main() {}
