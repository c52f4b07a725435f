//! The protocol checker behind a trait: the engine reports every synchronizing event and every
//! shared-memory access to a `Checker`, which keeps the happens-before state (vector clocks,
//! per-byte shadow memory) and answers with `Issue`s. `NoCheck` does nothing and costs nothing
//! (`SimConfig::race_check = false`); `HappensBefore` (`hb.rs`) is the full checker.
//!
//! What stays in the engine are the checks that need no history: barrier misuse at each use
//! (uninitialized, overflow, out-of-range tx-counts), deadlocks, faults, end-of-kernel state.

pub(crate) mod clocks;
pub(crate) mod deadlock;
pub(crate) mod global_order;
pub(crate) mod hb;
pub(crate) mod pdl;
pub(crate) mod progress;
pub(crate) mod shadow;
pub(crate) mod tensor_reads;
pub(crate) mod tmem;

use crate::report::finding::Category;
use crate::sim::engine::memory::SmemLayout;
pub(crate) use tmem::{Region, TmemKind};

/// Bytes `[off, off + len)` of CTA `cta`'s shared memory (what an async copy writes or reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SharedRange {
    pub cta: usize,
    pub off: u32,
    pub len: u32,
}

/// A finding as the checker sees it; the engine adds the kernel, `%ctaid`, source line and
/// loop iteration (`Engine::report`).
#[derive(Clone, Debug)]
pub(crate) struct Issue {
    pub category: Category,
    /// CTA (index in the cluster) where it happened.
    pub cta: usize,
    /// Thread (index in the cluster).
    pub thread: Option<u32>,
    /// Barrier `(cta, offset)` it concerns.
    pub barrier: Option<(usize, u32)>,
    /// The barrier's phase when it happened (else the barrier's current phase is shown).
    pub phase: Option<u64>,
    /// Instruction (for the Rust line).
    pub pc: Option<u32>,
    pub message: String,
}

/// An issue about an earlier event, found later (when a CTA exits): with the loop counters its
/// thread had at that event, recorded then (`Engine::loop_counters`); `None` where they were not
/// recorded, and the report names no iteration rather than the one the thread is in now.
#[derive(Clone, Debug)]
pub(crate) struct LateIssue {
    pub issue: Issue,
    pub counters: Option<Vec<u64>>,
}

/// A barrier as the checker knows it: its CTA and offset, and its dense index in the cluster
/// (`Some` for barriers of barrier arrays: those carry a vector-clock component).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BarrierKey {
    pub cta: usize,
    pub off: u32,
    pub slot: Option<u32>,
}

/// What the checker needs to know of the cluster it watches.
pub(crate) struct Geometry<'a> {
    pub threads: usize,
    pub threads_per_cta: u32,
    pub ctas: usize,
    /// Barriers of barrier arrays in one CTA (dense slots).
    pub barrier_slots_per_cta: usize,
    pub smem_bytes: usize,
    pub layout: &'a SmemLayout,
    /// Source lines by pc (messages name a second instruction).
    pub locs: &'a [Option<phaser_codegen::SourceLoc>],
    /// `SimConfig::proxy_war_check`.
    pub proxy_war_check: bool,
}

/// Who made a phase's data visible: a thread's own write, or a barrier phase that published an
/// async copy (a reader must have observed that phase).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Publisher {
    Issuer,
    Phase { bar: BarrierKey, phase: u64 },
}

/// The observer of a simulated cluster. Every method has a default that does nothing, so
/// `NoCheck` is empty and a run without checking pays only for the (inlined, empty) calls.
#[allow(unused_variables)]
pub(crate) trait Checker: Sized + Send {
    /// False for `NoCheck`: callers may skip work whose only purpose is checking.
    const ENABLED: bool;
    /// What an async op carries from its issue to its completion (the issuer's clock).
    type Snapshot: Default + Send;

    fn new(geometry: &Geometry) -> Self;

