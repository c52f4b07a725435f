//! Blackwell's tcgen05 family (sm_100a): tensor memory, loads and stores, copies, the MMA,
//! commit and fences. Every `.cta_group` choice defaults to `cta_group::1`; a kernel must use
//! one `.cta_group` throughout (`arch::tcgen05::cta_group_conflicts`). The DSL forms of
//! `tcgen05.ld`/`st` move one register (`.x1`); wider forms are the builder's
//! (`KernelBuilder::tcgen05_ld`).

use crate::ir::{CpShape, CtaGroup, InstrDesc, LdStShape, Major, MmaA, MmaOperand, SmemTile, Swizzle, UmmaElem, Value};

const CTA_GROUP: super::Choice<CtaGroup> = choice!["cta_group::1" => CtaGroup::One, "cta_group::2" => CtaGroup::Two];
const LD_SHAPE: super::Choice<LdStShape> = choice![
    "32x32b" => LdStShape::S32x32b,
    "16x64b" => LdStShape::S16x64b,
    "16x32bx2" => LdStShape::S16x32bx2 { split: 1 },
];
const CP_SHAPE: super::Choice<CpShape> = choice![
    "128x256b" => CpShape::S128x256b,
    "4x256b" => CpShape::S4x256b,
    "128x128b" => CpShape::S128x128b,
];
/// The multiplicand types (A and B alike); `tf32` is `.kind::tf32`, `e4m3`/`e5m2` are
/// `.kind::f8f6f4`, the others `.kind::f16`. The accumulator is f32.
const AB_TYPE: super::Choice<UmmaElem> = choice![
    "bf16" => UmmaElem::BF16,
    "f16" => UmmaElem::F16,
    "tf32" => UmmaElem::TF32,
    "e4m3" => UmmaElem::E4M3,
    "e5m2" => UmmaElem::E5M2,
];
const MAJOR: super::Choice<Major> = choice!["k" => Major::K, "mn" => Major::MN];
/// The descriptor's swizzle, widest first (an omitted one is 128-byte).
const SWIZZLE: super::Choice<Swizzle> = {
    const ORDER: [Swizzle; 4] = [Swizzle::B128, Swizzle::B64, Swizzle::B32, Swizzle::None];
    super::Choice {
        names: &[ORDER[0].as_str(), ORDER[1].as_str(), ORDER[2].as_str(), ORDER[3].as_str()],
        values: &ORDER,
    }
};

ops! {
    /// the warp allocates `ncols` columns of tensor memory (a power of two in 32..=512) and writes the address to `slot[0]`
    "ptx.tcgen05.alloc" (slot: Shared, ncols: Const = 32; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_alloc_into(cta_group, slot, ncols);
    /// the warp frees the `ncols` columns at `taddr`
    "ptx.tcgen05.dealloc" (taddr: U32, ncols: Const = 32; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_dealloc(cta_group, taddr, Value::u32(ncols));
    /// this CTA allocates no more tensor memory
    "ptx.tcgen05.relinquish_alloc_permit" (; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_relinquish_alloc_permit(cta_group);
    /// warp-collective load of one 32-bit register from tensor memory (`.x1`); `wait.ld` completes its read
    "ptx.tcgen05.ld" ::<T> (taddr: U32; shape: Choice(LD_SHAPE)) -> Turbofish
        = |k, call| k.tcgen05_ld(shape, 1, taddr, call.elem())[0];
    /// warp-collective store of one 32-bit value to tensor memory (`.x1`); complete after `wait.st`
    "ptx.tcgen05.st" (taddr: U32, value: Scalar; shape: Choice(LD_SHAPE)) -> Unit
        = |k, call| k.tcgen05_st(shape, 1, taddr, &[value]);
    /// `tcgen05.wait::ld`: this thread's earlier `tcgen05.ld`s are complete
    "ptx.tcgen05.wait.ld" ["cutlass:fence_view_async_tmem_load"] () -> Unit = |k, call| k.tcgen05_wait_ld();
    /// `tcgen05.wait::st`: this thread's earlier `tcgen05.st`s are complete
    "ptx.tcgen05.wait.st" ["cutlass:fence_view_async_tmem_store"] () -> Unit = |k, call| k.tcgen05_wait_st();
    /// copy a matrix from shared memory (descriptor `s_desc`) into tensor memory at `taddr`
    "ptx.tcgen05.cp" (taddr: U32, s_desc: U64, shape: Choice(CP_SHAPE); cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_cp(cta_group, shape, taddr, s_desc);
    /// shift the 32 lanes at `taddr` down by one row
    "ptx.tcgen05.shift" (taddr: U32; cta_group: Choice(CTA_GROUP)) -> Unit = |k, call| k.tcgen05_shift(cta_group, taddr);
    /// the sm100 shared-memory descriptor of a `rows x cols` tile of `ab` at `addr` (1024-byte aligned when swizzled)
    "ptx.tcgen05.smem_desc" (addr: U32, rows: Const = 128, cols: Const = 128, ab: Choice(AB_TYPE); major: Choice(MAJOR), swizzle: Choice(SWIZZLE)) -> U64
        = |k, call| k.umma_desc(ab, MmaOperand::new(SmemTile::new(ab.bytes(), rows, cols, swizzle), major), addr).desc;
    /// `D (m x n, f32) = A * B (+ D if accumulate)`, A and B K-major in shared memory; one thread issues it
    "ptx.tcgen05.mma" ["gluon:tcgen05_mma"] (d_tmem: U32, a_desc: U64, b_desc: U64, accumulate: Bool, ab: Choice(AB_TYPE), m: Const = 128, n: Const = 256; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_mma_raw(InstrDesc::new(ab, ab, m, n), cta_group, d_tmem, MmaA::Desc(a_desc), b_desc, accumulate);
    /// like `mma`, with A in tensor memory at `a_tmem`
    "ptx.tcgen05.mma_ts" (d_tmem: U32, a_tmem: U32, b_desc: U64, accumulate: Bool, ab: Choice(AB_TYPE), m: Const = 128, n: Const = 256; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_mma_raw(InstrDesc::new(ab, ab, m, n), cta_group, d_tmem, MmaA::Tmem(a_tmem), b_desc, accumulate);
    /// arrive on `bar` once this thread's prior tcgen05 ops finished
    "ptx.tcgen05.commit" ["cute:umma_arrive", "gluon:tcgen05_commit"] (bar: Barrier; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_commit_with(cta_group, bar, None);
    /// ... on `bar` in every CTA of the 16-bit cluster mask `cta_mask`
    "ptx.tcgen05.commit_multicast" ["cutlass:umma_arrive_multicast"] (bar: Barrier, cta_mask: Int = 3; cta_group: Choice(CTA_GROUP)) -> Unit
        = |k, call| k.tcgen05_commit_with(cta_group, bar, Some(cta_mask));
    /// order this thread's earlier async tcgen05 ops before its next thread synchronization
    "ptx.tcgen05.fence.before_thread_sync" () -> Unit = |k, call| k.tcgen05_fence_before_thread_sync();
    /// order this thread's next async tcgen05 ops after its earlier thread synchronization
    "ptx.tcgen05.fence.after_thread_sync" () -> Unit = |k, call| k.tcgen05_fence_after_thread_sync();
}
