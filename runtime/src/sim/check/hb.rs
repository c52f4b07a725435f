//! The full checker: happens-before by vector clocks, races on shared memory by per-byte
//! shadow state, uninitialized shared reads, stale parities, init visibility, remote accesses
//! racing with a CTA's exit.
//!
//! Happens-before edges: an arrive (or an async copy's `complete_tx`) releases the arriving
//! thread's clock into the barrier's current phase; a successful wait acquires the clock of
//! the phase it observed; `bar.sync`, `bar.warp.sync` and the cluster barrier join all
//! participants; an async copy carries its issuer's clock at issue. A TMA store's source stays
//! marked read by the store until its issuer's `cp.async.bulk.wait_group` observes it.

use super::clocks::{join, release_to, VectorClocks};
use super::shadow::{ep_clk, ep_tid, epoch, Shadow, ASYNC, UNORDERED};
use super::tensor_reads::{TensorRead, TensorReads};
use super::tmem::{Region, TmemKind, TmemShadow};
use super::{BarrierKey, Checker, Geometry, Issue, LateIssue, Publisher, SharedRange};
use crate::report::finding::{BarrierRef, Category};
use crate::sim::engine::memory::SmemLayout;
use std::collections::HashMap;

/// The clocks of one barrier.
#[derive(Default)]
struct BarrierClocks {
    /// Released into the current phase (arrivals and async completions).
    acc: Vec<u32>,
    /// Of the last completed phase of each parity.
    done: [Vec<u32>; 2],
    /// Per thread: the last phase it observed complete through a wait.
    seen: Vec<i64>,
    /// Per thread: the phase its last arrival counted toward (`u64::MAX`: none).
    arrived: Vec<u64>,
    /// The initializing thread's clock at init.
    init_clock: u32,
    /// The init-visibility finding was reported.
    init_warned: bool,
}

/// The clock an async op carries from its issue.
#[derive(Default)]
pub(crate) struct IssueClock {
    issuer: u32,
    own: u32,
    row: Vec<u32>,
}

/// A thread's last arrival (for hints about releases that come too early).
#[derive(Clone, Copy)]
struct LastArrival {
    bar: BarrierKey,
    clock: u32,
    pc: u32,
}

/// A thread's last successful wait (named when it lets the thread read unwritten bytes).
#[derive(Clone, Copy)]
struct LastWait {
    bar: BarrierKey,
    observed: i64,
    pc: u32,
}

/// A thread's latest access to another CTA of the cluster: it must be ordered before that CTA
/// exits.
#[derive(Clone, Debug)]
struct RemoteAccess {
    thread: u32,
    /// The thread's own clock at the access.
    clock: u32,
    pc: u32,
    /// Its loop counters at the access (the finding, at the CTA's exit, names that iteration).
    counters: Vec<u64>,
    /// The thread made a `barrier.cluster.arrive.relaxed` after the access (which orders it
    /// before nothing).
    relaxed_arrive_after: bool,
}

/// A TMA store whose source reading completed but whose issuer has not observed it.
#[derive(Clone, Copy)]
struct UnobservedStore {
    issuer: u32,
    group: usize,
    cta: usize,
    off: u32,
    len: u32,
    op: u32,
}

enum Conflict {
    InFlightWrite(u32),
    InFlightRead(u32),
    Thread { other: u32, was_write: bool, async_write: bool },
    Proxy { writer: u32 },
}

pub(crate) struct HappensBefore {
    threads: usize,
    threads_per_cta: u32,
    ctas: usize,
    slots_per_cta: usize,
    layout: SmemLayout,
    clocks: VectorClocks,
    /// Barriers of barrier arrays, by dense slot; others by `(cta, offset)`.
    slotted: Vec<BarrierClocks>,
    other: HashMap<(usize, u32), BarrierClocks>,
    /// Per CTA: shadow bytes of its shared memory.
    shadow: Vec<Vec<Shadow>>,
    /// Named barriers (`cta * 16 + id`): released clocks of the current round.
    named: Vec<Vec<u32>>,
    cluster_acc: Vec<u32>,
    /// Per round of the cluster barrier: what its arrivals released (its waiters acquire the
    /// round they waited for, whatever rounds completed since).
    cluster_done: Vec<Vec<u32>>,
    /// Open `bar.warp.sync` rounds per warp: mask and released clock.
    warp_sync: HashMap<(usize, u32), Vec<u32>>,
    /// What release atomics published, per location (`on_atomic_sync`).
    atomic_sync: HashMap<(usize, u64), Vec<u32>>,
    /// Own clock at the last `fence.proxy.async` (0: none) and the vector clock then.
    fence_clock: Vec<u32>,
    /// `SimConfig::proxy_war_check`: generic reads before an async write need a proxy fence.
    proxy_war_check: bool,
    /// With `proxy_war_check`: every `fence.proxy.async` clock of each thread, in order.
    fence_history: Vec<Vec<u32>>,
    fence_row: Vec<Vec<u32>>,
    /// Issuers of async ops in flight or whose completion is not observed yet.
    op_issuer: HashMap<u32, u32>,
    /// What each store is (`TMA store`, `bulk store`), and where it was issued, for messages.
    store_kind: HashMap<u32, &'static str>,
    store_pc: HashMap<u32, u32>,
    unobserved: Vec<UnobservedStore>,
    last_arrival: Vec<Option<LastArrival>>,
    last_wait: Vec<Option<LastWait>>,
    /// Per CTA: the latest access of each remote thread.
    remote: Vec<Vec<RemoteAccess>>,
    /// Per CTA: the join of its threads' clocks at exit.
    exit_acc: Vec<Vec<u32>>,
    /// Source lines by pc, for messages that name a second instruction.
    locs: Vec<Option<phaser_codegen::SourceLoc>>,
    /// Tensor memory (`tmem.rs`).
    tmem: TmemShadow,
    /// Shared-memory ranges `(cta, offset, length)` each tcgen05 op reads.
    tcgen05_reads: HashMap<u32, Vec<(usize, u32, u32)>>,
    /// Per tcgen05 op: the epochs `(component, clock, cta)` of the commit arrivals that made its
    /// shared-memory reads complete for the observers of that barrier phase in that CTA.
    tcgen05_pubs: HashMap<u32, Vec<(u32, u32, usize)>>,
    /// Shared memory wgmmas read, until a write ordered after their retirement replaces it.
    tensor: TensorReads,
}

