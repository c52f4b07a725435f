//! Names of an instruction: its PTX mnemonic (the instruction family the printer emits, for
//! messages and docs) and its IR variant (`Mbarrier::Arrive`, stable for tests and tables).

use super::arith::{ArithOp, BinOp, FloatBinOp, MathFn, UnOp};
use super::flag::FlagSpin;
use super::fragment::FragmentOp;
use super::inst::Inst;
use super::mbarrier::MbarrierOp;
use super::memory::MemoryOp;
use super::sync::SyncOp;
use super::tcgen05::Tcgen05Op;
use super::tma::TmaOp;
use super::warp::WarpOp;
use super::wgmma::WgmmaOp;

impl Inst {
    /// The PTX instruction the printer emits for it, without its qualifiers:
    /// `mbarrier.arrive`, `cp.async.bulk.tensor`, `wgmma.mma_async`. A blocking wait is its
    /// `mbarrier.try_wait` loop; `printf` is a `call` of `vprintf`; inline PTX is `asm` and a
    /// probe (which prints only a comment) `probe`.
    pub fn mnemonic(&self) -> &'static str {
        self.names().1
    }

    /// The IR variant, `Family::Variant` (`Mbarrier::Arrive`, `Sync::BarSync`, `ReadSpecial`).
    pub fn variant_name(&self) -> &'static str {
        self.names().0
    }

    /// (variant, mnemonic).
    fn names(&self) -> (&'static str, &'static str) {
        match self {
            Inst::Arith(op) => arith(op),
            Inst::ReadSpecial { .. } => ("ReadSpecial", "mov"),
            Inst::Memory(op) => memory(op),
            Inst::Mbarrier(op) => mbarrier(op),
            Inst::Sync(op) => sync(op),
            Inst::Tma(op) => tma(op),
            Inst::Tcgen05(op) => tcgen05(op),
            Inst::Wgmma(op) => match op {
                WgmmaOp::Fence => ("Wgmma::Fence", "wgmma.fence"),
                WgmmaOp::CommitGroup => ("Wgmma::CommitGroup", "wgmma.commit_group"),
                WgmmaOp::WaitGroup { .. } => ("Wgmma::WaitGroup", "wgmma.wait_group"),
                WgmmaOp::MmaAsync(_) => ("Wgmma::MmaAsync", "wgmma.mma_async"),
            },
            Inst::Fragment(op) => match op {
                FragmentOp::PackHalf2 { .. } => ("Fragment::PackHalf2", "cvt"),
                FragmentOp::PackFp8x2 { .. } => ("Fragment::PackFp8x2", "cvt"),
                // Moves of the halves (and `cvt` from f16).
                FragmentOp::UnpackHalf2 { .. } => ("Fragment::UnpackHalf2", "mov"),
                FragmentOp::StMatrix { .. } => ("Fragment::StMatrix", "stmatrix"),
                FragmentOp::LdMatrix { .. } => ("Fragment::LdMatrix", "ldmatrix"),
            },
            Inst::Warp(op) => match op {
                WarpOp::Shfl { .. } => ("Warp::Shfl", "shfl.sync"),
                WarpOp::Vote { .. } => ("Warp::Vote", "vote.sync"),
                WarpOp::Redux { .. } => ("Warp::Redux", "redux.sync"),
                WarpOp::Match { .. } => ("Warp::Match", "match"),
            },
            Inst::Printf(_) => ("Printf", "call"),
            Inst::Asm(_) => ("Asm", "asm"),
            Inst::Probe { .. } => ("Probe", "probe"),
            Inst::FlagSpin(FlagSpin::Start { .. }) => ("FlagSpin::Start", "mov"),
            Inst::FlagSpin(FlagSpin::Try { .. }) => ("FlagSpin::Try", "add"),
        }
    }
}

