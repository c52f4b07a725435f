//! The CPU simulator backend: interprets the kernel IR thread by thread (warps run their
//! lanes together while they agree), models mbarriers, CTA/cluster barriers and the async
//! agents (TMA, cp.async, tcgen05.commit) exactly, schedules everything from a seed, and
//! checks the mbarrier protocol as it goes (deadlocks, misuse, races, proxy fences).
//!
//! One concept per file:
//! - settings and results: `config`, `finding`, `report`, `trace` (barrier events as a
//!   Perfetto trace), `probe` (probe records and tables);
//! - memory: `memory` (global arena, shared layout), `global_view` (a cluster's view of global
//!   memory during an epoch);
//! - the program: `program` (IR lowered to ops with jumps), `arith` (PTX arithmetic),
//!   `interp` (the warp loop);
//! - execution state: `grid` (clusters interleaved), `cluster` (one cluster's state),
//!   `warp`, `run_loop` (rounds, waking, blocking), `scheduler` (seeded choices),
//!   `progress` (loops that can never end), `deadlock` (reports of stuck and unfinished work);
//! - synchronization and async agents: `barrier` (the mbarrier state machine),
//!   `barrier_table` (a CTA's mbarriers), `barrier_ops` (addressing, arrivals, tx, waits),
//!   `async_op` (copies as data), `agent` (copies landing in pieces), `async_groups`, `warp_sync`
//!   (`bar.warp.sync`), `cp_async_arrive` (`cp.async.mbarrier.arrive`);
//! - instructions: `exec` (dispatch), `exec_memory`, `exec_mbarrier`, `exec_sync`, `exec_tma`;
//! - the tensor cores: `exec_wgmma` (wgmma and fragment ops, register checks), `wgmma_state`
//!   (per-warp groups, pending registers), `tensor_core` (operands through descriptors, the
//!   multiply-accumulate), `tensor_regs` (which instructions touch wgmma registers);
//!   `exec_tcgen05` (Blackwell's tcgen05: `tmem` holds tensor memory and its allocations,
//!   `umma` the MMA/copy/shift datapath on it);
//! - the checker behind a trait: `check` (`Checker`, `NoCheck`), `check/hb` (happens-before),
//!   `check/clocks`, `check/shadow`, `check/tmem` (tensor-memory ordering and tcgen05 fences).

pub(crate) mod agent;
pub(crate) mod arith;
pub(crate) mod async_groups;
pub(crate) mod async_op;
pub mod barrier;
pub(crate) mod barrier_ops;
pub(crate) mod barrier_table;
pub(crate) mod check;
pub(crate) mod cluster;
pub mod config;
pub(crate) mod cp_async_arrive;
pub(crate) mod deadlock;
pub(crate) mod exec;
pub(crate) mod exec_mbarrier;
pub(crate) mod exec_memory;
pub(crate) mod exec_sync;
pub(crate) mod exec_tcgen05;
pub(crate) mod exec_tma;
pub(crate) mod exec_warp;
pub(crate) mod exec_wgmma;
pub mod finding;
pub(crate) mod global_view;
pub(crate) mod grid;
pub(crate) mod interp;
pub mod memory;
pub mod printf;
pub mod probe;
pub(crate) mod program;
pub(crate) mod progress;
pub mod report;
pub(crate) mod run_loop;
pub mod scheduler;
pub(crate) mod tensor_core;
pub(crate) mod tensor_regs;
pub(crate) mod tmem;
pub mod trace;
pub(crate) mod umma;
pub(crate) mod warp;
pub(crate) mod warp_sync;
pub(crate) mod wgmma_state;

pub use config::{SimConfig, Strategy};
pub use finding::{BarrierRef, Category, Finding, LoopIteration, Severity};
pub use memory::SimBuffer;
pub use printf::PrintRecord;
pub use probe::{ProbeRecord, ProbeValue};
pub use report::{DroppedFindings, SimReport, Stats};
pub use trace::{Trace, TraceEvent, TraceKind};

use crate::args::{check_args, Arg, BufferArg};
use crate::device::check_config;
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use crate::tensor_map::TensorMapDesc;
use check::{hb::HappensBefore, NoCheck};
use cluster::LaunchCtx;
use memory::{GlobalMemory, SmemLayout, PARAM_BASE};
use phaser_codegen::Kernel;
use program::Program;
use report::Collector;
use std::sync::Mutex;
use std::time::Instant;

pub struct SimDevice {
    pub config: SimConfig,
    /// Distinguishes devices, so a buffer of another simulator is refused, not misread.
    id: u64,
    mem: std::sync::Arc<Mutex<GlobalMemory>>,
    /// Launches per kernel name, numbering the files of `SimConfig::trace_dir`.
    trace_counts: Mutex<std::collections::HashMap<String, u32>>,
}

impl SimDevice {
    pub fn new(config: SimConfig) -> Self {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SimDevice { config, id, mem: Default::default(), trace_counts: Mutex::default() }
    }

    /// This simulator's id (what its buffers and tensor maps record).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Whether `b` was allocated by this device.
    pub fn owns(&self, b: &SimBuffer) -> bool {
        b.device == self.id
    }

    fn mem(&self) -> std::sync::MutexGuard<'_, GlobalMemory> {
        self.mem.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A zero-filled buffer; fails beyond `SimConfig::max_memory_bytes`.
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
        Ok(SimBuffer { device: self.id, addr, len: bytes, mem: std::sync::Arc::downgrade(&self.mem) })
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