impl HappensBefore {
    /// A write by thread `writer` at `pc` into `[off, off+len)` of `cta` that a wgmma still
    /// reads (in flight, or retired by no `wait_group` ordered before the write).
    fn wgmma_operand_write(&mut self, writer: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        let c = self.tensor.write(self.clocks.row(writer), cta, off, len)?;
        let r = &c.read;
        let tpc = self.threads_per_cta;
        let state = match (r.observers.is_empty(), r.done) {
            (true, false) => "it is still in flight",
            (true, true) => "it completed, but no wgmma.wait_group has retired it",
            (false, _) => "the wgmma.wait_group that retired it is not ordered before this write",
        };
        let what = format!(
            "the wgmma.mma_async{} of warpgroup threads {}-{}",
            self.at(r.pc),
            r.threads.0 % tpc,
            (r.threads.1 - 1) % tpc
        );
        let bytes = format!("{} ({len} bytes)", self.layout.describe(off));
        let category = Category::WgmmaOperandRace;
        Some(match c.culprit {
            Some(e) => Issue {
                category,
                cta: (e.thread / tpc) as usize,
                thread: Some(e.thread),
                barrier: Some((e.bar.cta, e.bar.off)),
                // The phase released (the barrier's phase now is later).
                phase: e.phase,
                pc: Some(e.pc),
                message: format!(
                    "{} released {} before a wgmma.wait_group retired {what}, which reads this stage ({state}): the \
                     write by {}{} then overwrites {bytes} that the tensor core may still be reading. Release a stage \
                     after the wgmma.wait_group that retires the wgmmas reading it",
                    self.who(e.thread),
                    self.bar_name(e.bar),
                    self.who(writer),
                    self.at(pc)
                ),
            },
            None => Issue {
                category,
                cta: (writer / tpc) as usize,
                thread: Some(writer),
                barrier: None,
                phase: None,
                pc: Some(pc),
                message: format!("{} overwrites {bytes}, which {what} reads: {state}", self.who(writer)),
            },
        })
    }
    fn key(&self, bar: BarrierKey) -> Option<usize> {
        bar.slot.map(|s| s as usize)
    }
    fn clocks_of(&mut self, bar: BarrierKey) -> &mut BarrierClocks {
        match self.key(bar) {
            Some(i) => &mut self.slotted[i],
            None => self.other.entry((bar.cta, bar.off)).or_default(),
        }
    }
    fn component(&self, bar: BarrierKey) -> Option<usize> {
        bar.slot.map(|s| self.threads + s as usize)
    }
    fn bar_name(&self, bar: BarrierKey) -> String {
        let (name, index) = self.layout.name_of(bar.off);
        BarrierRef { name, index, offset: bar.off, cta_rank: bar.cta as u32 }.to_string()
    }
    fn who(&self, t: u32) -> String {
        if self.ctas > 1 {
            format!("thread {} of CTA rank {}", t % self.threads_per_cta, t / self.threads_per_cta)
        } else {
            format!("thread {}", t % self.threads_per_cta)
        }
    }
    fn at(&self, pc: u32) -> String {
        self.locs.get(pc as usize).copied().flatten().map(|l| format!(" at {l}")).unwrap_or_default()
    }

    fn describe_conflict(&self, c: &Conflict) -> String {
        match *c {
            Conflict::InFlightWrite(op) => match self.op_issuer.get(&op) {
                Some(&i) => format!("an async copy issued by {} that has not landed yet", self.who(i)),
                None => "an in-flight async copy".into(),
            },
            Conflict::InFlightRead(op) => {
                let kind = self.store_kind.get(&op).copied().unwrap_or("store");
                match (self.op_issuer.get(&op), self.unobserved.iter().find(|s| s.op == op)) {
                    (_, Some(s)) => format!(
                        "a {kind} issued by {} whose completion was not observed (no \
                         `cp.async.bulk.wait_group.read` by its issuer ordered before this access)",
                        self.who(s.issuer)
                    ),
                    (Some(&i), None) if kind.starts_with("tcgen05") => format!(
                        "a {kind} issued by {} that reads these bytes and whose completion nothing observed (a \
                         tcgen05.commit tracking it arrives on a barrier; wait for that phase before refilling)",
                        self.who(i)
                    ),
                    (Some(&i), None) => {
                        format!("an in-flight {kind} issued by {} (source not read yet)", self.who(i))
                    }
                    (None, None) => format!("an in-flight {kind}"),
                }
            }
            Conflict::Thread { other, was_write, .. } if other as usize >= self.threads => {
                let slot = other as usize - self.threads;
                let bar = BarrierKey {
                    cta: slot / self.slots_per_cta.max(1),
                    off: self.layout.barrier_offset(slot % self.slots_per_cta.max(1)),
                    slot: Some(slot as u32),
                };
                if was_write {
                    format!(
                        "an async copy completing on barrier {}, whose phase this thread never observed (no wait on \
                         it, and no release chain from a thread that waited)",
                        self.bar_name(bar)
                    )
                } else {
                    format!(
                        "a tcgen05.mma read of these bytes, published by a tcgen05.commit on barrier {}, whose phase \
                         this thread never observed (the stage is refilled before the MMA reading it was known done)",
                        self.bar_name(bar)
                    )
                }
            }
            Conflict::Thread { other, was_write, async_write } => {
                let who = self.who(other);
                if async_write {
                    format!("the async copy issued by {who}, whose completion this thread never waited for")
                } else if was_write {
                    format!("a write by {who}, not ordered before this access")
                } else {
                    format!("a read by {who}, not ordered before this access (no release from {who} reached here)")
                }
            }
            Conflict::Proxy { writer } => format!(
                "a generic-proxy write by {} with no `fence.proxy.async` between it and the async-proxy read",
                self.who(writer)
            ),
        }
    }

