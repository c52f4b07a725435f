//! The registers an instruction reads and writes, for every family: what passes that track
//! registers ask (the simulator's wgmma-register check, tests against the printed PTX).
//!
//! Uses are the values an instruction reads, immediates included (an address, a count, a
//! mask); defs are the registers it writes. A read-modify-write operand (a wgmma accumulator,
//! which `scale_d` may add to) is both. A register written asynchronously (a `tcgen05.ld`
//! destination, an accumulator) is a def of the instruction that starts the write.
//!
//! Every match is exhaustive: a new op does not compile until it says what it reads and writes.

use super::arith::ArithOp;
use super::fragment::FragmentOp;
use super::inst::Inst;
use super::mbarrier::{mbarrier_operand, MbarrierOp, WaitOn};
use super::memory::MemoryOp;
use super::sync::SyncOp;
use super::tcgen05::{MmaA, Tcgen05Op};
use super::tma::TmaOp;
use super::value::{Reg, Value};
use super::warp::WarpOp;
use super::wgmma::{WgmmaA, WgmmaOp};

/// The barrier operand of `$inst` (a `&Inst` or a `&mut Inst`: one match serves both).
macro_rules! barrier_operand {
    ($inst:expr) => {
        match $inst {
            Inst::Mbarrier(op) => mbarrier_operand!(op),
            Inst::Memory(op) => match op {
                MemoryOp::CpAsyncMbarrierArrive { bar, .. } => Some(bar),
                MemoryOp::Ld { .. }
                | MemoryOp::St { .. }
                | MemoryOp::SharedAddr { .. }
                | MemoryOp::DynSharedAddr { .. }
                | MemoryOp::ParamAddr { .. }
                | MemoryOp::CpAsync { .. }
                | MemoryOp::CpAsyncCommitGroup
                | MemoryOp::CpAsyncWaitGroup { .. }
                | MemoryOp::LdVec { .. }
                | MemoryOp::StVec { .. }
                | MemoryOp::Atom { .. } => None,
            },
            Inst::Tma(op) => match op {
                TmaOp::LoadTensor { bar, .. }
                | TmaOp::LoadBulk { bar, .. }
                | TmaOp::LoadBulkMulticast { bar, .. }
                | TmaOp::CopyBulkCluster { bar, .. } => Some(bar),
                TmaOp::StoreTensor { .. }
                | TmaOp::StoreBulk { .. }
                | TmaOp::CommitGroup
                | TmaOp::WaitGroup { .. }
                | TmaOp::PrefetchTensor { .. } => None,
            },
            Inst::Tcgen05(op) => match op {
                Tcgen05Op::Commit { bar, .. } => Some(bar),
                Tcgen05Op::Alloc { .. }
                | Tcgen05Op::Dealloc { .. }
                | Tcgen05Op::RelinquishAllocPermit { .. }
                | Tcgen05Op::Ld { .. }
                | Tcgen05Op::St { .. }
                | Tcgen05Op::Wait { .. }
                | Tcgen05Op::Cp { .. }
                | Tcgen05Op::Shift { .. }
                | Tcgen05Op::Mma(_)
                | Tcgen05Op::Fence { .. } => None,
            },
            // No mbarrier operand in these families (`bar.sync` names a CTA barrier, not an
            // mbarrier; `Sync` is matched in full since barriers live there).
            Inst::Sync(op) => match op {
                SyncOp::BarSync { .. }
                | SyncOp::BarArrive { .. }
                | SyncOp::FenceMbarrierInit
                | SyncOp::FenceProxyAsync { .. }
                | SyncOp::MemBar { .. }
                | SyncOp::WarpSync { .. }
                | SyncOp::ElectSync { .. }
                | SyncOp::ActiveMask { .. }
                | SyncOp::SetMaxNReg { .. }
                | SyncOp::Mapa { .. }
                | SyncOp::ClusterArrive { .. }
                | SyncOp::ClusterWait
                | SyncOp::Trap
                | SyncOp::Nanosleep { .. }
                | SyncOp::GridDepWait
                | SyncOp::GridDepLaunchDependents => None,
            },
            Inst::Arith(_)
            | Inst::ReadSpecial { .. }
            | Inst::Wgmma(_)
            | Inst::Fragment(_)
            | Inst::Warp(_)
            | Inst::Printf(_)
            | Inst::Asm(_)
            | Inst::Probe { .. }
            | Inst::FlagSpin(_) => None,
        }
    };
}

