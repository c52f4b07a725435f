//! Hopper's warpgroup MMA (`wgmma`, sm_90a): fence, commit, wait, and `mma_async` from typed
//! swizzled tiles. The shape is never written: N is the accumulator's (an f32 register array
//! of N / 2 elements), M is 64 (A is one warpgroup's 64-row slab), K per step is the tile
//! type's (16 for bf16/f16), and the descriptors (leading/stride byte offsets, swizzle, the
//! k-step's start) come from the tiles; `arch::wgmma` states these rules.
//! A K loop over a 64-wide stage is `#[unroll] for kk in 0..4 { mma_async(acc, a, b, kk, ..) }`.

use crate::builder::{MmaOptions, Negate};
use crate::ir::{Major, Type};

/// How a multiplicand lies in its tile: K-major (`[M or N, K]`, K contiguous) or MN-major
/// (`[K, M or N]`: `imm-trans = 1`).
const MAJOR: super::Choice<Major> = choice!["k" => Major::K, "mn" => Major::MN];
/// Which multiplicands are negated (`imm-scale-a/-b = -1`).
const NEGATE: super::Choice<Negate> =
    choice!["none" => Negate::None, "a" => Negate::A, "b" => Negate::B, "ab" => Negate::Both];

fn options(a_major: Major, b_major: Major, negate: Negate) -> MmaOptions {
    let (negate_a, negate_b) = negate.flags();
    MmaOptions { a_major, b_major, negate_a, negate_b }
}

ops! {
    /// `wgmma.fence`: order this warpgroup's earlier register accesses (accumulator, A fragment) before the next `mma_async`s
    "ptx.wgmma.fence" ["cute:warpgroup_fence_operand", "cutlass:warpgroup_arrive", "gluon:warpgroup_mma_init"] () -> Unit
        = |k, call| k.wgmma_fence();
    /// close this warpgroup's pending `mma_async`s into a group
    "ptx.wgmma.commit_group" ["cute:warpgroup_commit_batch"] () -> Unit = |k, call| k.wgmma_commit_group();
    /// wait until at most `n` groups are in flight: only then are the retired groups' accumulators readable and their tiles free
    "ptx.wgmma.wait_group" ["cute:warpgroup_wait", "gluon:warpgroup_mma_wait"] (n: Const = 0) -> Unit
        = |k, call| k.wgmma_wait_group(n);
    /// k-step `k_step` (16 of K) of `acc (64 x N, f32) = A * B (+ acc if scale_d)`, A (`[64, K]`) and B (`[N, K]`) in swizzled tiles; N from `acc` (`[N / 2]`)
    "ptx.wgmma.mma_async" ["gluon:warpgroup_mma", "cute:gemm"] (acc: Registers(Type::F32) = 32, a: MmaTile, b: MmaTile, k_step: Const = 3, scale_d: Bool; b_major: Choice(MAJOR), a_major: Choice(MAJOR), negate: Choice(NEGATE)) as BF16 -> Unit
        = |k, call| k.wgmma_tiles(acc, a, b, k_step, scale_d, options(a_major, b_major, negate));
    /// like `mma_async` with A from registers: `a` is this k-step's A fragment, 4 u32 (bf16 pairs) per thread
    "ptx.wgmma.mma_async_rs" (acc: Registers(Type::F32) = 32, a: Registers(Type::U32) = 4, b: MmaTile, k_step: Const = 3, scale_d: Bool; b_major: Choice(MAJOR), negate: Choice(NEGATE)) as BF16 -> Unit
        = |k, call| k.wgmma_tiles_reg_a(acc, a, b, k_step, scale_d, options(Major::K, b_major, negate));
}
