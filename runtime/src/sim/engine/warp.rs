//! A warp's execution state: registers, per-lane program counters, which lanes run, wait or
//! have exited, and what each waiting lane waits for.

use crate::sim::check::progress::CycleWatch;

/// Iterate the set bits of a lane mask.
#[inline]
pub fn lanes(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// What a warp collective round is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RoundKind {
    /// `bar.warp.sync mask`: lanes meet from any instruction with the same mask value.
    WarpSync,
    /// `elect.sync` (its predicate register): the leader is chosen among the lanes that
    /// arrived once all of them did.
    Elect { dst: u32 },
    /// A collective computing from every lane's operands (`shfl`, `vote`, `redux`, `match`,
    /// `ldmatrix`, `stmatrix`): the instruction at the round's pc, run when all arrived.
    Collective,
}

/// Operands a lane brings to a collective: the most any takes (`stmatrix.x4`: the address and
/// four registers).
pub type LaneInputs = [u64; 5];

/// One open warp collective of a warp (`bar.warp.sync`, `elect.sync`, `shfl.sync`, ...): the
/// lanes that arrived with this mask so far and what each brought.
#[derive(Clone, Debug)]
pub struct WarpSyncRound {
    pub mask: u32,
    pub arrived: u32,
    /// Where the first lane arrived (a collective's instruction; for messages about lanes that
    /// exit meanwhile).
    pub pc: u32,
    pub kind: RoundKind,
    /// Per lane, its operands (`Collective` rounds; empty otherwise).
    pub inputs: Vec<LaneInputs>,
}

impl WarpSyncRound {
    /// Whether the round orders the memory accesses of its lanes (`bar.warp.sync`; `elect.sync`
    /// as the simulator has always treated it). Shuffles, votes, reductions and matches exchange
    /// registers only.
    pub fn orders_memory(&self) -> bool {
        !matches!(self.kind, RoundKind::Collective)
    }
}

/// What a blocked lane waits for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitFor {
    Nothing,
    /// An mbarrier wait (`Wait`, or a `TryWait` that writes `false` into `result` on timeout).
    Mbarrier {
        cta: u32,
        off: u32,
        target: WaitTarget,
        result: Option<u32>,
        pc: u32,
        since: u64,
    },
    /// `bar.sync id` generation `generation`.
    NamedBarrier {
        id: u8,
        generation: u64,
        pc: u32,
    },
    /// `barrier.cluster.wait` for arrival generation `generation`.
    ClusterBarrier {
        generation: u64,
        pc: u32,
    },
    /// `cp.async.wait_group n`.
    CpAsyncGroups {
        n: u32,
        pc: u32,
    },
    /// `cp.async.bulk.wait_group n`.
    BulkGroups {
        n: u32,
        pc: u32,
    },
    /// A warp collective (`bar.warp.sync`, `elect.sync`, `shfl.sync`, ...) with member mask
    /// `mask` at `pc`: released by the last lane of the mask to arrive (`warp_sync.rs`).
    WarpSync {
        mask: u32,
        pc: u32,
    },
    /// A global atomic that runs at the end of the grid's epoch (`global_view.rs`).
    GlobalAtomic {
        pc: u32,
    },
    /// `wgmma.wait_group n` (`exec_wgmma.rs`).
    WgmmaGroups {
        n: u32,
        pc: u32,
    },
    /// A `.sync.aligned` wgmma instruction the rest of the warp has not reached:
    /// released by the last lane to arrive (`exec_wgmma.rs`).
    WgmmaConverge {
        pc: u32,
    },
    /// `setmaxnreg.inc count`: waits until the CTA's register pool has room for the warp's
    /// `count` registers per thread (`exec/sync.rs`).
    RegisterPool {
        count: u32,
        pc: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitTarget {
    Parity(u64),
    /// Phase number from a state token: satisfied once the barrier's phase is past it.
    Phase(u64),
}

impl WaitTarget {
    pub fn parity(self) -> u64 {
        match self {
            WaitTarget::Parity(p) => p & 1,
            WaitTarget::Phase(k) => k & 1,
        }
    }
}

/// The lanes of a warp that executed one `bar.sync`/`bar.arrive` so far, while the rest of
/// the warp's live lanes have not (lanes of a diverged warp may come in pieces; they must all
/// execute the same instruction: `sync/named_barrier.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarGather {
    pub pc: u32,
    pub id: u8,
    pub arrived: u32,
}

pub struct Warp {
    /// CTA (index in the cluster).
    pub cta: usize,
    /// Linear thread index (in the CTA) of lane 0.
    pub base_tid: u32,
    /// `regs[reg * 32 + lane]`.
    pub regs: Vec<u64>,
    /// Registers per thread the warp holds from its CTA's pool: the launch's `.maxnreg`, then
    /// what `setmaxnreg` set (0: the kernel declares no `.maxnreg`, the pool is not modelled).
    pub regs_per_thread: u32,
    pub pc: [u32; 32],
    pub runnable: u32,
    pub blocked: u32,
    pub exited: u32,
    /// Lanes that just failed a `test_wait`/`try_wait`: others go first.
    pub yielded: u32,
    /// Lanes that failed the same `test_wait` twice with no other slow-path instruction in
    /// between: they poll in a loop until some other agent changes a barrier.
    pub spinning: u32,
    /// Lanes whose last slow-path instruction was a failed `test_wait`, at `last_failed_poll`.
    pub poll_armed: u32,
    pub last_failed_poll: [u32; 32],
    pub wait: [WaitFor; 32],
    /// Open warp collective rounds (one per mask value some lane waits with at a
    /// `bar.warp.sync`, one per instruction and mask for the other collectives).
    pub warp_syncs: Vec<WarpSyncRound>,
    /// Repetition of the warp's whole state while nothing changes (`progress.rs`).
    pub cycle: CycleWatch,
    /// A `bar` instruction part of the warp executed (`sync/named_barrier.rs`).
    pub bar_gather: Option<BarGather>,
}

impl Warp {
    #[inline]
    pub fn set_pc(&mut self, mask: u32, pc: u32) {
        for l in lanes(mask) {
            self.pc[l] = pc;
        }
    }
    pub fn live(&self) -> u32 {
        self.runnable | self.blocked
    }
}