    /// Thread `t` reads data nobody published to it right after a wait that passed at once on
    /// the phase before phase 0 of a fresh barrier: the wait, not the read, is the bug (a
    /// consumer starting on the producer's parity).
    fn read_after_start_parity(&self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        let w = self.last_wait[t as usize].filter(|w| w.observed < 0)?;
        let what = self.layout.describe(off);
        let message = format!(
            "{} reads {what} ({len} bytes), which no phase it observed published (unwritten, in flight, or written \
             without a release to it), right after its wait on {}{} passed at once on the phase before phase 0 of the \
             fresh barrier: a wait on parity 1 as the first wait of a consumer (consumers start on parity 0; only \
             producers on `empty` start on parity 1)",
            self.who(t),
            self.bar_name(w.bar),
            self.at(w.pc)
        );
        let category = Category::WrongParity;
        Some(Issue {
            category,
            cta,
            thread: Some(t),
            barrier: Some((w.bar.cta, w.bar.off)),
            phase: None,
            pc: Some(pc),
            message,
        })
    }

    fn store_kinds_name(&self, op: u32) -> &'static str {
        self.store_kind.get(&op).copied().unwrap_or("store")
    }

    /// Why thread `t` could read bytes nobody wrote: the wait that let it through.
    fn wait_context(&self, t: u32) -> (Option<BarrierKey>, String) {
        match self.last_wait[t as usize] {
            None => (None, String::new()),
            Some(w) => {
                let mut s = format!(
                    "\nthe thread got here through its wait on {}{}, which observed phase {}",
                    self.bar_name(w.bar),
                    self.at(w.pc),
                    w.observed
                );
                if w.observed < 0 {
                    s.push_str(
                        ": the virtual phase before phase 0 — a wait on parity 1 of a fresh barrier passes at once \
                         (a consumer starting on the producer's parity?)",
                    );
                }
                (Some(w.bar), s)
            }
        }
    }
}

impl Checker for HappensBefore {
    const ENABLED: bool = true;
    type Snapshot = IssueClock;

    fn new(g: &Geometry) -> Self {
        let slots = g.ctas * g.barrier_slots_per_cta;
        HappensBefore {
            threads: g.threads,
            threads_per_cta: g.threads_per_cta,
            ctas: g.ctas,
            slots_per_cta: g.barrier_slots_per_cta,
            layout: g.layout.clone(),
            clocks: VectorClocks::new(g.threads, g.threads + slots),
            slotted: (0..slots).map(|_| BarrierClocks::default()).collect(),
            other: HashMap::new(),
            shadow: (0..g.ctas).map(|_| vec![Shadow::default(); g.smem_bytes]).collect(),
            named: vec![Vec::new(); g.ctas * 16],
            cluster_acc: Vec::new(),
            cluster_done: Vec::new(),
            warp_sync: HashMap::new(),
            atomic_sync: HashMap::new(),
            fence_clock: vec![0; g.threads],
            proxy_war_check: g.proxy_war_check,
            fence_history: vec![Vec::new(); if g.proxy_war_check { g.threads } else { 0 }],
            fence_row: vec![Vec::new(); g.threads],
            op_issuer: HashMap::new(),
            store_kind: HashMap::new(),
            store_pc: HashMap::new(),
            unobserved: Vec::new(),
            last_arrival: vec![None; g.threads],
            last_wait: vec![None; g.threads],
            remote: vec![Vec::new(); g.ctas],
            exit_acc: vec![Vec::new(); g.ctas],
            locs: g.locs.to_vec(),
            tmem: TmemShadow::new(g.threads, g.threads_per_cta, g.ctas, g.layout, g.locs),
            tcgen05_reads: HashMap::new(),
            tcgen05_pubs: HashMap::new(),
            tensor: TensorReads::default(),
        }
    }

    fn snapshot_for_async(&mut self, t: u32) -> IssueClock {
        let row = self.clocks.row(t).to_vec();
        let own = self.clocks.tick(t);
        IssueClock { issuer: t, own, row }
    }

    fn on_thread_release(&mut self, t: u32, bar: BarrierKey, pc: u32, is_arrival: bool) {
        let clocks = &mut self.clocks;
        let acc = match bar.slot {
            Some(i) => &mut self.slotted[i as usize].acc,
            None => &mut self.other.entry((bar.cta, bar.off)).or_default().acc,
        };
        release_to(acc, clocks.row(t));
        let clock = clocks.tick(t);
        if is_arrival {
            self.last_arrival[t as usize] = Some(LastArrival { bar, clock, pc });
            self.tensor.arrival(t, self.clocks.row(t), bar, clock, pc);
        }
    }

    fn on_warp_release(&mut self, base: u32, lanes: u32, bar: BarrierKey, pc: u32) {
        let acc = match bar.slot {
            Some(i) => &mut self.slotted[i as usize].acc,
            None => &mut self.other.entry((bar.cta, bar.off)).or_default().acc,
        };
        if acc.len() < self.clocks.width {
            acc.resize(self.clocks.width, 0);
        }
        for l in crate::sim::engine::warp::lanes(lanes) {
            let t = base + l as u32;
            join(acc, self.clocks.row(t));
            let clock = self.clocks.tick(t);
            self.last_arrival[t as usize] = Some(LastArrival { bar, clock, pc });
            self.tensor.arrival(t, self.clocks.row(t), bar, clock, pc);
        }
    }

    fn on_warp_wait_passed(
        &mut self,
        base: u32,
        lanes: u32,
        bar: BarrierKey,
        observed: i64,
        pc: u32,
    ) -> Option<(u32, i64)> {
        let threads = self.threads;
        let b = match bar.slot {
            Some(i) => &mut self.slotted[i as usize],
            None => self.other.entry((bar.cta, bar.off)).or_default(),
        };
        if b.seen.len() < threads {
            b.seen.resize(threads, i64::MIN);
        }
        let done = if observed >= 0 { &b.done[(observed & 1) as usize][..] } else { &[] };
        let mut stale = None;
        for l in crate::sim::engine::warp::lanes(lanes) {
            let t = base + l as u32;
            self.last_wait[t as usize] = Some(LastWait { bar, observed, pc });
            join(self.clocks.row_mut(t), done);
            let seen = b.seen[t as usize];
            b.seen[t as usize] = seen.max(observed);
            if seen != i64::MIN && observed <= seen && stale.is_none() {
                stale = Some((t, seen));
            }
        }
        stale
    }

    fn last_observed(&self, t: u32, bar: BarrierKey) -> Option<i64> {
        let b = match bar.slot {
            Some(i) => &self.slotted[i as usize],
            None => self.other.get(&(bar.cta, bar.off))?,
        };
        b.seen.get(t as usize).copied().filter(|&s| s != i64::MIN)
    }

