//! What the checker reports: a category, a severity and where it happened.

use phaser_codegen::SourceLoc;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Category {
    /// Every live thread is blocked (or spins on a failing `test_wait`/`try_wait`) and no
    /// async copy is in flight.
    Deadlock,
    /// Every live thread is blocked and a phase some of them wait for can never complete: it
    /// lacks arrivals that no thread left will make (a dropped arrive, an init count larger than
    /// the arrivals per phase).
    MissingArrival,
    /// Arrive/wait/expect on a barrier that was never initialized or was invalidated.
    Uninitialized,
    /// A barrier used by another thread with no `bar.sync`/cluster barrier after its init.
    InitVisibility,
    /// More arrivals than the phases' waiters consume: the pending count would go negative, or
    /// a waiter finds the barrier two or more phases past the last one it observed with none of
    /// them observed by anyone (a duplicated arrive).
    ArrivalOverflow,
    /// `|tx-count|` exceeded 2^20-1.
    TxOverflow,
    /// Bytes registered with `expect_tx` never arrived, or more arrived than were expected: an
    /// error where it keeps waiters blocked, a warning where the kernel ended with no thread
    /// waiting for the phase (the GPU runs that correctly).
    TxImbalance,
    /// A phase completed (tx-count reached 0) while bytes of a copy completing on it were still
    /// in flight: `expect_tx` registered fewer bytes than the copies deliver, so waiters are
    /// released before the data landed (a silent race on hardware).
    EarlyPhaseCompletion,
    /// `mbarrier.init` with an arrival count outside 1..=2^20-1 (e.g. 0 computed at run time).
    InvalidInitCount,
    /// A phase had some but not all of its arrivals when the kernel ended (a warning: no thread
    /// waited for it).
    IncompletePhase,
    /// A wait on a parity whose phase this thread already consumed (ABA: a parity two
    /// phases old), e.g. a missing `phase ^= 1`: the wait returns at once on that old phase, or
    /// skips the next phase (completed, observed by no one) to wait for the one after.
    StaleParity,
    /// A pipeline role starting on the wrong parity: a thread's first wait on a barrier skips
    /// its phase 0 (a consumer waiting on parity 1: the wait passes at once on the phase before
    /// phase 0 of a fresh barrier, or waits for phase 1 after phase 0 completed unobserved), or
    /// every waiter blocks at its first wait on a fresh barrier no thread has arrived on (a
    /// producer waiting on parity 0 of `empty`: both sides wait for the other).
    WrongParity,
    /// A thread read shared memory written by an async copy (TMA, cp.async) before the
    /// copy's completion was synchronized with it (in flight, or no wait on its barrier).
    AsyncReadRace,
    /// An async copy wrote bytes that a thread had accessed without a release to the copy's
    /// issuer (a stage refilled before the consumer's empty arrival), or a thread overwrote
    /// the source of an in-flight TMA store.
    AsyncWriteRace,
    /// Generic-proxy writes read by the async proxy (TMA store) without `fence.proxy.async`.
    ProxyFence,
    /// Two threads accessed the same shared bytes, at least one writing, unsynchronized.
    SharedRace,
    /// Two CTAs accessed the same global bytes, at least one writing, with no release/acquire
    /// through a flag (or `fence.acq_rel` and relaxed accesses) ordering them
    /// (`check/global_order.rs`; checked in kernels with strong global loads or stores).
    GlobalRace,
    /// A thread read shared memory that no thread and no async copy has written in this
    /// launch (e.g. after a wait that passed at once on a fresh barrier).
    UninitializedSharedRead,
    /// A remote arrive, DSMEM access or multicast write into a CTA of the cluster that has
    /// exited, or not ordered before its exit (a missing final cluster barrier); an async copy
    /// still reading or writing a CTA's shared memory when the CTA exits (a missing
    /// `wait_group` before the end).
    ExitedCtaAccess,
    /// A DSMEM access or remote arrive into another CTA of the cluster that nothing orders
    /// after that CTA started (no cluster barrier both took part in before it): the CTA may
    /// not be running yet (CUDA Programming Guide, distributed shared memory: "ensure that all
    /// thread blocks have started executing", e.g. with `cluster.sync()`).
    UnstartedCtaAccess,
    /// In a programmatic dependent launch (`LaunchConfig::programmatic_dependent_launch`), a
    /// thread accessed global bytes the previous launch wrote (or wrote bytes it read) before
    /// the thread executed `griddepcontrol.wait`: that launch may still be running, its memory
    /// not yet visible (`sim/check/pdl.rs`).
    EarlyDependentAccess,
    /// Some thread loops forever: its whole state repeats and nothing else can change what it
    /// reads (found without running to `SimConfig::max_steps`).
    InfiniteLoop,
    /// A global or shared access outside every allocation.
    OutOfBounds,
    /// An address the hardware rejects as misaligned (`CUDA_ERROR_MISALIGNED_ADDRESS`): TMA
    /// tensor copies need 128-byte aligned shared memory, bulk copies 16-byte aligned operands;
    /// a tensor copy's innermost coordinate must be a multiple of 16 bytes (measured on the
    /// H200: `CUDA_ERROR_ILLEGAL_INSTRUCTION`, see `arch::limits::TMA_INNER_COORD_ALIGN`).
    Misaligned,
    /// `bar.warp.sync` misuse PTX leaves undefined: a lane of the mask exited instead of
    /// executing it, or the executing lane is not in its mask.
    WarpSync,
    /// `bar.sync`/`bar.arrive` misuse PTX leaves undefined: part of a warp executes it (it is
    /// `.aligned`: a `bar.sync` under `if lane == 0` or `elect_sync()`), the threads of one
    /// round give different thread counts, or a count that is no multiple of 32 or exceeds
    /// the CTA's threads (it can never complete).
    NamedBarrier,
    /// Tensor-memory allocation misuse (`tcgen05.alloc/dealloc`): an allocation that does not
    /// fit, one after `relinquish_alloc_permit` or larger than an earlier one, a second
    /// allocation into a slot whose allocation is still live, a dealloc of something not
    /// allocated or by another warp than the allocating one.
    TmemAlloc,
    /// Tensor memory still allocated when the CTA exited ("must be explicitly deallocated
    /// before the kernel exits").
    TmemLeak,
    /// A tcgen05 access outside the CTA's allocations, or to lanes the warp may not access.
    TmemOutOfBounds,
    /// Two tensor-memory accesses, one writing, not ordered (e.g. `tcgen05.ld` of an
    /// accumulator before the barrier phase of the commit tracking its MMA completed).
    TmemRace,
    /// Tensor-memory accesses of two threads ordered by a thread synchronization without the
    /// `tcgen05.fence::before_thread_sync` / `::after_thread_sync` around it.
    Tcgen05Fence,
    /// An ordinary instruction read or wrote a register of a `wgmma.mma_async` (its
    /// accumulator or A fragment) before a `wgmma.wait_group` of the warp retired it: the value
    /// is undefined until then.
    WgmmaRegisterRace,
    /// A `wgmma.mma_async` accesses registers an ordinary instruction accessed, with no
    /// `wgmma.fence` in between (or the warp never executed `wgmma.fence`): undefined per PTX.
    MissingWgmmaFence,
    /// Shared memory a `wgmma.mma_async` reads was overwritten (a TMA load, a store) while the
    /// wgmma was in flight or before a `wgmma.wait_group` retiring it was ordered before the
    /// write (e.g. the stage released on its `empty` barrier before the `wait_group`).
    WgmmaOperandRace,
    /// `wgmma` used in a way PTX leaves undefined: by part of a warp, warps of a warpgroup
    /// issuing different instructions or descriptors, an incomplete warpgroup.
    WgmmaMisuse,
    /// Something the simulator cannot execute faithfully (bad operand, misaligned barrier).
    Unsupported,
    /// The kernel executed `trap`.
    Trap,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Deadlock => "deadlock",
            Category::MissingArrival => "missing-arrival",
            Category::Uninitialized => "uninitialized-barrier",
            Category::InitVisibility => "init-visibility",
            Category::ArrivalOverflow => "arrival-overflow",
            Category::TxOverflow => "tx-overflow",
            Category::TxImbalance => "tx-imbalance",
            Category::EarlyPhaseCompletion => "early-phase-completion",
            Category::InvalidInitCount => "invalid-init-count",
            Category::IncompletePhase => "incomplete-phase",
            Category::StaleParity => "stale-parity",
            Category::WrongParity => "wrong-parity",
            Category::AsyncReadRace => "async-read-race",
            Category::AsyncWriteRace => "async-write-race",
            Category::ProxyFence => "missing-proxy-fence",
            Category::SharedRace => "shared-race",
            Category::GlobalRace => "global-race",
            Category::UninitializedSharedRead => "uninitialized-shared-read",
            Category::ExitedCtaAccess => "access-to-exited-cta",
            Category::UnstartedCtaAccess => "access-to-unstarted-cta",
            Category::EarlyDependentAccess => "early-dependent-access",
            Category::InfiniteLoop => "infinite-loop",
            Category::WarpSync => "warp-sync",
            Category::NamedBarrier => "named-barrier",
            Category::OutOfBounds => "out-of-bounds",
            Category::Misaligned => "misaligned",
            Category::TmemAlloc => "tmem-alloc",
            Category::TmemLeak => "tmem-leak",
            Category::TmemOutOfBounds => "tmem-out-of-bounds",
            Category::TmemRace => "tmem-race",
            Category::Tcgen05Fence => "missing-tcgen05-fence",
            Category::WgmmaRegisterRace => "wgmma-register-race",
            Category::MissingWgmmaFence => "missing-wgmma-fence",
            Category::WgmmaOperandRace => "wgmma-operand-race",
            Category::WgmmaMisuse => "wgmma-misuse",
            Category::Unsupported => "unsupported",
            Category::Trap => "trap",
        }
    }
    pub fn all() -> &'static [Category] {
        use Category::*;
        &[
            Deadlock,
            MissingArrival,
            Uninitialized,
            InitVisibility,
            ArrivalOverflow,
            TxOverflow,
            TxImbalance,
            EarlyPhaseCompletion,
            InvalidInitCount,
            IncompletePhase,
            StaleParity,
            WrongParity,
            AsyncReadRace,
            AsyncWriteRace,
            ProxyFence,
            SharedRace,
            UninitializedSharedRead,
            ExitedCtaAccess,
            UnstartedCtaAccess,
            EarlyDependentAccess,
            InfiniteLoop,
            WarpSync,
            OutOfBounds,
            Misaligned,
            TmemAlloc,
            TmemLeak,
            TmemOutOfBounds,
            TmemRace,
            Tcgen05Fence,
            WgmmaRegisterRace,
            MissingWgmmaFence,
            WgmmaOperandRace,
            WgmmaMisuse,
            Unsupported,
            Trap,
        ]
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Severity {
    Warning,
    Error,
}