impl Inst {
    /// Calls `f` with every value the instruction reads, in operand order.
    pub fn for_each_use(&self, mut f: impl FnMut(&Value)) {
        let f: &mut dyn FnMut(&Value) = &mut f;
        match self {
            Inst::Arith(op) => arith_uses(op, f),
            Inst::ReadSpecial { dst: _, sreg: _ } => {}
            Inst::Memory(op) => memory_uses(op, f),
            Inst::Mbarrier(op) => mbarrier_uses(op, f),
            Inst::Sync(op) => sync_uses(op, f),
            Inst::Tma(op) => tma_uses(op, f),
            Inst::Tcgen05(op) => tcgen05_uses(op, f),
            Inst::Wgmma(op) => wgmma_uses(op, f),
            Inst::Fragment(op) => fragment_uses(op, f),
            Inst::Warp(op) => warp_uses(op, f),
            Inst::Printf(p) => p.args.iter().for_each(f),
            Inst::Asm(a) => a.inputs.iter().for_each(f),
            Inst::Probe { tag: _, values } => values.iter().for_each(f),
            Inst::FlagSpin(s) => s.for_each_use(f),
        }
    }

    /// Calls `f` with every register the instruction writes.
    pub fn for_each_def(&self, mut f: impl FnMut(Reg)) {
        let f: &mut dyn FnMut(Reg) = &mut f;
        match self {
            Inst::Arith(op) => f(arith_def(op)),
            Inst::ReadSpecial { dst, sreg: _ } => f(*dst),
            Inst::Memory(op) => memory_defs(op, f),
            Inst::Mbarrier(op) => mbarrier_defs(op, f),
            Inst::Sync(op) => sync_defs(op, f),
            Inst::Tma(op) => tma_defs(op, f),
            Inst::Tcgen05(op) => tcgen05_defs(op, f),
            Inst::Wgmma(op) => wgmma_defs(op, f),
            Inst::Fragment(op) => fragment_defs(op, f),
            Inst::Warp(op) => f(warp_def(op)),
            Inst::Printf(_) | Inst::Probe { .. } => {}
            Inst::Asm(a) => a.outputs.iter().copied().for_each(f),
            Inst::FlagSpin(s) => s.for_each_def(f),
        }
    }

    /// The registers the instruction reads (its uses that are not immediates).
    pub fn regs_used(&self) -> Vec<Reg> {
        let mut v = Vec::new();
        self.for_each_use(|u| v.extend(u.as_reg()));
        v
    }

    /// The registers the instruction writes.
    pub fn regs_defined(&self) -> Vec<Reg> {
        let mut v = Vec::new();
        self.for_each_def(|r| v.push(r));
        v
    }

    /// The mbarrier operand: the barrier an mbarrier op acts on, a copy completes on
    /// (`complete_tx`), or an arrival-on-completion (`cp.async.mbarrier.arrive`,
    /// `tcgen05.commit`) arrives on.
    pub fn barrier(&self) -> Option<&Value> {
        barrier_operand!(self)
    }

    /// [`Inst::barrier`], to change it (the mutation tool points a barrier elsewhere).
    pub fn barrier_mut(&mut self) -> Option<&mut Value> {
        barrier_operand!(self)
    }
}

fn arith_uses(op: &ArithOp, f: &mut dyn FnMut(&Value)) {
    match op {
        ArithOp::Mov { dst: _, src }
        | ArithOp::Cvt { dst: _, src, rounding: _ }
        | ArithOp::Unary { dst: _, a: src, op: _ }
        | ArithOp::Math { fun: _, dst: _, a: src }
        | ArithOp::MathHalf2 { fun: _, half: _, dst: _, a: src }
        | ArithOp::Bitcast { dst: _, src } => f(src),
        ArithOp::Binary { op: _, dst: _, a, b }
        | ArithOp::Setp { cmp: _, dst: _, a, b }
        | ArithOp::FloatBinary { op: _, dst: _, a, b } => {
            [a, b].into_iter().for_each(f)
        }
        ArithOp::Mad { dst: _, a, b, c } => [a, b, c].into_iter().for_each(f),
        ArithOp::Selp { dst: _, cond, a, b } => [cond, a, b].into_iter().for_each(f),
    }
}

