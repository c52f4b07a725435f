//! What a simulated launch reports: statistics, findings, the barrier trace and probes.

use super::finding::{Category, Finding, Severity};
use super::print::PrintRecord;
use super::probe::{probe_table, ProbeRecord};
use super::strategy::Strategy;
use super::trace::Trace;
use std::fmt;
use std::time::Duration;

/// The CTAs of a launch that an error finding in another cluster ended early (as a fault ends
/// a kernel on the GPU): their later global stores never happened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CutShort {
    /// `%ctaid`s of the CTAs that had started and were stopped mid-run.
    pub stopped: Vec<[u32; 3]>,
    /// `%ctaid`s of the CTAs that never started.
    pub not_started: Vec<[u32; 3]>,
}

/// CTAs a report lists by name; `SimReport::cut_short` holds every one.
const CUT_SHORT_LISTED: usize = 32;

impl CutShort {
    pub fn is_empty(&self) -> bool {
        self.stopped.is_empty() && self.not_started.is_empty()
    }

    /// `[0, 1, 0], [1, 1, 0] and 3 more`.
    fn list(ctas: &[[u32; 3]]) -> String {
        let named: Vec<String> = ctas.iter().take(CUT_SHORT_LISTED).map(|c| format!("{c:?}")).collect();
        let more = ctas.len().saturating_sub(CUT_SHORT_LISTED);
        let tail =
            if more > 0 { format!(" and {more} more (SimReport::cut_short lists them all)") } else { String::new() };
        format!("{}{tail}", named.join(", "))
    }

    /// The report's lines about them (none when every CTA ran to its end).
    fn text(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "an error ended the launch before {} CTA(s) ran to their end: their later global stores never happened, \
             so outputs they write are partial or unwritten\n",
            self.stopped.len() + self.not_started.len()
        );
        if !self.stopped.is_empty() {
            out.push_str(&format!("  stopped mid-run: {}\n", Self::list(&self.stopped)));
        }
        if !self.not_started.is_empty() {
            out.push_str(&format!("  never started: {}\n", Self::list(&self.not_started)));
        }
        out
    }
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Instructions executed, counted per thread (a warp-instruction over 32 lanes counts 32).
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    /// CTAs (and their clusters) that ran to their end, or to a finding of their own cluster;
    /// those an error elsewhere cut short are in `SimReport::cut_short`.
    pub ctas: u64,
    pub clusters: u64,
    pub async_ops: u64,
    pub async_completed: u64,
    pub wall: Duration,
}

impl Stats {
    /// Simulated thread-instructions per second of wall time.
    pub fn rate(&self) -> f64 {
        self.thread_instructions as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// The simulator's report of one launch.
#[derive(Clone, Debug)]
pub struct SimReport {
    pub kernel: String,
    pub seed: u64,
    pub strategy: Strategy,
    pub stats: Stats,
    /// The findings kept (at most `SimConfig::max_findings` distinct sites).
    pub findings: Vec<Finding>,
    /// The findings past `SimConfig::max_findings`: counted, so the verdict stays that of
    /// every finding.
    pub dropped: DroppedFindings,
    pub trace: Trace,
    pub probes: Vec<ProbeRecord>,
    /// What the kernel's `printf`s printed, in execution order (clusters in launch order).
    pub printed: Vec<PrintRecord>,
    /// The CTAs that did not run to their end because an error ended the launch.
    pub cut_short: CutShort,
    /// The steps the run took when it ran one actor at a time (a replayed
    /// `SimConfig::schedule`, an explored execution): `SimConfig::schedule` replays it.
    pub schedule: Option<super::schedule::Schedule>,
    /// The exploration of this launch, on a device with `SimConfig::exhaustive`.
    pub exploration: Option<Box<super::explore_report::ExploreReport>>,
}

/// Findings of new sites that the report does not store, past `SimConfig::max_findings`: a cap
/// on what is kept, never on what is found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DroppedFindings {
    /// How many were dropped.
    pub count: u64,
    /// How many of them were errors.
    pub errors: u64,
    /// Their distinct categories, in order.
    pub categories: Vec<Category>,
}

impl DroppedFindings {
    pub(crate) fn add(&mut self, f: &Finding) {
        self.count += 1;
        self.errors += u64::from(f.severity == Severity::Error);
        if let Err(at) = self.categories.binary_search(&f.category) {
            self.categories.insert(at, f.category);
        }
    }

