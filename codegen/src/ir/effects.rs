//! What an instruction does besides writing its destination registers: the memory it reads
//! and writes, the synchronization it takes part in, the asynchronous work it starts, and
//! anything else a pass may not drop or reorder (a trap, a `printf`). Passes that reason about
//! ordering or progress ask [`Inst::effects`] instead of listing op families themselves.
//!
//! An mbarrier's state is not memory here (a wait reads no memory space): it is the
//! [`SyncEffect::Mbarrier`] the op has.

use super::flag::FlagSpin;
use super::fragment::FragmentOp;
use super::inst::Inst;
use super::mbarrier::MbarrierOp;
use super::memory::{Access, MemoryOp, Space};
use super::sync::{MemScope, ProxySpace, SyncOp};
use super::tcgen05::Tcgen05Op;
use super::tma::TmaOp;
use super::value::Value;
use super::wgmma::WgmmaOp;

/// A state space an instruction's memory accesses reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    Global,
    /// This CTA's shared memory.
    Shared,
    /// The shared memory of other CTAs of the cluster.
    SharedCluster,
    /// Tensor memory (tcgen05).
    Tensor,
    /// Kernel parameters (a TMA reads its tensor map there).
    Param,
}

impl MemSpace {
    const ALL: [MemSpace; 5] =
        [MemSpace::Global, MemSpace::Shared, MemSpace::SharedCluster, MemSpace::Tensor, MemSpace::Param];

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl From<Space> for MemSpace {
    fn from(s: Space) -> MemSpace {
        match s {
            Space::Global => MemSpace::Global,
            Space::Shared => MemSpace::Shared,
            Space::SharedCluster => MemSpace::SharedCluster,
        }
    }
}

/// A set of [`MemSpace`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Spaces(u8);

impl Spaces {
    pub const NONE: Spaces = Spaces(0);

    pub fn of(spaces: &[MemSpace]) -> Spaces {
        Spaces(spaces.iter().fold(0, |m, s| m | s.bit()))
    }
    pub fn contains(self, s: MemSpace) -> bool {
        self.0 & s.bit() != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = MemSpace> {
        MemSpace::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}

impl From<Space> for Spaces {
    fn from(s: Space) -> Spaces {
        Spaces::of(&[s.into()])
    }
}

/// A unit that runs operations asynchronously to the issuing thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AsyncUnit {
    /// Ampere `cp.async` copies.
    CpAsync,
    /// The Tensor Memory Accelerator (`cp.async.bulk*`).
    Bulk,
    /// Hopper's warpgroup tensor core (`wgmma.mma_async`).
    Wgmma,
    /// Blackwell's tensor core and tensor memory (`tcgen05.*`).
    Tcgen05,
}

/// How the issuer learns that an asynchronous operation finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// The unit performs `complete_tx` of the bytes on this mbarrier.
    Mbarrier(Value),
    /// The unit's groups: `commit_group`, then `wait_group`.
    Group,
    /// A later `tcgen05.commit` arrives on an mbarrier once it finished.
    Commit,
    /// A later `tcgen05.wait::ld` / `::st` of the thread.
    Wait,
}

/// Asynchronous work an instruction starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncLaunch {
    pub unit: AsyncUnit,
    pub completion: Completion,
}

/// What an mbarrier op does to its barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierAction {
    Init,
    Inval,
    /// Arrivals; `expect_tx`: with bytes the phase now also waits for.
    Arrive {
        expect_tx: bool,
    },
    /// `tx += bytes`, no arrival.
    ExpectTx,
    /// `tx -= bytes`, as a copy engine does.
    CompleteTx,
    /// One arrival, made once the thread's prior operations of the unit finished
    /// (`cp.async.mbarrier.arrive`, `tcgen05.commit`).
    ArriveOnCompletion(AsyncUnit),
    /// Observes a phase: `blocking` waits until it completed, else it tests once.
    Wait {
        blocking: bool,
    },
}

