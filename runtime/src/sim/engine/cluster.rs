//! The state of one simulated cluster: its CTAs (shared memory, mbarriers, named barriers),
//! warps, cluster barrier, per-thread async groups, async agents in flight, and the checker
//! watching it. `run_loop.rs` schedules it; `exec_*.rs` execute its instructions.

use crate::error::{Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::report::finding::{BarrierRef, Category, Finding, LoopIteration, Severity};
use crate::sim::agents::async_groups::ThreadGroups;
use crate::sim::agents::async_op::AsyncOp;
use crate::sim::check::progress::{CycleWatch, Epoch};
use crate::sim::check::{BarrierKey, Checker, Geometry, Issue, LateIssue};
use crate::sim::config::SimConfig;
use crate::sim::engine::chooser::Chooser;
use crate::sim::engine::global_view::GlobalView;
use crate::sim::engine::memory::SmemLayout;
use crate::sim::engine::program::Program;
use crate::sim::engine::scheduler::Scheduler;
use crate::sim::engine::step_round::{StepRecord, StepState};
use crate::sim::engine::warp::{WaitFor, Warp};
use crate::sim::explore::guided::{Guided, SharedRun};
use crate::sim::output::collector::Collector;
use crate::sim::sync::barrier_table::BarrierTable;
use crate::tensor_map::TensorMapDesc;
use phaser_codegen::ir::Kernel;
use phaser_codegen::SourceLoc;

/// A named CTA barrier (`bar.sync id`).
#[derive(Default)]
pub struct NamedBarrier {
    pub arrived: u32,
    /// Thread count of the current round (`None`: every thread of the CTA).
    pub expected: Option<u32>,
    pub generation: u64,
    pub waiters: Vec<u32>,
    /// The lanes of each warp (by engine warp index) that arrived in the current round.
    pub round_lanes: Vec<u32>,
    /// The first thread that arrived twice in one round (vllm #26026: a `bar.arrive` that
    /// should have waited runs into the barrier's next use and fills a round alone); the
    /// deadlock report names it.
    pub repeat: Option<RepeatArrival>,
}

/// A thread's second arrival in one round of a named barrier.
#[derive(Clone, Copy)]
pub struct RepeatArrival {
    pub thread: u32,
    pub pc: u32,
    pub generation: u64,
}

pub struct Cta {
    pub rank: u32,
    pub ctaid: [u32; 3],
    pub smem: Vec<u8>,
    pub barriers: BarrierTable,
    pub named: Vec<NamedBarrier>,
    /// Threads that exited.
    pub exited: u32,
}

/// `barrier.cluster.arrive`/`wait`.
#[derive(Default)]
pub struct ClusterBarrier {
    pub arrived: u32,
    pub generation: u64,
}

/// Everything one launch shares across its clusters.
pub struct LaunchCtx<'a> {
    pub kernel: &'a Kernel,
    pub program: &'a Program,
    pub config: &'a SimConfig,
    pub launch: &'a LaunchConfig,
    pub layout: &'a SmemLayout,
    pub params: &'a [u64],
    pub tmaps: &'a [Option<TensorMapDesc>],
    pub cluster_dim: [u32; 3],
    /// The explorer's (or a replayed schedule's) record: the engine runs in step mode.
    pub steps: Option<&'a SharedRun>,
    /// The device, when several launch together (`grid::run_group`): findings name it.
    pub device: Option<crate::peer::DeviceId>,
    /// Every CTA of the launches that run together, and which of them this one is: the
    /// global order's clocks index them (`check/global_order.rs`).
    pub cta_space: std::sync::Arc<crate::sim::check::global_order::CtaSpace>,
    pub launch_index: usize,
    /// The launch before this one, where this one is its programmatic dependent: accesses
    /// before a thread's `griddepcontrol.wait` are checked against it (`check/pdl.rs`).
    pub previous: Option<&'a crate::sim::check::pdl::PreviousLaunch>,
}

/// Execution state: CTAs (shared memory, mbarriers, named barriers), warps (registers,
/// program counters, waits) and the cluster barrier.
pub struct Execution {
    pub ctas: Vec<Cta>,
    pub warps: Vec<Warp>,
    pub threads_per_cta: u32,
    /// Threads in the cluster.
    pub threads: usize,
    pub live_threads: u32,
    pub cluster_barrier: ClusterBarrier,
    /// Per thread: generation of its last `barrier.cluster.arrive`.
    pub cluster_arrival: Vec<Option<u64>>,
    /// Per thread: it executed `griddepcontrol.wait` (`check/pdl.rs`).
    pub grid_dep_waited: Vec<bool>,
}

