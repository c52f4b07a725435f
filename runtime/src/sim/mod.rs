//! The CPU simulator backend: interprets the kernel IR thread by thread (warps run their
//! lanes together while they agree), models mbarriers, CTA/cluster barriers and the async
//! agents (TMA, cp.async, tcgen05.commit) exactly, schedules everything from a seed, and
//! checks the mbarrier protocol as it goes (deadlocks, misuse, races, proxy fences).
//!
//! One concept per file, grouped by folder:
//! - settings: `config`;
//! - `output`: what a run reports (findings, the report, the Perfetto trace, probes, printf);
//! - `engine`: the program (IR lowered to ops, PTX arithmetic, the warp loop), memory (global
//!   arena, shared layout, a cluster's view of global memory) and execution state (grid,
//!   cluster, warp, the run loop, the seeded scheduler);
//! - `exec`: instructions other than arithmetic and control flow (memory, mbarrier, sync,
//!   warp collectives, TMA, wgmma, tcgen05);
//! - `sync`: the mbarrier state machine, a CTA's mbarriers, their operations, `bar.warp.sync`;
//! - `agents`: async copies (as data, landing in pieces), cp.async groups and arrivals;
//! - `tensor`: the tensor cores (wgmma state and registers, the multiply-accumulate, tensor
//!   memory and the tcgen05 datapath);
//! - `check`: the checker behind a trait (`Checker`, `NoCheck`; `hb` happens-before, `clocks`,
//!   `shadow`, `tmem` tensor-memory ordering), loops that can never end (`progress`) and
//!   reports of stuck and unfinished work (`deadlock`).

pub(crate) mod agents;
pub(crate) mod check;
pub mod config;
pub mod engine;
pub(crate) mod exec;
pub(crate) mod explore;
pub mod output;
pub mod sync;
pub(crate) mod system;
pub(crate) mod tensor;

// The public modules keep the paths they had before the files were grouped, and before the
// report's types moved into the backend-neutral core (`crate::report`).
pub use crate::report::sim_report as report;
pub use crate::report::{finding, probe, trace};
pub use engine::{memory, scheduler};
pub use output::printf;
pub use sync::barrier;

pub use crate::report::{Actor, BoundHit, ExploreBounds, ExploreReport, LoopTrips, Schedule, ScheduleParseError};
pub use crate::report::{
    BarrierRef, Category, CutShort, DroppedFindings, Finding, LoopIteration, PrintRecord, ProbeRecord, ProbeValue,
    Severity, SimReport, Stats, Trace, TraceEvent, TraceKind,
};
pub use config::{SimConfig, Strategy};
pub use memory::SimBuffer;

use crate::args::ResolvedArg;
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::tensor_map::TensorMapDesc;
use check::global_order::CtaSpace;
use check::{hb::HappensBefore, NoCheck};
use engine::cluster::LaunchCtx;
use engine::grid;
use engine::program::Program;
use memory::{param_addr, GlobalMemory, SmemLayout};
use output::collector::Collector;
use phaser_codegen::Kernel;
use std::sync::Mutex;
use std::time::Instant;

/// A launch argument as the simulator takes it: buffers are this device's.
pub(crate) type SimArg<'a> = ResolvedArg<'a, &'a SimBuffer>;

pub struct SimDevice {
    pub config: SimConfig,
    /// Distinguishes devices, so a buffer of another simulator is refused, not misread.
    id: u64,
    /// Which device of its system this is (`Device::id`).
    ordinal: u32,
    /// The simulated system it belongs to: its devices share one address space (as CUDA's
    /// unified addressing gives every GPU's memory a distinct range), so a peer mapping is the
    /// peer's own address.
    system: std::sync::Arc<system::SimSystem>,
    mem: std::sync::Arc<Mutex<GlobalMemory>>,
    /// Launches per kernel name, numbering the files of `SimConfig::trace_dir`.
    trace_counts: Mutex<std::collections::HashMap<String, u32>>,
    /// The last launch simulated on this device and what it touched: a programmatic
    /// dependent launch after it is checked against it (`check/pdl.rs`). The simulator has
    /// one sequence of launches per device (its streams run in order), so the launch before
    /// is the one simulated before.
    previous: Mutex<Option<std::sync::Arc<check::pdl::PreviousLaunch>>>,
}