fn arith(op: &ArithOp) -> (&'static str, &'static str) {
    match op {
        ArithOp::Mov { .. } => ("Arith::Mov", "mov"),
        ArithOp::Unary { op, .. } => (
            "Arith::Unary",
            match op {
                UnOp::Neg => "neg",
                UnOp::Not => "not",
                UnOp::Abs => "abs",
            },
        ),
        ArithOp::Binary { op, .. } => (
            "Arith::Binary",
            match op {
                BinOp::Add => "add",
                BinOp::Sub => "sub",
                BinOp::Mul => "mul",
                BinOp::Div => "div",
                BinOp::Rem => "rem",
                BinOp::Min => "min",
                BinOp::Max => "max",
                BinOp::And => "and",
                BinOp::Or => "or",
                BinOp::Xor => "xor",
                BinOp::Shl => "shl",
                BinOp::Shr => "shr",
            },
        ),
        ArithOp::Mad { dst, .. } => ("Arith::Mad", if dst.ty.is_float() { "fma" } else { "mad" }),
        ArithOp::Setp { .. } => ("Arith::Setp", "setp"),
        ArithOp::Selp { .. } => ("Arith::Selp", "selp"),
        ArithOp::Cvt { .. } => ("Arith::Cvt", "cvt"),
        ArithOp::Math { fun, .. } => ("Arith::Math", math_mnemonic(*fun)),
        ArithOp::MathHalf2 { fun, .. } => ("Arith::MathHalf2", math_mnemonic(*fun)),
        ArithOp::FloatBinary { op, .. } => (
            "Arith::FloatBinary",
            match op {
                FloatBinOp::MinNaN => "min",
                FloatBinOp::MaxNaN => "max",
                FloatBinOp::Copysign => "copysign",
            },
        ),
        ArithOp::Bitcast { .. } => ("Arith::Bitcast", "mov"),
    }
}

fn memory(op: &MemoryOp) -> (&'static str, &'static str) {
    match op {
        MemoryOp::Ld { .. } => ("Memory::Ld", "ld"),
        MemoryOp::St { .. } => ("Memory::St", "st"),
        MemoryOp::SharedAddr { .. } => ("Memory::SharedAddr", "mov"),
        MemoryOp::DynSharedAddr { .. } => ("Memory::DynSharedAddr", "mov"),
        MemoryOp::ParamAddr { .. } => ("Memory::ParamAddr", "cvta.param"),
        MemoryOp::CpAsync { .. } => ("Memory::CpAsync", "cp.async"),
        MemoryOp::CpAsyncCommitGroup => ("Memory::CpAsyncCommitGroup", "cp.async.commit_group"),
        MemoryOp::CpAsyncMbarrierArrive { .. } => ("Memory::CpAsyncMbarrierArrive", "cp.async.mbarrier.arrive"),
        MemoryOp::CpAsyncWaitGroup { .. } => ("Memory::CpAsyncWaitGroup", "cp.async.wait_group"),
        MemoryOp::LdVec { .. } => ("Memory::LdVec", "ld"),
        MemoryOp::StVec { .. } => ("Memory::StVec", "st"),
        MemoryOp::Atom { dst: Some(_), .. } => ("Memory::Atom", "atom"),
        MemoryOp::Atom { dst: None, .. } => ("Memory::Atom", "red"),
    }
}

fn mbarrier(op: &MbarrierOp) -> (&'static str, &'static str) {
    match op {
        MbarrierOp::Init { .. } => ("Mbarrier::Init", "mbarrier.init"),
        MbarrierOp::Inval { .. } => ("Mbarrier::Inval", "mbarrier.inval"),
        MbarrierOp::Arrive { drop: false, .. } => ("Mbarrier::Arrive", "mbarrier.arrive"),
        MbarrierOp::Arrive { drop: true, .. } => ("Mbarrier::Arrive", "mbarrier.arrive_drop"),
        MbarrierOp::ArriveExpectTx { .. } => ("Mbarrier::ArriveExpectTx", "mbarrier.arrive.expect_tx"),
        MbarrierOp::ExpectTx { .. } => ("Mbarrier::ExpectTx", "mbarrier.expect_tx"),
        MbarrierOp::CompleteTx { .. } => ("Mbarrier::CompleteTx", "mbarrier.complete_tx"),
        MbarrierOp::TestWait { .. } => ("Mbarrier::TestWait", "mbarrier.test_wait"),
        MbarrierOp::TryWait { .. } => ("Mbarrier::TryWait", "mbarrier.try_wait"),
        MbarrierOp::Wait { .. } => ("Mbarrier::Wait", "mbarrier.try_wait"),
        MbarrierOp::PendingCount { .. } => ("Mbarrier::PendingCount", "mbarrier.pending_count"),
    }
}