    pub(crate) fn merge(&mut self, other: &DroppedFindings) {
        self.count += other.count;
        self.errors += other.errors;
        for &c in &other.categories {
            if let Err(at) = self.categories.binary_search(&c) {
                self.categories.insert(at, c);
            }
        }
    }
}

/// Whether any of `findings`, kept or dropped, is an error.
pub(crate) fn any_error(findings: &[Finding], dropped: &DroppedFindings) -> bool {
    dropped.errors > 0 || findings.iter().any(|f| f.severity == Severity::Error)
}

impl SimReport {
    /// Everything the kernel printed, as one text (what the GPU's stdout shows for a launch
    /// whose prints do not interleave).
    pub fn output(&self) -> String {
        self.printed.iter().map(|p| p.text.as_str()).collect()
    }
    /// Whether any finding, kept or dropped, is an error: the verdict of the launch.
    pub fn has_errors(&self) -> bool {
        any_error(&self.findings, &self.dropped)
    }
    /// The distinct categories found (kept or dropped), in order.
    pub fn categories(&self) -> Vec<Category> {
        let mut c: Vec<Category> = self.findings.iter().map(|f| f.category).collect();
        c.extend(&self.dropped.categories);
        c.sort();
        c.dedup();
        c
    }
    pub fn has(&self, c: Category) -> bool {
        self.findings.iter().any(|f| f.category == c) || self.dropped.categories.contains(&c)
    }
    /// Values of every probe with `tag`, as integers, in execution order.
    pub fn probe_rows(&self, tag: &str) -> Vec<Vec<i64>> {
        self.probes.iter().filter(|p| p.tag == tag).map(|p| p.values.iter().map(|v| v.as_i64()).collect()).collect()
    }
    /// A text table of the probes with `tag`.
    pub fn probe_table(&self, tag: &str, headers: &[&str]) -> String {
        probe_table(&self.probes, tag, headers)
    }
    /// Chrome/Perfetto trace JSON of the barrier events.
    pub fn chrome_trace_json(&self) -> String {
        self.trace.chrome_json()
    }
    /// A readable multi-line report.
    pub fn text(&self) -> String {
        let s = &self.stats;
        let errors =
            self.findings.iter().filter(|f| f.severity == Severity::Error).count() as u64 + self.dropped.errors;
        let mut out = format!(
            "simulator: kernel `{}` ({} CTAs in {} clusters, {} thread-instructions, {} async copies; {}, \
             seed {:#x})\n",
            self.kernel,
            s.ctas,
            s.clusters,
            s.thread_instructions,
            s.async_ops,
            match &self.schedule {
                Some(s) => format!("step schedule of {} steps", s.steps.len()),
                None => format!("{} scheduler", self.strategy.name()),
            },
            self.seed
        );
        if let Some(s) = &self.schedule {
            out.push_str(&format!("schedule (SimConfig::schedule, `phaser check --schedule FILE`): {s}\n"));
        }
        if let Some(e) = &self.exploration {
            out.push_str(&e.summary());
        }
        out.push_str(&self.cut_short.text());
        let total = self.findings.len() as u64 + self.dropped.count;
        if total == 0 {
            out.push_str("no findings\n");
        } else {
            out.push_str(&format!("{total} finding(s), {errors} error(s):\n"));
            for f in &self.findings {
                out.push_str(&format!("{f}\n"));
            }
        }
        if self.dropped.count > 0 {
            let names: Vec<&str> = self.dropped.categories.iter().map(|c| c.name()).collect();
            out.push_str(&format!(
                "... and {} more finding(s) not kept ({} error(s); categories: {}), past SimConfig::max_findings\n",
                self.dropped.count,
                self.dropped.errors,
                names.join(", ")
            ));
        }
        out
    }
}

impl fmt::Display for SimReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}