impl SimDevice {
    /// A simulator alone in its system (device 0 of one).
    pub fn new(config: SimConfig) -> Self {
        Self::system(config, 1).pop().expect("a system of one device")
    }

    /// `n` simulated devices of one system, device `i` at index `i`: they share an address
    /// space, may be given peer access to each other and launch together
    /// (`crate::launch_group`).
    pub fn system(config: SimConfig, n: u32) -> Vec<Self> {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let system = std::sync::Arc::new(system::SimSystem::new(n));
        let mem = std::sync::Arc::<Mutex<GlobalMemory>>::default();
        (0..n)
            .map(|ordinal| SimDevice {
                config: config.clone(),
                id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                ordinal,
                system: system.clone(),
                mem: mem.clone(),
                trace_counts: Mutex::default(),
                previous: Mutex::default(),
            })
            .collect()
    }

    /// This simulator's id (what its buffers and tensor maps record).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Which device of its system this is.
    pub fn ordinal(&self) -> u32 {
        self.ordinal
    }

    pub(crate) fn system_ref(&self) -> &system::SimSystem {
        &self.system
    }

    /// Whether `b` belongs to a device of this device's system (this one or a peer).
    pub(crate) fn same_system(&self, b: &SimBuffer) -> bool {
        b.system == self.system.id()
    }

    /// Whether `b` was allocated by this device.
    pub fn owns(&self, b: &SimBuffer) -> bool {
        b.device == self.id
    }

