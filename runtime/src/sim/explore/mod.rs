//! Exhaustive exploration (stateless model checking) of a small launch: every interleaving of
//! the cluster's actors (warps, async copies, tensor-core work, the CTAs of the cluster) that
//! matters, with dynamic partial-order reduction so independent steps are not permuted.
//!
//! - `footprint`: what a step touched, and when two steps are dependent;
//! - `guided`: the step chooser that follows a prefix and records each execution;
//! - `dpor`: races, backtrack points and sleep sets over the executions.
//!
//! Each execution re-runs the launch from its start (global memory restored) in the engine's
//! step mode (`engine/step_round.rs`), so everything the simulator checks is checked in every
//! execution; the first execution with an error finding is the counterexample, replayed once
//! more from its schedule (`SimConfig::schedule`) with the device's own settings.

pub(crate) mod dpor;
pub(crate) mod footprint;
pub(crate) mod guided;

use crate::error::{Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::report::{BoundHit, ExploreBounds, ExploreReport, LoopTrips, Schedule};
use crate::sim::{SimArg, SimConfig, SimDevice};
use guided::{Cut, Run};
use phaser_codegen::{InvalidSetting, Kernel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The choices every step-mode execution makes the same way (stated in every report).
pub const FIXED_CHOICES: &[&str] = &[
    "the lanes of a warp run together where they agree (one step per warp-uniform instruction), and the lane \
     groups of a diverged warp run lowest program counter first; a lane another actor's step lets go joins its \
     warp's next step after that one (not a step its warp takes before it)",
    "a try_wait never fails spuriously, and times out only when nothing else can run",
    "the pieces of one copy land in address order (which copy lands when is explored)",
    "%clock and %globaltimer count the steps taken, so they differ between interleavings without being explored",
];

/// Set (to anything), an exploration prints to stderr the races DPOR found, by the kinds of
/// the two steps and the object they conflict on, with the backtrack points each added.
pub const RACE_COUNTS_VAR: &str = "PHASER_EXPLORE_RACES";

/// Step mode drives one cluster: a launch of more is refused, with the setting named.
pub(crate) fn one_cluster(setting: &'static str, k: &Kernel, cfg: &LaunchConfig) -> Result<()> {
    let cd = k.bounds().cluster.unwrap_or([1, 1, 1]);
    let clusters: u64 = (0..3).map(|d| (cfg.grid[d] / cd[d].max(1)) as u64).product();
    if clusters != 1 {
        return Err(RuntimeError::InvalidSetting(InvalidSetting::new(
            setting,
            cfg.grid,
            format!(
                "a step schedule drives one cluster, and this launch of kernel `{}` has {clusters} (grid {:?}, cluster \
                 {cd:?}); launch one cluster (the clusters of a grid interact only through global memory)",
                k.name(),
                cfg.grid
            ),
        )));
    }
    Ok(())
}

impl SimDevice {
    /// Explore every execution of the launch that matters, within `self.config`'s bounds.
    pub(crate) fn explore(&self, k: &Kernel, cfg: &LaunchConfig, args: &[SimArg]) -> Result<ExploreReport> {
        let sc = &self.config;
        sc.validate()?;
        one_cluster("Device::explore", k, cfg)?;
        let bounds = ExploreBounds {
            max_executions: sc.explore_max_executions,
            max_depth: sc.explore_max_depth,
            max_memory_bytes: sc.explore_max_memory_bytes,
        };
        // Executions run quietly; the counterexample is replayed with the device's settings.
        let quiet = SimConfig { trace: false, echo_printf: false, trace_dir: None, schedule: None, ..sc.clone() };
        let initial = self.mem_snapshot();
        let t0 = Instant::now();
        let mut report = ExploreReport {
            kernel: k.name().to_owned(),
            ctas: cfg.grid.iter().product(),
            threads_per_cta: cfg.block.iter().product(),
            stages: phaser_codegen::builder::pipeline::pipeline_stages(k),
            iterations: Vec::new(),
            executions: 0,
            states: 0,
            sleep_blocked: 0,
            depth_cut: 0,
            bounds,
            bound_hit: None,
            counterexample: None,
            fixed_choices: FIXED_CHOICES,
            barriers_only: sc.explore_barriers_only,
            skeleton: sc.skeleton,
            wall: Default::default(),
        };
        // Per `(loop start, warp)`: its line and the most iterations any execution ran.
        let mut trips: std::collections::BTreeMap<(u32, u32), (Option<phaser_codegen::SourceLoc>, u32)> =
            Default::default();
        let mut tree = dpor::Dpor::default();
        // A diagnostic: which dependencies make the executions (bench/exhaustive.md, run 5).
        if std::env::var_os(RACE_COUNTS_VAR).is_some() {
            tree.races = Some(Default::default());
        }
        let mut branch = dpor::Branch { prefix: Vec::new(), sleep: Vec::new() };
        loop {
            if report.executions >= bounds.max_executions {
                report.bound_hit = Some(BoundHit::Executions);
                break;
            }
            self.mem_restore(&initial);
            let prefix_len = branch.prefix.len();
            let run = Arc::new(Mutex::new(Run::explore(branch.prefix, branch.sleep, bounds.max_depth)));
            let r = self.simulate_steps(k, cfg, args, &quiet, Some(&run))?;
            report.executions += 1;
            let run = std::mem::take(&mut *run.lock().unwrap_or_else(|p| p.into_inner()));
            for &(loc, start, warp, n) in &run.trips {
                let e = trips.entry((start, warp)).or_insert((loc, 0));
                e.1 = e.1.max(n);
            }
            match run.cut {
                Some(Cut::SleepBlocked) => report.sleep_blocked += 1,
                Some(Cut::Depth) => report.depth_cut += 1,
                None => {}
            }
            if r.has_errors() {
                let schedule = Schedule { steps: run.steps.iter().map(|s| s.chosen).collect() };
                self.mem_restore(&initial);
                let replay = SimConfig { schedule: Some(schedule), ..sc.clone() };
                let shown = self.simulate_with(k, cfg, args, &replay)?;
                report.counterexample = Some(Box::new(shown));
                break;
            }
            report.states += tree.absorb(prefix_len, run.steps) as u64;
            tree.analyze();
            let bytes = tree.bytes();
            if bytes > bounds.max_memory_bytes {
                report.bound_hit = Some(BoundHit::Memory { bytes });
                break;
            }
            match tree.next_branch() {
                Some(b) => branch = b,
                None => break,
            }
        }
        report.iterations = loop_roles(&trips);
        report.wall = t0.elapsed();
        if let Some(counts) = &tree.races {
            eprintln!("{RACE_COUNTS_VAR}: `{}`, {} executions\n{}", report.kernel, report.executions, counts.table());
        }
        Ok(report)
    }
}

/// Each loop's warps grouped by their trip count (a role: the warps that ran it as often).
fn loop_roles(
    trips: &std::collections::BTreeMap<(u32, u32), (Option<phaser_codegen::SourceLoc>, u32)>,
) -> Vec<LoopTrips> {
    let mut out: Vec<(u32, LoopTrips)> = Vec::new();
    for (&(start, warp), &(loc, n)) in trips {
        if out.last().is_none_or(|(s, _)| *s != start) {
            out.push((start, LoopTrips { loc, roles: Vec::new() }));
        }
        let roles = &mut out.last_mut().expect("pushed above").1.roles;
        match roles.iter_mut().find(|(_, m)| *m == n) {
            Some((warps, _)) => warps.push(warp),
            None => roles.push((vec![warp], n)),
        }
    }
    out.into_iter().map(|(_, t)| t).collect()
}

impl SimDevice {
    /// A launch on an exhaustive device: the counterexample's report, or (none found) one more
    /// run under the device's strategy from the launch's memory, carrying the exploration (with
    /// the math: an exploration of the skeleton leaves the outputs to this run).
    pub(crate) fn explore_launch(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        args: &[SimArg],
    ) -> Result<crate::sim::SimReport> {
        let initial = self.mem_snapshot();
        let explored = self.explore(k, cfg, args)?;
        let mut r = match &explored.counterexample {
            Some(c) => (**c).clone(),
            None => {
                self.mem_restore(&initial);
                self.simulate_with(
                    k,
                    cfg,
                    args,
                    &SimConfig { exhaustive: false, skeleton: false, ..self.config.clone() },
                )?
            }
        };
        r.exploration = Some(Box::new(explored));
        Ok(r)
    }
}
