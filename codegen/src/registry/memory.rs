//! Shared memory, element addresses, raw loads and stores, vector loads and stores,
//! atomics, 16-bit pairs, matrix loads and stores, distributed shared memory, and Ampere
//! `cp.async`.

use super::sync::MEM_SCOPE;
use crate::builder::{ArrayRef, TileLayout};
use crate::ir::{AtomOp, AtomOrder, AtomSem, MemOrder, MemScope, Space, Swizzle, Type};

const ATOM_SEM: super::Choice<AtomSem> = choice![
    "relaxed" => AtomSem::Relaxed,
    "acquire" => AtomSem::Acquire,
    "release" => AtomSem::Release,
    "acq_rel" => AtomSem::AcqRel,
];
/// `red` reads nothing: no acquire.
const RED_SEM: super::Choice<AtomSem> = choice!["relaxed" => AtomSem::Relaxed, "release" => AtomSem::Release];
/// A strong load's semantics (`ld` has no `.release`).
const LD_SEM: super::Choice<AtomSem> = choice!["relaxed" => AtomSem::Relaxed, "acquire" => AtomSem::Acquire];
/// A strong store's semantics (`st` has no `.acquire`).
const ST_SEM: super::Choice<AtomSem> = choice!["relaxed" => AtomSem::Relaxed, "release" => AtomSem::Release];
/// An 8x8 matrix as its rows (`ldmatrix`/`stmatrix`), or transposed.
const MATRIX_LAYOUT: super::Choice<bool> = choice!["rows" => false, "trans" => true];

fn order(sem: AtomSem, scope: MemScope) -> AtomOrder {
    AtomOrder { sem: Some(sem), scope: Some(scope) }
}

/// A vector's values as a fixed-size array (the DSL's handle of a vector).
fn vec<const N: usize>(v: Vec<crate::ir::Value>) -> [crate::ir::Value; N] {
    std::array::from_fn(|i| v.get(i).copied().unwrap_or(crate::ir::Value::u32(0)))
}

