//! Typed tiles against the simulator's TMA, for random shapes: a box loaded with each swizzle
//! (one copy per column block) is read back element by element through the builder's tile
//! addressing, and must be exactly the box of the global tensor (TMA's zero fill included).

use phaser::codegen::builder::{KernelBuilder, TileLayout, TileShape};
use phaser::codegen::ir::{Dim, Swizzle, Type, Value};
use phaser::codegen::Target;
use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig};
use proptest::prelude::*;

/// The tensor: `h x w` u16 (element (r, c) = r * 256 + c + 1, so no element is 0).
fn tensor(h: u32, w: u32) -> Vec<u16> {
    (0..h).flat_map(|r| (0..w).map(move |c| (r * 256 + c + 1) as u16)).collect()
}

/// Load the `rows x cols` tile at `(row0, col0)` of the tensor with `layout`, read every
/// element back with `ld_tile` (thread t reads elements t, t + 128, ...).
fn roundtrip(layout: TileLayout, rows: u32, cols: u32, row0: i32, col0: i32, h: u32, w: u32) -> (Vec<u16>, Vec<u16>) {
    let shape = TileShape::new(Type::U16, &[rows, cols], layout);
    assert_eq!(shape.problem(), None, "{shape:?}");
    let mut k = KernelBuilder::new("tile_roundtrip", Target::Sm90a);
    let map = k.param_tensor_map("map", 2);
    let out = k.param_global("out", Type::U16, true);
    k.require_block(128, 1, 1);
    let tile = k.alloc_tile("tile", &shape);
    let bars = k.alloc_barriers("bar", 1);
    let bar = k.barrier_at(bars, Value::u32(0));
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.fence_mbarrier_init();
        k.mbarrier_arrive_expect_tx(bar, Value::u32(tile.bytes()));
        k.tma_load_tile(tile, map, &[Value::s32(row0), Value::s32(col0)], bar);
    });
    k.cta_sync();
    k.mbarrier_wait(bar, Value::u32(0));
    k.for_range_step(tid, Value::u32(rows * cols), 128, |k, e| {
        let r = k.div(e, Value::u32(cols));
        let c = k.rem(e, Value::u32(cols));
        let row = k.tile_at(tile, r);
        let v = k.ld_tile(row, c);
        k.st_global(out, e, v);
    });
    let kernel = k.finish().unwrap_or_else(|e| panic!("{e}"));
    let dev = Device::sim(SimConfig::default());
    let src = dev.upload(&tensor(h, w)).unwrap();
    let out = dev.upload(&vec![0u16; (rows * cols) as usize]).unwrap();
    let box_dims = shape.smem_tile().map_or([cols, rows], |t| t.tma_box());
    let map = dev.tensor_map(&src, &[w as u64, h as u64], &box_dims, layout.swizzle()).unwrap();
    dev.launch(&kernel, LaunchConfig::linear(1, 128), &[Arg::TensorMap(&map), Arg::buffer(&out)]).unwrap();
    let want = (0..rows as i32)
        .flat_map(|r| (0..cols as i32).map(move |c| (r + row0, c + col0)))
        .map(|(r, c)| if r < h as i32 && c < w as i32 && r >= 0 && c >= 0 { (r * 256 + c + 1) as u16 } else { 0 })
        .collect();
    (dev.download(&out).unwrap(), want)
}

fn layouts() -> impl Strategy<Value = TileLayout> {
    prop_oneof![
        Just(TileLayout::RowMajor),
        Just(TileLayout::Swizzled(Swizzle::B32)),
        Just(TileLayout::Swizzled(Swizzle::B64)),
        Just(TileLayout::Swizzled(Swizzle::B128)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn tiles_read_what_the_simulators_tma_wrote(
        layout in layouts(),
        row_groups in 1u32..4,
        blocks in 1u32..4,
        row0 in -4i32..40,
        col0 in -8i32..200,
    ) {
        // Swizzled: whole swizzle rows, `blocks` boxes side by side; row-major: any 8-element multiple.
        let cols = match layout {
            TileLayout::RowMajor => blocks * 8,
            TileLayout::Swizzled(s) => blocks * s.row_bytes() / 2,
        };
        let rows = row_groups * 8;
        let (got, want) = roundtrip(layout, rows, cols, row0, col0 & !7, 48, 200);
        prop_assert_eq!(got, want, "{:?} {}x{} at ({}, {})", layout, rows, cols, row0, col0 & !7);
    }
}