    fn lanes_to_check(&self, base: u32, lanes: u32, bar: BarrierKey, goal: i64, passes: bool) -> u32 {
        let b = match bar.slot {
            Some(i) => &self.slotted[i as usize],
            None => match self.other.get(&(bar.cta, bar.off)) {
                Some(b) => b,
                None => return lanes,
            },
        };
        let mut out = 0;
        for l in crate::sim::engine::warp::lanes(lanes) {
            let t = (base + l as u32) as usize;
            let from = b.seen.get(t).copied().filter(|&s| s != i64::MIN).unwrap_or(-1);
            let arrived = b.arrived.get(t).copied().filter(|&p| p != u64::MAX).map(|p| p as i64);
            let early = passes && arrived.is_some_and(|k| k > from && goal < k);
            if goal - from > 1 || early {
                out |= 1 << l;
            }
        }
        out
    }

    fn on_arrival_phase(&mut self, t: u32, bar: BarrierKey, phase: u64) {
        let threads = self.threads;
        let b = self.clocks_of(bar);
        if b.arrived.len() < threads {
            b.arrived.resize(threads, u64::MAX);
        }
        b.arrived[t as usize] = phase;
        self.tensor.arrival_phase(t, bar, phase);
    }

    fn last_arrival_phase(&self, t: u32, bar: BarrierKey) -> Option<u64> {
        let b = match bar.slot {
            Some(i) => &self.slotted[i as usize],
            None => self.other.get(&(bar.cta, bar.off))?,
        };
        b.arrived.get(t as usize).copied().filter(|&p| p != u64::MAX)
    }

    fn init_unordered(&self, base: u32, lanes: u32, bar: BarrierKey, init_by: u32) -> Option<u32> {
        let b = match bar.slot {
            Some(i) => &self.slotted[i as usize],
            None => self.other.get(&(bar.cta, bar.off))?,
        };
        if b.init_warned {
            return None;
        }
        let c = init_by as usize;
        crate::sim::engine::warp::lanes(lanes)
            .map(|l| base + l as u32)
            .find(|&t| t != init_by && self.clocks.row(t)[c] <= b.init_clock)
    }

    fn on_agent_release(&mut self, snap: &IssueClock, bar: BarrierKey) {
        release_to(&mut self.clocks_of(bar).acc, &snap.row);
    }

    fn on_phase_complete(&mut self, bar: BarrierKey, phase: u64) {
        let width = self.clocks.width;
        let comp = self.component(bar);
        let b = self.clocks_of(bar);
        let mut acc = std::mem::take(&mut b.acc);
        if let Some(c) = comp {
            if acc.len() < width {
                acc.resize(width, 0);
            }
            // Waiters of this phase see it complete: copies published through it are visible.
            acc[c] = acc[c].max(phase as u32 + 1);
        }
        b.done[(phase & 1) as usize] = acc;
    }

    fn on_init(&mut self, t: u32, bar: BarrierKey) {
        let init_clock = self.clocks.tick(t);
        let threads = self.threads;
        *self.clocks_of(bar) = BarrierClocks { init_clock, seen: vec![i64::MIN; threads], ..BarrierClocks::default() };
    }

    fn init_visible(&self, t: u32, bar: BarrierKey, init_by: u32) -> bool {
        let b = match bar.slot {
            Some(i) => &self.slotted[i as usize],
            None => match self.other.get(&(bar.cta, bar.off)) {
                Some(b) => b,
                None => return true,
            },
        };
        b.init_warned || init_by == t || self.clocks.row(t)[init_by as usize] > b.init_clock
    }

    fn init_reported(&mut self, bar: BarrierKey) {
        self.clocks_of(bar).init_warned = true;
    }

    fn on_wait_passed(&mut self, t: u32, bar: BarrierKey, observed: i64, stale_check: bool, pc: u32) -> Option<i64> {
        self.last_wait[t as usize] = Some(LastWait { bar, observed, pc });
        let threads = self.threads;
        let b = match bar.slot {
            Some(i) => &mut self.slotted[i as usize],
            None => self.other.entry((bar.cta, bar.off)).or_default(),
        };
        if observed >= 0 {
            self.clocks.acquire(t, &b.done[(observed & 1) as usize]);
        }
        if !stale_check {
            return None;
        }
        if b.seen.len() < threads {
            b.seen.resize(threads, i64::MIN);
        }
        let seen = b.seen[t as usize];
        b.seen[t as usize] = seen.max(observed);
        (seen != i64::MIN && observed <= seen).then_some(seen)
    }

    fn on_named_arrive(&mut self, t: u32, cta: usize, id: usize) {
        release_to(&mut self.named[cta * 16 + id], self.clocks.row(t));
        self.clocks.tick(t);
    }

    fn on_named_complete(&mut self, cta: usize, id: usize, waiters: &[u32]) {
        let acc = std::mem::take(&mut self.named[cta * 16 + id]);
        for &t in waiters {
            self.clocks.acquire(t, &acc);
        }
    }

    fn on_cluster_arrive(&mut self, t: u32, relaxed: bool) {
        if relaxed {
            for a in self.remote.iter_mut().flatten().filter(|a| a.thread == t) {
                a.relaxed_arrive_after = true;
            }
        } else {
            release_to(&mut self.cluster_acc, self.clocks.row(t));
            self.clocks.tick(t);
        }
    }

    fn on_cluster_complete(&mut self, round: u64) {
        let round = round as usize;
        if self.cluster_done.len() <= round {
            self.cluster_done.resize(round + 1, Vec::new());
        }
        self.cluster_done[round] = std::mem::take(&mut self.cluster_acc);
    }

    fn on_cluster_wait_passed(&mut self, t: u32, round: u64) {
        let done = self.cluster_done.get_mut(round as usize).map(std::mem::take).unwrap_or_default();
        self.clocks.acquire(t, &done);
        if let Some(slot) = self.cluster_done.get_mut(round as usize) {
            *slot = done;
        }
    }

    fn on_warp_sync_arrive(&mut self, t: u32, warp: usize, mask: u32) {
        release_to(self.warp_sync.entry((warp, mask)).or_default(), self.clocks.row(t));
        self.clocks.tick(t);
    }

