//! Warp collectives: `shfl.sync`, `vote.sync`, `redux.sync`, `match.sync`.
//!
//! Every one of them makes the executing lane wait until every non-exited lane of its
//! `membermask` executed the same instruction with the same mask, then computes its result
//! from all of them (PTX ISA, "Parallel Synchronization and Communication Instructions").
//! A lane that is not in its own mask is undefined behaviour.

use super::value::{Reg, Value};

/// How `shfl.sync` picks the source lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShflMode {
    /// `lane - b` (CUDA `__shfl_up_sync`).
    Up,
    /// `lane + b` (`__shfl_down_sync`).
    Down,
    /// `lane ^ b` (`__shfl_xor_sync`).
    Bfly,
    /// lane `b` of the segment (`__shfl_sync`).
    Idx,
}

impl ShflMode {
    pub fn name(self) -> &'static str {
        match self {
            ShflMode::Up => "up",
            ShflMode::Down => "down",
            ShflMode::Bfly => "bfly",
            ShflMode::Idx => "idx",
        }
    }

    /// The `c` operand CUDA's `__shfl_*_sync(mask, v, b, width)` passes: the segment mask
    /// `(32 - width) << 8` and, except for `.up`, the clamp value 31.
    pub fn c_operand(self, width: u32) -> u32 {
        let seg = (32u32.saturating_sub(width)) << 8;
        match self {
            ShflMode::Up => seg,
            _ => seg | 0x1f,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    /// True when the predicate is the same in every lane.
    Uni,
    /// The lanes whose predicate is true, as a mask.
    Ballot,
}

impl VoteMode {
    pub fn name(self) -> &'static str {
        match self {
            VoteMode::All => "all",
            VoteMode::Any => "any",
            VoteMode::Uni => "uni",
            VoteMode::Ballot => "ballot",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl ReduxOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduxOp::Add => "add",
            ReduxOp::Min => "min",
            ReduxOp::Max => "max",
            ReduxOp::And => "and",
            ReduxOp::Or => "or",
            ReduxOp::Xor => "xor",
        }
    }
    /// `.and/.or/.xor` take `.b32`; the arithmetic ones `.u32`/`.s32`.
    pub fn is_bitwise(self) -> bool {
        matches!(self, ReduxOp::And | ReduxOp::Or | ReduxOp::Xor)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum WarpOp {
    /// `shfl.sync.mode.b32 dst, src, lane, c, mask` with `c` from `width` (a power of two in
    /// 1..=32: the warp splits into segments of `width` lanes, as CUDA's `width` argument).
    Shfl { mode: ShflMode, dst: Reg, src: Value, lane: Value, width: u32, mask: Value },
    /// `vote.sync.mode.pred dst, pred, mask` (`.ballot.b32` for a mask).
    Vote { mode: VoteMode, dst: Reg, pred: Value, mask: Value },
    /// `redux.sync.op.type dst, src, mask`: `src` reduced over the lanes of the mask.
    Redux { op: ReduxOp, dst: Reg, src: Value, mask: Value },
    /// `match.{any,all}.sync.b32/b64 dst, src, mask`: `any`: the lanes holding the same value
    /// as this one; `all`: the mask if every lane holds the same value, else 0.
    Match { all: bool, dst: Reg, src: Value, mask: Value },
}

impl WarpOp {
    /// The member mask.
    pub fn mask(&self) -> &Value {
        match self {
            WarpOp::Shfl { mask, .. }
            | WarpOp::Vote { mask, .. }
            | WarpOp::Redux { mask, .. }
            | WarpOp::Match { mask, .. } => mask,
        }
    }

    pub fn mnemonic(&self) -> String {
        match self {
            WarpOp::Shfl { mode, .. } => format!("shfl.sync.{}.b32", mode.name()),
            WarpOp::Vote { mode, .. } => format!("vote.sync.{}", mode.name()),
            WarpOp::Redux { op, .. } => format!("redux.sync.{}", op.name()),
            WarpOp::Match { all, .. } => format!("match.{}.sync", if *all { "all" } else { "any" }),
        }
    }
}
