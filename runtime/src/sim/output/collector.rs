//! What a simulated launch collects as it runs (one collector per cluster, merged in cluster
//! order) before it becomes the report.

use crate::report::sim_report::any_error;
use crate::report::{Category, CutShort, DroppedFindings, Finding, PrintRecord, ProbeRecord, ProbeValue, Stats, Trace};
use phaser_codegen::Type;
use std::collections::HashMap;

/// Accumulates findings, trace and probes during a launch (one per cluster, merged in
/// cluster order).
#[derive(Default)]
pub(crate) struct Collector {
    pub findings: Vec<Finding>,
    /// New sites past the cap, counted.
    pub dropped: DroppedFindings,
    keys: HashMap<String, usize>,
    pub stats: Stats,
    pub trace: Trace,
    pub probes: Vec<ProbeRecord>,
    pub printed: Vec<PrintRecord>,
    /// The CTAs an error finding stopped before their end.
    pub cut_short: CutShort,
    /// Findings about a barrier used before its initialization: `(cta, offset, finding)`,
    /// amended when an init comes later.
    pub uninitialized_uses: Vec<(usize, u32, usize)>,
    /// The global bytes the launch read and wrote, for a programmatic dependent launch after
    /// it (`check/pdl.rs`).
    pub accesses: crate::sim::check::pdl::Accesses,
}

impl Collector {
    pub fn add_finding(&mut self, f: Finding, max: usize) {
        // One entry per site; deadlock groups are distinct per waiting thread group.
        let thread = if f.category == Category::Deadlock { f.thread } else { None };
        let key = format!(
            "{:?}|{:?}|{:?}|{:?}|{:?}",
            f.category,
            f.loc,
            f.barrier.as_ref().map(|b| (b.offset, b.cta_rank)),
            thread,
            f.cta
        );
        if let Some(&i) = self.keys.get(&key) {
            self.findings[i].repeats += 1;
            return;
        }
        if self.findings.len() >= max {
            self.dropped.add(&f);
            return;
        }
        self.keys.insert(key, self.findings.len());
        self.findings.push(f);
    }

    pub fn probe(
        &mut self,
        tag: &'static str,
        ctaid: [u32; 3],
        thread: u32,
        tick: u64,
        vals: Vec<(u64, Type)>,
        max: usize,
    ) {
        if self.probes.len() < max {
            let values = vals.into_iter().map(|(bits, ty)| ProbeValue { bits, ty }).collect();
            self.probes.push(ProbeRecord { tag, ctaid, thread, tick, values });
        }
    }

    /// Append a finished cluster's findings, trace, probes and statistics.
    pub fn merge(&mut self, other: Collector, cfg: &crate::sim::config::SimConfig) {
        for f in other.findings {
            self.add_finding(f, cfg.max_findings);
        }
        self.dropped.merge(&other.dropped);
        self.trace.append(other.trace);
        let room = cfg.max_probes.saturating_sub(self.probes.len());
        self.probes.extend(other.probes.into_iter().take(room));
        self.printed.extend(other.printed);
        self.accesses.merge(other.accesses);
        let (a, b) = (&mut self.stats, &other.stats);
        a.thread_instructions += b.thread_instructions;
        a.warp_instructions += b.warp_instructions;
        a.async_ops += b.async_ops;
        a.async_completed += b.async_completed;
    }

    pub fn has_errors(&self) -> bool {
        any_error(&self.findings, &self.dropped)
    }
}
