//! Shared memory, element addresses, raw loads and stores, and Ampere `cp.async`.

use crate::builder::TileLayout;
use crate::ir::{Space, Swizzle};

/// A shared allocation's layout: row-major, or as a TMA copy with this swizzle writes it.
pub(super) const LAYOUT: super::Choice<TileLayout> = choice![
    "none" => TileLayout::RowMajor,
    "32B" => TileLayout::Swizzled(Swizzle::B32),
    "64B" => TileLayout::Swizzled(Swizzle::B64),
    "128B" => TileLayout::Swizzled(Swizzle::B128),
];

ops! {
    /// shared memory named after its `let`: `[n]` is a static array; more dimensions or a swizzle make a tile in the dynamic window
    "alloc_shared" ["gluon:allocate_shared_memory"] ::<T> (shape: Dims = 64; layout: Choice(LAYOUT)) -> SharedOrTile
        = |k, call| super::tile::alloc_shared_or_tile(k, call.name(), call.elem(), &shape, layout);
    /// `n` 8-byte mbarriers in shared memory
    "alloc_barriers" ["gluon:mbarrier.allocate_mbarrier"] (n: Const) -> Barriers = |k, call| k.alloc_barriers(call.name(), n);
    /// a view of dynamic shared memory, `offset` bytes in
    "dynamic_shared" ::<T> (offset: Const = 0) -> SharedOfTurbofish = |k, call| k.dynamic_shared(call.elem(), offset);
    /// 32-bit shared address of an array
    "shared_addr" (arr: Shared) -> U32 = |k, call| k.shared_base_addr(arr);
    /// 32-bit shared address of `arr[idx]`
    "shared_elem_addr" (arr: Shared, idx: Int = 4) -> U32 = |k, call| k.shared_elem_addr(arr, idx);
    /// 64-bit global address of `buf[idx]`
    "global_elem_addr" (buf: Global, idx: Int = 4) -> U64 = |k, call| k.global_elem_addr(buf, idx);
    /// treat an 8-byte-aligned shared address as a barrier
    "barrier_at_addr" (addr: U32) -> Barrier = |k, call| k.barrier_from_shared_addr(addr);
    /// `atom.global.add`, returns the old value
    "atomic_add" ["cuda:atomicAdd"] (buf: GlobalMut, idx: Int, v: ElemOf(0)) -> ElemOf(0)
        = |k, call| k.atomic_add_global(buf, idx, v);

    /// `ld.shared` from a 32-bit address
    "ptx.ld.shared" ::<T> (addr: U32) -> Turbofish = |k, call| k.ld_raw(Space::Shared, call.elem(), addr, 0);
    /// `ld.shared::cluster` from a `mapa` address
    "ptx.ld.shared_cluster" ::<T> (addr: U32) -> Turbofish
        = |k, call| k.ld_raw(Space::SharedCluster, call.elem(), addr, 0);
    /// `ld.global` from a 64-bit address
    "ptx.ld.global" ::<T> (addr: U64) -> Turbofish = |k, call| k.ld_raw(Space::Global, call.elem(), addr, 0);
    /// `st.shared`
    "ptx.st.shared" (addr: U32, v: Scalar) -> Unit = |k, call| k.st_raw(Space::Shared, addr, 0, v);
    /// `st.shared::cluster`
    "ptx.st.shared_cluster" (addr: U32, v: Scalar) -> Unit = |k, call| k.st_raw(Space::SharedCluster, addr, 0, v);
    /// `st.global`
    "ptx.st.global" (addr: U64, v: Scalar) -> Unit = |k, call| k.st_raw(Space::Global, addr, 0, v);
    /// Ampere `cp.async` of 4/8/16 bytes
    "ptx.cp_async" (dst: U32, src: U64, bytes: Const = 16) -> Unit
        = |k, call| k.cp_async(dst, src, bytes);
    /// `cp.async.commit_group`
    "ptx.cp_async.commit_group" ["cute:cp_async_fence"] () -> Unit = |k, call| k.cp_async_commit_group();
    /// `cp.async.wait_group n`
    "ptx.cp_async.wait_group" ["cute:cp_async_wait"] (n: Const) -> Unit = |k, call| k.cp_async_wait_group(n);
    /// arrive on `bar` when this thread's prior `cp.async` copies land (net-zero: pending is incremented first)
    "ptx.cp_async.mbarrier.arrive" (bar: Barrier) -> Unit = |k, call| k.cp_async_mbarrier_arrive(bar, false);
    /// ... counted as one of the barrier's expected arrivals (`.noinc`)
    "ptx.cp_async.mbarrier.arrive_noinc" (bar: Barrier) -> Unit = |k, call| k.cp_async_mbarrier_arrive(bar, true);
}