    /// Thread `t` issues an async op: its clock travels with the op; `t`'s clock advances.
    fn snapshot_for_async(&mut self, t: u32) -> Self::Snapshot {
        Self::Snapshot::default()
    }
    /// Thread `t` arrives on (or completes tx on) `bar` at `pc`: a release into the phase.
    fn on_thread_release(&mut self, t: u32, bar: BarrierKey, pc: u32, is_arrival: bool) {}
    /// Lanes `lanes` of the warp whose lane 0 is thread `base` arrive on `bar` together.
    fn on_warp_release(&mut self, base: u32, lanes: u32, bar: BarrierKey, pc: u32) {
        for l in crate::sim::engine::warp::lanes(lanes) {
            self.on_thread_release(base + l as u32, bar, pc, true);
        }
    }
    /// An async op issued with `snap` arrives or completes tx on `bar`.
    fn on_agent_release(&mut self, snap: &Self::Snapshot, bar: BarrierKey) {}
    /// `bar` completed phase `phase`.
    fn on_phase_complete(&mut self, bar: BarrierKey, phase: u64) {}
    /// Thread `t` initialized `bar`.
    fn on_init(&mut self, t: u32, bar: BarrierKey) {}
    /// Whether `bar`'s initialization by `init_by` is ordered before thread `t`'s use.
    fn init_visible(&self, t: u32, bar: BarrierKey, init_by: u32) -> bool {
        true
    }
    /// The init-visibility finding for `bar` was reported (once per barrier).
    fn init_reported(&mut self, bar: BarrierKey) {}
    /// A wait of `t` on `bar` passed, observing completed phase `observed` (-1: the virtual
    /// phase before phase 0). Returns the phase `t` had already observed when this one is not
    /// newer (a stale parity), if `stale_check`.
    fn on_wait_passed(&mut self, t: u32, bar: BarrierKey, observed: i64, stale_check: bool, pc: u32) -> Option<i64> {
        None
    }
    /// The last phase thread `t` observed on `bar` through a blocking wait (`None`: none yet,
    /// or a checker that does not track it).
    fn last_observed(&self, t: u32, bar: BarrierKey) -> Option<i64> {
        None
    }
    /// The lanes of `lanes` (warp at `base`) whose wait on `bar` for phase `goal` (passing at
    /// once on it when `passes`) could skip a phase or come before their own arrival: those
    /// `Engine::check_skipped_phases` must look at. A fast filter for whole warps.
    fn lanes_to_check(&self, base: u32, lanes: u32, bar: BarrierKey, goal: i64, passes: bool) -> u32 {
        0
    }
    /// Thread `t`'s arrival on `bar` counted toward phase `phase`.
    fn on_arrival_phase(&mut self, t: u32, bar: BarrierKey, phase: u64) {}
    /// The phase thread `t`'s last arrival on `bar` counted toward (`None`: none, or not
    /// tracked).
    fn last_arrival_phase(&self, t: u32, bar: BarrierKey) -> Option<u64> {
        None
    }
    /// Lanes `lanes` (of the warp whose lane 0 is `base`) passed a wait on `bar` observing
    /// `observed`; returns a lane that had already observed it, with the phase it had seen.
    fn on_warp_wait_passed(
        &mut self,
        base: u32,
        lanes: u32,
        bar: BarrierKey,
        observed: i64,
        pc: u32,
    ) -> Option<(u32, i64)> {
        let mut stale = None;
        for l in crate::sim::engine::warp::lanes(lanes) {
            let t = base + l as u32;
            if let Some(seen) = self.on_wait_passed(t, bar, observed, true, pc) {
                stale = stale.or(Some((t, seen)));
            }
        }
        stale
    }
    /// A lane of `lanes` (warp at `base`) that uses `bar` without its init ordered before.
    fn init_unordered(&self, base: u32, lanes: u32, bar: BarrierKey, init_by: u32) -> Option<u32> {
        crate::sim::engine::warp::lanes(lanes).map(|l| base + l as u32).find(|&t| !self.init_visible(t, bar, init_by))
    }
    /// `bar.sync`/`bar.arrive` of `t` on named barrier `id` of CTA `cta`.
    fn on_named_arrive(&mut self, t: u32, cta: usize, id: usize) {}
    /// Named barrier `id` of `cta` completed; `waiters` acquire what every arrival released.
    fn on_named_complete(&mut self, cta: usize, id: usize, waiters: &[u32]) {}
    fn on_cluster_arrive(&mut self, t: u32, relaxed: bool) {}
    /// Round `round` of the cluster barrier completed.
    fn on_cluster_complete(&mut self, round: u64) {}
    /// Thread `t` passed its wait for round `round` of the cluster barrier.
    fn on_cluster_wait_passed(&mut self, t: u32, round: u64) {}
    /// Lane `t` of warp `warp` arrives at `bar.warp.sync mask`.
    fn on_warp_sync_arrive(&mut self, t: u32, warp: usize, mask: u32) {}
    /// The `bar.warp.sync mask` round of `warp` completed for `threads`.
    fn on_warp_sync_complete(&mut self, warp: usize, mask: u32, threads: &[u32]) {}
    fn on_fence_proxy_async(&mut self, t: u32) {}
    /// Thread `t` reads `[off, off+len)` of CTA `cta`'s shared memory at `pc`.
    fn on_shared_read(&mut self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        None
    }
    /// The read `on_shared_read` just reported (a race or an uninitialized read): the bug that
    /// caused it, when it is not the read itself (a wait on the wrong parity before it).
    fn cause_of_bad_read(&self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        None
    }
    fn on_shared_write(&mut self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        None
    }
    /// Thread `t` issues async op `op` that will write `[off, off+len)` of CTA `cta`.
    fn on_async_write_issue(&mut self, t: u32, op: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        None
    }
    /// Bytes `[off, off+len)` of op `op` (issued by `issuer`) landed.
    fn on_async_land(&mut self, op: u32, issuer: u32, snap: &Self::Snapshot, range: SharedRange, by: Publisher) {}
    /// Thread `t` issues store `op` (`kind`: a TMA tensor store or a bulk store) reading
    /// `[off, off+len)`.
    fn on_async_read_issue(
        &mut self,
        t: u32,
        op: u32,
        kind: &'static str,
        range: SharedRange,
        pc: u32,
    ) -> Option<Issue> {
        None
    }
    /// Async op `op` of `issuer` (issued with `snap`) finished reading `[off, off+len)` of
    /// CTA `cta` (a CTA-to-CTA bulk copy's source): writes after it no longer race with it.
    fn on_async_read_done(&mut self, issuer: u32, snap: &Self::Snapshot, op: u32, cta: usize, off: u32, len: u32) {}
    /// TMA store `op` of `issuer` (bulk group `group`) finished reading its source.
    fn on_store_complete(&mut self, issuer: u32, op: u32, group: usize, cta: usize, off: u32, len: u32) {}
    /// `issuer` passed a `cp.async.bulk.wait_group` retiring every group below `retired`.
    fn on_stores_observed(&mut self, t: u32, retired: usize) {}
    /// The warpgroup of threads `[threads.0, threads.1)` issued wgmma `id` (each warp with the
    /// clock snapshot of its `mma_async`), which reads `ranges` of CTA `cta`'s shared memory
    /// until a `wgmma.wait_group` retires it. Returns what is wrong with the bytes it reads
    /// (not written, in flight, unordered, or generic writes without `fence.proxy.async`).
    fn on_wgmma_issue(
        &mut self,
        id: u32,
        threads: (u32, u32),
        snaps: &[Self::Snapshot],
        cta: usize,
        ranges: &[(u32, u32)],
        pc: u32,
    ) -> Option<Issue> {
        None
    }
    /// Wgmma `id` finished reading its operands.
    fn on_wgmma_done(&mut self, id: u32) {}
    /// Lanes `lanes` of the warp whose lane 0 is thread `base` passed a `wgmma.wait_group`
    /// that retired wgmma `id`.
    fn on_wgmma_retired(&mut self, base: u32, lanes: u32, id: u32) {}
    /// Thread `t`'s atomic on location `loc` (`(cta, offset)` in shared memory, `(usize::MAX,
    /// address)` in global memory) with `.acquire` (it acquires what earlier releases on the
    /// location published) and/or `.release` (it publishes what `t` did before it).
    fn on_atomic_sync(&mut self, t: u32, loc: (usize, u64), acquire: bool, release: bool) {}
    /// Thread `t` atomically updated `[off, off+len)` (initialized; a relaxed atomic orders nothing).
    fn on_shared_atomic(&mut self, t: u32, cta: usize, off: u32, len: u32) {}
    /// Thread `t` accessed CTA `target`'s shared memory (or barrier) from another CTA at `pc`, in
    /// the loop iterations `counters`: an issue when nothing orders the access after `target`
    /// started.
    fn on_remote_access(&mut self, t: u32, target: usize, pc: u32, counters: Vec<u64>) -> Option<Issue> {
        None
    }
    /// Thread `t` exited.
    fn on_thread_exit(&mut self, t: u32) {}
    /// Every thread of `cta` exited: remote accesses not ordered before that are races.
    fn on_cta_exit(&mut self, cta: usize) -> Vec<LateIssue> {
        Vec::new()
    }