/// A memory fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fence {
    /// `fence.proxy.async`: generic-proxy accesses before async-proxy ones, in a space.
    ProxyAsync(ProxySpace),
    /// `fence.mbarrier_init.release.cluster`: barrier inits visible to the cluster.
    MbarrierInit,
    /// `fence.acq_rel` at a scope.
    AcqRel(MemScope),
    /// `wgmma.fence`: prior register and shared accesses before the next `wgmma.mma_async`.
    Wgmma,
    /// `tcgen05.fence::before_thread_sync` / `::after_thread_sync`.
    Tcgen05 { after: bool },
}

/// What a group op does to the thread's groups of asynchronous operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupAction {
    /// Closes the uncommitted operations into a group.
    Commit,
    /// Waits until at most `pending` groups are in flight (`read`: until they read their sources).
    Wait { pending: u32, read: bool },
}

/// The synchronization an instruction takes part in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncEffect {
    /// An mbarrier op on `bar`.
    Mbarrier {
        bar: Value,
        action: BarrierAction,
    },
    /// A CTA named barrier (`bar.sync`, `bar.arrive`): `waits` unless it only arrives.
    CtaBarrier {
        id: Value,
        waits: bool,
    },
    /// The cluster barrier (`barrier.cluster.arrive` / `.wait`).
    ClusterBarrier {
        waits: bool,
    },
    /// `bar.warp.sync`: the lanes of the mask converge.
    WarpBarrier,
    Fence(Fence),
    /// The thread's groups of a unit's asynchronous operations.
    Group {
        unit: AsyncUnit,
        action: GroupAction,
    },
    /// `tcgen05.wait::ld` / `::st`: the thread's tensor-memory loads (stores) finished.
    TensorMemoryWait {
        stores: bool,
    },
    /// Programmatic dependent launch: wait for the grids this one depends on, or let the
    /// dependent grid start.
    GridDependency {
        waits: bool,
    },
}

impl SyncEffect {
    /// Whether other threads can observe it happen (an arrival, a commit, a barrier init):
    /// waits, tests and fences only observe or order.
    pub fn signals(&self) -> bool {
        match self {
            SyncEffect::Mbarrier { action, .. } => match action {
                BarrierAction::Init
                | BarrierAction::Inval
                | BarrierAction::Arrive { .. }
                | BarrierAction::ExpectTx
                | BarrierAction::CompleteTx
                | BarrierAction::ArriveOnCompletion(_) => true,
                BarrierAction::Wait { .. } => false,
            },
            // `bar.sync` arrives, then waits.
            SyncEffect::CtaBarrier { .. } | SyncEffect::WarpBarrier => true,
            SyncEffect::ClusterBarrier { waits } | SyncEffect::GridDependency { waits } => !waits,
            SyncEffect::Group { action, .. } => match action {
                GroupAction::Commit => true,
                GroupAction::Wait { .. } => false,
            },
            SyncEffect::Fence(_) | SyncEffect::TensorMemoryWait { .. } => false,
        }
    }
}

/// An effect outside memory and synchronization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SideEffect {
    /// A `.volatile` access, or a strong one (`ld.acquire`, `st.release`, `.relaxed` with a
    /// scope): it happens exactly as written.
    Volatile,
    /// `trap`: the kernel aborts.
    Trap,
    /// `printf`: output.
    Print,
    /// A probe the simulator records.
    Probe,
    /// Inline PTX: nothing is known of what it does besides its operands (and, with the
    /// `"memory"` clobber, that it reads and writes memory).
    Opaque,
    /// Tensor-memory allocation state (`tcgen05.alloc`, `dealloc`, `relinquish_alloc_permit`).
    TensorAllocation,
    /// Scheduling only: register reallocation (`setmaxnreg`), a sleep.
    Scheduling,
}

/// Everything [`Inst::effects`] says of one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    pub reads: Spaces,
    pub writes: Spaces,
    pub sync: Option<SyncEffect>,
    pub launch: Option<AsyncLaunch>,
    pub side: Option<SideEffect>,
}

impl Effects {
    /// Whether the instruction only computes its destination registers (from registers and
    /// memory): dropping it when they are unused changes nothing else.
    pub fn is_pure(&self) -> bool {
        self.writes.is_empty() && self.sync.is_none() && self.launch.is_none() && self.side.is_none()
    }