    fn mem(&self) -> std::sync::MutexGuard<'_, GlobalMemory> {
        self.mem.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A zero-filled buffer; fails beyond `SimConfig::max_memory_bytes` (the devices of a
    /// system share one memory, so they count each other's buffers too).
    pub fn alloc(&self, bytes: usize) -> Result<SimBuffer> {
        let mut m = self.mem();
        if m.bytes() + bytes as u64 > self.config.max_memory_bytes {
            return Err(RuntimeError::SimulatorLimit(format!(
                "allocating {bytes} bytes would exceed the simulator's memory limit of {} bytes \
                 (SimConfig::max_memory_bytes; {} bytes are allocated)",
                self.config.max_memory_bytes,
                m.bytes()
            )));
        }
        let addr = m.alloc(bytes);
        Ok(SimBuffer {
            device: self.id,
            ordinal: self.ordinal,
            system: self.system.id(),
            addr,
            len: bytes,
            mem: std::sync::Arc::downgrade(&self.mem),
        })
    }

    /// The launch simulated last on this device (`check/pdl.rs`).
    pub(crate) fn previous_launch(&self) -> Option<std::sync::Arc<check::pdl::PreviousLaunch>> {
        self.previous.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Set what a programmatic dependent launch is checked against: a launch's own record
    /// after it ran, or (an exploration running one launch again and again) the one before.
    pub(crate) fn set_previous_launch(&self, p: Option<std::sync::Arc<check::pdl::PreviousLaunch>>) {
        *self.previous.lock().unwrap_or_else(|p| p.into_inner()) = p;
    }

    /// A copy of every buffer's bytes and the last launch's record (`check/pdl.rs`): an
    /// exploration restores both before each execution of its one launch.
    pub(crate) fn mem_snapshot(&self) -> MemSnapshot {
        MemSnapshot { mem: self.mem().clone(), previous: self.previous_launch() }
    }

    pub(crate) fn mem_restore(&self, snapshot: &MemSnapshot) {
        *self.mem() = snapshot.mem.clone();
        self.set_previous_launch(snapshot.previous.clone());
    }

    pub fn write(&self, b: &SimBuffer, data: &[u8]) -> Result<()> {
        if !self.owns(b) {
            return Err(RuntimeError::ForeignBuffer { backend: Backend::Sim, param: None });
        }
        let mut m = self.mem();
        match m.slice_mut(b.addr, b.len) {
            Some(s) if data.len() == b.len => {
                s.copy_from_slice(data);
                Ok(())
            }
            Some(_) => Err(RuntimeError::SizeMismatch {
                what: "writing bytes into a simulator buffer",
                expected: b.len,
                found: data.len(),
            }),
            None => Err(RuntimeError::ForeignBuffer { backend: Backend::Sim, param: None }),
        }
    }

    /// The bytes of `b`, a buffer of any device of this one's system (the devices share one
    /// memory: what a peer copy reads); empty for another system's.
    pub(crate) fn read_in_system(&self, b: &SimBuffer) -> Vec<u8> {
        if !self.same_system(b) {
            return Vec::new();
        }
        self.mem().slice(b.addr, b.len).map(|s| s.to_vec()).unwrap_or_default()
    }

    /// The bytes of `b` (empty for a buffer of another device).
    pub fn read(&self, b: &SimBuffer) -> Vec<u8> {
        if !self.owns(b) {
            return Vec::new();
        }
        self.mem().slice(b.addr, b.len).map(|s| s.to_vec()).unwrap_or_default()
    }

    /// Launch (checked by the device): `Ok` with the report when the checker found no error,
    /// otherwise `RuntimeError::Simulation` carrying the report (its findings as data).
    pub(crate) fn launch(&self, k: &Kernel, cfg: &LaunchConfig, args: &[SimArg]) -> Result<SimReport> {
        let r = if self.config.exhaustive {
            self.explore_launch(k, cfg, args)?
        } else {
            self.simulate_with(k, cfg, args, &self.config)?
        };
        if let Some(dir) = &self.config.trace_dir {
            self.write_trace(dir, k, &r)?;
        }
        if r.has_errors() {
            return Err(RuntimeError::Simulation(Box::new(r)));
        }
        Ok(r)
    }

    /// Write a launch's trace and probe tables into `dir` (numbered per kernel name).
    fn write_trace(&self, dir: &std::path::Path, k: &Kernel, r: &SimReport) -> Result<()> {
        let io = |source| RuntimeError::Io { context: format!("writing the trace into {}", dir.display()), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let n = {
            let mut counts = self.trace_counts.lock().unwrap_or_else(|p| p.into_inner());
            let c = counts.entry(k.name().to_owned()).or_insert(0);
            *c += 1;
            *c
        };
        // The PTX entry symbol: an escaped name cannot hold a path separator or `..`.
        let file = phaser_codegen::emit::entry_symbol(k.name());
        std::fs::write(dir.join(format!("{file}.{n}.trace.json")), r.chrome_trace_json()).map_err(io)?;
        let mut tags: Vec<&str> = r.probes.iter().map(|p| p.tag).collect();
        tags.dedup();
        tags.sort();
        tags.dedup();
        let mut text = r.text();
        for tag in tags {
            // Probes carry no column names: number them.
            let width = r.probes.iter().find(|p| p.tag == tag).map_or(0, |p| p.values.len());
            let names: Vec<String> = (0..width).map(|i| format!("v{i}")).collect();
            let headers: Vec<&str> = names.iter().map(String::as_str).collect();
            text.push_str(&format!("\n\nprobe `{tag}`:\n{}", r.probe_table(tag, &headers)));
        }
        std::fs::write(dir.join(format!("{file}.{n}.probes.txt")), text).map_err(io)
    }

    /// Simulate a launch (checked by the device) with settings `sc` (seed, strategy, limits)
    /// on this device's memory; findings are in the report (never an `Err`).
    pub(crate) fn simulate_with(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        args: &[SimArg],
        sc: &SimConfig,
    ) -> Result<SimReport> {
        sc.validate()?;
        match &sc.schedule {
            Some(schedule) => {
                explore::one_cluster("SimConfig::schedule", k, cfg)?;
                let run = std::sync::Arc::new(Mutex::new(explore::guided::Run::replay(schedule.steps.clone())));
                self.simulate_steps(k, cfg, args, sc, Some(&run))
            }
            None => self.simulate_steps(k, cfg, args, sc, None),
        }
    }

    /// `simulate_with`, in step mode when `steps` is given (its chooser records the run there).
    pub(crate) fn simulate_steps(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        args: &[SimArg],
        sc: &SimConfig,
        steps: Option<&explore::guided::SharedRun>,
    ) -> Result<SimReport> {
        let t0 = Instant::now();
        let p = Prepared::new(k, cfg, args, sc)?;
        let mut out = p.collector(sc);
        let mut gmem = self.mem();
        let space = std::sync::Arc::new(CtaSpace::new([(cfg.grid, cluster_dim(k), 0, p.prog.locs.clone())]));
        let previous = self.previous_launch();
        let mut cx = p.context(k, cfg, sc, steps, None, (space, 0));
        if cfg.programmatic_dependent_launch {
            cx.previous = previous.as_deref();
        }
        if sc.race_check {
            grid::run::<HappensBefore>(&cx, &mut gmem, &mut out)?;
        } else {
            grid::run::<NoCheck>(&cx, &mut gmem, &mut out)?;
        }
        let accesses = std::mem::take(&mut out.accesses);
        self.set_previous_launch(Some(std::sync::Arc::new(check::pdl::PreviousLaunch {
            kernel: k.name().to_owned(),
            accesses,
        })));
        out.stats.wall = t0.elapsed();
        Ok(p.report(k, sc, out, steps))
    }

    /// Simulate launches on devices of one system together (checked by the devices): their
    /// clusters share the epoch loop (`grid::run_group`), each launch with its own device's
    /// settings, and each report's findings name its device. The first launch's device decides
    /// what they share (the race checker, the simulator's threads). Findings are in the
    /// reports (never an `Err`).
    pub(crate) fn simulate_group(members: &[GroupMember<'_>]) -> Result<Vec<SimReport>> {
        let Some(first) = members.first() else { return Ok(Vec::new()) };
        for m in members {
            m.device.config.validate()?;
            if m.device.system.id() != first.device.system.id() {
                return Err(RuntimeError::Config(format!(
                    "a group launch runs devices of one simulated system together, but device {} and device {} \
                     belong to different systems (make them with one `Device::sim_system`)",
                    first.device.ordinal, m.device.ordinal
                )));
            }
            if m.device.config.schedule.is_some() || m.device.config.exhaustive {
                return Err(RuntimeError::Config(
                    "SimConfig::schedule and SimConfig::exhaustive replay or explore one launch: a group launch \
                     takes neither"
                        .into(),
                ));
            }
        }
        let t0 = Instant::now();
        let prepared = members
            .iter()
            .map(|m| Prepared::new(m.kernel, m.cfg, &m.args, &m.device.config))
            .collect::<Result<Vec<_>>>()?;
        let mut outs: Vec<Collector> = members.iter().zip(&prepared).map(|(m, p)| p.collector(&m.device.config)).collect();
        let space = std::sync::Arc::new(CtaSpace::new(
            members.iter().zip(&prepared).map(|(m, p)| (m.cfg.grid, cluster_dim(m.kernel), m.device.ordinal, p.prog.locs.clone())),
        ));
        let cxs: Vec<LaunchCtx> = members
            .iter()
            .zip(&prepared)
            .enumerate()
            .map(|(i, (m, p))| {
                let device = Some(crate::peer::DeviceId(m.device.ordinal));
                p.context(m.kernel, m.cfg, &m.device.config, None, device, (space.clone(), i))
            })
            .collect();
        let mut gmem = first.device.mem();
        if first.device.config.race_check {
            grid::run_group::<HappensBefore>(&cxs, &mut gmem, &mut outs)?;
        } else {
            grid::run_group::<NoCheck>(&cxs, &mut gmem, &mut outs)?;
        }
        drop(gmem);
        // A group's launches run together: none is the launch before a later programmatic
        // dependent (which is then not checked, `check/pdl.rs`).
        for m in members {
            m.device.set_previous_launch(None);
        }
        let wall = t0.elapsed();
        Ok(members
            .iter()
            .zip(prepared)
            .zip(outs)
            .map(|((m, p), mut out)| {
                out.stats.wall = wall;
                p.report(m.kernel, &m.device.config, out, None)
            })
            .collect())
    }
}

/// What `SimDevice::mem_snapshot` keeps: global memory and the launch before.
pub(crate) struct MemSnapshot {
    mem: GlobalMemory,
    previous: Option<std::sync::Arc<check::pdl::PreviousLaunch>>,
}

/// One launch of a group (`SimDevice::simulate_group`): its device, kernel, configuration and
/// arguments (resolved by the device: its own buffers and peer mappings made for it).
pub(crate) struct GroupMember<'a> {
    pub device: &'a SimDevice,
    pub kernel: &'a Kernel,
    pub cfg: &'a LaunchConfig,
    pub args: Vec<SimArg<'a>>,
}

/// What a launch's simulation is made of before it runs: its parameters' values, tensor
/// maps, lowered program and shared memory layout.
struct Prepared {
    params: Vec<u64>,
    tmaps: Vec<Option<TensorMapDesc>>,
    prog: Program,
    layout: SmemLayout,
}

impl Prepared {
    fn new(k: &Kernel, cfg: &LaunchConfig, args: &[SimArg], sc: &SimConfig) -> Result<Prepared> {
        check_sim_budget(cfg, sc)?;
        let mut params = Vec::with_capacity(args.len());
        let mut tmaps: Vec<Option<TensorMapDesc>> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a {
                ResolvedArg::Scalar { bits, .. } => {
                    params.push(*bits);
                    tmaps.push(None);
                }
                ResolvedArg::Buffer(b) => {
                    params.push(b.addr);
                    tmaps.push(None);
                }
                ResolvedArg::TensorMap(t) => {
                    validate_map(&k.params()[i].name, &t.desc)?;
                    params.push(param_addr(i));
                    tmaps.push(Some(t.desc.clone()));
                }
            }
        }
        Ok(Prepared { params, tmaps, prog: Program::lower(k), layout: SmemLayout::new(k, cfg.dynamic_shared_bytes) })
    }

    fn collector(&self, sc: &SimConfig) -> Collector {
        let mut out = Collector::default();
        out.trace.limit = if sc.trace { sc.max_trace_events } else { 0 };
        out
    }

    fn context<'a>(
        &'a self,
        k: &'a Kernel,
        cfg: &'a LaunchConfig,
        sc: &'a SimConfig,
        steps: Option<&'a explore::guided::SharedRun>,
        device: Option<crate::peer::DeviceId>,
        (cta_space, launch_index): (std::sync::Arc<CtaSpace>, usize),
    ) -> LaunchCtx<'a> {
        LaunchCtx {
            kernel: k,
            program: &self.prog,
            config: sc,
            launch: cfg,
            layout: &self.layout,
            params: &self.params,
            tmaps: &self.tmaps,
            cluster_dim: cluster_dim(k),
            steps,
            device,
            cta_space,
            launch_index,
            previous: None,
        }
    }

