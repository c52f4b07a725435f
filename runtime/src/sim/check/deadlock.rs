//! How a cluster ends badly or incompletely: deadlocks and livelocks (one finding per group of
//! threads of a CTA waiting for the same thing at the same place) and their cause when one can
//! be named (a tx-count that can never reach 0, a circular wait at the first waits: a wrong
//! start parity, waiters lapped while blocked, a phase missing arrivals no thread left will
//! make), loops that can never end, the step limit, async copies that outlive their CTA, and
//! the end-of-kernel checks of every barrier.

use crate::error::RuntimeError;
use crate::report::finding::Category;
use crate::sim::check::{Checker, Issue, LateIssue};
use crate::sim::engine::cluster::{ranges, Engine};
use crate::sim::engine::program::Op;
use crate::sim::engine::warp::{lanes, WaitFor, WaitTarget};
use crate::sim::sync::barrier::{Actor, TxSite};
use phaser_codegen::ir::{flag_name, Access, Inst, MemoryOp, ParamKind, Space};

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
            self.cx.kernel.name(),
            wheres.join("\n")
        ))
    }

    /// The tx-count of barrier `(cta, off)` that blocks its waiters, when copies did land in
    /// this phase but fewer bytes than registered: a `TxImbalance` finding naming who
    /// registered and who delivered the bytes.
    /// Returns whether it reported.
    fn report_stuck_tx(&mut self, cta: usize, off: u32, first: u32, pc: u32) -> bool {
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off) else { return false };
        if !b.usable() || b.tx <= 0 || self.async_ops.in_flight.iter().any(|o| self.op_targets(o, cta, off)) {
            return false;
        }
        let tpc = self.exec.threads_per_cta;
        let (tx, phase) = (b.tx, b.phase);
        let registered: u64 = b.tx_sites.iter().map(|s| s.registered).sum();
        let delivered: u64 = b.tx_sites.iter().map(|s| s.delivered).sum();
        if delivered == 0 && b.pending > 0 {
            // Neither the arrivals nor the copies of this phase came: something else is stuck.
            return false;
        }
        // A thread whose copies delivered on this barrier in the previous phase, that registered
        // nothing here and is still alive, has simply not issued this phase's copy yet: it is
        // stuck elsewhere (another CTA's producer of a multicast), not a byte-count bug.
        let issuer_of = |a: Actor| match a {
            Actor::Agent { issuer, .. } => Some(issuer),
            _ => None,
        };
        let stuck_issuer =
            b.completed_tx_sites.iter().filter(|s| s.delivered > 0).filter_map(|s| issuer_of(s.actor)).any(|i| {
                let here = |s: &&TxSite| issuer_of(s.actor) == Some(i) || s.actor == Actor::Thread(i);
                let (wi, l) = self.warp_of(i);
                b.tx_sites.iter().filter(here).all(|s| s.registered == 0 && s.delivered == 0)
                    && self.exec.warps[wi].exited & (1 << l) == 0
            });
        if stuck_issuer {
            return false;
        }
        let why = if delivered == 0 {
            "every arrival came but no copy delivered any byte (a copy never issued, or sent to other CTAs?)".into()
        } else {
            format!("only {delivered} were delivered ({})", sites(&b.tx_sites, tpc, |s| s.delivered))
        };
        let msg = format!(
            "phase {phase} can never complete: expect_tx registered {registered} bytes ({}) but {why}, and no copy \
             is in flight: {tx} bytes never arrive",
            sites(&b.tx_sites, tpc, |s| s.registered),
        );
        let site = b.tx_sites.iter().find(|s| s.registered > 0).copied();
        // A registering thread has moved on since (its iteration then is not recorded); the
        // first waiter is still at its wait.
        let (t, pc, counters) = match site {
            Some(TxSite { actor: Actor::Thread(t), pc, .. }) => (t, pc, None),
            _ => (first, pc, Some(self.loop_counters(first, pc))),
        };
        let issue = Issue {
            category: Category::TxImbalance,
            cta: (t / tpc) as usize,
            thread: Some(t),
            barrier: Some((cta, off)),
            phase: None,
            pc: Some(pc),
            message: msg,
        };
        self.report_late(LateIssue { issue, counters });
        true
    }

    fn op_targets(&self, op: &crate::sim::agents::async_op::AsyncOp<C::Snapshot>, cta: usize, off: u32) -> bool {
        use crate::sim::agents::async_op::AsyncKind::*;
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
    /// The flag a looping lane spins on (a strong global load in its innermost loop, as
    /// `flag.wait` is): the load's pc and the report's text. Global memory must be lent.
    fn spun_flag(&self, wi: usize, l: usize, pc: u32) -> Option<(u32, String)> {
        let p = self.cx.program;
        let lp = p.loops_around(pc).last()?;
        (lp.start..lp.end).find_map(|q| {
            let Op::Slow(i) = p.ops[q as usize] else { return None };
            let Inst::Memory(MemoryOp::Ld {
                space: Space::Global, access: Access::Strong(o), addr, offset, ty, ..
            }) = &p.slow[i as usize]
            else {
                return None;
            };
            let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
            let v = self.global.load(a, ty.size() as usize)?;
            let named = self.flag_at(a, ty.size() as u64).map(|n| format!("`{n}`, ")).unwrap_or_default();
            Some((
                q,
                format!(
                    "spins forever on the flag {named}at {} (`ld.{}.{}.global`), which holds {v}: no live thread of \
                     any CTA stores to it (every other warp finished, waits, or loops without writing it), so nobody \
                     can signal it: a wait on a peer that never signals (a missing or misdirected `flag.signal`)",
                    self.global.describe(a),
                    o.sem.name(),
                    o.scope.name()
                ),
            ))
        })
    }

    /// The flag at `a` as every report names it (`flags[3]`, `ir::flag_name`, as the GPU
    /// watchdog's record does): the buffer parameter whose argument holds the address.
    fn flag_at(&self, a: u64, size: u64) -> Option<String> {
        let params = self.cx.kernel.params().iter().zip(self.cx.params);
        params.filter(|(p, _)| matches!(p.kind, ParamKind::Global { .. })).find_map(|(p, &base)| {
            (a >= base && crate::sim::engine::memory::same_buffer(a, base))
                .then(|| flag_name(&p.name, (a - base) / size.max(1)))
        })
    }

    pub fn report_infinite_loop(&mut self) {
        self.report_waiters(Stuck::Loop);
    }

    fn report_waiters(&mut self, how: Stuck) {
        // A warp stuck with part of it at a `bar` and the rest elsewhere broke `.aligned`: say
        // so, besides the deadlock (the usual cause: a `cta_sync()` under `if lane == 0`).
        for c in 0..self.exec.ctas.len() {
            for id in 0..self.exec.ctas[c].named.len() {
                self.check_bar_completion_warps(c, id);
            }
        }
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
                    _ if looping && self.spun_flag(wi, l, w.pc[l]).is_some() => {
                        let (pc, msg) = self.spun_flag(wi, l, w.pc[l]).expect("just found");
                        (format!("flag {pc}"), None, pc, msg)
                    }
                    _ if looping => {
                        let pc = w.pc[l];
                        (
                            format!("loop {pc}"),
                            None,
                            pc,
                            "loops forever: its registers come back to the same values and nothing can change what \
                             it reads (no thread arrives or exits, no copy is in flight, and the only stores are \
                             looping threads' global writes, to locations no looping thread reads)"
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
                        let behind = self.phases_behind(t, cta as usize, off, target);
                        (
                            format!("mbar {cta} {off} {what} {pc}"),
                            Some((cta as usize, off)),
                            pc,
                            format!("blocked since tick {since}, waiting for {what}; {state}{behind}"),
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
                                "waits at `bar.sync {id}`: {} of {exp} threads arrived ({} exited){}",
                                nb.arrived,
                                self.exec.ctas[w.cta].exited,
                                self.describe_repeat_arrival(id, nb.repeat)
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
                    WaitFor::RegisterPool { count, pc } => {
                        let per_warp = self.cx.kernel.bounds().maxnreg.unwrap_or(0);
                        let warps = self.exec.warps.iter().filter(|x| x.cta == w.cta).count() as u32;
                        let free = self.register_pool_free(wi);
                        (
                            format!("setmaxnreg {pc} {count}"),
                            None,
                            pc,
                            format!(
                                "waits at `setmaxnreg.inc` for {count} registers per thread, but its CTA's pool \
                                 (the launch's .maxnreg {per_warp} per thread for each of its {warps} warps: {}) has \
                                 room for {free} beside what the other warps hold, and none of them will release any: \
                                 the warpgroups' counts over-subscribe the registers the block was launched with (the \
                                 GPU hangs here)",
                                per_warp * warps
                            ),
                        )
                    }
                    WaitFor::GlobalAtomic { pc } => {
                        (format!("atomic {pc}"), None, pc, "waits for its global atomic".to_string())
                    }
                    WaitFor::WarpSync { mask, pc } => {
                        (format!("warpsync {wi} {mask} {pc}"), None, pc, self.describe_warp_sync_wait(wi, mask, pc))
                    }
                    WaitFor::Nothing => {
                        let pc = w.pc[l];
                        let polled = self.polled_barrier(wi, l);
                        let bar = polled.map(|(c, o, _, _)| (c, o));
                        let what = match polled {
                            Some((c, o, parity, _)) => {
                                format!(" (parity {parity} of barrier {})", self.barrier_ref(c, o))
                            }
                            None => String::new(),
                        };
                        (format!("spin {pc}"), bar, pc, format!("spinning: its test_wait/try_wait{what} keeps failing"))
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
        // What the waiters wait for, before the findings below add to the collector.
        let cause_known = self.out.findings.iter().any(|f| !CONSEQUENCES.contains(&f.category))
            || self.out.dropped.categories.iter().any(|c| !CONSEQUENCES.contains(c));
        let start = if how == Stuck::Loop { None } else { self.start_parity_deadlock(&groups) };
        let mut stuck_bars = Vec::new();
        let mut explained = false;
        for (_, threads, cta, first, bar, pc, msg, looping) in &groups {
            let who = if threads.len() == 1 {
                format!("thread {}", threads[0])
            } else {
                format!("{} threads ({})", threads.len(), ranges(threads))
            };
            let category = if *looping { Category::InfiniteLoop } else { Category::Deadlock };
            self.finding(category, *cta, Some(*first), *bar, Some(*pc), format!("{head}\n{who}: {msg}"));
            if let Some((c, off)) = *bar {
                if !stuck_bars.contains(&(c, off)) {
                    stuck_bars.push((c, off));
                    explained |= self.report_stuck_tx(c, off, *first, *pc);
                }
            }
        }
        // Waiters lapped while they were blocked: the phases they skipped name the bug.
        if start.is_none() && how != Stuck::Loop {
            for (_, threads, cta, _, bar, pc, _, _) in &groups {
                let Some((c, off)) = *bar else { continue };
                let t = *cta as u32 * self.exec.threads_per_cta + threads[0];
                let (wi, l) = self.warp_of(t);
                let target = match self.exec.warps[wi].wait[l] {
                    WaitFor::Mbarrier { target, .. } => Some(target),
                    WaitFor::Nothing => self.polled_barrier(wi, l).map(|p| WaitTarget::Parity(p.2)),
                    _ => None,
                };
                if let Some(target) = target {
                    explained |= self.check_skipped_phases(t, c, off, target, None, *pc);
                }
            }
        }
        // Only when every stuck thread waits on an mbarrier or can arrive on none any more: a
        // thread stuck at a `bar.sync` or a warp sync with an arrive ahead of it may be the one
        // the phase waits for (a circular wait, not a missing arrival).
        let only_mbarriers = groups.iter().all(|g| g.4.is_some() || !self.can_still_arrive(g.5));
        if let Some(waits) = start {
            self.report_start_parity(&waits);
        } else if !cause_known && !explained && only_mbarriers && how != Stuck::Loop {
            for (_, threads, cta, first, bar, pc, _, _) in &groups {
                if let Some((c, off)) = *bar {
                    self.report_missing_arrivals(*cta, c, off, threads, *first, *pc);
                }
            }
        }
        self.abort = true;
    }

    /// What a thread blocked on a parity wait of `(cta, off)` missed: when the barrier completed
    /// two or more phases since the last one the thread observed, its wait is that many phases
    /// stale (the parity names a phase still to come, not the one it meant), e.g. a consumer
    /// whose arrivals gate nothing, so its producer ran ahead. Empty otherwise.
    fn phases_behind(&self, t: u32, cta: usize, off: u32, target: WaitTarget) -> String {
        let WaitTarget::Parity(parity) = target else { return String::new() };
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off).filter(|b| b.usable()) else {
            return String::new();
        };
        if !C::ENABLED {
            return String::new();
        }
        let seen = self.checker.last_observed(t, self.barrier_key(cta, off)).unwrap_or(-1);
        let meant = seen + 1;
        let stale = b.phase as i64 - meant;
        if stale < 2 {
            return String::new();
        }
        let last = if seen < 0 { "none (this is its first wait)".to_string() } else { format!("phase {seen}") };
        format!(
            "\nthe wait is {stale} phases stale: the last phase this thread observed is {last}, so parity {parity} \
             was meant for phase {meant}, but the barrier has completed phases {meant}-{} since without this thread; \
             parity {parity} now names phase {}, which no arrival will complete. The thread fell {stale} phases \
             behind its barrier: nothing it does holds the arriving side back (its own arrivals, if any, gate no \
             wait of theirs), so they ran ahead and finished",
            b.phase - 1,
            b.phase
        )
    }

    /// Whether a thread at `pc` can still reach an instruction that arrives on (or completes
    /// tx on) an mbarrier.
    fn can_still_arrive(&self, pc: u32) -> bool {
        use crate::sim::engine::program::Op;
        use phaser_codegen::ir::{Inst, MbarrierOp, MemoryOp, Tcgen05Op, TmaOp};
        let ops = &self.cx.program.ops;
        let mut seen = vec![false; ops.len()];
        let mut todo = vec![pc as usize];
        while let Some(p) = todo.pop() {
            if p >= ops.len() || std::mem::replace(&mut seen[p], true) {
                continue;
            }
            match ops[p] {
                Op::Jump(t) => todo.push(t as usize),
                Op::BranchIfNot { target, .. } => todo.extend([p + 1, target as usize]),
                Op::Exit => {}
                Op::Slow(i) => {
                    let arrives = matches!(
                        self.cx.program.slow[i as usize],
                        Inst::Mbarrier(
                            MbarrierOp::Arrive { .. }
                                | MbarrierOp::ArriveExpectTx { .. }
                                | MbarrierOp::CompleteTx { .. }
                        ) | Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { .. })
                            | Inst::Tma(TmaOp::LoadBulk { .. } | TmaOp::LoadTensor { .. })
                            | Inst::Tcgen05(Tcgen05Op::Commit { .. })
                    );
                    if arrives {
                        return true;
                    }
                    todo.push(p + 1);
                }
                _ => todo.push(p + 1),
            }
        }
        false
    }

    /// The barrier a lane spinning on a failing `test_wait`/`try_wait` polls: `(cta, offset,
    /// parity, pc of the poll)`.
    fn polled_barrier(&self, wi: usize, l: usize) -> Option<(usize, u32, u64, u32)> {
        let w = &self.exec.warps[wi];
        let pc = w.last_failed_poll[l];
        let crate::sim::engine::program::Op::Slow(i) = *self.cx.program.ops.get(pc as usize)? else { return None };
        let phaser_codegen::ir::Inst::Mbarrier(
            phaser_codegen::ir::MbarrierOp::TestWait { bar, on: phaser_codegen::ir::WaitOn::Parity(p), .. }
            | phaser_codegen::ir::MbarrierOp::TryWait { bar, on: phaser_codegen::ir::WaitOn::Parity(p), .. },
        ) = &self.cx.program.slow[i as usize]
        else {
            return None;
        };
        let addr = self.val(wi, l, bar);
        if addr >> 32 != 0 || (addr as u32) >> crate::sim::engine::memory::CLUSTER_SHIFT != 0 {
            return None;
        }
        let off = addr as u32;
        self.exec.ctas[w.cta].barriers.get(self.cx.layout, off).filter(|b| b.usable())?;
        Some((w.cta, off, self.val(wi, l, p) & 1, pc))
    }

    /// A circular wait at the start: every waiter blocks (or spins) at its first wait on a
    /// barrier, on parity 0, and no thread ever arrived on any of those barriers, which are two
    /// or more: no side goes first. Returns the waits `(cta, barrier, first thread, pc)`.
    fn start_parity_deadlock(&self, groups: &[Group]) -> Option<Vec<StartWait>> {
        if !C::ENABLED {
            return None;
        }
        let mut waits = Vec::new();
        for (_, threads, cta, first, bar, pc, _, looping) in groups {
            let Some((c, off)) = *bar else { continue };
            if *looping {
                return None;
            }
            let b = self.exec.ctas[c].barriers.get(self.cx.layout, off)?;
            let fresh = b.usable() && b.phase == 0 && b.ever_arrived == 0 && b.tx == 0;
            let tpc = self.exec.threads_per_cta;
            let key = self.barrier_key(c, off);
            let first_wait = threads.iter().all(|t| self.checker.last_observed(*cta as u32 * tpc + t, key).is_none());
            if !fresh || !first_wait {
                return None;
            }
            waits.push((*cta, (c, off), *first, *pc));
        }
        let mut bars: Vec<(usize, u32)> = waits.iter().map(|w| w.1).collect();
        bars.sort();
        bars.dedup();
        (bars.len() >= 2).then_some(waits)
    }

    fn report_start_parity(&mut self, waits: &[StartWait]) {
        let names: Vec<String> = waits.iter().map(|w| self.barrier_ref(w.1 .0, w.1 .1).to_string()).collect();
        let mut seen = Vec::new();
        for (i, &(cta, bar, first, pc)) in waits.iter().enumerate() {
            if seen.contains(&bar) {
                continue;
            }
            seen.push(bar);
            let others: Vec<&str> =
                names.iter().enumerate().filter(|(j, n)| *j != i && **n != names[i]).map(|(_, n)| n.as_str()).collect();
            let msg = format!(
                "thread {}'s first wait on {} blocks on parity 0 of the fresh barrier, while the threads that could \
                 arrive on it wait at their own first waits (on {}): no side goes first. One role must start on \
                 parity 1, which a fresh barrier satisfies at once (producers on `empty` start at phase 1)",
                first % self.exec.threads_per_cta,
                names[i],
                others.join(", ")
            );
            self.finding(Category::WrongParity, cta, Some(first), Some(bar), Some(pc), msg);
        }
    }

    /// Waiters `threads` of CTA `cta` (first `first`, at `pc`) are stuck on barrier `(c, off)`:
    /// if its phase lacks arrivals, say how many and who arrived before.
    fn report_missing_arrivals(&mut self, cta: usize, c: usize, off: u32, threads: &[u32], first: u32, pc: u32) {
        let Some(b) = self.exec.ctas[c].barriers.get(self.cx.layout, off) else { return };
        if !b.usable() || b.pending <= 0 {
            return;
        }
        let (phase, pending, expected, received) = (b.phase, b.pending, b.expected, b.received);
        let history = if b.ever_arrived == 0 {
            "no thread has ever arrived on it".to_string()
        } else if received > 0 && phase == 0 {
            format!(
                "the {received} arrivals it got are all it will get: is the init count ({expected}) larger than the \
                 arrivals per phase?"
            )
        } else {
            match b.last.back() {
                Some(a) => format!("the last arrival: {}", self.describe_arrival(a)),
                None => String::new(),
            }
        };
        let msg = format!(
            "{} for phase {phase}, which lacks {pending} of its {expected} arrivals and can never get them (every \
             thread is blocked or has exited): {history}",
            if threads.len() == 1 {
                format!("thread {} waits", threads[0])
            } else {
                format!("{} threads ({}) wait", threads.len(), ranges(threads))
            }
        );
        self.finding(Category::MissingArrival, cta, Some(first), Some((c, off)), Some(pc), msg);
    }

    /// Every thread of CTA `c` exited: an async copy still reading its shared memory (a bulk
    /// or TMA store) or still to write it (`cp.async`) outlives it, as no `wait_group` before
    /// the exit waited for it.
    pub fn check_copies_at_exit(&mut self, c: usize) {
        use crate::sim::agents::async_op::AsyncKind;
        let tpc = self.exec.threads_per_cta;
        let mut late: Vec<(u32, u32, &str, Vec<u64>)> = Vec::new();
        for op in &self.async_ops.in_flight {
            let what = match &op.kind {
                AsyncKind::Store { cta, .. } if *cta == c => "a store (cp.async.bulk) still reads",
                AsyncKind::CpAsync { cta, .. } if *cta == c => "a cp.async still writes",
                _ => continue,
            };
            if !late.iter().any(|(pc, ..)| *pc == op.pc) {
                late.push((op.pc, op.issuer, what, op.counters.clone()));
            }
        }
        for (pc, issuer, what, counters) in late {
            let msg = format!(
                "{what} the shared memory of CTA rank {c} after all its threads exited: issued by thread {} and never \
                 waited for (a missing `cp.async.bulk.wait_group` / `cp.async.wait_group` before the kernel ends); the \
                 CTA's shared memory may already belong to another CTA",
                issuer % tpc
            );
            let icta = (issuer / tpc) as usize;
            let category = Category::ExitedCtaAccess;
            let issue = Issue {
                category,
                cta: icta,
                thread: Some(issuer),
                barrier: None,
                phase: None,
                pc: Some(pc),
                message: msg,
            };
            self.report_late(LateIssue { issue, counters: Some(counters) });
        }
    }

    /// End-of-kernel checks of every barrier of the cluster: a barrier left mid-phase (bytes
    /// registered that never arrived, bytes no expect_tx registered, some of its arrivals) is a
    /// warning. The kernel ended, so no thread waits for that phase (one that did would have
    /// deadlocked, which is reported as a deadlock and skips these checks), and the GPU runs it
    /// correctly: CUTLASS's warp-specialized producer ends with a `producer_acquire` whose
    /// `arrive.expect_tx` on `full` no copy completes and no consumer waits for.
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
                let msg = format!(
                    "{msg}\nharmless as it stands: the CTA exited with no thread waiting for this phase (a thread \
                     waiting for it would deadlock); a mistake if the phase was meant to complete"
                );
                let category = if tx != 0 { Category::TxImbalance } else { Category::IncompletePhase };
                // A tx-count is named at the thread's expect_tx of this phase (its iteration then
                // is not recorded), an incomplete phase at the barrier's init.
                let registered = b.tx_sites.iter().rev().find_map(|s| match s.actor {
                    Actor::Thread(t) if s.registered > 0 && tx != 0 => Some((t, s.pc)),
                    _ => None,
                });
                let (thread, pc, counters) = match registered {
                    Some((t, pc)) => (t, pc, None),
                    None => (b.init_by, b.init_pc, Some(b.init_counters.clone())),
                };
                let barrier = Some((c, off));
                let issue =
                    Issue { category, cta: c, thread: Some(thread), barrier, phase: None, pc: Some(pc), message: msg };
                issues.push(LateIssue { issue, counters });
            }
            for late in issues {
                self.warn_late(late);
            }
        }
    }
}

/// Stuck threads waiting for one thing at one place: key, threads (in the CTA), CTA, first
/// thread (in the cluster), barrier, pc, message, whether they loop.
type Group = (String, Vec<u32>, usize, u32, Option<(usize, u32)>, u32, String, bool);

/// A first wait stuck at the start: CTA, barrier `(cta, offset)`, first thread, pc.
type StartWait = (usize, (usize, u32), u32, u32);

/// Findings that follow from a deadlock rather than explain one.
const CONSEQUENCES: &[Category] = &[Category::Deadlock, Category::MissingArrival, Category::InfiniteLoop];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stuck {
    Deadlock,
    Livelock,
    Loop,
}