/// A shared allocation's layout: row-major, or as a TMA copy with this swizzle writes it.
pub(super) const LAYOUT: super::Choice<TileLayout> = super::Choice {
    names: &Swizzle::NAMES,
    values: &[
        TileLayout::of_swizzle(Swizzle::ALL[0]),
        TileLayout::of_swizzle(Swizzle::ALL[1]),
        TileLayout::of_swizzle(Swizzle::ALL[2]),
        TileLayout::of_swizzle(Swizzle::ALL[3]),
    ],
};

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

    /// `arr[idx], arr[idx + 1]` in one `ld.v2` (`idx` even)
    "ld.v2" (arr: Array, idx: Int = 2) -> VecOf(0, 2) = |k, call| vec::<2>(k.ld_vec(arr, idx, 2, false));
    /// `arr[idx..idx + 4]` in one `ld.v4` (`idx` a multiple of 4; at most 16 bytes)
    "ld.v4" (arr: Array, idx: Int = 4) -> VecOf(0, 4) = |k, call| vec::<4>(k.ld_vec(arr, idx, 4, false));
    /// `buf[idx]` through the read-only data cache (`ld.global.nc`; nothing in the kernel may write `buf`)
    "ld.nc" ["cuda:__ldg"] (buf: Global, idx: Int = 4) -> ElemOf(0)
        = |k, call| k.ld_vec(ArrayRef::Global(buf), idx, 1, true)[0];
    /// `buf[idx..idx + 4]` through the read-only data cache (`ld.global.nc.v4`)
    "ld.nc_v4" (buf: Global, idx: Int = 4) -> VecOf(0, 4)
        = |k, call| vec::<4>(k.ld_vec(ArrayRef::Global(buf), idx, 4, true));
    /// `buf[idx]` with a strong load (`ld.relaxed.gpu.global` by default; `"acquire"`: later accesses see what the release it reads published)
    "ld.ordered" (buf: Global, idx: Int = 4; sem: Choice(LD_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.ld_global_ordered(buf, idx, MemOrder { sem, scope });
    /// `buf[idx] = v` with a strong store (`st.relaxed.gpu.global` by default; `"release"`: publishes this thread's earlier writes)
    "st.ordered" (buf: GlobalMut, idx: Int = 4, v: ElemOf(0); sem: Choice(ST_SEM), scope: Choice(MEM_SCOPE)) as U32 -> Unit
        = |k, call| k.st_global_ordered(buf, idx, v, MemOrder { sem, scope });
    /// `arr[idx] = a; arr[idx + 1] = b` in one `st.v2` (`idx` even)
    "st.v2" (arr: ArrayMut, idx: Int = 2, a: ElemOf(0), b: ElemOf(0)) -> Unit
        = |k, call| k.st_vec_at(arr, idx, &[a, b]);
    /// `arr[idx..idx + 4] = [a, b, c, d]` in one `st.v4` (`idx` a multiple of 4)
    "st.v4" (arr: ArrayMut, idx: Int = 4, a: ElemOf(0), b: ElemOf(0), c: ElemOf(0), d: ElemOf(0)) -> Unit
        = |k, call| k.st_vec_at(arr, idx, &[a, b, c, d]);
    /// atomic `arr[idx] += v`, returns the old value (`atom.add`; `.sem` relaxed and `.scope` gpu by default)
    "atomic.add" (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Add, v, None, order(sem, scope));
    /// atomic `arr[idx] = min(arr[idx], v)` (integers), returns the old value
    "atomic.min" ["cuda:atomicMin"] (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Min, v, None, order(sem, scope));
    /// atomic `arr[idx] = max(arr[idx], v)` (integers), returns the old value
    "atomic.max" ["cuda:atomicMax"] (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Max, v, None, order(sem, scope));
    /// atomic `arr[idx] &= v`, returns the old value
    "atomic.and" ["cuda:atomicAnd"] (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::And, v, None, order(sem, scope));
    /// atomic `arr[idx] |= v`, returns the old value
    "atomic.or" ["cuda:atomicOr"] (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Or, v, None, order(sem, scope));
    /// atomic `arr[idx] ^= v`, returns the old value
    "atomic.xor" ["cuda:atomicXor"] (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Xor, v, None, order(sem, scope));
    /// atomic `arr[idx] = v`, returns the old value (`atom.exch`)
    "atomic.exch" ["cuda:atomicExch"] (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Exch, v, None, order(sem, scope));
    /// atomic `if arr[idx] == cmp { arr[idx] = v }`, returns the old value (`atom.cas`)
    "atomic.cas" ["cuda:atomicCAS"] (arr: ArrayMut, idx: Int, cmp: ElemOf(0), v: ElemOf(0); sem: Choice(ATOM_SEM), scope: Choice(MEM_SCOPE)) as U32 -> ElemOf(0)
        = |k, call| k.atomic(arr, idx, AtomOp::Cas, v, Some(cmp), order(sem, scope));
    /// `arr[idx] += v` without a result (`red.add`: no round trip)
    "red.add" (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(RED_SEM), scope: Choice(MEM_SCOPE)) as U32 -> Unit
        = |k, call| k.reduce(arr, idx, AtomOp::Add, v, order(sem, scope));
    /// `arr[idx] = min(arr[idx], v)` without a result (`red.min`)
    "red.min" (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(RED_SEM), scope: Choice(MEM_SCOPE)) as U32 -> Unit
        = |k, call| k.reduce(arr, idx, AtomOp::Min, v, order(sem, scope));
    /// `arr[idx] = max(arr[idx], v)` without a result (`red.max`)
    "red.max" (arr: ArrayMut, idx: Int, v: ElemOf(0); sem: Choice(RED_SEM), scope: Choice(MEM_SCOPE)) as U32 -> Unit
        = |k, call| k.reduce(arr, idx, AtomOp::Max, v, order(sem, scope));
    /// two f32s rounded to bf16 and packed in a u32, `lo` in the low half (`cvt.rn.bf16x2.f32`)
    "pack.bf16x2" ["cuda:__floats2bfloat162_rn"] (lo: Scalar, hi: Scalar) as F32 -> U32 = |k, call| k.pack_half2_u32(lo, hi, Type::BF16);
    /// two f32s rounded to f16 and packed in a u32, `lo` in the low half (`cvt.rn.f16x2.f32`)
    "pack.f16x2" ["cuda:__floats2half2_rn"] (lo: Scalar, hi: Scalar) as F32 -> U32 = |k, call| k.pack_half2_u32(lo, hi, Type::F16);
    /// two f32s rounded to e4m3 (nearest even, saturating to ±448, NaN stays NaN) and packed in a u16, `lo` in the low byte (`cvt.rn.satfinite.e4m3x2.f32`)
    "pack.e4m3x2" (lo: F32, hi: F32) -> U16 = |k, call| k.pack_fp8x2_u16(lo, hi, Type::E4M3);
    /// two f32s rounded to e5m2 (nearest even, saturating to ±57344, NaN stays NaN) and packed in a u16, `lo` in the low byte (`cvt.rn.satfinite.e5m2x2.f32`)
    "pack.e5m2x2" (lo: F32, hi: F32) -> U16 = |k, call| k.pack_fp8x2_u16(lo, hi, Type::E5M2);
    /// the two bf16 halves of a u32 as f32s, `[lo, hi]` (exact)
    "unpack.bf16x2" (packed: U32) -> Vec(Type::F32, 2) = |k, call| k.unpack_half2(packed, Type::BF16);
    /// the two f16 halves of a u32 as f32s, `[lo, hi]` (exact)
    "unpack.f16x2" (packed: U32) -> Vec(Type::F32, 2) = |k, call| k.unpack_half2(packed, Type::F16);
    /// the warp loads one 8x8 b16 matrix (threads 0-7 give the row addresses); per thread one u32 of 2 elements
    "ptx.ldmatrix.x1" ["cute:SM75_U32x1_LDSM_N"] (addr: U32; layout: Choice(MATRIX_LAYOUT)) -> Vec(Type::U32, 1)
        = |k, call| vec::<1>(k.ldmatrix(addr, 1, layout));
    /// ... two matrices (threads 0-15 give the row addresses)
    "ptx.ldmatrix.x2" ["cute:SM75_U32x2_LDSM_N"] (addr: U32; layout: Choice(MATRIX_LAYOUT)) -> Vec(Type::U32, 2)
        = |k, call| vec::<2>(k.ldmatrix(addr, 2, layout));
    /// ... four matrices (every thread gives a row address)
    "ptx.ldmatrix.x4" ["cute:SM75_U32x4_LDSM_N"] (addr: U32; layout: Choice(MATRIX_LAYOUT)) -> Vec(Type::U32, 4)
        = |k, call| vec::<4>(k.ldmatrix(addr, 4, layout));
    /// the warp stores one 8x8 b16 matrix (`stmatrix`; threads 0-7 give the row addresses)
    "ptx.stmatrix.x1" ["cute:SM90_U32x1_STSM_N"] (addr: U32, r0: U32; layout: Choice(MATRIX_LAYOUT)) -> Unit
        = |k, call| k.stmatrix(addr, &[r0], layout);
    /// ... two matrices
    "ptx.stmatrix.x2" ["cute:SM90_U32x2_STSM_N"] (addr: U32, r0: U32, r1: U32; layout: Choice(MATRIX_LAYOUT)) -> Unit
        = |k, call| k.stmatrix(addr, &[r0, r1], layout);
    /// ... four matrices
    "ptx.stmatrix.x4" ["cute:SM90_U32x4_STSM_N"] (addr: U32, r0: U32, r1: U32, r2: U32, r3: U32; layout: Choice(MATRIX_LAYOUT)) -> Unit
        = |k, call| k.stmatrix(addr, &[r0, r1, r2, r3], layout);
    /// shared array `arr` of CTA `cta` of the cluster (`mapa`): index it to read and write its memory
    "ptx.mapa_shared" (arr: Shared, cta: U32 = 1) -> RemoteSharedOf(0) = |k, call| k.map_shared_to_cta(arr, cta);
    /// the shared::cluster address of this CTA's shared address `addr` in CTA `cta` (`mapa`)
    "ptx.mapa_addr" (addr: U32, cta: U32 = 1) -> U32 = |k, call| k.map_shared_addr(addr, cta);
    /// the shared::cluster address of `arr[idx]` (for `cp.async.bulk` into another CTA)
    "cluster_elem_addr" (arr: RemoteShared, idx: Int = 4) -> U32 = |k, call| k.remote_elem_addr(arr, idx);

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
