//! What an exhaustive exploration (`Device::explore`) reports: either that no explored
//! execution has a finding, and whether that covers every interleaving within the bounds, or
//! the first counterexample, a `SimReport` whose `schedule` replays it.

use super::sim_report::SimReport;
use phaser_codegen::SourceLoc;
use std::fmt;
use std::time::Duration;

/// The bounds an exploration ran under (`SimConfig::explore_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExploreBounds {
    pub max_executions: u64,
    pub max_depth: u64,
    pub max_memory_bytes: u64,
}

/// A bound that stopped the exploration before it covered every execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundHit {
    /// `max_executions` executions ran; backtrack points were left.
    Executions,
    /// The exploration's state passed `max_memory_bytes`.
    Memory { bytes: u64 },
}

/// How many times one loop of the kernel (`for`, `while`) ran, per role: the warps that ran it the same
/// number of times (the most any explored execution ran; an inner loop's count is summed over
/// its enclosing loops' iterations).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopTrips {
    /// The loop's line.
    pub loc: Option<SourceLoc>,
    /// `(warps, iterations)`, warps ascending, roles in the order of their first warp.
    pub roles: Vec<(Vec<u32>, u32)>,
}

#[derive(Clone, Debug)]
pub struct ExploreReport {
    pub kernel: String,
    /// The instance explored: its CTAs (one cluster) and threads per CTA.
    pub ctas: u32,
    pub threads_per_cta: u32,
    /// The stages of each pipeline the kernel declares (`T.pipeline.*`: its name, `S`).
    pub stages: Vec<(String, u32)>,
    /// The trip counts of the kernel's loops per role, as the executions ran them.
    pub iterations: Vec<LoopTrips>,
    /// Executions run from the launch (each a different interleaving, up to equivalence).
    pub executions: u64,
    /// States explored: the steps of every execution past its replayed prefix.
    pub states: u64,
    /// Executions ended early because every continuation was equivalent to an explored one.
    pub sleep_blocked: u64,
    /// Executions cut at `max_depth` steps (what lies past the cut was not explored).
    pub depth_cut: u64,
    pub bounds: ExploreBounds,
    pub bound_hit: Option<BoundHit>,
    /// The first execution with an error finding, replayed with its schedule (`schedule` is
    /// `Some`; `SimConfig::schedule` with it runs it again).
    pub counterexample: Option<Box<SimReport>>,
    /// What no exploration varies (the model's fixed choices).
    pub fixed_choices: &'static [&'static str],
    /// Explored in barriers-only mode (`SimConfig::explore_barriers_only`).
    pub barriers_only: bool,
    /// Explored on the synchronization skeleton (`SimConfig::skeleton`: MMAs without math).
    pub skeleton: bool,
    pub wall: Duration,
}

impl ExploreReport {
    /// No finding, and no bound cut the exploration short.
    pub fn complete(&self) -> bool {
        self.counterexample.is_none() && self.bound_hit.is_none() && self.depth_cut == 0
    }
    pub fn has_errors(&self) -> bool {
        self.counterexample.is_some()
    }
    pub fn executions_per_second(&self) -> f64 {
        self.executions as f64 / self.wall.as_secs_f64().max(1e-9)
    }
    pub fn states_per_second(&self) -> f64 {
        self.states as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Which abstractions the exploration ran under: "" (none), "barriers only", "skeleton",
    /// or "barriers only, skeleton".
    pub fn mode(&self) -> &'static str {
        match (self.barriers_only, self.skeleton) {
            (true, true) => "barriers only, skeleton",
            (true, false) => "barriers only",
            (false, true) => "skeleton",
            (false, false) => "",
        }
    }

    /// The bounds as one phrase (`phaser check --exhaustive` prints it per launch).
    pub fn bounds_text(&self) -> String {
        let b = &self.bounds;
        format!(
            "{} executions, {} steps per execution, {} bytes of exploration state",
            b.max_executions, b.max_depth, b.max_memory_bytes
        )
    }