    fn report(&self, k: &Kernel, sc: &SimConfig, mut out: Collector, steps: Option<&explore::guided::SharedRun>) -> SimReport {
        out.trace.name_barriers(|off| self.layout.describe(off));
        if sc.echo_printf && !out.printed.is_empty() {
            // As the GPU's `printf` buffer is flushed at the end of a launch.
            let text: String = out.printed.iter().map(|p| p.text.as_str()).collect();
            print!("{text}");
        }
        SimReport {
            kernel: k.name().to_owned(),
            seed: sc.seed,
            strategy: sc.strategy,
            stats: out.stats,
            findings: out.findings,
            dropped: out.dropped,
            trace: out.trace,
            probes: out.probes,
            printed: out.printed,
            cut_short: out.cut_short,
            exploration: None,
            schedule: steps.map(|run| crate::report::schedule::Schedule {
                steps: run.lock().unwrap_or_else(|p| p.into_inner()).steps.iter().map(|s| s.chosen).collect(),
            }),
        }
    }
}

/// The kernel's cluster shape (one CTA when it declares none).
fn cluster_dim(k: &Kernel) -> [u32; 3] {
    k.bounds().cluster.unwrap_or([1, 1, 1])
}

/// The map's own rules (`TensorMapDesc::validate`, what `cuTensorMapEncodeTiled` imposes), checked
/// again at launch: its fields are public and may have changed since it was made.
fn validate_map(param: &str, d: &TensorMapDesc) -> Result<()> {
    d.validate().map_err(|e| match e {
        RuntimeError::TensorMap(m) => RuntimeError::TensorMap(format!("parameter `{param}`: {m}")),
        other => other,
    })
}

/// The simulator runs every thread of the grid, each at least one instruction: a launch of
/// more threads than `SimConfig::max_steps` cannot finish, so it is refused before it starts
/// (instead of running for hours into the step limit).
fn check_sim_budget(cfg: &LaunchConfig, sc: &SimConfig) -> Result<()> {
    let threads = cfg.total_threads();
    if threads > sc.max_steps as u128 {
        return Err(RuntimeError::SimulatorLimit(format!(
            "the launch has {threads} threads (grid {:?} x block {:?}), more than the simulator's step \
             budget of {} (SimConfig::max_steps): each thread executes at least one instruction; \
             simulate a smaller grid",
            cfg.grid, cfg.block, sc.max_steps
        )));
    }
    Ok(())
}