    // ---- tcgen05 (`tmem.rs`) ----------------------------------------------------------------

    /// `tcgen05.fence::after_thread_sync` (`after`) or `::before_thread_sync` by thread `t`.
    fn on_tcgen05_fence(&mut self, t: u32, after: bool) {}
    /// Thread `t` issues a tensor-memory access of `kind` to `regions` at `pc`: the access's id,
    /// and an issue when an earlier access of those cells is not ordered before it.
    fn on_tmem_access(&mut self, t: u32, kind: TmemKind, regions: &[Region], pc: u32) -> (u32, Option<Issue>) {
        (0, None)
    }
    /// The tensor core completed access `id` (an MMA, copy or shift).
    fn on_tmem_complete(&mut self, id: u32) {}
    /// `tcgen05.wait::ld` (`st`: `::st`) by thread `t`.
    fn on_tmem_wait(&mut self, t: u32, st: bool) {}
    /// Thread `t` issues a `tcgen05.commit`: the tensor-memory accesses it tracks.
    fn on_tcgen05_commit(&mut self, t: u32) -> Vec<u32> {
        Vec::new()
    }
    /// A commit issued with `snap` arrives on `bar` in phase `phase`: the tensor-memory
    /// accesses `ids` (in `bar`'s CTA) and the shared-memory reads of the async ops `reads` (in
    /// `bar`'s CTA) are complete for whoever observes that phase.
    fn on_tcgen05_commit_arrive(
        &mut self,
        snap: &Self::Snapshot,
        bar: BarrierKey,
        phase: u64,
        ids: &[u32],
        reads: &[u32],
    ) {
    }
}

/// The checker of a run without checking.
pub(crate) struct NoCheck;

impl Checker for NoCheck {
    const ENABLED: bool = false;
    type Snapshot = ();
    fn new(_: &Geometry) -> Self {
        NoCheck
    }
}