fn arith_def(op: &ArithOp) -> Reg {
    match op {
        ArithOp::Mov { dst, .. }
        | ArithOp::Unary { dst, .. }
        | ArithOp::Binary { dst, .. }
        | ArithOp::Mad { dst, .. }
        | ArithOp::Setp { dst, .. }
        | ArithOp::Selp { dst, .. }
        | ArithOp::Cvt { dst, .. }
        | ArithOp::Math { dst, .. }
        | ArithOp::MathHalf2 { dst, .. }
        | ArithOp::FloatBinary { dst, .. }
        | ArithOp::Bitcast { dst, .. } => *dst,
    }
}

fn memory_uses(op: &MemoryOp, f: &mut dyn FnMut(&Value)) {
    match op {
        MemoryOp::Ld { addr, .. } | MemoryOp::LdVec { addr, .. } => f(addr),
        MemoryOp::St { addr, src, .. } => [addr, src].into_iter().for_each(f),
        MemoryOp::StVec { addr, srcs, .. } => std::iter::once(addr).chain(srcs).for_each(f),
        MemoryOp::Atom { addr, src, cmp, .. } => [addr, src].into_iter().chain(cmp).for_each(f),
        MemoryOp::CpAsync { dst, src, bytes: _ } => [dst, src].into_iter().for_each(f),
        MemoryOp::CpAsyncMbarrierArrive { bar, noinc: _ } => f(bar),
        MemoryOp::SharedAddr { .. }
        | MemoryOp::DynSharedAddr { .. }
        | MemoryOp::ParamAddr { .. }
        | MemoryOp::CpAsyncCommitGroup
        | MemoryOp::CpAsyncWaitGroup { .. } => {}
    }
}

fn memory_defs(op: &MemoryOp, f: &mut dyn FnMut(Reg)) {
    match op {
        MemoryOp::Ld { dst, .. }
        | MemoryOp::SharedAddr { dst, .. }
        | MemoryOp::DynSharedAddr { dst }
        | MemoryOp::ParamAddr { dst, .. } => f(*dst),
        MemoryOp::LdVec { dsts, .. } => dsts.iter().copied().for_each(f),
        MemoryOp::Atom { dst, .. } => dst.iter().copied().for_each(f),
        MemoryOp::St { .. }
        | MemoryOp::StVec { .. }
        | MemoryOp::CpAsync { .. }
        | MemoryOp::CpAsyncCommitGroup
        | MemoryOp::CpAsyncMbarrierArrive { .. }
        | MemoryOp::CpAsyncWaitGroup { .. } => {}
    }
}

fn wait_on_value(on: &WaitOn) -> &Value {
    match on {
        WaitOn::Parity(v) | WaitOn::State(v) => v,
    }
}

fn mbarrier_uses(op: &MbarrierOp, f: &mut dyn FnMut(&Value)) {
    match op {
        MbarrierOp::Init { bar, count } => [bar, count].into_iter().for_each(f),
        MbarrierOp::Inval { bar } => f(bar),
        MbarrierOp::Arrive { bar, count, .. } => std::iter::once(bar).chain(count).for_each(f),
        MbarrierOp::ArriveExpectTx { bar, bytes, .. }
        | MbarrierOp::ExpectTx { bar, bytes, .. }
        | MbarrierOp::CompleteTx { bar, bytes, .. } => [bar, bytes].into_iter().for_each(f),
        MbarrierOp::TestWait { bar, on, .. } | MbarrierOp::Wait { bar, on, .. } => {
            [bar, wait_on_value(on)].into_iter().for_each(f)
        }
        MbarrierOp::TryWait { bar, on, hint, .. } => [bar, wait_on_value(on)].into_iter().chain(hint).for_each(f),
        MbarrierOp::PendingCount { dst: _, state } => f(state),
    }
}

fn mbarrier_defs(op: &MbarrierOp, f: &mut dyn FnMut(Reg)) {
    match op {
        MbarrierOp::Arrive { state, .. } | MbarrierOp::ArriveExpectTx { state, .. } => {
            state.iter().copied().for_each(f)
        }
        MbarrierOp::TestWait { done, .. } | MbarrierOp::TryWait { done, .. } => f(*done),
        MbarrierOp::PendingCount { dst, .. } => f(*dst),
        MbarrierOp::Init { .. }
        | MbarrierOp::Inval { .. }
        | MbarrierOp::ExpectTx { .. }
        | MbarrierOp::CompleteTx { .. }
        | MbarrierOp::Wait { .. } => {}
    }
}

