//! Warp collectives: `__syncwarp`, shuffles, votes, reductions, matches; warpgroup barriers.
//!
//! The member `mask` is optional everywhere (all 32 lanes when omitted); every lane of the
//! mask must execute the same op with the same mask (the simulator reports lanes that do not).

use crate::ir::{ReduxOp, ShflMode, Value, VoteMode};

/// The mask of all 32 lanes (what an omitted `mask` means).
fn all(mask: Option<Value>) -> Value {
    mask.unwrap_or(Value::u32(0xffff_ffff))
}

// `match` is a Rust keyword (kernels are parsed as Rust first): `T.ptx.match_sync.any`.
ops! {
    /// `__syncwarp(mask)`: the lanes of `mask` converge, their memory accesses ordered (`bar.warp.sync`)
    "cuda.warp_sync" ["cuda:__syncwarp"] (; mask: U32 = 4294967295) -> Unit
        = |k, call| k.warp_sync_with(all(mask));
    /// a named barrier over this thread's warpgroup: `bar.sync base + warpgroup_idx, 128` (`base` 8 by default)
    "cuda.warpgroup_sync" (; base: Const = 8) -> Unit
        = |k, call| k.warpgroup_sync(base.unwrap_or(8));
    /// `v` of lane `lane ^ lane_mask` within segments of `width` lanes (a butterfly; `__shfl_xor_sync`)
    "ptx.shfl.sync.bfly" ["cuda:__shfl_xor_sync"] (v: Scalar, lane_mask: U32 = 16; width: Const = 32, mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.shfl(ShflMode::Bfly, v, lane_mask, width.unwrap_or(32), all(mask));
    /// `v` of lane `lane + delta` (own `v` past the segment's end; `__shfl_down_sync`)
    "ptx.shfl.sync.down" ["cuda:__shfl_down_sync"] (v: Scalar, delta: U32 = 1; width: Const = 32, mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.shfl(ShflMode::Down, v, delta, width.unwrap_or(32), all(mask));
    /// `v` of lane `lane - delta` (own `v` before the segment's start; `__shfl_up_sync`)
    "ptx.shfl.sync.up" ["cuda:__shfl_up_sync"] (v: Scalar, delta: U32 = 1; width: Const = 32, mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.shfl(ShflMode::Up, v, delta, width.unwrap_or(32), all(mask));
    /// `v` of lane `src_lane` of the segment (a broadcast; `__shfl_sync`)
    "ptx.shfl.sync.idx" ["cuda:__shfl_sync"] (v: Scalar, src_lane: U32 = 0; width: Const = 32, mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.shfl(ShflMode::Idx, v, src_lane, width.unwrap_or(32), all(mask));
    /// true if `pred` holds in every lane of the mask (`__all_sync`)
    "ptx.vote.sync.all" ["cuda:__all_sync"] (pred: Bool; mask: U32 = 4294967295) -> Bool
        = |k, call| k.vote(VoteMode::All, pred, all(mask));
    /// true if `pred` holds in some lane of the mask (`__any_sync`)
    "ptx.vote.sync.any" ["cuda:__any_sync"] (pred: Bool; mask: U32 = 4294967295) -> Bool
        = |k, call| k.vote(VoteMode::Any, pred, all(mask));
    /// true if `pred` is the same in every lane of the mask (`__uni_sync`)
    "ptx.vote.sync.uni" ["cuda:__uni_sync"] (pred: Bool; mask: U32 = 4294967295) -> Bool
        = |k, call| k.vote(VoteMode::Uni, pred, all(mask));
    /// the lanes of the mask whose `pred` holds, as a bit mask (`__ballot_sync`)
    "ptx.vote.sync.ballot" ["cuda:__ballot_sync"] (pred: Bool; mask: U32 = 4294967295) -> U32
        = |k, call| k.vote(VoteMode::Ballot, pred, all(mask));
    /// the sum of `v` over the lanes of the mask, truncated to 32 bits (`__reduce_add_sync`)
    "ptx.redux.sync.add" ["cuda:__reduce_add_sync"] (v: Scalar; mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.redux(ReduxOp::Add, v, all(mask));
    /// the minimum of `v` over the lanes of the mask (`__reduce_min_sync`)
    "ptx.redux.sync.min" ["cuda:__reduce_min_sync"] (v: Scalar; mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.redux(ReduxOp::Min, v, all(mask));
    /// the maximum of `v` over the lanes of the mask (`__reduce_max_sync`)
    "ptx.redux.sync.max" ["cuda:__reduce_max_sync"] (v: Scalar; mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.redux(ReduxOp::Max, v, all(mask));
    /// the bitwise and of `v` over the lanes of the mask (`__reduce_and_sync`)
    "ptx.redux.sync.and" ["cuda:__reduce_and_sync"] (v: Scalar; mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.redux(ReduxOp::And, v, all(mask));
    /// the bitwise or of `v` over the lanes of the mask (`__reduce_or_sync`)
    "ptx.redux.sync.or" ["cuda:__reduce_or_sync"] (v: Scalar; mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.redux(ReduxOp::Or, v, all(mask));
    /// the bitwise xor of `v` over the lanes of the mask (`__reduce_xor_sync`)
    "ptx.redux.sync.xor" ["cuda:__reduce_xor_sync"] (v: Scalar; mask: U32 = 4294967295) -> ScalarArgs
        = |k, call| k.redux(ReduxOp::Xor, v, all(mask));
    /// the lanes of the mask holding the same `v` as this one (`__match_any_sync`)
    "ptx.match_sync.any" ["cuda:__match_any_sync"] (v: Scalar; mask: U32 = 4294967295) -> U32
        = |k, call| k.match_sync(false, v, all(mask));
    /// the mask if every lane of it holds the same `v`, else 0 (`__match_all_sync`)
    "ptx.match_sync.all" ["cuda:__match_all_sync"] (v: Scalar; mask: U32 = 4294967295) -> U32
        = |k, call| k.match_sync(true, v, all(mask));
}