/// The async agents' state: ops in flight and every thread's `cp.async`/bulk groups.
pub struct AsyncAgents<S> {
    pub in_flight: Vec<AsyncOp<S>>,
    pub next_id: u32,
    pub groups: Vec<ThreadGroups>,
    /// Per warp and warpgroup: wgmmas issued, grouped, pending (`wgmma_state.rs`).
    pub wgmma: crate::sim::tensor::wgmma_state::WgmmaAgents<S>,
}

/// Simulated time and the counters the scheduler's progress decisions use.
#[derive(Default)]
pub struct SimTime {
    /// Warp-instructions issued in the cluster.
    pub tick: u64,
    pub round: u64,
    /// Failed polls, and other slow-path instructions, ever executed: a round in which polls
    /// failed and nothing else with an effect ran is a spin (`run_loop.rs`).
    pub polls_failed: u64,
    pub slow_effects: u64,
    /// Effects visible to other warps of the cluster (`progress.rs`).
    pub effects: u64,
}

/// One simulated cluster: its execution state, its async agents, the checker watching it.
pub struct Engine<'a, C: Checker> {
    pub cx: &'a LaunchCtx<'a>,
    pub exec: Execution,
    pub async_ops: AsyncAgents<C::Snapshot>,
    pub checker: C,
    /// Every choice the engine makes (`chooser.rs`).
    pub sched: Box<dyn Chooser + 'a>,
    /// What the running step touched (step mode only).
    pub step: Option<StepRecord>,
    pub steps: StepState,
    pub time: SimTime,
    /// Global memory as this cluster sees it in the current epoch (`global_view.rs`).
    pub global: GlobalView,
    /// Happens-before through global memory as this cluster sees it (`check/global_order.rs`):
    /// `Some` when checking a kernel with strong global loads or stores.
    pub global_order: Option<crate::sim::check::global_order::GlobalOrderView>,
    /// Global writes of other clusters committed before this epoch (those that end
    /// repetitions: `GlobalView::public_writes`).
    pub visible_writes: u64,
    /// This cluster's findings, trace, probes and statistics.
    pub out: Collector,
    /// Trace events this cluster may still store in this epoch.
    pub trace_room: usize,
    /// A finding stopped the cluster (as a fault stops a kernel).
    pub abort: bool,
    /// Warp order of the current round (scratch).
    pub order: Vec<usize>,
    /// Tensor memory and the tcgen05 family's per-thread state (`exec_tcgen05.rs`).
    pub tcgen05: crate::sim::tensor::tmem::Tcgen05State,
}

impl<'a, C: Checker> Engine<'a, C> {
    /// Bytes of host memory one cluster of `ctas` CTAs needs.
    pub fn footprint(cx: &LaunchCtx, ctas: usize) -> u64 {
        let tpc = cx.launch.threads_per_block() as usize;
        let threads = tpc * ctas;
        let smem = cx.layout.total as usize;
        let checked = if C::ENABLED {
            smem * std::mem::size_of::<crate::sim::check::shadow::Shadow>()
                + threads * (threads + ctas * cx.layout.barrier_slots()) * 4
        } else {
            0
        };
        (ctas * (smem + checked) + threads * cx.kernel.num_regs() as usize * 8) as u64
    }

