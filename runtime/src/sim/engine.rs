//! The state of one simulated cluster (CTAs, warps, barriers, async agents) and the main
//! loop that schedules it to completion, deadlock or a limit.

use super::agent::AsyncOp;
use super::barrier::Barrier;
use super::checker::Shadow;
use super::config::SimConfig;
use super::finding::{BarrierRef, Category, Finding, Severity};
use super::interp::lanes;
use super::memory::{GlobalMemory, SmemLayout};
use super::program::Program;
use super::report::Collector;
use super::scheduler::Scheduler;
use super::warp_sync::WarpSyncRound;
use crate::error::{Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::tensor_map::TensorMapDesc;
use phaser_codegen::ir::Kernel;
use phaser_codegen::SourceLoc;
use std::collections::HashMap;

/// What a blocked lane waits for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Block {
    None,
    /// An mbarrier wait (`Wait`, or a `TryWait` that reports `false` on timeout).
    Mbar {
        cta: u32,
        off: u32,
        target: WaitTarget,
        done: Option<u32>,
        pc: u32,
        since: u64,
    },
    /// `bar.sync id` generation `gen`.
    Bar {
        id: u8,
        gen: u64,
        pc: u32,
    },
    /// `barrier.cluster.wait` for arrival generation `gen`.
    Cluster {
        gen: u64,
        pc: u32,
    },
    /// `cp.async.wait_group n`.
    CpAsync {
        n: u32,
        pc: u32,
    },
    /// `cp.async.bulk.wait_group n`.
    Bulk {
        n: u32,
        pc: u32,
    },
    /// `bar.warp.sync mask`: released by the last lane of the mask to arrive (`warp_sync`).
    WarpSync {
        mask: u32,
        pc: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitTarget {
    Parity(u64),
    /// Phase number from a state token: satisfied once the barrier's phase is past it.
    Phase(u64),
}

pub struct Warp {
    pub cta: usize,
    /// Linear thread index (in the CTA) of lane 0.
    pub base_tid: u32,
    pub regs: Vec<u64>,
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
    pub block: [Block; 32],
    /// Open `bar.warp.sync` rounds, one per mask value some lane waits with.
    pub warp_syncs: Vec<WarpSyncRound>,
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

/// A named CTA barrier (`bar.sync id`).
#[derive(Default)]
pub struct NamedBar {
    pub arrived: u32,
    /// Thread count of the current round (`None`: every thread of the CTA).
    pub expected: Option<u32>,
    pub gen: u64,
    pub acc: Vec<u32>,
    pub waiters: Vec<u32>,
}

pub struct Cta {
    pub rank: u32,
    pub ctaid: [u32; 3],
    pub smem: Vec<u8>,
    pub shadow: Vec<Shadow>,
    pub barriers: HashMap<u32, Barrier>,
    pub named: Vec<NamedBar>,
    pub exited: u32,
}

#[derive(Default)]
pub struct ClusterBar {
    pub arrived: u32,
    pub gen: u64,
    pub acc: Vec<u32>,
    pub done: Vec<u32>,
}

/// Per-thread state outside the registers.
#[derive(Default, Clone)]
pub struct ThreadAux {
    /// `cp.async` ops of the open group, and per committed group the ops still in flight.
    pub cp_open: u32,
    pub cp_groups: Vec<u32>,
    pub cp_first: usize,
    pub bulk_open: u32,
    pub bulk_groups: Vec<u32>,
    pub bulk_first: usize,
    /// Own clock at the last `fence.proxy.async` (0: none) and the vector clock then.
    pub fence_clock: u32,
    pub fence_vc: Vec<u32>,
    /// Generation of this thread's last `barrier.cluster.arrive`.
    pub cluster_arrived: Option<u64>,
    /// TMA stores of this thread that finished reading shared memory but whose completion
    /// the thread has not observed yet (no `cp.async.bulk.wait_group` covering their group):
    /// their source bytes stay marked as read by an async store until it does.
    pub unobserved_stores: Vec<StoreRead>,
}

/// The shared-memory source of a completed TMA store.
#[derive(Clone, Copy, Debug)]
pub struct StoreRead {
    pub group: usize,
    pub cta: usize,
    pub off: u32,
    pub len: u32,
    pub op: u32,
}

impl ThreadAux {
    /// Whether `wait_group n` may return: PTX waits until at most the `n` most recent
    /// committed groups are pending and *every older group is complete* (a recent group
    /// completing early does not let an older one off).
    pub fn groups_retired(groups: &[u32], first: &mut usize, n: u32) -> bool {
        while *first < groups.len() && groups[*first] == 0 {
            *first += 1;
        }
        *first >= groups.len().saturating_sub(n as usize)
    }
}

/// Everything one launch shares across its clusters.
pub struct LaunchCtx<'a> {
    pub k: &'a Kernel,
    pub prog: &'a Program,
    pub cfg: &'a SimConfig,
    pub launch: &'a LaunchConfig,
    pub layout: &'a SmemLayout,
    pub params: &'a [u64],
    pub tmaps: &'a [Option<TensorMapDesc>],
    pub cluster_dim: [u32; 3],
}

pub struct Engine<'a> {
    pub k: &'a Kernel,
    pub prog: &'a Program,
    pub cfg: &'a SimConfig,
    pub launch: &'a LaunchConfig,
    pub layout: &'a SmemLayout,
    pub tmaps: &'a [Option<TensorMapDesc>],
    pub gmem: &'a mut GlobalMemory,
    pub out: &'a mut Collector,
    pub cluster_dim: [u32; 3],
    pub ctas: Vec<Cta>,
    pub warps: Vec<Warp>,
    pub tpc: u32,
    /// Threads in the cluster.
    pub n: usize,
    /// Vector-clock width: one component per thread, then one per barrier slot (a barrier's
    /// component counts its completed phases; async copies are published through it).
    pub m: usize,
    /// `(cta, offset)` of barrier component `n + i`.
    pub bar_comps: Vec<(usize, u32)>,
    pub vc: Vec<u32>,
    pub aux: Vec<ThreadAux>,
    pub agents: Vec<AsyncOp>,
    pub next_op: u32,
    pub cluster_bar: ClusterBar,
    pub sched: Scheduler,
    pub tick: u64,
    pub round: u64,
    pub live_threads: u32,
    /// Failed `test_wait`/`try_wait`s since the last barrier event (livelock detection).
    pub futile: u64,
    /// Failed polls, and other slow-path instructions, ever executed: a round in which polls
    /// failed and nothing else with an effect ran is a spin, and counts as stalled for the
    /// async agents (else a `test_wait` loop would starve the copies it waits for under the
    /// adversarial schedule).
    pub polls_failed: u64,
    pub slow_effects: u64,
    pub abort: bool,
}

const FUTILE_LIMIT: u64 = 2_000_000;

impl<'a> Engine<'a> {
    /// Set up the cluster whose CTAs have the given `%ctaid`s (rank order).
    pub fn new(
        cx: &LaunchCtx<'a>,
        gmem: &'a mut GlobalMemory,
        out: &'a mut Collector,
        ctaids: &[[u32; 3]],
        salt: u64,
    ) -> Result<Engine<'a>> {
        let tpc = cx.launch.threads_per_block();
        let n = tpc as usize * ctaids.len();
        let smem_total = cx.layout.total as usize;
        let shadow_bytes = if cx.cfg.race_check { smem_total * std::mem::size_of::<Shadow>() } else { 0 };
        let need = gmem.bytes()
            + (ctaids.len() * (smem_total + shadow_bytes)) as u64
            + (n * (n + 64) * 4) as u64
            + (n * cx.k.num_regs as usize * 8) as u64;
        if need > cx.cfg.max_memory_bytes {
            return Err(RuntimeError::SimulatorLimit(format!(
                "kernel `{}`: simulating one cluster of {} CTAs x {tpc} threads needs about {need} bytes, over the \
                 simulator's memory limit of {} bytes (SimConfig::max_memory_bytes)",
                cx.k.name,
                ctaids.len(),
                cx.cfg.max_memory_bytes
            )));
        }
        let ctas = ctaids
            .iter()
            .enumerate()
            .map(|(r, &ctaid)| Cta {
                rank: r as u32,
                ctaid,
                smem: vec![0; smem_total],
                shadow: if cx.cfg.race_check { vec![Shadow::default(); smem_total] } else { Vec::new() },
                barriers: HashMap::new(),
                named: (0..16).map(|_| NamedBar::default()).collect(),
                exited: 0,
            })
            .collect::<Vec<_>>();
        let nregs = cx.k.num_regs as usize;
        let mut warps = Vec::new();
        for c in 0..ctaids.len() {
            let nw = tpc.div_ceil(32);
            for wi in 0..nw {
                let nl = (tpc - wi * 32).min(32);
                let all = if nl == 32 { u32::MAX } else { (1u32 << nl) - 1 };
                let mut regs = vec![0u64; nregs * 32];
                for (p, &v) in cx.k.params.iter().zip(cx.params) {
                    let r = p.reg.id as usize * 32;
                    regs[r..r + 32].fill(v);
                }
                warps.push(Warp {
                    cta: c,
                    base_tid: wi * 32,
                    regs,
                    pc: [0; 32],
                    runnable: all,
                    blocked: 0,
                    exited: !all,
                    yielded: 0,
                    spinning: 0,
                    poll_armed: 0,
                    last_failed_poll: [0; 32],
                    block: [Block::None; 32],
                    warp_syncs: Vec::new(),
                });
            }
        }
        let mut bar_comps = Vec::new();
        for c in 0..ctaids.len() {
            for r in cx.layout.regions.iter().filter(|r| r.barriers) {
                for off in (r.start..r.end).step_by(8) {
                    bar_comps.push((c, off));
                }
            }
        }
        let m = n + bar_comps.len();
        let mut vc = vec![0u32; n * m];
        for t in 0..n {
            vc[t * m + t] = 1;
        }
        Ok(Engine {
            k: cx.k,
            prog: cx.prog,
            cfg: cx.cfg,
            launch: cx.launch,
            layout: cx.layout,
            tmaps: cx.tmaps,
            gmem,
            out,
            cluster_dim: cx.cluster_dim,
            ctas,
            warps,
            tpc,
            n,
            m,
            bar_comps,
            vc,
            aux: vec![ThreadAux::default(); n],
            agents: Vec::new(),
            next_op: 1,
            cluster_bar: ClusterBar::default(),
            sched: Scheduler::new(cx.cfg, salt),
            tick: 0,
            round: 0,
            live_threads: n as u32,
            futile: 0,
            polls_failed: 0,
            slow_effects: 0,
            abort: false,
        })
    }

    /// Thread index in the cluster of lane `l` of warp `wi`.
    #[inline]
    pub fn gtid(&self, wi: usize, l: usize) -> u32 {
        let w = &self.warps[wi];
        w.cta as u32 * self.tpc + w.base_tid + l as u32
    }

    /// The vector-clock component of barrier `(cta, off)`, if it is in a barrier array.
    pub fn bar_component(&self, cta: usize, off: u32) -> Option<usize> {
        let per_cta = self.bar_comps.len() / self.ctas.len().max(1);
        let mut slot = 0usize;
        for r in self.layout.regions.iter().filter(|r| r.barriers) {
            if off >= r.start && off < r.end && (off - r.start).is_multiple_of(8) {
                return Some(self.n + cta * per_cta + slot + ((off - r.start) / 8) as usize);
            }
            slot += ((r.end - r.start) / 8) as usize;
        }
        None
    }

    /// After barrier `(cta, off)` completed a phase: stamp the phase count into the clock
    /// that waiters of that phase acquire.
    pub fn stamp_phase(&mut self, cta: usize, off: u32) {
        let Some(comp) = self.bar_component(cta, off) else { return };
        let m = self.m;
        let bar = self.ctas[cta].barriers.get_mut(&off).expect("barrier");
        let done = bar.phase - 1;
        let d = &mut bar.done[(done & 1) as usize];
        if d.len() < m {
            d.resize(m, 0);
        }
        d[comp] = done as u32 + 1;
    }

    pub fn loc(&self, pc: u32) -> Option<SourceLoc> {
        self.prog.locs.get(pc as usize).copied().flatten()
    }

    pub fn barrier_ref(&self, cta: usize, off: u32) -> BarrierRef {
        let (name, index) = self.layout.name_of(off);
        BarrierRef { name, index, offset: off, cta_rank: self.ctas[cta].rank }
    }

    /// Record a finding at thread `gtid` (if any), barrier `(cta, off)` (if any), op `pc`.
    pub fn finding(
        &mut self,
        category: Category,
        cta: usize,
        gtid: Option<u32>,
        bar: Option<(usize, u32)>,
        pc: Option<u32>,
        message: String,
    ) {
        let (barrier, phase) = match bar {
            Some((c, off)) => (Some(self.barrier_ref(c, off)), self.ctas[c].barriers.get(&off).map(|b| b.phase)),
            None => (None, None),
        };
        let thread = gtid.map(|g| g % self.tpc);
        let f = Finding {
            category,
            severity: Severity::Error,
            kernel: self.k.name.clone(),
            cta: self.ctas[cta].ctaid,
            warp: thread.map(|t| t / 32),
            thread,
            barrier,
            phase,
            loc: pc.and_then(|p| self.loc(p)),
            message,
            repeats: 0,
        };
        self.out.add_finding(f, self.cfg.max_findings);
    }

    /// Schedule the cluster until every thread exited, a deadlock, or an error.
    pub fn run(&mut self) -> Result<()> {
        let mut order = Vec::new();
        loop {
            if self.abort {
                return Ok(());
            }
            if self.live_threads == 0 {
                while !self.agents.is_empty() {
                    let op = self.agents.remove(0);
                    self.complete_op(op)?;
                }
                return Ok(());
            }
            self.round += 1;
            self.sched.warp_order(self.warps.len(), &mut order);
            let mut progressed = false;
            let (polls0, effects0) = (self.polls_failed, self.slow_effects);
            for &wi in &order {
                if self.warps[wi].live() == 0 {
                    continue;
                }
                self.wake(wi);
                if self.warps[wi].runnable == 0 {
                    continue;
                }
                let q = self.sched.quantum();
                if self.run_warp(wi, q)? > 0 {
                    progressed = true;
                }
                if self.abort {
                    return Ok(());
                }
                if self.out.stats.thread_instructions > self.cfg.max_steps {
                    return Err(self.limit_error());
                }
            }
            let spinning = self.polls_failed > polls0 && self.slow_effects == effects0;
            let completed = self.step_agents(!progressed || spinning)?;
            if !progressed && completed == 0 {
                if self.timeout_try_waits() {
                    self.futile += 1;
                } else {
                    self.report_deadlock(false);
                    return Ok(());
                }
            }
            // Every live lane is blocked or spins on a failing test_wait, nothing but polls ran
            // and no async op is left to change a barrier: the polls can never succeed.
            let all_spinning = self.warps.iter().all(|w| w.runnable & !w.spinning == 0);
            if (spinning && completed == 0 && self.agents.is_empty() && all_spinning) || self.futile > FUTILE_LIMIT {
                self.report_deadlock(true);
                return Ok(());
            }
        }
    }

    /// Complete the async ops the scheduler picks; returns how many completed.
    fn step_agents(&mut self, stalled: bool) -> Result<usize> {
        if self.agents.is_empty() {
            return Ok(0);
        }
        let mut done = 0;
        let mut i = 0;
        while i < self.agents.len() {
            let age = self.round.saturating_sub(self.agents[i].round);
            if self.async_op_ready(i) && self.sched.complete_async(age, false) {
                let op = self.agents.remove(i);
                self.complete_op(op)?;
                done += 1;
            } else {
                i += 1;
            }
        }
        if done == 0 && stalled && !self.agents.is_empty() {
            // The oldest op is always ready (ops wait only for older ones).
            let ready: Vec<usize> = (0..self.agents.len()).filter(|&i| self.async_op_ready(i)).collect();
            let i = ready[self.sched.stalled_pick(ready.len())];
            let op = self.agents.remove(i);
            self.complete_op(op)?;
            done = 1;
        }
        if done > 0 {
            self.futile = 0;
        }
        Ok(done)
    }

    /// A `test_wait`/`try_wait` failed (or timed out spuriously).
    pub fn poll_failed(&mut self) {
        self.futile += 1;
        self.polls_failed += 1;
    }

    /// Wake lanes of warp `wi` whose wait is now satisfied.
    pub fn wake(&mut self, wi: usize) {
        let blocked = self.warps[wi].blocked;
        for l in lanes(blocked) {
            let b = self.warps[wi].block[l];
            let t = self.gtid(wi, l);
            let ready = match b {
                Block::None => true,
                Block::Mbar { cta, off, target, done, pc, .. } => {
                    let ok = match self.ctas[cta as usize].barriers.get(&off) {
                        Some(bar) => match target {
                            WaitTarget::Parity(p) => bar.parity_done(p),
                            WaitTarget::Phase(k) => bar.usable() && bar.phase > k,
                        },
                        None => false,
                    };
                    if ok {
                        self.wait_succeeded(t, cta as usize, off, target, true, Some(pc));
                        if let Some(r) = done {
                            self.warps[wi].regs[r as usize * 32 + l] = 1;
                        }
                        self.trace_bar(cta as usize, off, Some(t), super::trace::TraceKind::WaitEnd);
                    }
                    ok
                }
                Block::Bar { id, gen, .. } => self.ctas[self.warps[wi].cta].named[id as usize].gen > gen,
                Block::Cluster { gen, .. } => {
                    let ok = self.cluster_bar.gen > gen;
                    if ok {
                        let n = self.m;
                        let done = &self.cluster_bar.done;
                        let row = &mut self.vc[t as usize * n..(t as usize + 1) * n];
                        super::checker::join(row, done);
                    }
                    ok
                }
                Block::CpAsync { n, .. } => {
                    let a = &mut self.aux[t as usize];
                    ThreadAux::groups_retired(&a.cp_groups, &mut a.cp_first, n)
                }
                Block::Bulk { n, .. } => {
                    let a = &mut self.aux[t as usize];
                    let ok = ThreadAux::groups_retired(&a.bulk_groups, &mut a.bulk_first, n);
                    if ok {
                        self.observe_stores(t, n);
                    }
                    ok
                }
                // Released by the last lane to arrive, never by polling.
                Block::WarpSync { .. } => false,
            };
            if ready {
                let w = &mut self.warps[wi];
                w.blocked &= !(1 << l);
                w.runnable |= 1 << l;
                w.block[l] = Block::None;
            }
        }
    }

    /// Time out every lane blocked in a `try_wait` (it returns false); false if there was none.
    fn timeout_try_waits(&mut self) -> bool {
        let mut any = false;
        for wi in 0..self.warps.len() {
            for l in lanes(self.warps[wi].blocked) {
                if let Block::Mbar { done: Some(r), cta, off, .. } = self.warps[wi].block[l] {
                    let t = self.gtid(wi, l);
                    let w = &mut self.warps[wi];
                    w.regs[r as usize * 32 + l] = 0;
                    w.blocked &= !(1 << l);
                    w.runnable |= 1 << l;
                    w.yielded |= 1 << l;
                    w.block[l] = Block::None;
                    self.trace_bar(cta as usize, off, Some(t), super::trace::TraceKind::WaitEnd);
                    any = true;
                }
            }
        }
        any
    }

    /// The lane group to run next: runnable lanes at the lowest pc (others first if they yielded).
    pub fn pick_group(&mut self, wi: usize) -> Option<(u32, u32)> {
        let scramble = self.sched.scramble_group();
        let w = &mut self.warps[wi];
        if w.runnable == 0 {
            return None;
        }
        let mut cand = w.runnable & !w.yielded;
        if cand == 0 {
            w.yielded = 0;
            cand = w.runnable;
        }
        let mut best = u32::MAX;
        if scramble {
            let n = cand.count_ones() as usize;
            let k = self.sched.pick(n);
            let w = &self.warps[wi];
            best = w.pc[lanes(cand).nth(k).unwrap_or(0)];
        } else {
            for l in lanes(cand) {
                best = best.min(w.pc[l]);
            }
        }
        let w = &self.warps[wi];
        let mut mask = 0u32;
        for l in lanes(cand) {
            if w.pc[l] == best {
                mask |= 1 << l;
            }
        }
        Some((mask, best))
    }

    /// Lanes `mask` of warp `wi` leave the kernel.
    pub fn exit_lanes(&mut self, wi: usize, mask: u32) {
        let w = &mut self.warps[wi];
        w.runnable &= !mask;
        w.exited |= mask;
        let c = w.cta;
        let k = mask.count_ones();
        if !w.warp_syncs.is_empty() {
            self.warp_sync_lanes_exited(wi, mask);
        }
        self.live_threads -= k;
        self.ctas[c].exited += k;
        for id in 0..16 {
            if self.ctas[c].named[id].arrived > 0 {
                self.check_named(c, id);
            }
        }
        if self.cluster_bar.arrived > 0 {
            self.check_cluster_bar();
        }
    }

    /// Block lane `l` of warp `wi`.
    pub fn block_lane(&mut self, wi: usize, l: usize, b: Block) {
        let w = &mut self.warps[wi];
        w.runnable &= !(1 << l);
        w.blocked |= 1 << l;
        w.block[l] = b;
    }

    /// Complete `bar.sync id` of CTA `c` if every expected thread arrived.
    pub fn check_named(&mut self, c: usize, id: usize) {
        let cta = &self.ctas[c];
        let nb = &cta.named[id];
        let ready = match nb.expected {
            Some(e) => nb.arrived >= e,
            None => nb.arrived + cta.exited >= self.tpc,
        };
        if !ready {
            return;
        }
        let n = self.m;
        let nb = &mut self.ctas[c].named[id];
        let acc = std::mem::take(&mut nb.acc);
        let waiters = std::mem::take(&mut nb.waiters);
        nb.gen += 1;
        nb.arrived = 0;
        nb.expected = None;
        for t in waiters {
            let row = &mut self.vc[t as usize * n..(t as usize + 1) * n];
            super::checker::join(row, &acc);
        }
        self.futile = 0;
    }

    pub fn check_cluster_bar(&mut self) {
        let exited: u32 = self.ctas.iter().map(|c| c.exited).sum();
        let cb = &mut self.cluster_bar;
        if cb.arrived + exited >= self.n as u32 {
            cb.done = std::mem::take(&mut cb.acc);
            cb.gen += 1;
            cb.arrived = 0;
            self.futile = 0;
        }
    }

    fn limit_error(&self) -> RuntimeError {
        let mut wheres = Vec::new();
        for (wi, w) in self.warps.iter().enumerate() {
            if let Some(l) = lanes(w.live()).next() {
                let pc = w.pc[l];
                let loc = self.loc(pc).map(|l| l.to_string()).unwrap_or_else(|| "?".into());
                wheres.push(format!("  warp {wi} (CTA {:?}) lane {l}: at {loc}", self.ctas[w.cta].ctaid));
            }
            if wheres.len() >= 8 {
                break;
            }
        }
        RuntimeError::SimulatorLimit(format!(
            "kernel `{}`: the simulation stopped after {} thread-instructions (SimConfig::max_steps); an infinite \
             loop? Threads were at:\n{}",
            self.k.name,
            self.out.stats.thread_instructions,
            wheres.join("\n")
        ))
    }

    /// One finding per group of stuck threads that wait for the same thing at the same place.
    fn report_deadlock(&mut self, livelock: bool) {
        // (description key) -> (threads, cta, first gtid, barrier, pc, message)
        let mut groups: Vec<(String, Vec<u32>, usize, u32, Option<(usize, u32)>, u32, String)> = Vec::new();
        for wi in 0..self.warps.len() {
            let w = &self.warps[wi];
            for l in lanes(w.live()) {
                let t = self.gtid(wi, l);
                let w = &self.warps[wi];
                let (key, bar, pc, msg) = match w.block[l] {
                    Block::Mbar { cta, off, target, pc, since, .. } => {
                        let b = self.ctas[cta as usize].barriers.get(&off);
                        let what = match target {
                            WaitTarget::Parity(p) => format!("parity {p}"),
                            WaitTarget::Phase(k) => format!("the end of phase {k} (state token)"),
                        };
                        let state = match b {
                            Some(b) if b.usable() => {
                                let mut s = format!(
                                    "barrier is in phase {} (parity {}): pending {} of {} arrivals, tx-count {}",
                                    b.phase,
                                    b.phase & 1,
                                    b.pending,
                                    b.expected,
                                    b.tx
                                );
                                if b.last.is_empty() {
                                    s.push_str("; no arrivals yet");
                                } else {
                                    s.push_str("; last arrivals/tx updates:");
                                    for a in &b.last {
                                        s.push_str(&format!("\n  - {}", self.describe_arrival(a)));
                                    }
                                }
                                s
                            }
                            Some(b) if b.invalidated => "barrier was invalidated".into(),
                            _ => "barrier was never initialized".into(),
                        };
                        (
                            format!("mbar {cta} {off} {what} {pc}"),
                            Some((cta as usize, off)),
                            pc,
                            format!("blocked since tick {since}, waiting for {what}; {state}"),
                        )
                    }
                    Block::Bar { id, pc, .. } => {
                        let nb = &self.ctas[w.cta].named[id as usize];
                        let exp = nb.expected.unwrap_or(self.tpc);
                        (
                            format!("bar {id} {pc}"),
                            None,
                            pc,
                            format!(
                                "waits at `bar.sync {id}`: {} of {exp} threads arrived ({} exited)",
                                nb.arrived, self.ctas[w.cta].exited
                            ),
                        )
                    }
                    Block::Cluster { pc, .. } => (
                        format!("cluster {pc}"),
                        None,
                        pc,
                        format!(
                            "blocked at `barrier.cluster.wait`: {} of {} threads arrived",
                            self.cluster_bar.arrived, self.n
                        ),
                    ),
                    Block::CpAsync { n, pc } => {
                        (format!("cp {pc}"), None, pc, format!("blocked at `cp.async.wait_group {n}`"))
                    }
                    Block::Bulk { n, pc } => {
                        (format!("bulk {pc}"), None, pc, format!("blocked at `cp.async.bulk.wait_group {n}`"))
                    }
                    Block::WarpSync { mask, pc } => {
                        (format!("warpsync {wi} {mask} {pc}"), None, pc, self.describe_warp_sync_wait(wi, mask))
                    }
                    Block::None => {
                        let pc = w.pc[l];
                        (format!("spin {pc}"), None, pc, "spinning: its test_wait/try_wait keeps failing".into())
                    }
                };
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push(t % self.tpc),
                    None => groups.push((key, vec![t % self.tpc], w.cta, t, bar, pc, msg)),
                }
            }
        }
        let total: usize = groups.iter().map(|g| g.1.len()).sum();
        let head = if livelock {
            "livelock: every live thread is blocked or spins on a test_wait/try_wait that keeps failing, and \
             nothing left (no thread, no async copy) can complete the phases they poll"
                .to_string()
        } else {
            format!("deadlock: all {total} live threads are blocked and no async copy is in flight")
        };
        for (_, threads, cta, first, bar, pc, msg) in groups {
            let who = if threads.len() == 1 {
                format!("thread {}", threads[0])
            } else {
                format!("{} threads ({})", threads.len(), ranges(&threads))
            };
            self.finding(Category::Deadlock, cta, Some(first), bar, Some(pc), format!("{head}\n{who}: {msg}"));
        }
        self.abort = true;
    }

    pub fn describe_arrival(&self, a: &super::barrier::Arrival) -> String {
        let who = match a.actor {
            super::barrier::Actor::Thread(t) => format!("thread {}", t % self.tpc),
            super::barrier::Actor::Agent { kind, issuer } => format!("{kind} issued by thread {}", issuer % self.tpc),
        };
        let what = if a.count > 0 {
            format!("arrived x{}", a.count)
        } else if a.tx >= 0 {
            format!("expect_tx +{}", a.tx)
        } else {
            format!("complete_tx {}", -a.tx)
        };
        let loc = a.loc.map(|l| format!(" at {l}")).unwrap_or_default();
        format!("{who} {what} in phase {} (tick {}){loc}", a.phase, a.tick)
    }
}

/// `0-3, 8, 10-11`.
pub fn ranges(v: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j { format!("{}", v[i]) } else { format!("{}-{}", v[i], v[j]) });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::ThreadAux;

    #[test]
    fn wait_group_needs_every_group_older_than_the_n_most_recent() {
        let mut first = 0;
        // Groups oldest first, ops still in flight per group.
        assert!(!ThreadAux::groups_retired(&[1, 0], &mut first, 1), "the older group is still pending");
        assert!(ThreadAux::groups_retired(&[0, 1], &mut first, 1));
        assert_eq!(first, 1);
        assert!(!ThreadAux::groups_retired(&[0, 1], &mut 0, 0));
        assert!(ThreadAux::groups_retired(&[0, 0], &mut 0, 0));
        assert!(ThreadAux::groups_retired(&[], &mut 0, 0));
        assert!(ThreadAux::groups_retired(&[2, 1, 1], &mut 0, 3));
    }
}