    fn on_warp_sync_complete(&mut self, warp: usize, mask: u32, threads: &[u32]) {
        let acc = self.warp_sync.remove(&(warp, mask)).unwrap_or_default();
        for &t in threads {
            self.clocks.acquire(t, &acc);
        }
    }

    fn on_fence_proxy_async(&mut self, t: u32) {
        self.fence_clock[t as usize] = self.clocks.tick(t);
        if self.proxy_war_check {
            self.fence_history[t as usize].push(self.fence_clock[t as usize]);
        }
        self.fence_row[t as usize] = self.clocks.row(t).to_vec();
    }

    fn on_shared_read(&mut self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        let row = self.clocks.row(t);
        let me = epoch(t, row[t as usize]);
        let mut conflict = None;
        let mut unwritten = 0u32;
        for s in &mut self.shadow[cta][off as usize..(off + len) as usize] {
            if s.pend != 0 {
                conflict = Some((Category::AsyncReadRace, Conflict::InFlightWrite(s.pend)));
            } else if s.w == 0 {
                unwritten += 1;
            } else if s.w & UNORDERED == 0 {
                let u = ep_tid(s.w);
                if u != t && row[u as usize] < ep_clk(s.w) {
                    let a = s.w & ASYNC != 0;
                    let cat = if a { Category::AsyncReadRace } else { Category::SharedRace };
                    conflict = Some((cat, Conflict::Thread { other: u, was_write: true, async_write: a }));
                }
            }
            s.r = me;
        }
        let what = self.layout.describe(off);
        if let Some((category, c)) = conflict {
            let message =
                format!("{} reads {what} ({len} bytes) written by {}", self.who(t), self.describe_conflict(&c));
            return Some(Issue { category, cta, thread: Some(t), barrier: None, phase: None, pc: Some(pc), message });
        }
        if unwritten > 0 {
            let (barrier, why) = self.wait_context(t);
            let message = format!(
                "{} reads {what} ({len} bytes), {} no thread and no async copy has written in this launch \
                 (shared memory starts with garbage){why}",
                self.who(t),
                if unwritten == len { "which" } else { "part of which" }
            );
            let barrier = barrier.map(|b| (b.cta, b.off));
            let category = Category::UninitializedSharedRead;
            return Some(Issue { category, cta, thread: Some(t), barrier, phase: None, pc: Some(pc), message });
        }
        None
    }

    fn cause_of_bad_read(&self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        self.read_after_start_parity(t, cta, off, len, pc)
    }

    fn on_shared_write(&mut self, t: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        let tensor = self.wgmma_operand_write(t, cta, off, len, pc);
        let row = self.clocks.row(t);
        let me = epoch(t, row[t as usize]);
        let mut conflict = None;
        for s in &mut self.shadow[cta][off as usize..(off + len) as usize] {
            if s.pend != 0 {
                conflict = Some((Category::AsyncWriteRace, Conflict::InFlightWrite(s.pend)));
            } else if s.pend_read != 0
                && !self.tcgen05_pubs.get(&s.pend_read).is_some_and(|v| {
                    v.iter().any(|&(c, clk, pc)| pc == cta && row.get(c as usize).is_some_and(|&r| r >= clk))
                })
            {
                conflict = Some((Category::AsyncWriteRace, Conflict::InFlightRead(s.pend_read)));
            } else {
                if s.w != 0 && s.w & UNORDERED == 0 {
                    let u = ep_tid(s.w);
                    if u != t && row[u as usize] < ep_clk(s.w) {
                        let a = s.w & ASYNC != 0;
                        let cat = if a { Category::AsyncWriteRace } else { Category::SharedRace };
                        conflict = Some((cat, Conflict::Thread { other: u, was_write: true, async_write: a }));
                    }
                }
                if s.r != 0 {
                    let u = ep_tid(s.r);
                    if u != t && row[u as usize] < ep_clk(s.r) {
                        conflict = Some((
                            Category::SharedRace,
                            Conflict::Thread { other: u, was_write: false, async_write: false },
                        ));
                    }
                }
            }
            s.w = me;
            s.r = 0;
        }
        let Some((category, c)) = conflict else { return tensor };
        let message = format!(
            "{} writes {} ({len} bytes), conflicting with {}",
            self.who(t),
            self.layout.describe(off),
            self.describe_conflict(&c)
        );
        tensor.or(Some(Issue { category, cta, thread: Some(t), barrier: None, phase: None, pc: Some(pc), message }))
    }

