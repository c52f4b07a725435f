//! Register fragments in and out: packing f32 pairs into 16-bit pairs and back, and the
//! warp-cooperative matrix loads and stores (`ldmatrix`, `stmatrix`) that move 8x8 tiles of
//! 16-bit elements between shared memory and the mma fragment layout.
//!
//! The 8x8 fragment layout (PTX ISA, "Warp-level matrix load instruction: ldmatrix"): thread
//! `t` of the warp holds, in the `b32` register of matrix `i`, the elements at row `t / 4`,
//! columns `2 (t % 4)` and `2 (t % 4) + 1` (the lower column in the low half). Threads
//! `8i..8i+7` give the shared addresses of the 8 rows of matrix `i` (16 bytes each).

use super::types::Type;
use super::value::{Reg, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum FragmentOp {
    /// `cvt.rn.{bf16x2,f16x2}.f32 dst, hi, lo`: round two f32s to a 16-bit pair in one `b32`,
    /// `lo` in the low half (the lower address once stored).
    PackHalf2 { dst: Reg, hi: Value, lo: Value, to: Type },
    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 dst, hi, lo`: round two f32s to FP8 (nearest
    /// even; beyond the largest finite value, and infinities, saturate to it; NaN stays NaN)
    /// and pack them in one `b16`, `lo` in the low byte (the lower address once stored).
    PackFp8x2 { dst: Reg, hi: Value, lo: Value, to: Type },
    /// The inverse: the two halves of a `b32` holding a bf16 or f16 pair, as f32s (exact).
    UnpackHalf2 { lo: Reg, hi: Reg, src: Value, from: Type },
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared::cta.b16 [addr], {regs}`: each of
    /// the warp's threads holds one `b32` (two 16-bit elements of a row, the mma C-fragment
    /// layout) per 8x8 matrix; threads `8i..8i+7` give the row addresses of matrix `i`.
    StMatrix { addr: Value, regs: Vec<Value>, trans: bool },
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared::cta.b16 {dsts}, [addr]`: the
    /// inverse of `stmatrix` (`.trans`: the matrices are read transposed).
    LdMatrix { dsts: Vec<Reg>, addr: Value, trans: bool },
}

impl FragmentOp {
    pub fn mnemonic(&self) -> String {
        let t = |trans: bool| if trans { ".trans" } else { "" };
        match self {
            FragmentOp::PackHalf2 { to, .. } => format!("cvt.rn.{to}x2.f32"),
            FragmentOp::PackFp8x2 { to, .. } => format!("cvt.rn.satfinite.{to}x2.f32"),
            FragmentOp::UnpackHalf2 { from, .. } => format!("unpack {from}x2"),
            FragmentOp::StMatrix { regs, trans, .. } => format!("stmatrix.m8n8.x{}{}", regs.len(), t(*trans)),
            FragmentOp::LdMatrix { dsts, trans, .. } => format!("ldmatrix.m8n8.x{}{}", dsts.len(), t(*trans)),
        }
    }
}