    /// The mbarrier the instruction acts on or completes on, if any.
    pub fn barrier(&self) -> Option<Value> {
        match (self.sync, self.launch) {
            (Some(SyncEffect::Mbarrier { bar, .. }), _) => Some(bar),
            (_, Some(AsyncLaunch { completion: Completion::Mbarrier(bar), .. })) => Some(bar),
            _ => None,
        }
    }

    fn reads(spaces: &[MemSpace]) -> Effects {
        Effects { reads: Spaces::of(spaces), ..Effects::default() }
    }
    fn writes(mut self, spaces: &[MemSpace]) -> Effects {
        self.writes = Spaces::of(spaces);
        self
    }
    fn sync(s: SyncEffect) -> Effects {
        Effects { sync: Some(s), ..Effects::default() }
    }
    fn side(s: SideEffect) -> Effects {
        Effects { side: Some(s), ..Effects::default() }
    }
    fn launch(mut self, unit: AsyncUnit, completion: Completion) -> Effects {
        self.launch = Some(AsyncLaunch { unit, completion });
        self
    }
}

use MemSpace::{Global, Param, Shared, SharedCluster, Tensor};

impl Inst {
    /// The instruction's memory, synchronization and other effects.
    pub fn effects(&self) -> Effects {
        let none = Effects::default();
        match self {
            // These families compute registers only: that is what makes an op one of them.
            Inst::Arith(_) | Inst::ReadSpecial { .. } | Inst::Warp(_) => none,
            Inst::Memory(op) => memory(op),
            Inst::Mbarrier(op) => mbarrier(op),
            Inst::Sync(op) => sync(op),
            Inst::Tma(op) => tma(op),
            Inst::Tcgen05(op) => tcgen05(op),
            Inst::Wgmma(op) => wgmma(op),
            Inst::Fragment(op) => match op {
                FragmentOp::PackHalf2 { .. } | FragmentOp::PackFp8x2 { .. } | FragmentOp::UnpackHalf2 { .. } => none,
                FragmentOp::StMatrix { .. } => none.writes(&[Shared]),
                FragmentOp::LdMatrix { .. } => Effects::reads(&[Shared]),
            },
            Inst::Printf(_) => Effects::side(SideEffect::Print),
            Inst::Asm(a) => {
                let e = Effects::side(SideEffect::Opaque);
                if a.memory {
                    Effects { reads: Spaces::of(&MemSpace::ALL), writes: Spaces::of(&MemSpace::ALL), ..e }
                } else {
                    e
                }
            }
            Inst::Probe { .. } => Effects::side(SideEffect::Probe),
            // Past the watchdog's limit a try traps; the counters are its registers only.
            Inst::FlagSpin(FlagSpin::Try { .. }) => Effects::side(SideEffect::Trap),
            Inst::FlagSpin(FlagSpin::Start { .. }) => Effects::default(),
        }
    }
}

fn memory(op: &MemoryOp) -> Effects {
    // Volatile and strong accesses are kept as written: a flag protocol is made of them.
    let volatile = |a: Access, e: Effects| Effects {
        side: match a {
            Access::Weak => None,
            Access::Volatile | Access::Strong(_) => Some(SideEffect::Volatile),
        },
        ..e
    };
    match op {
        MemoryOp::Ld { space, access, .. } => {
            volatile(*access, Effects { reads: (*space).into(), ..Effects::default() })
        }
        MemoryOp::St { space, access, .. } => {
            volatile(*access, Effects { writes: (*space).into(), ..Effects::default() })
        }
        MemoryOp::LdVec { space, .. } => Effects { reads: (*space).into(), ..Effects::default() },
        MemoryOp::StVec { space, .. } => Effects { writes: (*space).into(), ..Effects::default() },
        MemoryOp::Atom { space, .. } => {
            Effects { reads: (*space).into(), writes: (*space).into(), ..Effects::default() }
        }
        MemoryOp::SharedAddr { .. } | MemoryOp::DynSharedAddr { .. } | MemoryOp::ParamAddr { .. } => Effects::default(),
        MemoryOp::CpAsync { .. } => {
            Effects::reads(&[Global]).writes(&[Shared]).launch(AsyncUnit::CpAsync, Completion::Group)
        }
        MemoryOp::CpAsyncCommitGroup => {
            Effects::sync(SyncEffect::Group { unit: AsyncUnit::CpAsync, action: GroupAction::Commit })
        }
        MemoryOp::CpAsyncWaitGroup { n } => Effects::sync(SyncEffect::Group {
            unit: AsyncUnit::CpAsync,
            action: GroupAction::Wait { pending: *n, read: false },
        }),
        MemoryOp::CpAsyncMbarrierArrive { bar, .. } => Effects::sync(SyncEffect::Mbarrier {
            bar: *bar,
            action: BarrierAction::ArriveOnCompletion(AsyncUnit::CpAsync),
        }),
    }
}

