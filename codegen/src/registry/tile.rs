//! Typed shared tiles (their TMA copies and element addresses) and register arrays.

use super::args::OpOut;
use crate::builder::{KernelBuilder, SharedTile, TileLayout, TileShape};
use crate::ir::{Type, Value};

/// `T.alloc_shared`: a static array for a 1-dimensional unswizzled shape (as before tiles
/// existed), a tile in the dynamic window otherwise.
#[track_caller]
pub(super) fn alloc_shared_or_tile(
    k: &mut KernelBuilder,
    name: &str,
    elem: Type,
    dims: &[u32],
    layout: TileLayout,
) -> OpOut {
    match (dims, layout) {
        (&[len], TileLayout::RowMajor) => OpOut::Shared(k.alloc_shared(name, elem, len)),
        _ => OpOut::Tile(k.alloc_tile(name, &TileShape::new(elem, dims, layout))),
    }
}

/// The shared address of `tile[i0][i1]..` (all indices given).
#[track_caller]
fn elem_addr(k: &mut KernelBuilder, tile: SharedTile, idx: &[Value]) -> Value {
    if idx.len() != tile.rank() {
        k.error(format!("a {}-dimensional tile takes {} indices, {} were given", tile.rank(), tile.rank(), idx.len()));
        return k.tile_addr(tile);
    }
    let mut sub = tile;
    for &i in &idx[..idx.len() - 1] {
        sub = k.tile_at(sub, i);
    }
    k.tile_elem_addr(sub, idx[idx.len() - 1])
}

ops! {
    /// a register array, every element 0; indexed only by compile-time values, so it stays in registers
    "registers" ["cute:make_fragment_like"] ::<T> (shape: Dims = 4) -> RegistersOfTurbofish
        = |k, call| k.alloc_registers(call.elem(), &shape);
    /// 32-bit shared address of `tile[i0][i1]..` (swizzle applied)
    "tile_addr" (tile: Tile, idx: Coords) -> U32 = |k, call| elem_addr(k, tile, &idx);
    /// TMA copies of the box at `coords` (outermost first, or named by the map's `dims`: `[m = m0, k = k0]`) into `tile`, completing `tile.bytes()` on `bar`; the tile takes the map's `major`
    "tma.load" ["gluon:tma.async_load"] (tile: Tile, tmap: TensorMap, coords: Coords, bar: Barrier) -> Unit
        = |k, call| k.tma_load_tile(tile, tmap, &coords, bar);
    /// ... into `tile` of every CTA in the 16-bit `cta_mask` (same offset; each CTA's `bar` completes what lands there)
    "tma.load_multicast" ["gluon:tma.async_load_multicast"] (tile: Tile, tmap: TensorMap, coords: Coords, bar: Barrier, cta_mask: Int = 3) -> Unit
        = |k, call| k.tma_load_tile_multicast(tile, tmap, &coords, bar, cta_mask);
    /// TMA copies of `tile` to the box at `coords` (outermost first, or named); complete with the bulk groups
    "tma.store" ["gluon:tma.async_store"] (tmap: TensorMap, coords: Coords, tile: Tile) -> Unit
        = |k, call| k.tma_store_tile(tmap, &coords, tile);
}