fn sync_uses(op: &SyncOp, f: &mut dyn FnMut(&Value)) {
    match op {
        SyncOp::BarSync { id, count } => std::iter::once(id).chain(count).for_each(f),
        SyncOp::BarArrive { id, count } => [id, count].into_iter().for_each(f),
        SyncOp::WarpSync { mask } => f(mask),
        SyncOp::Mapa { dst: _, addr, cta } => [addr, cta].into_iter().for_each(f),
        SyncOp::Nanosleep { ns } => f(ns),
        SyncOp::FenceMbarrierInit
        | SyncOp::FenceProxyAsync { .. }
        | SyncOp::MemBar { .. }
        | SyncOp::ElectSync { .. }
        | SyncOp::ActiveMask { .. }
        | SyncOp::SetMaxNReg { .. }
        | SyncOp::ClusterArrive { .. }
        | SyncOp::ClusterWait
        | SyncOp::Trap
        | SyncOp::GridDepWait
        | SyncOp::GridDepLaunchDependents => {}
    }
}

fn sync_defs(op: &SyncOp, f: &mut dyn FnMut(Reg)) {
    match op {
        SyncOp::ElectSync { pred: dst } | SyncOp::ActiveMask { dst } | SyncOp::Mapa { dst, .. } => f(*dst),
        SyncOp::BarSync { .. }
        | SyncOp::BarArrive { .. }
        | SyncOp::FenceMbarrierInit
        | SyncOp::FenceProxyAsync { .. }
        | SyncOp::MemBar { .. }
        | SyncOp::WarpSync { .. }
        | SyncOp::SetMaxNReg { .. }
        | SyncOp::ClusterArrive { .. }
        | SyncOp::ClusterWait
        | SyncOp::Trap
        | SyncOp::Nanosleep { .. }
        | SyncOp::GridDepWait
        | SyncOp::GridDepLaunchDependents => {}
    }
}

fn tma_uses(op: &TmaOp, f: &mut dyn FnMut(&Value)) {
    match op {
        TmaOp::LoadTensor { dst, tmap, coords, bar, multicast, cache_hint } => {
            [dst, tmap].into_iter().chain(coords).chain([bar]).chain(multicast).chain(cache_hint).for_each(f)
        }
        TmaOp::StoreTensor { tmap, coords, src } => std::iter::once(tmap).chain(coords).chain([src]).for_each(f),
        TmaOp::LoadBulk { dst, src, bytes, bar } | TmaOp::CopyBulkCluster { dst, src, bytes, bar } => {
            [dst, src, bytes, bar].into_iter().for_each(f)
        }
        TmaOp::LoadBulkMulticast { dst, src, bytes, bar, cta_mask } => {
            [dst, src, bytes, bar, cta_mask].into_iter().for_each(f)
        }
        TmaOp::StoreBulk { dst, src, bytes } => [dst, src, bytes].into_iter().for_each(f),
        TmaOp::PrefetchTensor { tmap, coords } => std::iter::once(tmap).chain(coords).for_each(f),
        TmaOp::CommitGroup | TmaOp::WaitGroup { .. } => {}
    }
}

/// Bulk copies write memory, never registers.
fn tma_defs(op: &TmaOp, _f: &mut dyn FnMut(Reg)) {
    match op {
        TmaOp::LoadTensor { .. }
        | TmaOp::StoreTensor { .. }
        | TmaOp::LoadBulk { .. }
        | TmaOp::LoadBulkMulticast { .. }
        | TmaOp::CopyBulkCluster { .. }
        | TmaOp::StoreBulk { .. }
        | TmaOp::CommitGroup
        | TmaOp::WaitGroup { .. }
        | TmaOp::PrefetchTensor { .. } => {}
    }
}

