#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [8, 20])] a: TensorMap<u32, 2>, b: TensorMap<2>, x: i32) {
    let tile = T.alloc_shared::<u32>([8, 20]);
    let raw = T.alloc_shared::<u16>([8, 64]);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    // Tile copies list coordinates outermost first: column 30 of u32 is 120 bytes.
    T.tma.load(tile, a, [35, 30], bar);
    T.tma.store(a, [0, -3], tile);
    // Aligned columns, negative and out of bounds included, and runtime ones are fine.
    T.tma.load(tile, a, [35, 32], bar);
    T.tma.load(tile, a, [-3, -4], bar);
    T.tma.load(tile, a, [0, x], bar);
    // The `ptx.*` forms list them innermost first, as PTX does; a map of undeclared element
    // type is checked when a tile implies one, or by the simulator.
    T.ptx.cp_async.bulk.tensor.g2s(T.shared_addr(raw), a, [1, 0], bar);
    T.ptx.cp_async.bulk.prefetch.tensor(a, [30, 0]);
    T.ptx.cp_async.bulk.tensor.g2s(T.shared_addr(raw), b, [1, 0], bar);
}
fn main() {}
