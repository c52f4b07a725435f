//! Hopper warpgroup tensor-core ops (`wgmma.*`, sm_90a): an asynchronous 64xNxK
//! matrix multiply-accumulate issued by the 128 threads of a warpgroup, reading B (and
//! optionally A) from shared memory through matrix descriptors and accumulating into
//! registers, plus the fence and group bookkeeping around it.
//!
//! Protocol (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
//! `wgmma.fence` orders prior register accesses (of the accumulator and A fragment) before
//! the next `mma_async`; `commit_group` closes the batch of uncommitted `mma_async`s of the
//! executing thread into a group; `wait_group N` waits until at most `N` groups are pending.
//! Only then may the accumulator be read, or the shared-memory operands be overwritten.

use super::value::{Reg, Value};

/// Element types of the multiplicands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaElem {
    F16,
    BF16,
    /// FP8 `e4m3` (k32 shapes only).
    E4M3,
    /// FP8 `e5m2` (k32 shapes only).
    E5M2,
}

impl MmaElem {
    pub fn ptx(self) -> &'static str {
        match self {
            MmaElem::F16 => "f16",
            MmaElem::BF16 => "bf16",
            MmaElem::E4M3 => "e4m3",
            MmaElem::E5M2 => "e5m2",
        }
    }
    pub fn bytes(self) -> u32 {
        match self {
            MmaElem::F16 | MmaElem::BF16 => 2,
            MmaElem::E4M3 | MmaElem::E5M2 => 1,
        }
    }
    pub fn is_fp8(self) -> bool {
        self.bytes() == 1
    }
}

/// Where multiplicand A comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum WgmmaA {
    /// A 64-bit shared-memory matrix descriptor.
    Desc(Value),
    /// Four `b32` registers per thread, each packing two 16-bit (or four FP8) elements,
    /// in the layout of the PTX ISA's "wgmma .m64nNk16 register fragment layout for A".
    Regs([Value; 4]),
}

/// `wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{a}.{b}`: `d = a * b + (scale_d ? d : 0)`.
#[derive(Clone, Debug, PartialEq)]
pub struct MmaAsync {
    /// N (`arch::wgmma` says which).
    pub n: u32,
    pub a_ty: MmaElem,
    pub b_ty: MmaElem,
    /// The f32 accumulator: `n / 2` registers per thread (the D fragment).
    pub d: Vec<Reg>,
    pub a: WgmmaA,
    pub b_desc: Value,
    /// A predicate (register or immediate): false computes `d = a * b`.
    pub scale_d: Value,
    /// `imm-scale-a/-b = -1`: negate the multiplicand.
    pub negate_a: bool,
    pub negate_b: bool,
    /// `imm-trans-a/-b = 1`: the operand is M-/N-major in shared memory (16-bit types with
    /// descriptors only).
    pub trans_a: bool,
    pub trans_b: bool,
}

impl MmaAsync {
    /// The instruction's K (`MmaElem::k`, in `arch::wgmma`).
    pub fn k(&self) -> u32 {
        self.a_ty.k()
    }
    /// `m64n{n}k{k}`.
    pub fn shape(&self) -> String {
        format!("m64n{}k{}", self.n, self.k())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum WgmmaOp {
    /// `wgmma.fence.sync.aligned`.
    Fence,
    /// `wgmma.commit_group.sync.aligned`.
    CommitGroup,
    /// `wgmma.wait_group.sync.aligned n`.
    WaitGroup {
        n: u32,
    },
    MmaAsync(Box<MmaAsync>),
}

impl WgmmaOp {
    /// The PTX mnemonic, for messages (the simulator's "unsupported op" names it).
    pub fn mnemonic(&self) -> String {
        match self {
            WgmmaOp::Fence => "wgmma.fence".into(),
            WgmmaOp::CommitGroup => "wgmma.commit_group".into(),
            WgmmaOp::WaitGroup { .. } => "wgmma.wait_group".into(),
            WgmmaOp::MmaAsync(m) => format!("wgmma.mma_async.{}.f32.{}.{}", m.shape(), m.a_ty.ptx(), m.b_ty.ptx()),
        }
    }
}