fn tcgen05_uses(op: &Tcgen05Op, f: &mut dyn FnMut(&Value)) {
    match op {
        // `dst` is the shared address the allocated tensor-memory address is written to.
        Tcgen05Op::Alloc { cta_group: _, dst, ncols } => [dst, ncols].into_iter().for_each(f),
        Tcgen05Op::Dealloc { cta_group: _, taddr, ncols } => [taddr, ncols].into_iter().for_each(f),
        Tcgen05Op::Ld { taddr, .. } | Tcgen05Op::Shift { taddr, .. } => f(taddr),
        Tcgen05Op::St { taddr, src, .. } => std::iter::once(taddr).chain(src).for_each(f),
        Tcgen05Op::Cp { taddr, s_desc, .. } => [taddr, s_desc].into_iter().for_each(f),
        Tcgen05Op::Mma(m) => {
            let a = match &m.a {
                MmaA::Desc(v) | MmaA::Tmem(v) => v,
            };
            [&m.d_tmem, a, &m.b_desc, &m.idesc, &m.enable_input_d].into_iter().for_each(f)
        }
        Tcgen05Op::Commit { cta_group: _, bar, multicast } => std::iter::once(bar).chain(multicast).for_each(f),
        Tcgen05Op::RelinquishAllocPermit { .. } | Tcgen05Op::Wait { .. } | Tcgen05Op::Fence { .. } => {}
    }
}

fn tcgen05_defs(op: &Tcgen05Op, f: &mut dyn FnMut(Reg)) {
    match op {
        Tcgen05Op::Ld { dst, .. } => dst.iter().copied().for_each(f),
        // The allocation's address goes to shared memory, not to a register.
        Tcgen05Op::Alloc { .. }
        | Tcgen05Op::Dealloc { .. }
        | Tcgen05Op::RelinquishAllocPermit { .. }
        | Tcgen05Op::St { .. }
        | Tcgen05Op::Wait { .. }
        | Tcgen05Op::Cp { .. }
        | Tcgen05Op::Shift { .. }
        | Tcgen05Op::Mma(_)
        | Tcgen05Op::Commit { .. }
        | Tcgen05Op::Fence { .. } => {}
    }
}

fn wgmma_uses(op: &WgmmaOp, f: &mut dyn FnMut(&Value)) {
    match op {
        WgmmaOp::MmaAsync(m) => {
            // The accumulator is read (when `scale_d` is true) and written.
            m.d.iter().for_each(|r| f(&Value::Reg(*r)));
            match &m.a {
                WgmmaA::Desc(v) => f(v),
                WgmmaA::Regs(regs) => regs.iter().for_each(&mut *f),
            }
            [&m.b_desc, &m.scale_d].into_iter().for_each(f)
        }
        WgmmaOp::Fence | WgmmaOp::CommitGroup | WgmmaOp::WaitGroup { .. } => {}
    }
}

fn wgmma_defs(op: &WgmmaOp, f: &mut dyn FnMut(Reg)) {
    match op {
        WgmmaOp::MmaAsync(m) => m.d.iter().copied().for_each(f),
        WgmmaOp::Fence | WgmmaOp::CommitGroup | WgmmaOp::WaitGroup { .. } => {}
    }
}

fn fragment_uses(op: &FragmentOp, f: &mut dyn FnMut(&Value)) {
    match op {
        FragmentOp::PackHalf2 { dst: _, hi, lo, to: _ } | FragmentOp::PackFp8x2 { dst: _, hi, lo, to: _ } => {
            [hi, lo].into_iter().for_each(f)
        }
        FragmentOp::UnpackHalf2 { src, .. } => f(src),
        FragmentOp::StMatrix { addr, regs, trans: _ } => std::iter::once(addr).chain(regs).for_each(f),
        FragmentOp::LdMatrix { addr, .. } => f(addr),
    }
}

fn fragment_defs(op: &FragmentOp, f: &mut dyn FnMut(Reg)) {
    match op {
        FragmentOp::PackHalf2 { dst, .. } | FragmentOp::PackFp8x2 { dst, .. } => f(*dst),
        FragmentOp::UnpackHalf2 { lo, hi, .. } => [*lo, *hi].into_iter().for_each(f),
        FragmentOp::LdMatrix { dsts, .. } => dsts.iter().copied().for_each(f),
        FragmentOp::StMatrix { .. } => {}
    }
}

fn warp_uses(op: &WarpOp, f: &mut dyn FnMut(&Value)) {
    match op {
        WarpOp::Shfl { src, lane, mask, .. } => [src, lane, mask].into_iter().for_each(f),
        WarpOp::Vote { pred: src, mask, .. } | WarpOp::Redux { src, mask, .. } | WarpOp::Match { src, mask, .. } => {
            [src, mask].into_iter().for_each(f)
        }
    }
}

fn warp_def(op: &WarpOp) -> Reg {
    match op {
        WarpOp::Shfl { dst, .. } | WarpOp::Vote { dst, .. } | WarpOp::Redux { dst, .. } | WarpOp::Match { dst, .. } => {
            *dst
        }
    }
}