fn mbarrier(op: &MbarrierOp) -> Effects {
    let action = match op {
        MbarrierOp::Init { .. } => BarrierAction::Init,
        MbarrierOp::Inval { .. } => BarrierAction::Inval,
        MbarrierOp::Arrive { .. } => BarrierAction::Arrive { expect_tx: false },
        MbarrierOp::ArriveExpectTx { .. } => BarrierAction::Arrive { expect_tx: true },
        MbarrierOp::ExpectTx { .. } => BarrierAction::ExpectTx,
        MbarrierOp::CompleteTx { .. } => BarrierAction::CompleteTx,
        MbarrierOp::TestWait { .. } | MbarrierOp::TryWait { .. } => BarrierAction::Wait { blocking: false },
        MbarrierOp::Wait { .. } => BarrierAction::Wait { blocking: true },
        // Reads a state token, not the barrier.
        MbarrierOp::PendingCount { .. } => return Effects::default(),
    };
    match op.barrier() {
        Some(bar) => Effects::sync(SyncEffect::Mbarrier { bar, action }),
        None => Effects::default(),
    }
}

fn sync(op: &SyncOp) -> Effects {
    match op {
        SyncOp::BarSync { id, .. } => Effects::sync(SyncEffect::CtaBarrier { id: *id, waits: true }),
        SyncOp::BarArrive { id, .. } => Effects::sync(SyncEffect::CtaBarrier { id: *id, waits: false }),
        SyncOp::FenceMbarrierInit => Effects::sync(SyncEffect::Fence(Fence::MbarrierInit)),
        SyncOp::FenceProxyAsync { space } => Effects::sync(SyncEffect::Fence(Fence::ProxyAsync(*space))),
        SyncOp::MemBar { scope } => Effects::sync(SyncEffect::Fence(Fence::AcqRel(*scope))),
        SyncOp::WarpSync { .. } => Effects::sync(SyncEffect::WarpBarrier),
        // Register results from the warp's lanes.
        SyncOp::ElectSync { .. } | SyncOp::ActiveMask { .. } | SyncOp::Mapa { .. } => Effects::default(),
        SyncOp::SetMaxNReg { .. } | SyncOp::Nanosleep { .. } => Effects::side(SideEffect::Scheduling),
        SyncOp::ClusterArrive { .. } => Effects::sync(SyncEffect::ClusterBarrier { waits: false }),
        SyncOp::ClusterWait => Effects::sync(SyncEffect::ClusterBarrier { waits: true }),
        SyncOp::Trap => Effects::side(SideEffect::Trap),
        SyncOp::GridDepWait => Effects::sync(SyncEffect::GridDependency { waits: true }),
        SyncOp::GridDepLaunchDependents => Effects::sync(SyncEffect::GridDependency { waits: false }),
    }
}

