//! Fragment layouts as types: a wgmma accumulator (`T.registers::<f32>([N / 2])`) worked on by
//! (row, col) in its 64 x N tile, with no lane arithmetic in the kernel. CuTe's
//! `partition_C(identity_tensor)` is `T.fragment.row(acc, i)`/`col(acc, i)`; its
//! `make_fragment_like` is `T.registers`; FlashAttention's `reduce_max`/`reduce_sum` over a
//! row are `row_max`/`row_sum` (and `quad_max`/`quad_sum` for a value per row); its
//! `convert_type` + `make_tensor(rs_frag_layout)` of P is `to_a`. The layouts are
//! `arch::fragment`'s (PTX ISA, wgmma register fragments).

use crate::builder::{RowOp, RowScope};
use crate::ir::Type;

/// Which threads a row reduction combines: the whole row (4 threads) or this thread's part.
const SCOPE: super::Choice<RowScope> = choice!["row" => RowScope::Row, "thread" => RowScope::Thread];
/// The 16-bit type of an A fragment.
const HALF: super::Choice<Type> = choice!["bf16" => Type::BF16, "f16" => Type::F16];

ops! {
    /// the row (0..64) in the accumulator's 64 x N tile of this thread's register `acc[i]`
    "fragment.row" ["cute:partition_C"] (acc: Registers(Type::F32) = 32, i: Const = 3) -> U32
        = |k, call| k.fragment_row(acc, i);
    /// the column (0..N) in the accumulator's tile of this thread's register `acc[i]`
    "fragment.col" (acc: Registers(Type::F32) = 32, i: Const = 3) -> U32
        = |k, call| k.fragment_col(acc, i);
    /// the max of row `half` (0: this thread's first row, 1: the row 8 below) of the accumulator, over the whole row (all 4 threads holding it) or `"thread"`: this thread's elements
    "fragment.row_max" ["cute:reduce_max"] (acc: Registers(Type::F32) = 32, half: Const = 1; scope: Choice(SCOPE)) -> ElemOf(0)
        = |k, call| k.fragment_row_reduce(acc, half, RowOp::Max, scope);
    /// ... the sum
    "fragment.row_sum" ["cute:reduce_sum"] (acc: Registers(Type::F32) = 32, half: Const = 1; scope: Choice(SCOPE)) -> ElemOf(0)
        = |k, call| k.fragment_row_reduce(acc, half, RowOp::Sum, scope);
    /// `v0` if `acc[i]` lies in this thread's first row, `v1` if in the row 8 below: a per-row value (running max, rescale factor) for one register; no instruction
    "fragment.of_row" (acc: Registers(Type::F32) = 32, i: Const = 3, v0: Scalar, v1: Scalar) as F32 -> ScalarArgs
        = |k, call| k.fragment_of_row(acc, i, [v0, v1]);
    /// the max of `v` over the 4 threads that hold the same accumulator rows (`shfl.bfly` 1, 2)
    "fragment.quad_max" (v: Scalar) as F32 -> ScalarArgs = |k, call| k.quad_reduce(RowOp::Max, v);
    /// the sum of `v` over the 4 threads that hold the same accumulator rows
    "fragment.quad_sum" (v: Scalar) as F32 -> ScalarArgs = |k, call| k.quad_reduce(RowOp::Sum, v);
    /// set every element of `acc` whose column is `limit` or more to -inf (a ragged tile)
    "fragment.mask_cols" (acc: Registers(Type::F32) = 32, limit: U32 = 40) -> Unit
        = |k, call| k.fragment_mask_cols(acc, limit);
    /// set every element of `acc` whose column exceeds its row + `diag` (signed) to -inf (causal)
    "fragment.mask_causal" (acc: Registers(Type::F32) = 32, diag: Int = 5) -> Unit
        = |k, call| k.fragment_mask_causal(acc, diag);
    /// round columns `16 kstep ..+ 16` of the f32 accumulator `acc` to bf16 (or f16) into `a` (4 u32): the A fragment of k-step `kstep` of an `mma_async_rs` whose A is `acc`'s tile
    "fragment.to_a" (a: Registers(Type::U32) = 4, acc: Registers(Type::F32) = 32, kstep: Const = 3; to: Choice(HALF)) -> Unit
        = |k, call| k.fragment_to_a(a, acc, kstep, to);
}