fn sync(op: &SyncOp) -> (&'static str, &'static str) {
    match op {
        SyncOp::BarSync { .. } => ("Sync::BarSync", "bar.sync"),
        SyncOp::BarArrive { .. } => ("Sync::BarArrive", "bar.arrive"),
        SyncOp::FenceMbarrierInit => ("Sync::FenceMbarrierInit", "fence.mbarrier_init"),
        SyncOp::FenceProxyAsync { .. } => ("Sync::FenceProxyAsync", "fence.proxy.async"),
        SyncOp::MemBar { .. } => ("Sync::MemBar", "fence.acq_rel"),
        SyncOp::WarpSync { .. } => ("Sync::WarpSync", "bar.warp.sync"),
        SyncOp::ElectSync { .. } => ("Sync::ElectSync", "elect.sync"),
        SyncOp::ActiveMask { .. } => ("Sync::ActiveMask", "activemask"),
        SyncOp::SetMaxNReg { .. } => ("Sync::SetMaxNReg", "setmaxnreg"),
        SyncOp::Mapa { .. } => ("Sync::Mapa", "mapa"),
        SyncOp::ClusterArrive { .. } => ("Sync::ClusterArrive", "barrier.cluster.arrive"),
        SyncOp::ClusterWait => ("Sync::ClusterWait", "barrier.cluster.wait"),
        SyncOp::Trap => ("Sync::Trap", "trap"),
        SyncOp::Nanosleep { .. } => ("Sync::Nanosleep", "nanosleep"),
        SyncOp::GridDepWait => ("Sync::GridDepWait", "griddepcontrol.wait"),
        SyncOp::GridDepLaunchDependents => ("Sync::GridDepLaunchDependents", "griddepcontrol.launch_dependents"),
    }
}

fn tma(op: &TmaOp) -> (&'static str, &'static str) {
    match op {
        TmaOp::LoadTensor { .. } => ("Tma::LoadTensor", "cp.async.bulk.tensor"),
        TmaOp::StoreTensor { .. } => ("Tma::StoreTensor", "cp.async.bulk.tensor"),
        TmaOp::LoadBulk { .. } => ("Tma::LoadBulk", "cp.async.bulk"),
        TmaOp::LoadBulkMulticast { .. } => ("Tma::LoadBulkMulticast", "cp.async.bulk"),
        TmaOp::CopyBulkCluster { .. } => ("Tma::CopyBulkCluster", "cp.async.bulk"),
        TmaOp::StoreBulk { .. } => ("Tma::StoreBulk", "cp.async.bulk"),
        TmaOp::CommitGroup => ("Tma::CommitGroup", "cp.async.bulk.commit_group"),
        TmaOp::WaitGroup { .. } => ("Tma::WaitGroup", "cp.async.bulk.wait_group"),
        TmaOp::PrefetchTensor { .. } => ("Tma::PrefetchTensor", "cp.async.bulk.prefetch.tensor"),
    }
}

fn tcgen05(op: &Tcgen05Op) -> (&'static str, &'static str) {
    match op {
        Tcgen05Op::Alloc { .. } => ("Tcgen05::Alloc", "tcgen05.alloc"),
        Tcgen05Op::Dealloc { .. } => ("Tcgen05::Dealloc", "tcgen05.dealloc"),
        Tcgen05Op::RelinquishAllocPermit { .. } => {
            ("Tcgen05::RelinquishAllocPermit", "tcgen05.relinquish_alloc_permit")
        }
        Tcgen05Op::Ld { .. } => ("Tcgen05::Ld", "tcgen05.ld"),
        Tcgen05Op::St { .. } => ("Tcgen05::St", "tcgen05.st"),
        Tcgen05Op::Wait { .. } => ("Tcgen05::Wait", "tcgen05.wait"),
        Tcgen05Op::Cp { .. } => ("Tcgen05::Cp", "tcgen05.cp"),
        Tcgen05Op::Shift { .. } => ("Tcgen05::Shift", "tcgen05.shift"),
        Tcgen05Op::Mma(_) => ("Tcgen05::Mma", "tcgen05.mma"),
        Tcgen05Op::Commit { .. } => ("Tcgen05::Commit", "tcgen05.commit"),
        Tcgen05Op::Fence { .. } => ("Tcgen05::Fence", "tcgen05.fence"),
    }
}

fn math_mnemonic(fun: MathFn) -> &'static str {
    match fun {
        MathFn::Ex2Approx => "ex2",
        MathFn::Lg2Approx => "lg2",
        MathFn::RcpApprox | MathFn::RcpRn => "rcp",
        MathFn::RsqrtApprox => "rsqrt",
        MathFn::SqrtApprox | MathFn::SqrtRn => "sqrt",
    }
}