fn tma(op: &TmaOp) -> Effects {
    let to_mbarrier = |bar: &Value| Completion::Mbarrier(*bar);
    match op {
        TmaOp::LoadTensor { bar, multicast, .. } => {
            let dst = if multicast.is_some() { SharedCluster } else { Shared };
            Effects::reads(&[Global, Param]).writes(&[dst]).launch(AsyncUnit::Bulk, to_mbarrier(bar))
        }
        TmaOp::LoadBulk { bar, .. } => {
            Effects::reads(&[Global]).writes(&[Shared]).launch(AsyncUnit::Bulk, to_mbarrier(bar))
        }
        TmaOp::LoadBulkMulticast { bar, .. } => {
            Effects::reads(&[Global]).writes(&[SharedCluster]).launch(AsyncUnit::Bulk, to_mbarrier(bar))
        }
        TmaOp::CopyBulkCluster { bar, .. } => {
            Effects::reads(&[Shared]).writes(&[SharedCluster]).launch(AsyncUnit::Bulk, to_mbarrier(bar))
        }
        TmaOp::StoreTensor { .. } => {
            Effects::reads(&[Shared, Param]).writes(&[Global]).launch(AsyncUnit::Bulk, Completion::Group)
        }
        TmaOp::StoreBulk { .. } => {
            Effects::reads(&[Shared]).writes(&[Global]).launch(AsyncUnit::Bulk, Completion::Group)
        }
        TmaOp::CommitGroup => Effects::sync(SyncEffect::Group { unit: AsyncUnit::Bulk, action: GroupAction::Commit }),
        TmaOp::WaitGroup { n, read } => Effects::sync(SyncEffect::Group {
            unit: AsyncUnit::Bulk,
            action: GroupAction::Wait { pending: *n, read: *read },
        }),
        // A hint to fill L2: nothing waits for it, nothing sees it.
        TmaOp::PrefetchTensor { .. } => Effects::reads(&[Param]),
    }
}

fn tcgen05(op: &Tcgen05Op) -> Effects {
    let unit = AsyncUnit::Tcgen05;
    match op {
        // The allocated address is written to shared memory.
        Tcgen05Op::Alloc { .. } => {
            Effects { writes: Spaces::of(&[Shared]), side: Some(SideEffect::TensorAllocation), ..Effects::default() }
        }
        Tcgen05Op::Dealloc { .. } | Tcgen05Op::RelinquishAllocPermit { .. } => {
            Effects::side(SideEffect::TensorAllocation)
        }
        Tcgen05Op::Ld { .. } => Effects::reads(&[Tensor]).launch(unit, Completion::Wait),
        Tcgen05Op::St { .. } => Effects::default().writes(&[Tensor]).launch(unit, Completion::Wait),
        Tcgen05Op::Wait { st } => Effects::sync(SyncEffect::TensorMemoryWait { stores: *st }),
        Tcgen05Op::Cp { .. } => Effects::reads(&[Shared]).writes(&[Tensor]).launch(unit, Completion::Commit),
        Tcgen05Op::Shift { .. } => Effects::reads(&[Tensor]).writes(&[Tensor]).launch(unit, Completion::Commit),
        Tcgen05Op::Mma(m) => {
            let a = match m.a {
                super::tcgen05::MmaA::Desc(_) => Shared,
                super::tcgen05::MmaA::Tmem(_) => Tensor,
            };
            Effects::reads(&[a, Shared, Tensor]).writes(&[Tensor]).launch(unit, Completion::Commit)
        }
        Tcgen05Op::Commit { bar, .. } => {
            Effects::sync(SyncEffect::Mbarrier { bar: *bar, action: BarrierAction::ArriveOnCompletion(unit) })
        }
        Tcgen05Op::Fence { after } => Effects::sync(SyncEffect::Fence(Fence::Tcgen05 { after: *after })),
    }
}

fn wgmma(op: &WgmmaOp) -> Effects {
    let unit = AsyncUnit::Wgmma;
    match op {
        WgmmaOp::Fence => Effects::sync(SyncEffect::Fence(Fence::Wgmma)),
        WgmmaOp::CommitGroup => Effects::sync(SyncEffect::Group { unit, action: GroupAction::Commit }),
        WgmmaOp::WaitGroup { n } => {
            Effects::sync(SyncEffect::Group { unit, action: GroupAction::Wait { pending: *n, read: false } })
        }
        // B (and A, from a descriptor) from shared memory; the accumulator is registers.
        WgmmaOp::MmaAsync(_) => Effects::reads(&[Shared]).launch(unit, Completion::Group),
    }
}