    /// The instance's bounds besides CTAs and threads: each pipeline's stages and each loop's
    /// iterations per role (two lines).
    pub fn instance_text(&self) -> String {
        let stages = match self.stages.is_empty() {
            true => "none declared (no `T.pipeline`)".to_owned(),
            false => self.stages.iter().map(|(name, s)| format!("pipeline `{name}` {s}")).collect::<Vec<_>>().join(", "),
        };
        let loops = match self.iterations.is_empty() {
            true => "no loop ran".to_owned(),
            false => self
                .iterations
                .iter()
                .map(|t| {
                    let at = t.loc.map_or_else(|| "a loop".to_owned(), |l| format!("{}:{}", l.file, l.line));
                    let roles: Vec<String> =
                        t.roles.iter().map(|(warps, n)| format!("{}: {n}", warp_list(warps))).collect();
                    format!("{at} ({})", roles.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; "),
        };
        format!("stages: {stages}
iterations per role (the most any execution ran): {loops}
")
    }

    /// A readable multi-line report: the summary, then the counterexample's report.
    pub fn text(&self) -> String {
        let mut out = self.summary();
        if let Some(r) = &self.counterexample {
            out.push_str(&r.text());
        }
        out
    }

    /// What was explored and the verdict, without the counterexample's own report.
    pub fn summary(&self) -> String {
        let b = &self.bounds;
        let mut out = format!(
            "exhaustive exploration{} of kernel `{}` ({} CTA(s) of {} threads, {} warps each): {} execution(s), {} \
             state(s) ({} ended as equivalent to an explored one) in {:.2?}; bounds: {}\n",
            match self.mode() {
                "" => String::new(),
                m => format!(" ({m})"),
            },
            self.kernel,
            self.ctas,
            self.threads_per_cta,
            self.threads_per_cta.div_ceil(32),
            self.executions,
            self.states,
            self.sleep_blocked,
            self.wall,
            self.bounds_text()
        );
        out.push_str(&self.instance_text());
        if let Some(r) = &self.counterexample {
            let schedule = r.schedule.as_ref().map(|s| s.to_string()).unwrap_or_default();
            out.push_str(&format!(
                "counterexample in execution {}; replay it with SimConfig::schedule (or `phaser check --schedule \
                 FILE`) set to:\n{schedule}\n",
                self.executions
            ));
            return out;
        }
        match (self.bound_hit, self.depth_cut) {
            (None, 0) => out.push_str(&format!(
                "no finding in any of {} explored executions (complete for these bounds)\n",
                self.executions
            )),
            (hit, cut) => {
                out.push_str(&format!("no finding in {} explored executions, NOT complete:\n", self.executions));
                match hit {
                    Some(BoundHit::Executions) => out.push_str(&format!(
                        "- the execution bound ({}) was reached with interleavings left to explore\n",
                        b.max_executions
                    )),
                    Some(BoundHit::Memory { bytes }) => out.push_str(&format!(
                        "- the exploration's state ({bytes} bytes) passed its bound ({}); interleavings were left \
                         to explore\n",
                        b.max_memory_bytes
                    )),
                    None => {}
                }
                if cut > 0 {
                    out.push_str(&format!(
                        "- {cut} execution(s) were cut at {} steps: what follows the cut was not explored\n",
                        b.max_depth
                    ));
                }
            }
        }
        out.push_str("fixed in every execution (not explored): ");
        out.push_str(&self.fixed_choices.join("; "));
        out.push('\n');
        if self.skeleton {
            out.push_str(
                "skeleton: MMAs kept their issue, groups, waits, commit arrivals and registers in flight, without \
                 their math (their results were not computed)\n",
            );
        }
        if self.barriers_only {
            out.push_str(
                "barriers only: orders that differ only in plain data accesses were explored once (the race checker \
                 judged every pair of them by happens-before in each execution)\n",
            );
        }
        out
    }
}

/// `warps 0-3, 8` / `warp 5`.
fn warp_list(warps: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &w in warps {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == w => *hi = w,
            _ => runs.push((w, w)),
        }
    }
    let text: Vec<String> =
        runs.iter().map(|&(lo, hi)| if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") }).collect();
    format!("{} {}", if warps.len() == 1 { "warp" } else { "warps" }, text.join(", "))
}

impl fmt::Display for ExploreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}
