//! How a cluster ends badly or incompletely: deadlocks and livelocks (one finding per group of
//! threads of a CTA waiting for the same thing at the same place, with the byte counts of a
//! barrier whose tx-count can never reach 0), loops that can never end, the step limit, and
//! the end-of-kernel checks of every barrier.

use super::barrier::{Actor, TxSite};
use super::check::Checker;
use super::cluster::{ranges, Engine};
use super::finding::Category;
use super::warp::{lanes, WaitFor, WaitTarget};
use crate::error::RuntimeError;

/// `N bytes at L (thread 3), M bytes at L2 (bulk copy issued by thread 0)`.
fn sites(list: &[TxSite], tpc: u32, f: impl Fn(&TxSite) -> u64) -> String {
    let v: Vec<String> = list
        .iter()
        .filter(|s| f(s) > 0)
        .map(|s| {
            let who = match s.actor {
                Actor::Thread(t) => format!("thread {}", t % tpc),
                Actor::Warp { base, .. } => format!("threads from {}", base % tpc),
                Actor::Agent { kind, issuer } => format!("{kind} issued by thread {}", issuer % tpc),
            };
            let at = s.loc.map(|l| format!(" at {l}")).unwrap_or_default();
            format!("{} bytes{at} ({who})", f(s))
        })
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

impl<C: Checker> Engine<'_, C> {
    pub fn limit_error(&self, total: u64) -> RuntimeError {
        let mut wheres = Vec::new();
        for (wi, w) in self.exec.warps.iter().enumerate() {
            if let Some(l) = lanes(w.live()).next() {
                let loc = self.loc(w.pc[l]).map(|l| l.to_string()).unwrap_or_else(|| "?".into());
                wheres.push(format!("  warp {wi} (CTA {:?}) lane {l}: at {loc}", self.exec.ctas[w.cta].ctaid));
            }
            if wheres.len() >= 8 {
                break;
            }
        }
        RuntimeError::SimulatorLimit(format!(
            "kernel `{}`: the simulation stopped after {total} thread-instructions (SimConfig::max_steps); an \
             infinite loop? Threads were at:\n{}",
            self.cx.kernel.name,
            wheres.join("\n")
        ))
    }

    /// The tx-count of barrier `(cta, off)` that blocks its waiters, when copies did land in
    /// this phase but fewer bytes than registered: a `TxImbalance` finding naming who
    /// registered and who delivered the bytes.
    fn report_stuck_tx(&mut self, cta: usize, off: u32, first: u32, pc: u32) {
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off) else { return };
        if !b.usable() || b.tx <= 0 || self.async_ops.in_flight.iter().any(|o| self.op_targets(o, cta, off)) {
            return;
        }
        let tpc = self.exec.threads_per_cta;
        let (tx, phase) = (b.tx, b.phase);
        let registered: u64 = b.tx_sites.iter().map(|s| s.registered).sum();
        let delivered: u64 = b.tx_sites.iter().map(|s| s.delivered).sum();
        if delivered == 0 {
            // No copy ran in this phase: its bytes are missing because something else is stuck.
            return;
        }
        let msg = format!(
            "phase {phase} can never complete: expect_tx registered {registered} bytes ({}) but only {delivered} were \
             delivered ({}), and no copy is in flight: {tx} bytes never arrive",
            sites(&b.tx_sites, tpc, |s| s.registered),
            sites(&b.tx_sites, tpc, |s| s.delivered)
        );
        let site = b.tx_sites.iter().find(|s| s.registered > 0).copied();
        let (t, pc) = match site {
            Some(TxSite { actor: Actor::Thread(t), pc, .. }) => (t, pc),
            _ => (first, pc),
        };
        self.finding(Category::TxImbalance, (t / tpc) as usize, Some(t), Some((cta, off)), Some(pc), msg);
    }

    fn op_targets(&self, op: &super::async_op::AsyncOp<C::Snapshot>, cta: usize, off: u32) -> bool {
        use super::async_op::AsyncKind::*;
        match &op.kind {
            Load { dsts, .. } => dsts.iter().any(|d| d.cta == cta && d.bar == off),
            Commit { cta: c, off: o } | CpAsyncArrive { cta: c, off: o, .. } => *c == cta && *o == off,
            _ => false,
        }
    }

    /// One finding per group of stuck threads of a CTA that wait for the same thing at the
    /// same place. `livelock`: some poll in a loop instead of blocking.
    pub fn report_deadlock(&mut self, livelock: bool) {
        self.report_waiters(if livelock { Stuck::Livelock } else { Stuck::Deadlock });
    }

    /// Every live warp repeats its state or waits, and nothing can change: the looping ones
    /// are `InfiniteLoop`s, the waiting ones deadlocked behind them.
    pub fn report_infinite_loop(&mut self) {
        self.report_waiters(Stuck::Loop);
    }

    fn report_waiters(&mut self, how: Stuck) {
        // key -> (threads, cta, first thread, barrier, pc, message, looping)
        type Group = (String, Vec<u32>, usize, u32, Option<(usize, u32)>, u32, String, bool);
        let mut groups: Vec<Group> = Vec::new();
        let tpc = self.exec.threads_per_cta;
        for wi in 0..self.exec.warps.len() {
            // The looping lanes of a warp are those the scheduler keeps running: its
            // lowest-pc runnable lanes; other runnable lanes only wait behind them.
            let w = &self.exec.warps[wi];
            let lowest = lanes(w.runnable).map(|l| w.pc[l]).min();
            for l in lanes(self.exec.warps[wi].live()) {
                let t = self.cluster_thread(wi, l);
                let w = &self.exec.warps[wi];
                let cta_of_thread = w.cta;
                let runnable = w.runnable & (1 << l) != 0;
                if how == Stuck::Loop && runnable && Some(w.pc[l]) != lowest {
                    continue;
                }
                let looping = runnable && how == Stuck::Loop;
                let (key, bar, pc, msg) = match w.wait[l] {
                    _ if looping => {
                        let pc = w.pc[l];
                        (
                            format!("loop {pc}"),
                            None,
                            pc,
                            "loops forever: its registers come back to the same values and nothing else can change \
                             what it reads (no thread stores, arrives or exits, no copy is in flight)"
                                .to_string(),
                        )
                    }
                    WaitFor::Mbarrier { cta, off, target, pc, since, .. } => {
                        let b = self.exec.ctas[cta as usize].barriers.get(self.cx.layout, off);
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
                            _ => "barrier is not initialized".into(),
                        };
                        (
                            format!("mbar {cta} {off} {what} {pc}"),
                            Some((cta as usize, off)),
                            pc,
                            format!("blocked since tick {since}, waiting for {what}; {state}"),
                        )
                    }
                    WaitFor::NamedBarrier { id, pc, .. } => {
                        let nb = &self.exec.ctas[w.cta].named[id as usize];
                        let exp = nb.expected.unwrap_or(tpc);
                        (
                            format!("bar {id} {pc}"),
                            None,
                            pc,
                            format!(
                                "waits at `bar.sync {id}`: {} of {exp} threads arrived ({} exited)",
                                nb.arrived, self.exec.ctas[w.cta].exited
                            ),
                        )
                    }
                    WaitFor::ClusterBarrier { pc, .. } => (
                        format!("cluster {pc}"),
                        None,
                        pc,
                        format!(
                            "blocked at `barrier.cluster.wait`: {} of {} threads arrived",
                            self.exec.cluster_barrier.arrived, self.exec.threads
                        ),
                    ),
                    WaitFor::CpAsyncGroups { n, pc } => {
                        (format!("cp {pc}"), None, pc, format!("blocked at `cp.async.wait_group {n}`"))
                    }
                    WaitFor::BulkGroups { n, pc } => {
                        (format!("bulk {pc}"), None, pc, format!("blocked at `cp.async.bulk.wait_group {n}`"))
                    }
                    WaitFor::WgmmaGroups { n, pc } => {
                        (format!("wgmma {pc}"), None, pc, self.describe_wgmma_wait(wi, n))
                    }
                    WaitFor::WgmmaConverge { pc } => {
                        (format!("wgmma-converge {wi} {pc}"), None, pc, self.describe_wgmma_converge(wi))
                    }
                    WaitFor::GlobalAtomic { pc } => {
                        (format!("atomic {pc}"), None, pc, "waits for its global atomic".to_string())
                    }
                    WaitFor::WarpSync { mask, pc } => {
                        (format!("warpsync {wi} {mask} {pc}"), None, pc, self.describe_warp_sync_wait(wi, mask))
                    }
                    WaitFor::Nothing => {
                        let pc = w.pc[l];
                        (format!("spin {pc}"), None, pc, "spinning: its test_wait/try_wait keeps failing".into())
                    }
                };
                // Waiters are grouped per CTA: threads of different CTAs are different findings.
                let key = format!("{cta_of_thread} {key}");
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push(t % tpc),
                    None => groups.push((key, vec![t % tpc], cta_of_thread, t, bar, pc, msg, looping)),
                }
            }
        }
        let total: usize = groups.iter().map(|g| g.1.len()).sum();
        let head = match how {
            Stuck::Livelock => "livelock: every live thread is blocked or spins on a test_wait/try_wait that keeps \
                                failing, and nothing left (no thread, no async copy) can complete the phases they poll"
                .to_string(),
            Stuck::Deadlock => format!("deadlock: all {total} live threads are blocked and no async copy is in flight"),
            Stuck::Loop => "no progress: every live thread loops without effect or waits, and nothing can change \
                            (the launch would never finish)"
                .to_string(),
        };
        let mut stuck_bars = Vec::new();
        for (_, threads, cta, first, bar, pc, msg, looping) in groups {
            let who = if threads.len() == 1 {
                format!("thread {}", threads[0])
            } else {
                format!("{} threads ({})", threads.len(), ranges(&threads))
            };
            let category = if looping { Category::InfiniteLoop } else { Category::Deadlock };
            self.finding(category, cta, Some(first), bar, Some(pc), format!("{head}\n{who}: {msg}"));
            if let Some((c, off)) = bar {
                if !stuck_bars.contains(&(c, off)) {
                    stuck_bars.push((c, off));
                    self.report_stuck_tx(c, off, first, pc);
                }
            }
        }
        self.abort = true;
    }

    /// End-of-kernel checks of every barrier of the cluster.
    pub fn finish_checks(&mut self) {
        if self.abort {
            return;
        }
        let layout = self.cx.layout;
        for c in 0..self.exec.ctas.len() {
            let mut issues = Vec::new();
            for (off, b) in self.exec.ctas[c].barriers.used(layout) {
                if !b.usable() {
                    continue;
                }
                let (tx, received, expected, phase) = (b.tx, b.received, b.expected, b.phase);
                let last = b.last.back().map(|a| self.describe_arrival(a)).unwrap_or_default();
                let tpc = self.exec.threads_per_cta;
                let msg = if tx > 0 {
                    format!(
                        "the kernel ended with tx-count {tx} in phase {phase}: expect_tx registered {} bytes ({}) but \
                         the copies delivered {} ({}) (last update: {last})",
                        b.tx_sites.iter().map(|s| s.registered).sum::<u64>(),
                        sites(&b.tx_sites, tpc, |s| s.registered),
                        b.tx_sites.iter().map(|s| s.delivered).sum::<u64>(),
                        sites(&b.tx_sites, tpc, |s| s.delivered),
                    )
                } else if tx < 0 {
                    format!(
                        "the kernel ended with tx-count {tx} in phase {phase}: {} more bytes arrived than were \
                         registered with expect_tx (registered: {}; delivered: {}) (last update: {last})",
                        -tx,
                        sites(&b.tx_sites, tpc, |s| s.registered),
                        sites(&b.tx_sites, tpc, |s| s.delivered),
                    )
                } else if received > 0 {
                    format!(
                        "the kernel ended in phase {phase} with {received} of {expected} arrivals: the phase never \
                         completed (an extra arrival, or a wrong init count?) (last: {last})"
                    )
                } else {
                    continue;
                };
                let category = if tx != 0 { Category::TxImbalance } else { Category::IncompletePhase };
                issues.push((category, b.init_by, off, b.init_pc, msg));
            }
            for (category, by, off, pc, msg) in issues {
                self.finding(category, c, Some(by), Some((c, off)), Some(pc), msg);
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stuck {
    Deadlock,
    Livelock,
    Loop,
}