/// A barrier named the way the kernel declared it: `full[1]` in CTA rank 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarrierRef {
    /// The shared allocation's name, or `smem+0x..` for an address outside every allocation.
    pub name: String,
    pub index: u32,
    /// Byte offset in the CTA's shared memory.
    pub offset: u32,
    /// Rank of the CTA (in its cluster) that owns the barrier.
    pub cta_rank: u32,
}

impl fmt::Display for BarrierRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}[{}]`", self.name, self.index)?;
        if self.cta_rank != 0 {
            write!(f, " of CTA rank {}", self.cta_rank)?;
        }
        Ok(())
    }
}

/// Which iteration of a `for` loop a finding happened in: the loop counter's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopIteration {
    /// The loop's `for` line.
    pub loc: Option<SourceLoc>,
    pub counter: u64,
}

/// One problem found by the checker.
#[derive(Clone, Debug)]
pub struct Finding {
    pub category: Category,
    pub severity: Severity,
    pub kernel: String,
    /// The device the kernel ran on, in a launch of several devices together
    /// (`crate::launch_group`); `None` for a launch of one device.
    pub device: Option<crate::peer::DeviceId>,
    /// `%ctaid` of the CTA where it happened.
    pub cta: [u32; 3],
    pub warp: Option<u32>,
    /// Linear thread index in the CTA.
    pub thread: Option<u32>,
    pub barrier: Option<BarrierRef>,
    /// The barrier's phase (number of completed phases) when it happened.
    pub phase: Option<u64>,
    /// The Rust source line of the instruction.
    pub loc: Option<SourceLoc>,
    /// The `for` loops around the instruction and their counters for this thread, outermost
    /// first.
    pub loops: Vec<LoopIteration>,
    pub message: String,
    /// How many more times the same site reported the same problem.
    pub repeats: u64,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}[{}] kernel `{}`", self.category, self.kernel)?;
        if let Some(d) = self.device {
            write!(f, " on {d}")?;
        }
        write!(f, " CTA {:?}", self.cta)?;
        if let (Some(w), Some(t)) = (self.warp, self.thread) {
            write!(f, " warp {w} thread {t} (lane {})", t % 32)?;
        }
        if let Some(b) = &self.barrier {
            write!(f, ", barrier {b}")?;
        }
        if let Some(p) = self.phase {
            write!(f, ", phase {p} (parity {})", p & 1)?;
        }
        if let Some(l) = self.loc {
            write!(f, "\n    at {l}")?;
        }
        for it in &self.loops {
            let at = it.loc.map(|l| format!(" at {l}")).unwrap_or_default();
            write!(f, "\n    in the iteration with loop counter {} of the loop{at}", it.counter)?;
        }
        for line in self.message.lines() {
            write!(f, "\n    {line}")?;
        }
        if self.repeats > 0 {
            write!(f, "\n    (and {} more times at this site)", self.repeats)?;
        }
        Ok(())
    }
}
