//! Getting register fragments out: packing f32 accumulator pairs into 16-bit pairs, and the
//! warp-cooperative (`stmatrix`) and vector stores that move them to shared memory.

use super::memory::Space;
use super::types::Type;
use super::value::{Reg, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum FragmentOp {
    /// `cvt.rn.{bf16x2,f16x2}.f32 dst, hi, lo`: round two f32s to a 16-bit pair in one `b32`,
    /// `lo` in the low half (the lower address once stored).
    PackHalf2 { dst: Reg, hi: Value, lo: Value, to: Type },
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared::cta.b16 [addr], {regs}`: each of
    /// the warp's threads holds one `b32` (two 16-bit elements of a row, the mma C-fragment
    /// layout) per 8x8 matrix; threads `8i..8i+7` give the row addresses of matrix `i`.
    StMatrix { addr: Value, regs: Vec<Value>, trans: bool },
    /// `st.{space}.v{2,4}.{ty} [addr+offset], {srcs}`: one vector store, aligned to its size.
    StVec { space: Space, ty: Type, addr: Value, offset: i32, srcs: Vec<Value> },
}

impl FragmentOp {
    pub fn mnemonic(&self) -> String {
        match self {
            FragmentOp::PackHalf2 { to, .. } => format!("cvt.rn.{to}x2.f32"),
            FragmentOp::StMatrix { regs, trans, .. } => {
                format!("stmatrix.m8n8.x{}{}", regs.len(), if *trans { ".trans" } else { "" })
            }
            FragmentOp::StVec { srcs, ty, .. } => format!("st.v{}.{ty}", srcs.len()),
        }
    }
}