    /// The bytes of `b` (empty for a buffer of another device).
    pub fn read(&self, b: &SimBuffer) -> Vec<u8> {
        if !self.owns(b) {
            return Vec::new();
        }
        self.mem().slice(b.addr, b.len).map(|s| s.to_vec()).unwrap_or_default()
    }

    /// Launch: `Ok` with the report when the checker found no error, otherwise
    /// `RuntimeError::Simulation` carrying the report (its findings as data).
    pub fn launch(&self, k: &Kernel, cfg: &LaunchConfig, args: &[Arg]) -> Result<LaunchReport> {
        let r = self.simulate(k, cfg, args)?;
        if let Some(dir) = &self.config.trace_dir {
            self.write_trace(dir, k, &r)?;
        }
        if r.has_errors() {
            return Err(RuntimeError::Simulation(Box::new(r)));
        }
        Ok(LaunchReport { elapsed: None, sim: Some(r) })
    }

    /// Write a launch's trace and probe tables into `dir` (numbered per kernel name).
    fn write_trace(&self, dir: &std::path::Path, k: &Kernel, r: &SimReport) -> Result<()> {
        let io = |source| RuntimeError::Io { context: format!("writing the trace into {}", dir.display()), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let n = {
            let mut counts = self.trace_counts.lock().unwrap_or_else(|p| p.into_inner());
            let c = counts.entry(k.name.clone()).or_insert(0);
            *c += 1;
            *c
        };
        // The PTX entry symbol: an escaped name cannot hold a path separator or `..`.
        let file = phaser_codegen::emit::entry_symbol(&k.name);
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

    /// Simulate with this device's settings; findings are in the report (never an `Err`).
    pub fn simulate(&self, k: &Kernel, cfg: &LaunchConfig, args: &[Arg]) -> Result<SimReport> {
        self.simulate_with(k, cfg, args, &self.config)
    }

    /// Simulate with other settings (seed, strategy, limits) on this device's memory.
    pub fn simulate_with(&self, k: &Kernel, cfg: &LaunchConfig, args: &[Arg], sc: &SimConfig) -> Result<SimReport> {
        sc.validate()?;
        let cfg = &cfg.resolved_for(k)?;
        check_args(k, args)?;
        check_config(k, cfg)?;
        crate::launch::check_sim_budget(cfg, sc)?;
        // Held for the run: a buffer viewed by a tensor map is not freed while it is read.
        let _maps = crate::tensor_map::hold_tensor_maps(k, args, crate::tensor_map::DeviceKey::Sim(self.id))?;
        let t0 = Instant::now();
        let mut params = Vec::with_capacity(args.len());
        let mut tmaps: Vec<Option<TensorMapDesc>> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a {
                Arg::Scalar { bits, .. } => {
                    params.push(*bits);
                    tmaps.push(None);
                }
                Arg::Buffer { storage: BufferArg::Sim(b), .. } if self.owns(b) => {
                    params.push(b.addr);
                    tmaps.push(None);
                }
                Arg::Buffer { storage: BufferArg::Sim(_), .. } => {
                    let param = Some(k.params[i].name.clone());
                    return Err(RuntimeError::ForeignBuffer { backend: Backend::Sim, param });
                }
                Arg::Buffer { storage: BufferArg::Cuda(_), .. } => {
                    return Err(RuntimeError::BackendMismatch { buffer: Backend::Cuda, device: Backend::Sim });
                }
                Arg::TensorMap(t) => {
                    validate_map(&k.params[i].name, &t.desc)?;
                    params.push(PARAM_BASE + i as u64 * 256);
                    tmaps.push(Some(t.desc.clone()));
                }
            }
        }
        let prog = Program::lower(k);
        let layout = SmemLayout::new(k, cfg.dynamic_shared_bytes);
        let mut out = Collector::default();
        out.trace.limit = if sc.trace { sc.max_trace_events } else { 0 };
        out.trace.layout = Some(layout.clone());
        let mut gmem = self.mem();
        let cx = LaunchCtx {
            kernel: k,
            program: &prog,
            config: sc,
            launch: cfg,
            layout: &layout,
            params: &params,
            tmaps: &tmaps,
            cluster_dim: k.bounds.cluster.unwrap_or([1, 1, 1]),
        };
        if sc.race_check {
            grid::run::<HappensBefore>(&cx, &mut gmem, &mut out)?;
        } else {
            grid::run::<NoCheck>(&cx, &mut gmem, &mut out)?;
        }
        out.stats.wall = t0.elapsed();
        if sc.echo_printf && !out.printed.is_empty() {
            // As the GPU's `printf` buffer is flushed at the end of a launch.
            let text: String = out.printed.iter().map(|p| p.text.as_str()).collect();
            print!("{text}");
        }
        Ok(SimReport {
            kernel: k.name.clone(),
            seed: sc.seed,
            strategy: sc.strategy,
            stats: out.stats,
            findings: out.findings,
            dropped: out.dropped,
            trace: out.trace,
            probes: out.probes,
            printed: out.printed,
        })
    }
}

/// The map's own rules (`TensorMapDesc::validate`, what `cuTensorMapEncodeTiled` imposes), checked
/// again at launch: its fields are public and may have changed since it was made.
fn validate_map(param: &str, d: &TensorMapDesc) -> Result<()> {
    d.validate().map_err(|e| match e {
        RuntimeError::TensorMap(m) => RuntimeError::TensorMap(format!("parameter `{param}`: {m}")),
        other => other,
    })
}
