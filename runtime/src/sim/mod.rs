//! The CPU simulator backend: interprets the kernel IR thread by thread (warps run their
//! lanes together while they agree), models mbarriers, CTA/cluster barriers and the async
//! agents (TMA, cp.async, tcgen05.commit) exactly, schedules everything from a seed, and
//! checks the mbarrier protocol as it goes (deadlocks, misuse, races, proxy fences).
//!
//! One concept per file: `config` (settings), `memory` (global arena, shared layout),
//! `barrier` (the mbarrier state machine), `program` + `interp` (lowered IR and its
//! execution), `exec` (memory/barrier/TMA instructions), `scheduler`, `agent` (async
//! copies), `cp_async_arrive` (`cp.async.mbarrier.arrive`), `checker` (vector clocks, shadow memory, end checks), `finding`, `trace`,
//! `report`, `engine` (one cluster's state and the main loop), `warp_sync` (`bar.warp.sync`).

pub(crate) mod agent;
pub mod barrier;
pub(crate) mod checker;
pub mod config;
pub(crate) mod cp_async_arrive;
pub(crate) mod engine;
pub(crate) mod exec;
pub mod finding;
pub(crate) mod interp;
pub mod memory;
pub(crate) mod program;
pub mod report;
pub mod scheduler;
pub mod trace;
pub(crate) mod warp_sync;

pub use config::{SimConfig, Strategy};
pub use finding::{BarrierRef, Category, Finding, Severity};
pub use memory::SimBuffer;
pub use report::{ProbeRecord, ProbeValue, SimReport, Stats};
pub use trace::{Trace, TraceEvent, TraceKind};

use crate::args::{check_args, Arg, BufferArg};
use crate::device::check_config;
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use crate::tensor_map::{Swizzle, TensorMapDesc};
use engine::{Engine, LaunchCtx};
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
            return Err(RuntimeError::ForeignBuffer { backend: Backend::Sim });
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
            None => Err(RuntimeError::ForeignBuffer { backend: Backend::Sim }),
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
                    return Err(RuntimeError::ForeignBuffer { backend: Backend::Sim });
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
        let cluster_dim = k.bounds.cluster.unwrap_or([1, 1, 1]);
        let cx = LaunchCtx {
            k,
            prog: &prog,
            cfg: sc,
            launch: cfg,
            layout: &layout,
            params: &params,
            tmaps: &tmaps,
            cluster_dim,
        };
        let mut out = Collector::default();
        out.trace.limit = if sc.trace { sc.max_trace_events } else { 0 };
        out.trace.layout = Some(layout.clone());
        let mut mem = self.mem();
        let g = cfg.grid;
        let cd = cluster_dim;
        let mut salt = 0u64;
        'clusters: for qz in 0..g[2] / cd[2] {
            for qy in 0..g[1] / cd[1] {
                for qx in 0..g[0] / cd[0] {
                    let mut ctaids = Vec::new();
                    for z in 0..cd[2] {
                        for y in 0..cd[1] {
                            for x in 0..cd[0] {
                                ctaids.push([qx * cd[0] + x, qy * cd[1] + y, qz * cd[2] + z]);
                            }
                        }
                    }
                    salt += 1;
                    let n = ctaids.len() as u64;
                    let mut e = Engine::new(&cx, &mut mem, &mut out, &ctaids, salt)?;
                    e.run()?;
                    e.finish_checks();
                    let ticks = e.tick;
                    drop(e);
                    out.trace.base += ticks + 1;
                    out.stats.ctas += n;
                    out.stats.clusters += 1;
                    if out.has_errors() {
                        break 'clusters;
                    }
                }
            }
        }
        out.stats.wall = t0.elapsed();
        Ok(SimReport {
            kernel: k.name.clone(),
            seed: sc.seed,
            strategy: sc.strategy,
            stats: out.stats,
            findings: out.findings,
            trace: out.trace,
            probes: out.probes,
        })
    }
}

/// What the simulator needs of a tensor map to copy boxes faithfully.
fn validate_map(param: &str, d: &TensorMapDesc) -> Result<()> {
    let bad = |m: String| Err(RuntimeError::TensorMap(format!("parameter `{param}`: {m}")));
    let r = d.rank();
    if r == 0 || r > 5 {
        return bad(format!("rank {r}; TMA supports 1 to 5 dimensions"));
    }
    if d.box_dims.len() != r || d.strides.len() + 1 != r {
        return bad(format!(
            "{} dims, {} box dims and {} strides; expected {r}, {r} and {}",
            r,
            d.box_dims.len(),
            d.strides.len(),
            r - 1
        ));
    }
    if d.box_dims.iter().any(|&b| b == 0 || b > 256) {
        return bad(format!("box dims {:?} must be in 1..=256", d.box_dims));
    }
    let inner = d.box_dims[0] * d.dtype.size();
    let span = match d.swizzle {
        Swizzle::None => None,
        Swizzle::B32 => Some(32),
        Swizzle::B64 => Some(64),
        Swizzle::B128 => Some(128),
    };
    if let Some(s) = span {
        if inner > s {
            return bad(format!("the box's inner dimension is {inner} bytes, over the {s}-byte swizzle span"));
        }
    }
    Ok(())
}