    fn on_async_write_issue(&mut self, i: u32, op: u32, cta: usize, off: u32, len: u32, pc: u32) -> Option<Issue> {
        let tensor = self.wgmma_operand_write(i, cta, off, len, pc);
        self.op_issuer.insert(op, i);
        let row = self.clocks.row(i);
        let mut conflict = None;
        let mut reader = None;
        let mut unfenced_reader = None;
        for s in &mut self.shadow[cta][off as usize..(off + len) as usize] {
            if self.proxy_war_check && s.r != 0 && unfenced_reader.is_none() {
                // An ordered generic read still needs its reader's `fence.proxy.async` after it,
                // seen by this issuer, before the async proxy overwrites the bytes.
                let (u, c) = (ep_tid(s.r), ep_clk(s.r));
                // A fence of the reader after its read that this issuer has seen.
                let seen = if u == i { u32::MAX } else { row[u as usize] };
                let fences = &self.fence_history[u as usize];
                let fenced = fences.get(fences.partition_point(|&f| f < c)).is_some_and(|&f| f <= seen);
                if (u == i || row[u as usize] >= c) && !fenced {
                    unfenced_reader = Some(u);
                }
            }
            if s.pend != 0 && s.pend != op {
                conflict = Some(Conflict::InFlightWrite(s.pend));
            }
            if s.pend_read != 0 {
                let published = self.tcgen05_pubs.get(&s.pend_read).is_some_and(|v| {
                    v.iter().any(|&(c, clk, pc)| pc == cta && row.get(c as usize).is_some_and(|&r| r >= clk))
                });
                if published {
                    // The tensor core's read is done for this writer: the bytes are free.
                    s.pend_read = 0;
                } else {
                    conflict = Some(Conflict::InFlightRead(s.pend_read));
                }
            }
            if s.w != 0 && s.w & UNORDERED == 0 {
                let u = ep_tid(s.w);
                if u != i && row[u as usize] < ep_clk(s.w) {
                    conflict = Some(Conflict::Thread { other: u, was_write: true, async_write: s.w & ASYNC != 0 });
                }
            }
            if s.r != 0 {
                let u = ep_tid(s.r);
                if u != i && row[u as usize] < ep_clk(s.r) {
                    conflict = Some(Conflict::Thread { other: u, was_write: false, async_write: false });
                    reader = Some((u, ep_clk(s.r)));
                }
            }
            s.pend = op;
        }
        let Some(c) = conflict else {
            return match unfenced_reader {
                Some(u) if tensor.is_none() => Some(Issue {
                    category: Category::ProxyFence,
                    cta,
                    thread: Some(i),
                    barrier: None,
                    phase: None,
                    pc: Some(pc),
                    message: format!(
                        "an async copy issued by {} writes {} ({len} bytes), which {} read with ordinary loads \
                         (the generic proxy) with no `fence.proxy.async` between that read and this async-proxy \
                         write (PTX ISA: accessing the same memory location across multiple proxies needs a \
                         cross-proxy fence); the copy may land before the read. Fix: \
                         `fence.proxy.async.shared::cta` after the last read, before the release",
                        self.who(i),
                        self.layout.describe(off),
                        if u == i { "this thread".to_string() } else { self.who(u) }
                    ),
                }),
                _ => tensor,
            };
        };
        let mut hint = String::new();
        if let (Conflict::Thread { was_write: false, .. }, Some((u, read_clock))) = (&c, reader) {
            // The reader arrived (released the stage) before this read, and the issuer saw
            // that arrival: the release came before the reading was done.
            match self.last_arrival.get(u as usize).copied().flatten() {
                Some(a) if a.clock < read_clock && row[u as usize] >= a.clock => {
                    hint = format!(
                        "\n(the reader released the stage before reading it: {} arrived on {}{} and read the stage \
                         afterwards — arrive on the empty barrier after the last read of the stage)",
                        self.who(u),
                        self.bar_name(a.bar),
                        self.at(a.pc)
                    );
                }
                _ => {
                    hint = "\n(the stage is refilled before its consumer released it: a missing or wrong wait on the \
                            empty barrier?)"
                        .into();
                }
            }
        }
        let message = format!(
            "async copy issued by {} overwrites {} ({len} bytes), conflicting with {}{hint}",
            self.who(i),
            self.layout.describe(off),
            self.describe_conflict(&c)
        );
        let category = Category::AsyncWriteRace;
        tensor.or(Some(Issue { category, cta, thread: Some(i), barrier: None, phase: None, pc: Some(pc), message }))
    }

    fn on_async_land(
        &mut self,
        op: u32,
        _issuer: u32,
        snap: &IssueClock,
        SharedRange { cta, off, len }: SharedRange,
        by: Publisher,
    ) {
        let e = match by {
            Publisher::Issuer => ASYNC | epoch(snap.issuer, snap.own),
            Publisher::Phase { bar, phase } => match self.component(bar) {
                Some(c) => ASYNC | epoch(c as u32, phase as u32 + 1),
                None => ASYNC | epoch(snap.issuer, snap.own),
            },
        };
        for s in &mut self.shadow[cta][off as usize..(off + len) as usize] {
            if s.pend == op {
                s.pend = 0;
            }
            s.w = e;
            s.r = 0;
        }
    }

    fn on_async_read_issue(
        &mut self,
        i: u32,
        op: u32,
        kind: &'static str,
        SharedRange { cta, off, len }: SharedRange,
        pc: u32,
    ) -> Option<Issue> {
        self.op_issuer.insert(op, i);
        self.store_kind.insert(op, kind);
        self.store_pc.insert(op, pc);
        if kind.starts_with("tcgen05") {
            self.tcgen05_reads.entry(op).or_default().push((cta, off, len));
        }
        let mut conflict = None;
        let mut unwritten = 0u32;
        for b in off..off + len {
            let s = self.shadow[cta][b as usize];
            if s.w == 0 && s.pend == 0 {
                unwritten += 1;
            }
            if s.pend != 0 {
                conflict = Some((Category::AsyncReadRace, Conflict::InFlightWrite(s.pend)));
            } else if s.w != 0 && s.w & (ASYNC | UNORDERED) == 0 {
                let u = ep_tid(s.w);
                let c = ep_clk(s.w);
                if u != i && self.clocks.row(i)[u as usize] < c {
                    conflict = Some((
                        Category::AsyncReadRace,
                        Conflict::Thread { other: u, was_write: true, async_write: false },
                    ));
                } else {
                    let own_fence = self.fence_clock[u as usize] >= c && self.fence_clock[u as usize] > 0;
                    let issuer_fence = self.fence_row[i as usize].get(u as usize).is_some_and(|&f| f >= c);
                    if !own_fence && !issuer_fence {
                        conflict = Some((Category::ProxyFence, Conflict::Proxy { writer: u }));
                    }
                }
            } else if s.w & ASYNC != 0 && kind.starts_with("tcgen05") {
                // A tensor-core read of bytes a copy wrote: its issuer must have observed the
                // phase (or the issue) that published them.
                let u = ep_tid(s.w);
                if u != i && self.clocks.row(i).get(u as usize).is_some_and(|&c| c < ep_clk(s.w)) {
                    conflict = Some((
                        Category::AsyncReadRace,
                        Conflict::Thread { other: u, was_write: true, async_write: true },
                    ));
                }
            }
            self.shadow[cta][b as usize].pend_read = op;
        }
        if conflict.is_none() && unwritten > 0 {
            let message = format!(
                "{kind} issued by {} reads {} ({len} bytes), {} no thread and no async copy has written in this launch \
                 (shared memory starts with garbage, which the store copies out)",
                self.who(i),
                self.layout.describe(off),
                if unwritten == len { "which" } else { "part of which" }
            );
            let category = Category::UninitializedSharedRead;
            return Some(Issue { category, cta, thread: Some(i), barrier: None, phase: None, pc: Some(pc), message });
        }
        let (category, c) = conflict?;
        let message = format!(
            "{kind} issued by {} reads {} ({len} bytes): {}",
            self.who(i),
            self.layout.describe(off),
            self.describe_conflict(&c)
        );
        Some(Issue { category, cta, thread: Some(i), barrier: None, phase: None, pc: Some(pc), message })
    }

