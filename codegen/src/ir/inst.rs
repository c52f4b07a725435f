//! One instruction of the IR: an op from one of the families, tagged with its family.

use super::arith::ArithOp;
use super::fragment::FragmentOp;
use super::mbarrier::MbarrierOp;
use super::memory::MemoryOp;
use super::special::SpecialReg;
use super::sync::SyncOp;
use super::tcgen05::Tcgen05Op;
use super::tma::TmaOp;
use super::value::Reg;
use super::warp::WarpOp;
use super::wgmma::WgmmaOp;

#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    Arith(ArithOp),
    /// `mov.u32 dst, %special`.
    ReadSpecial {
        dst: Reg,
        sreg: SpecialReg,
    },
    Memory(MemoryOp),
    Mbarrier(MbarrierOp),
    Sync(SyncOp),
    Tma(TmaOp),
    Tcgen05(Tcgen05Op),
    /// Hopper warpgroup MMA (sm_90a).
    Wgmma(WgmmaOp),
    /// Packing and storing register fragments.
    Fragment(FragmentOp),
    /// Warp collectives (`shfl`, `vote`, `redux`, `match`).
    Warp(WarpOp),
    /// `printf(format, args..)` through CUDA's `vprintf`.
    Printf(super::escape::Printf),
    /// Inline PTX written by the user (`T.asm`).
    Asm(super::escape::InlineAsm),
    /// A recorded event: the simulator logs `(tag, values)` per thread; the PTX printer
    /// emits nothing but a comment. Used for traces like the seeds' phase tables.
    Probe {
        tag: &'static str,
        values: Vec<super::value::Value>,
    },
    /// The wait watchdog's marks on a flag wait's spin loop (`ir/flag.rs`).
    FlagSpin(super::flag::FlagSpin),
}

impl From<ArithOp> for Inst {
    fn from(op: ArithOp) -> Inst {
        Inst::Arith(op)
    }
}
impl From<MemoryOp> for Inst {
    fn from(op: MemoryOp) -> Inst {
        Inst::Memory(op)
    }
}
impl From<MbarrierOp> for Inst {
    fn from(op: MbarrierOp) -> Inst {
        Inst::Mbarrier(op)
    }
}
impl From<SyncOp> for Inst {
    fn from(op: SyncOp) -> Inst {
        Inst::Sync(op)
    }
}
impl From<TmaOp> for Inst {
    fn from(op: TmaOp) -> Inst {
        Inst::Tma(op)
    }
}
impl From<Tcgen05Op> for Inst {
    fn from(op: Tcgen05Op) -> Inst {
        Inst::Tcgen05(op)
    }
}
impl From<WgmmaOp> for Inst {
    fn from(op: WgmmaOp) -> Inst {
        Inst::Wgmma(op)
    }
}
impl From<WarpOp> for Inst {
    fn from(op: WarpOp) -> Inst {
        Inst::Warp(op)
    }
}
impl From<FragmentOp> for Inst {
    fn from(op: FragmentOp) -> Inst {
        Inst::Fragment(op)
    }
}
