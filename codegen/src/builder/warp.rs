//! Warp collectives: shuffles, votes, reductions and matches across the lanes of a warp.
//! Every lane of the member mask must execute the same collective with the same mask.

use super::kernel_builder::KernelBuilder;
use crate::ir::*;

/// Every lane of a warp.
pub const FULL_MASK: u32 = 0xffff_ffff;

impl KernelBuilder {
    /// `shfl.sync.mode.b32`: `v` of the lane `mode` picks with `lane` (a source lane, an offset
    /// or an xor mask) within segments of `width` lanes; a lane whose source falls outside its
    /// segment gets its own `v` (CUDA's `__shfl_*_sync(mask, v, lane, width)`).
    #[track_caller]
    pub fn shfl(&mut self, mode: ShflMode, v: Value, lane: Value, width: u32, mask: Value) -> Value {
        let src = self.materialize(v);
        let dst = self.new_reg(src.ty());
        self.push(WarpOp::Shfl { mode, dst, src, lane, width, mask });
        Value::Reg(dst)
    }

    /// `vote.sync.{all,any,uni}.pred` (a bool) or `vote.sync.ballot.b32` (the lanes whose
    /// `pred` is true).
    #[track_caller]
    pub fn vote(&mut self, mode: VoteMode, pred: Value, mask: Value) -> Value {
        let dst = self.new_reg(if mode == VoteMode::Ballot { Type::U32 } else { Type::Pred });
        self.push(WarpOp::Vote { mode, dst, pred, mask });
        Value::Reg(dst)
    }

    /// `redux.sync.op`: `v` reduced over the lanes of the mask (sm_80; 32-bit integers).
    #[track_caller]
    pub fn redux(&mut self, op: ReduxOp, v: Value, mask: Value) -> Value {
        let src = self.materialize(v);
        let dst = self.new_reg(src.ty());
        self.push(WarpOp::Redux { op, dst, src, mask });
        Value::Reg(dst)
    }

    /// `match.any.sync` (`all: false`: the lanes holding the same `v` as this one) or
    /// `match.all.sync` (the mask if every lane holds the same `v`, else 0).
    #[track_caller]
    pub fn match_sync(&mut self, all: bool, v: Value, mask: Value) -> Value {
        let src = self.materialize(v);
        let dst = self.new_reg(Type::U32);
        self.push(WarpOp::Match { all, dst, src, mask });
        Value::Reg(dst)
    }
}