    fn on_async_read_done(&mut self, issuer: u32, snap: &IssueClock, op: u32, cta: usize, off: u32, len: u32) {
        // The copy read the bytes as its issuer at issue time: a later write must be ordered
        // after that (a release chain from the issuer), like a write after a thread's read.
        let r = epoch(issuer, snap.own);
        for b in &mut self.shadow[cta][off as usize..(off + len) as usize] {
            if b.pend_read == op {
                b.pend_read = 0;
                b.r = r;
            }
        }
        self.store_kind.remove(&op);
    }

    fn on_store_complete(&mut self, issuer: u32, op: u32, group: usize, cta: usize, off: u32, len: u32) {
        // The source stays marked as read by the store until its issuer observes the
        // completion (`wait_group`): only then may anyone ordered after it rewrite it.
        self.unobserved.push(UnobservedStore { issuer, group, cta, off, len, op });
    }

    fn on_stores_observed(&mut self, t: u32, retired: usize) {
        if !self.unobserved.iter().any(|s| s.issuer == t) {
            return;
        }
        let me = epoch(t, self.clocks.own(t));
        let mut i = 0;
        while i < self.unobserved.len() {
            let s = self.unobserved[i];
            if s.issuer == t && s.group < retired {
                for b in &mut self.shadow[s.cta][s.off as usize..(s.off + s.len) as usize] {
                    if b.pend_read == s.op {
                        b.pend_read = 0;
                        b.r = me;
                    }
                }
                self.op_issuer.remove(&s.op);
                self.store_kind.remove(&s.op);
                self.store_pc.remove(&s.op);
                self.unobserved.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    fn on_atomic_sync(&mut self, t: u32, loc: (usize, u64), acquire: bool, release: bool) {
        // An `acq_rel` read-modify-write acquires the releases before it, then releases.
        if acquire {
            if let Some(acc) = self.atomic_sync.get(&loc) {
                let acc = acc.clone();
                self.clocks.acquire(t, &acc);
            }
        }
        if release {
            release_to(self.atomic_sync.entry(loc).or_default(), self.clocks.row(t));
            self.clocks.tick(t);
        }
    }

    fn on_shared_atomic(&mut self, t: u32, cta: usize, off: u32, len: u32) {
        let e = UNORDERED | epoch(t, self.clocks.own(t));
        for s in &mut self.shadow[cta][off as usize..(off + len) as usize] {
            s.w = e;
        }
    }

    fn on_remote_access(&mut self, t: u32, target: usize, pc: u32, counters: Vec<u64>) -> Option<Issue> {
        let clock = self.clocks.own(t);
        let list = &mut self.remote[target];
        let access = RemoteAccess { thread: t, clock, pc, counters, relaxed_arrive_after: false };
        match list.iter_mut().find(|a| a.thread == t) {
            Some(a) => *a = access,
            None => list.push(access),
        }
        // Started: some event of a thread of `target` happens before the access (every clock
        // starts at 1 on its own thread, 0 elsewhere), e.g. its arrival at a cluster barrier
        // whose wait `t` passed. The simulator starts every CTA of a cluster at once, so only
        // this order, not the schedule, shows whether the hardware guarantees it.
        let per_cta = self.threads_per_cta as usize;
        let row = self.clocks.row(t);
        if row[target * per_cta..(target + 1) * per_cta].iter().any(|&c| c > 0) {
            return None;
        }
        let message = format!(
            "{} accessed CTA rank {target}'s shared memory{} before anything ordered the access after CTA rank \
             {target} started: the CTAs of a cluster are not guaranteed to be running yet (undefined behaviour; \
             a cluster barrier — `barrier.cluster.arrive` + `wait`, `cluster_sync()` — before the first remote \
             access guarantees it)",
            self.who(t),
            self.at(pc)
        );
        let from = (t / self.threads_per_cta) as usize;
        Some(Issue {
            category: Category::UnstartedCtaAccess,
            cta: from,
            thread: Some(t),
            barrier: None,
            phase: None,
            pc: Some(pc),
            message,
        })
    }

    fn on_thread_exit(&mut self, t: u32) {
        let cta = (t / self.threads_per_cta) as usize;
        release_to(&mut self.exit_acc[cta], self.clocks.row(t));
    }

    fn on_cta_exit(&mut self, cta: usize) -> Vec<LateIssue> {
        let mut out = Vec::new();
        let exit = std::mem::take(&mut self.exit_acc[cta]);
        for RemoteAccess { thread: t, clock, pc, counters, relaxed_arrive_after } in
            std::mem::take(&mut self.remote[cta])
        {
            if exit.get(t as usize).copied().unwrap_or(0) < clock {
                let message = if relaxed_arrive_after {
                    format!(
                        "{} accessed CTA rank {cta}'s shared memory{}, and what follows it before CTA rank {cta} \
                         exited is a `barrier.cluster.arrive.relaxed`, which orders no memory access before it: \
                         \"the optional .relaxed qualifier on barrier.cluster.arrive specifies that there are no \
                         memory ordering and visibility guarantees provided for the memory accesses performed prior \
                         to barrier.cluster.arrive\" (PTX ISA, barrier.cluster). So the access may land in a CTA that \
                         has already exited (undefined behaviour). Fix: a release arrive after the access \
                         (`barrier.cluster.arrive`, which is `.release` by default: `cluster_arrive()`, not \
                         `cluster_arrive_relaxed()`) before the cluster wait that keeps CTA rank {cta} alive",
                        self.who(t),
                        self.at(pc)
                    )
                } else {
                    format!(
                        "{} accessed CTA rank {cta}'s shared memory{}, and nothing orders that access before CTA \
                         rank {cta} exited (its threads never waited for it): the access may land in a CTA that has \
                         already exited (undefined behaviour; a final cluster barrier — `barrier.cluster.arrive` + \
                         `wait` — prevents it)",
                        self.who(t),
                        self.at(pc)
                    )
                };
                let category = Category::ExitedCtaAccess;
                let from = (t / self.threads_per_cta) as usize;
                let issue =
                    Issue { category, cta: from, thread: Some(t), barrier: None, phase: None, pc: Some(pc), message };
                out.push(LateIssue { issue, counters: Some(counters) });
            }
        }
        // Stores that read this CTA's shared memory and completed, but whose issuer never
        // waited for them: only luck made them finish before the exit (the ones still in flight
        // the engine reports).
        for s in self.unobserved.iter().filter(|s| s.cta == cta) {
            let kind = self.store_kinds_name(s.op);
            let message = format!(
                "the {kind} issued by {} read CTA rank {cta}'s shared memory, and its issuer never waited for it \
                 (no `cp.async.bulk.wait_group` before the exit): it completed before the CTA exited only by \
                 chance; its shared memory may already belong to another CTA",
                self.who(s.issuer)
            );
            let pc = self.store_pc.get(&s.op).copied();
            let from = (s.issuer / self.threads_per_cta) as usize;
            let category = Category::ExitedCtaAccess;
            let issue = Issue { category, cta: from, thread: Some(s.issuer), barrier: None, phase: None, pc, message };
            out.push(LateIssue { issue, counters: None });
        }
        out
    }

    fn on_tcgen05_fence(&mut self, t: u32, after: bool) {
        if after {
            self.tmem.fence_after(t, self.clocks.row(t));
        } else {
            let clock = self.clocks.tick(t);
            self.tmem.fence_before(t, clock);
        }
    }

    fn on_tmem_access(&mut self, t: u32, kind: TmemKind, regions: &[Region], pc: u32) -> (u32, Option<Issue>) {
        self.tmem.access(t, kind, regions, pc, self.clocks.row(t))
    }

    fn on_tmem_complete(&mut self, id: u32) {
        self.tmem.completed(id);
    }

    fn on_tmem_wait(&mut self, t: u32, st: bool) {
        self.tmem.waited(t, st);
    }

    fn on_tcgen05_commit(&mut self, t: u32) -> Vec<u32> {
        self.tmem.commit_tracks(t)
    }

    fn on_tcgen05_commit_arrive(&mut self, snap: &IssueClock, bar: BarrierKey, phase: u64, ids: &[u32], reads: &[u32]) {
        // Published through the barrier's phase (a component of its own), or, for a barrier
        // outside the barrier arrays, through the issuer's clock at the commit.
        let (component, clock) = match self.component(bar) {
            Some(c) => (c as u32, phase as u32 + 1),
            None => (snap.issuer, snap.own),
        };
        self.tmem.published(ids, bar.cta, (bar.cta, bar.off), component, clock);
        for op in reads {
            let in_cta = self.tcgen05_reads.get(op).is_some_and(|r| r.iter().any(|&(c, _, _)| c == bar.cta));
            if in_cta {
                self.tcgen05_pubs.entry(*op).or_default().push((component, clock, bar.cta));
            }
        }
    }

    fn on_wgmma_issue(
        &mut self,
        id: u32,
        threads: (u32, u32),
        snaps: &[IssueClock],
        cta: usize,
        ranges: &[(u32, u32)],
        pc: u32,
    ) -> Option<Issue> {
        self.tensor.issue(
            TensorRead {
                id,
                cta,
                ranges: ranges.to_vec(),
                pc,
                threads,
                done: false,
                observers: Vec::new(),
                early: Vec::new(),
            },
            &snaps.iter().map(|s| (s.issuer, s.own)).collect::<Vec<_>>(),
        );
        // The bytes must have been written, and each write ordered before the issue of one of
        // the four warps (the tensor core starts once all issued); generic writes also need a
        // `fence.proxy.async` (wgmma reads through the async proxy).
        let ordered = |u: u32, c: u32| snaps.iter().any(|s| s.row.get(u as usize).is_some_and(|&r| r >= c));
        let mut problem = None;
        let mut unwritten = 0u32;
        let mut first = None;
        for &(off, len) in ranges {
            for b in off..off + len {
                let s = self.shadow[cta][b as usize];
                let found = if s.pend != 0 {
                    Some((Category::AsyncReadRace, Conflict::InFlightWrite(s.pend)))
                } else if s.w == 0 {
                    unwritten += 1;
                    first = first.or(Some(b));
                    None
                } else if s.w & UNORDERED == 0 {
                    let (u, c) = (ep_tid(s.w), ep_clk(s.w));
                    let asynchronous = s.w & ASYNC != 0;
                    if !ordered(u, c) {
                        let other = Conflict::Thread { other: u, was_write: true, async_write: asynchronous };
                        Some((Category::AsyncReadRace, other))
                    } else if !asynchronous {
                        let own_fence = self.fence_clock[u as usize] >= c && self.fence_clock[u as usize] > 0;
                        let issuer_fence = snaps
                            .iter()
                            .any(|sn| self.fence_row[sn.issuer as usize].get(u as usize).is_some_and(|&f| f >= c));
                        (!own_fence && !issuer_fence).then_some((Category::ProxyFence, Conflict::Proxy { writer: u }))
                    } else {
                        None
                    }
                } else {
                    None
                };
                if problem.is_none() {
                    if let Some(f) = found {
                        problem = Some((b, f));
                    }
                }
            }
        }
        let (lo, hi) = threads;
        let who = format!(
            "the wgmma.mma_async of warpgroup threads {}-{}",
            lo % self.threads_per_cta,
            (hi - 1) % self.threads_per_cta
        );
        let issue = |category, message| Issue {
            category,
            cta,
            thread: Some(lo),
            barrier: None,
            phase: None,
            pc: Some(pc),
            message,
        };
        if let Some((b, (category, c))) = problem {
            let message = format!("{who} reads {}: {}", self.layout.describe(b), self.describe_conflict(&c));
            return Some(issue(category, message));
        }
        let b = first?;
        let message = format!(
            "{who} reads {} ({unwritten} bytes of its operands), which no thread and no async copy has written in this \
             launch (shared memory starts with garbage)",
            self.layout.describe(b)
        );
        Some(issue(Category::UninitializedSharedRead, message))
    }

    fn on_wgmma_done(&mut self, id: u32) {
        self.tensor.done(id);
    }

    fn on_wgmma_retired(&mut self, base: u32, lanes: u32, id: u32) {
        for l in crate::sim::engine::warp::lanes(lanes) {
            let t = base + l as u32;
            self.tensor.observed(t, self.clocks.own(t), id);
        }
    }
}
