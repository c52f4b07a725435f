//! PTX text of the warp collectives.

use super::inst::mask_operand;
use super::operand::*;
use crate::ir::*;

pub fn warp(op: &WarpOp) -> String {
    match op {
        WarpOp::Shfl { mode, dst, src, lane, width, mask } => format!(
            "shfl.sync.{}.b32 {}, {}, {}, {:#x}, {};",
            mode.name(),
            reg(*dst),
            value(src),
            value(lane),
            mode.c_operand(*width),
            mask_operand(mask)
        ),
        WarpOp::Vote { mode, dst, pred, mask } => {
            let ty = if *mode == VoteMode::Ballot { "b32" } else { "pred" };
            format!("vote.sync.{}.{ty} {}, {}, {};", mode.name(), reg(*dst), value(pred), mask_operand(mask))
        }
        WarpOp::Redux { op, dst, src, mask } => {
            let ty = if op.is_bitwise() {
                "b32"
            } else if src.ty().is_signed() {
                "s32"
            } else {
                "u32"
            };
            format!("redux.sync.{}.{ty} {}, {}, {};", op.name(), reg(*dst), value(src), mask_operand(mask))
        }
        WarpOp::Match { all, dst, src, mask } => format!(
            "match.{}.sync.{} {}, {}, {};",
            if *all { "all" } else { "any" },
            src.ty().bit_type(),
            reg(*dst),
            value(src),
            mask_operand(mask)
        ),
    }
}