    /// Set up the cluster whose CTAs have the given `%ctaid`s (rank order).
    pub fn new(cx: &'a LaunchCtx<'a>, ctaids: &[[u32; 3]], salt: u64, global_bytes: u64) -> Result<Engine<'a, C>> {
        let tpc = cx.launch.threads_per_block();
        let threads = tpc as usize * ctaids.len();
        let need = global_bytes + Self::footprint(cx, ctaids.len());
        if need > cx.config.max_memory_bytes {
            return Err(RuntimeError::SimulatorLimit(format!(
                "kernel `{}`: simulating one cluster of {} CTAs x {tpc} threads needs about {need} bytes, over the \
                 simulator's memory limit of {} bytes (SimConfig::max_memory_bytes)",
                cx.kernel.name(),
                ctaids.len(),
                cx.config.max_memory_bytes
            )));
        }
        let smem_total = cx.layout.total as usize;
        let ctas = ctaids
            .iter()
            .enumerate()
            .map(|(r, &ctaid)| Cta {
                rank: r as u32,
                ctaid,
                smem: vec![0; smem_total],
                barriers: BarrierTable::new(cx.layout),
                named: (0..16).map(|_| NamedBarrier::default()).collect(),
                exited: 0,
            })
            .collect::<Vec<_>>();
        let nregs = cx.kernel.num_regs() as usize;
        let mut warps = Vec::new();
        for c in 0..ctaids.len() {
            for wi in 0..tpc.div_ceil(32) {
                let nl = (tpc - wi * 32).min(32);
                let all = if nl == 32 { u32::MAX } else { (1u32 << nl) - 1 };
                let mut regs = vec![0u64; nregs * 32];
                for (p, &v) in cx.kernel.params().iter().zip(cx.params) {
                    let r = p.reg.id as usize * 32;
                    regs[r..r + 32].fill(v);
                }
                warps.push(Warp {
                    cta: c,
                    base_tid: wi * 32,
                    regs,
                    regs_per_thread: cx.kernel.bounds().maxnreg.unwrap_or(0),
                    pc: [0; 32],
                    runnable: all,
                    blocked: 0,
                    exited: !all,
                    yielded: 0,
                    spinning: 0,
                    poll_armed: 0,
                    last_failed_poll: [0; 32],
                    wait: [WaitFor::Nothing; 32],
                    warp_syncs: Vec::new(),
                    cycle: CycleWatch::default(),
                    bar_gather: None,
                });
            }
        }
        let geometry = Geometry {
            threads,
            threads_per_cta: tpc,
            ctas: ctaids.len(),
            barrier_slots_per_cta: cx.layout.barrier_slots(),
            smem_bytes: smem_total,
            layout: cx.layout,
            locs: &cx.program.locs,
            proxy_war_check: cx.config.proxy_war_check,
        };
        let mut out = Collector::default();
        out.trace.limit = usize::MAX;
        Ok(Engine {
            cx,
            exec: Execution {
                ctas,
                warps,
                threads_per_cta: tpc,
                threads,
                live_threads: threads as u32,
                cluster_barrier: ClusterBarrier::default(),
                cluster_arrival: vec![None; threads],
                grid_dep_waited: vec![false; threads],
            },
            async_ops: AsyncAgents {
                in_flight: Vec::new(),
                next_id: 1,
                groups: vec![ThreadGroups::default(); threads],
                wgmma: crate::sim::tensor::wgmma_state::WgmmaAgents::new(ctaids.len(), tpc.div_ceil(32) as usize),
            },
            checker: C::new(&geometry),
            sched: match cx.steps {
                Some(run) => Box::new(Guided::new(run.clone())),
                None => Box::new(Scheduler::new(cx.config, salt)),
            },
            step: None,
            steps: StepState::default(),
            time: SimTime::default(),
            global: GlobalView::default(),
            global_order: (C::ENABLED && cx.program.flag_protocol).then(|| {
                crate::sim::check::global_order::GlobalOrderView::new(ctaids, cx.cta_space.clone(), cx.launch_index)
            }),
            visible_writes: 0,
            out,
            trace_room: 0,
            abort: false,
            order: Vec::new(),
            tcgen05: crate::sim::tensor::tmem::Tcgen05State::new(ctaids.len(), threads),
        })
    }

    /// Thread index in the cluster of lane `l` of warp `wi`.
    #[inline]
    pub fn cluster_thread(&self, wi: usize, l: usize) -> u32 {
        let w = &self.exec.warps[wi];
        w.cta as u32 * self.exec.threads_per_cta + w.base_tid + l as u32
    }

    /// Warp index and lane of cluster thread `t`.
    pub fn warp_of(&self, t: u32) -> (usize, usize) {
        let warps_per_cta = self.exec.threads_per_cta.div_ceil(32);
        let (cta, tid) = (t / self.exec.threads_per_cta, t % self.exec.threads_per_cta);
        ((cta * warps_per_cta + tid / 32) as usize, (tid % 32) as usize)
    }

    /// The barrier of `(cta, off)` as the checker knows it.
    #[inline]
    pub fn barrier_key(&self, cta: usize, off: u32) -> BarrierKey {
        let slot = self.cx.layout.barrier_slot(off).map(|s| (cta * self.cx.layout.barrier_slots()) as u32 + s);
        BarrierKey { cta, off, slot }
    }

    pub fn loc(&self, pc: u32) -> Option<SourceLoc> {
        self.cx.program.locs.get(pc as usize).copied().flatten()
    }

    pub fn barrier_ref(&self, cta: usize, off: u32) -> BarrierRef {
        let (name, index) = self.cx.layout.name_of(off);
        BarrierRef { name, index, offset: off, cta_rank: self.exec.ctas[cta].rank }
    }

    /// The counters of every `for` loop around `pc` (those with a counter), for thread `t`
    /// now, outermost first: what an event records for a finding reported after it.
    pub fn loop_counters(&self, t: u32, pc: u32) -> Vec<u64> {
        let (wi, l) = self.warp_of(t);
        self.cx
            .program
            .loops_around(pc)
            .filter_map(|lp| Some(self.exec.warps.get(wi)?.regs[lp.counter? as usize * 32 + l]))
            .collect()
    }

    /// The loops around `pc` with their counters in `counters` (from `loop_counters`).
    fn loop_iterations(&self, pc: u32, counters: &[u64]) -> Vec<LoopIteration> {
        let counted = self.cx.program.loops_around(pc).filter(|lp| lp.counter.is_some());
        counted.zip(counters).map(|(lp, &counter)| LoopIteration { loc: lp.loc, counter }).collect()
    }

    /// Record a finding about the instruction its thread executes now (its loop counters are
    /// read from the registers).
    pub fn report(&mut self, issue: Issue) {
        let counters = match (issue.thread, issue.pc) {
            (Some(t), Some(pc)) => Some(self.loop_counters(t, pc)),
            _ => None,
        };
        self.report_late(LateIssue { issue, counters });
    }

    /// Record a finding with the loop counters its event recorded (none: no iteration named).
    pub fn report_late(&mut self, late: LateIssue) {
        self.record(late, Severity::Error);
    }

    /// Record a warning (what the GPU runs correctly but may be a mistake), like `report_late`.
    pub fn warn_late(&mut self, late: LateIssue) {
        self.record(late, Severity::Warning);
    }

    fn record(&mut self, late: LateIssue, severity: Severity) {
        let LateIssue { issue, counters } = late;
        let Issue { category, cta, thread: t, barrier, phase, pc, message } = issue;
        let (barrier, phase) = match barrier {
            Some((c, off)) => {
                let current = self.exec.ctas[c].barriers.get(self.cx.layout, off).filter(|b| b.inited).map(|b| b.phase);
                (Some(self.barrier_ref(c, off)), phase.or(current))
            }
            None => (None, phase),
        };
        let thread = t.map(|g| g % self.exec.threads_per_cta);
        let loops = match (pc, counters) {
            (Some(pc), Some(counters)) => self.loop_iterations(pc, &counters),
            _ => Vec::new(),
        };
        let f = Finding {
            category,
            severity,
            kernel: self.cx.kernel.name().to_owned(),
            device: self.cx.device,
            cta: self.exec.ctas[cta].ctaid,
            warp: thread.map(|t| t / 32),
            thread,
            barrier,
            phase,
            loc: pc.and_then(|p| self.loc(p)),
            loops,
            message,
            repeats: 0,
        };
        self.out.add_finding(f, self.cx.config.max_findings);
    }

    /// Record a finding at thread `t` (if any), barrier `(cta, off)` (if any), op `pc`.
    pub fn finding(
        &mut self,
        category: Category,
        cta: usize,
        t: Option<u32>,
        barrier: Option<(usize, u32)>,
        pc: Option<u32>,
        message: String,
    ) {
        self.report(Issue { category, cta, thread: t, barrier, phase: None, pc, message });
    }

    /// Record what the checker found, if anything.
    #[inline]
    pub fn report_issue(&mut self, issue: Option<Issue>) {
        if let Some(i) = issue {
            self.report(i);
        }
    }

    /// The counters a warp's repetition is valid under.
    #[inline]
    pub fn epoch(&self) -> Epoch {
        Epoch { global_writes: self.visible_writes + self.global.public_writes(), cluster_effects: self.time.effects }
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
