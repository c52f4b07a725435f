//! Shared-memory and barrier addressing, and the barrier operations every instruction and
//! async agent goes through: arrivals, tx updates, phase completion, waits that pass, and the
//! misuse checks at each use.

use crate::report::finding::Category;
use crate::report::trace::{TraceEvent, TraceKind};
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::memory::{CLUSTER_SHIFT, SHARED_OFFSET_MASK};
use crate::sim::engine::step_round::CopyIssue;
use crate::sim::engine::warp::WaitTarget;
use crate::sim::sync::barrier::{Actor, Arrival};
use phaser_codegen::ir::Value;
use phaser_codegen::SourceLoc;

/// A wait on barrier `off` of CTA `cta` for `target` (what the wait checks take).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BarrierWait {
    pub cta: usize,
    pub off: u32,
    pub target: WaitTarget,
}

/// Who initialized a barrier (cluster thread) and where (Rust line).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BarrierInit {
    pub by: u32,
    pub loc: Option<SourceLoc>,
}

impl<C: Checker> Engine<'_, C> {
    #[inline]
    pub fn val(&self, wi: usize, l: usize, v: &Value) -> u64 {
        match *v {
            Value::Reg(r) => self.exec.warps[wi].regs[r.id as usize * 32 + l],
            Value::Imm { bits, .. } => bits,
        }
    }
    #[inline]
    pub fn set(&mut self, wi: usize, l: usize, r: phaser_codegen::ir::Reg, v: u64) {
        self.exec.warps[wi].regs[r.id as usize * 32 + l] = v;
    }

    /// Report a fault (the GPU would stop the kernel) and stop.
    pub fn fault(&mut self, cta: usize, t: u32, pc: u32, msg: String) {
        self.finding(Category::OutOfBounds, cta, Some(t), None, Some(pc), msg);
        self.abort = true;
    }

    /// Resolve a shared address: `.shared::cta` names this CTA; a `.shared::cluster` address
    /// may name any CTA of the cluster. Checks `[off, off+len)` lies in shared memory, and
    /// that another CTA named is still running.
    pub fn smem_addr(
        &mut self,
        wi: usize,
        l: usize,
        cluster: bool,
        addr: u64,
        len: u32,
        pc: u32,
    ) -> Option<(usize, u32)> {
        let own = self.exec.warps[wi].cta;
        let t = self.cluster_thread(wi, l);
        let a = addr as u32;
        let hi = a >> CLUSTER_SHIFT;
        let (cta, off) = if hi == 0 && addr >> 32 == 0 {
            (own, a)
        } else if cluster && addr >> 32 == 0 && ((hi - 1) as usize) < self.exec.ctas.len() {
            ((hi - 1) as usize, a & SHARED_OFFSET_MASK)
        } else {
            self.fault(own, t, pc, format!("shared address 0x{addr:x} names no shared memory of this cluster"));
            return None;
        };
        if off as u64 + len as u64 > self.exec.ctas[cta].smem.len() as u64 {
            let size = self.exec.ctas[cta].smem.len();
            let msg = format!(
                "shared access of {len} bytes at offset {off} is outside the CTA's {size} bytes of shared memory"
            );
            self.fault(own, t, pc, msg);
            return None;
        }
        if cta != own && !self.remote_target_alive(own, t, cta, pc) {
            return None;
        }
        self.touch_shared(cta, off, len);
        Some((cta, off))
    }

    /// Thread `t` of CTA `own` accesses CTA `target`: a finding if `target` has exited
    /// (its shared memory is gone); else the checker remembers the access (it must be ordered
    /// before `target` exits).
    pub fn remote_target_alive(&mut self, own: usize, t: u32, target: usize, pc: u32) -> bool {
        if self.exec.ctas[target].exited == self.exec.threads_per_cta {
            let msg = format!(
                "thread {} of CTA rank {own} accesses the shared memory of CTA rank {target}, which has already exited \
                 (undefined behaviour: its shared memory may belong to another CTA by now; a final cluster barrier \
                 keeps every CTA alive until the others are done with it)",
                t % self.exec.threads_per_cta
            );
            self.finding(Category::ExitedCtaAccess, own, Some(t), None, Some(pc), msg);
            return false;
        }
        let counters = if C::ENABLED { self.loop_counters(t, pc) } else { Vec::new() };
        let issue = self.checker.on_remote_access(t, target, pc, counters);
        self.report_issue(issue);
        true
    }

    /// Resolve a barrier address (8-byte aligned, inside shared memory, in an array).
    pub fn bar_addr(&mut self, wi: usize, l: usize, v: &Value, cluster: bool, pc: u32) -> Option<(usize, u32)> {
        let a = self.val(wi, l, v);
        let (cta, off) = self.smem_addr(wi, l, cluster, a, 8, pc)?;
        let t = self.cluster_thread(wi, l);
        if off % 8 != 0 {
            let msg = format!("mbarrier address {} is not 8-byte aligned", self.cx.layout.describe(off));
            self.finding(Category::Unsupported, cta, Some(t), None, Some(pc), msg);
            self.abort = true;
            return None;
        }
        if self.cx.layout.outside_every_array(off) {
            let msg = format!("mbarrier address {}: the barrier index is out of range", self.cx.layout.describe(off));
            self.fault(self.exec.warps[wi].cta, t, pc, msg);
            return None;
        }
        Some((cta, off))
    }

    pub fn trace_bar(&mut self, cta: usize, off: u32, thread: Option<u32>, kind: TraceKind) {
        if !self.cx.config.trace {
            return;
        }
        if self.trace_room == 0 {
            self.out.trace.dropped += 1;
            return;
        }
        self.trace_room -= 1;
        let (pending, tx, phase) = self.exec.ctas[cta]
            .barriers
            .get(self.cx.layout, off)
            .map(|b| (b.pending, b.tx, b.phase))
            .unwrap_or((0, 0, 0));
        let ctaid = self.exec.ctas[cta].ctaid;
        let thread = thread.map(|t| t % self.exec.threads_per_cta);
        self.out.trace.push(TraceEvent { ts: self.time.tick, ctaid, bar: off, thread, kind, pending, tx, phase });
    }

    /// Whether thread `t` may use barrier `(cta, off)`: it is initialized (else an
    /// `Uninitialized` finding), and its init is ordered before this use (else `InitVisibility`).
    pub fn check_barrier_use(&mut self, t: u32, cta: usize, off: u32, pc: u32, what: &str) -> bool {
        let layout = self.cx.layout;
        let (usable, invalidated, init_by, init_loc) = match self.exec.ctas[cta].barriers.get(layout, off) {
            Some(b) => (b.usable(), b.invalidated, b.init_by, b.init_loc),
            None => (false, false, 0, None),
        };
        if !usable {
            let why = if invalidated { "after `mbarrier.inval`" } else { "that is not initialized at this point" };
            let msg = format!("thread {} {what} a barrier {why}", t % self.exec.threads_per_cta);
            let at = self.out.findings.len();
            self.finding(Category::Uninitialized, cta, Some(t), Some((cta, off)), Some(pc), msg);
            if self.out.findings.len() > at && !invalidated {
                self.out.uninitialized_uses.push((cta, off, at));
            }
            return false;
        }
        self.check_init_visible(t, cta, off, pc, what, BarrierInit { by: init_by, loc: init_loc });
        true
    }

    /// The init-visibility part of `check_barrier_use` (for a barrier known to be usable).
    #[inline]
    pub fn check_init_visible(
        &mut self,
        t: u32,
        cta: usize,
        off: u32,
        pc: u32,
        what: &str,
        BarrierInit { by: init_by, loc: init_loc }: BarrierInit,
    ) {
        if C::ENABLED {
            let key = self.barrier_key(cta, off);
            if !self.checker.init_visible(t, key, init_by) {
                self.checker.init_reported(key);
                let at = init_loc.map(|l| format!(" at {l}")).unwrap_or_default();
                let msg = format!(
                    "thread {} {what} the barrier, but nothing orders its initialization by thread {}{at} before this \
                     use (missing `bar.sync`/`fence.mbarrier_init` + cluster barrier after `mbarrier.init`?)",
                    t % self.exec.threads_per_cta,
                    init_by % self.exec.threads_per_cta
                );
                self.finding(Category::InitVisibility, cta, Some(t), Some((cta, off)), Some(pc), msg);
            }
        }
    }

    /// Barrier `(cta, off)` was initialized by `t` at `pc`: uses reported as uninitialized
    /// before say that the init came later.
    pub fn note_late_init(&mut self, t: u32, cta: usize, off: u32, pc: u32) {
        let loc = self.loc(pc).map(|l| format!(" at {l}")).unwrap_or_default();
        let tpc = self.exec.threads_per_cta;
        let out = &mut self.out;
        for &(c, o, i) in out.uninitialized_uses.iter().filter(|(c, o, _)| *c == cta && *o == off) {
            let _ = (c, o);
            out.findings[i].message.push_str(&format!(
                "\n(it is initialized later, by thread {}{loc}: this use comes before the initialization)",
                t % tpc
            ));
        }
        out.uninitialized_uses.retain(|(c, o, _)| !(*c == cta && *o == off));
    }

    /// `count` arrivals of `actor` on `(cta, off)` at `pc`; returns the state token.
    pub fn arrive_on(&mut self, cta: usize, off: u32, count: u32, drop: bool, actor: Actor, pc: u32) -> u64 {
        self.touch_shared(cta, off, 8);
        let loc = self.loc(pc);
        let tick = self.time.tick;
        let bar = self.exec.ctas[cta].barriers.get_mut(self.cx.layout, off).expect("checked barrier");
        let (pending, tx, expected, phase) = (bar.pending, bar.tx, bar.expected, bar.phase);
        let o = bar.arrive(count, drop, actor, loc, tick);
        self.time.effects += 1;
        // A plain arrival counts the phase down (`Object::MbarArrival`), whether or not it
        // completes it; an overflow or a drop changes more than the count.
        if !o.overflow && !drop && count > 0 {
            self.touch_count_down(cta, off, phase, o.completed);
        } else {
            self.touch_changed(cta, off);
        }
        let t = match actor {
            Actor::Thread(t) | Actor::Agent { issuer: t, .. } => t,
            Actor::Warp { base, lanes } => base + lanes.trailing_zeros(),
        };
        if C::ENABLED {
            let key = self.barrier_key(cta, off);
            match actor {
                Actor::Thread(t) => self.checker.on_arrival_phase(t, key, phase),
                Actor::Warp { base, lanes } => {
                    for l in crate::sim::engine::warp::lanes(lanes) {
                        self.checker.on_arrival_phase(base + l as u32, key, phase);
                    }
                }
                Actor::Agent { .. } => {}
            }
        }
        if o.overflow {
            let msg = format!(
                "{count} arrival(s) on a phase with only {pending} pending (expected {expected} per phase, tx-count \
                 {tx}): more arrivals than the phase expects"
            );
            let category = Category::ArrivalOverflow;
            let issue = crate::sim::check::Issue {
                category,
                cta: (t / self.exec.threads_per_cta) as usize,
                thread: Some(t),
                barrier: Some((cta, off)),
                phase: Some(phase),
                pc: Some(pc),
                message: msg,
            };
            self.report(issue);
        }
        self.trace_bar(cta, off, Some(t), TraceKind::Arrive { count });
        if o.completed {
            self.phase_completed(cta, off);
        }
        o.token
    }

    fn tx_overflow(&mut self, t: u32, cta: usize, off: u32, pc: u32) {
        let tx = self.exec.ctas[cta].barriers.get(self.cx.layout, off).map(|b| b.tx).unwrap_or(0);
        let msg = format!("tx-count reached {tx}, outside the PTX range of +-(2^20-1)");
        self.finding(Category::TxOverflow, cta, Some(t), Some((cta, off)), Some(pc), msg);
    }

    pub fn expect_tx_on(&mut self, t: u32, cta: usize, off: u32, bytes: u32, pc: u32) {
        self.touch_shared(cta, off, 8);
        let loc = self.loc(pc);
        let tick = self.time.tick;
        let bar = self.exec.ctas[cta].barriers.get_mut(self.cx.layout, off).expect("checked barrier");
        let over = bar.expect_tx(bytes, Actor::Thread(t), pc, loc, tick);
        self.time.effects += 1;
        self.touch_changed(cta, off);
        if over {
            self.tx_overflow(t, cta, off, pc);
        }
        self.trace_bar(cta, off, Some(t), TraceKind::ExpectTx { bytes });
    }

    /// `complete_tx(bytes)` on `(cta, off)` by `actor` (a thread, or a copy's piece).
    pub fn complete_tx_on(&mut self, cta: usize, off: u32, bytes: u32, actor: Actor, pc: u32) {
        self.touch_shared(cta, off, 8);
        let loc = self.loc(pc);
        let tick = self.time.tick;
        let bar = self.exec.ctas[cta].barriers.get_mut(self.cx.layout, off).expect("checked barrier");
        let phase = bar.phase;
        let (over, done) = bar.complete_tx(bytes, actor, pc, loc, tick);
        let tx_after = if done { 0 } else { bar.tx };
        self.time.effects += 1;
        // Bytes that leave the tx-count at 0 or above only count the phase down, as a plain
        // arrival does (`Object::MbarArrival`): the tx-count then falls toward 0 in every order
        // of the phase's steps, so which of them completes it does not matter. Bytes that pass
        // it below 0 (bytes before their `expect_tx`, or more than the phase expects) complete
        // it in one order and not in another: they write it.
        if !over && bytes > 0 && tx_after >= 0 {
            self.touch_count_down(cta, off, phase, done);
        } else {
            self.touch_changed(cta, off);
        }
        let t = match actor {
            Actor::Thread(t) | Actor::Agent { issuer: t, .. } => t,
            Actor::Warp { base, .. } => base,
        };
        if over {
            self.tx_overflow(t, cta, off, pc);
        }
        self.trace_bar(cta, off, Some(t), TraceKind::CompleteTx { bytes });
        if done {
            self.phase_completed(cta, off);
        }
    }

    /// Thread `t` issues a copy completing on `(cta, off)` after it arrived in the barrier's
    /// previous phase, which completed with no bytes registered, and nothing has happened in the
    /// current phase yet: that arrival was meant to register this copy's bytes (a plain arrive
    /// where `arrive.expect_tx` belongs), so the phase completed before its data was even
    /// requested, and the copy's bytes land in the next phase. Whether `t`'s arrival was the
    /// phase's last does not matter (the phase completed before the copy either way), so the
    /// check does not depend on the order of the phase's arrivals (`Barrier::arrivers`), which
    /// the explorer does not permute (bench/exhaustive.md, run 7).
    pub fn check_copy_after_bare_arrival(&mut self, t: u32, cta: usize, off: u32, pc: u32) {
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off).filter(|b| b.usable()) else { return };
        let untouched = b.received == 0 && b.tx == 0 && b.tx_sites.is_empty();
        let suspect = b.completed_bare_with_arrival_of(t);
        let phase = b.phase;
        self.touch_copy_issue(CopyIssue { cta, off, phase, reads_count: suspect });
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off) else { return };
        if !untouched || !suspect {
            return;
        }
        let completed = b.phase - 1;
        // The line of `t`'s arrival, if the deadlock log still holds it.
        let mine = |a: &&Arrival| a.phase == completed && a.count > 0 && a.actor.includes(t);
        let at = b.last.iter().rev().find(mine).and_then(|a| a.loc).map(|l| format!(" at {l}")).unwrap_or_default();
        let msg = format!(
            "thread {} arrived{at} in phase {completed}, which completed with no bytes registered, and the thread then \
             issues a copy completing on the barrier: the arrival was meant to register the copy's bytes \
             (`arrive.expect_tx`, not a plain arrive). Phase {completed}'s waiters are released before the data is \
             even requested, and the copy's bytes land in phase {} instead",
            t % self.exec.threads_per_cta,
            b.phase
        );
        let issue = crate::sim::check::Issue {
            category: Category::EarlyPhaseCompletion,
            cta: (t / self.exec.threads_per_cta) as usize,
            thread: Some(t),
            barrier: Some((cta, off)),
            phase: Some(completed),
            pc: Some(pc),
            message: msg,
        };
        self.report(issue);
    }

    /// Barrier `(cta, off)` just completed a phase.
    fn phase_completed(&mut self, cta: usize, off: u32) {
        let phase = self.exec.ctas[cta].barriers.get(self.cx.layout, off).map_or(0, |b| b.phase - 1);
        let key = self.barrier_key(cta, off);
        self.checker.on_phase_complete(key, phase);
        self.trace_bar(cta, off, None, TraceKind::PhaseComplete);
        self.check_early_completion(cta, off, phase);
    }

    /// Lanes `lanes` of warp `wi` use the usable barrier `(cta, off)`: report the first whose
    /// use is not ordered after the init.
    pub fn check_init_visible_warp(&mut self, wi: usize, lanes: u32, cta: usize, off: u32, pc: u32, what: &str) {
        if !C::ENABLED {
            return;
        }
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off) else { return };
        let (init_by, init_loc) = (b.init_by, b.init_loc);
        let key = self.barrier_key(cta, off);
        let base = self.cluster_thread(wi, 0);
        if let Some(t) = self.checker.init_unordered(base, lanes, key, init_by) {
            self.check_init_visible(t, cta, off, pc, what, BarrierInit { by: init_by, loc: init_loc });
        }
    }

    /// The phase a wait on `(cta, off)` for `target` observed (`None`: no barrier there).
    fn observed_by_wait(&self, cta: usize, off: u32, target: WaitTarget) -> Option<i64> {
        let bar = self.exec.ctas[cta].barriers.get(self.cx.layout, off)?;
        Some(match target {
            WaitTarget::Parity(p) => bar.observed_for_parity(p),
            WaitTarget::Phase(k) => k as i64,
        })
    }

    /// Lanes `lanes` of warp `wi` passed a wait on `(cta, off)` for `target`.
    pub fn wait_passed_warp(&mut self, wi: usize, lanes: u32, cta: usize, off: u32, target: WaitTarget, pc: u32) {
        let Some(observed) = self.observed_by_wait(cta, off, target) else { return };
        self.touch_observed(cta, off, observed);
        if !C::ENABLED {
            return;
        }
        let key = self.barrier_key(cta, off);
        let base = self.cluster_thread(wi, 0);
        self.check_skipped_phases_warp(wi, lanes, BarrierWait { cta, off, target }, Some(observed), pc);
        self.note_observed(cta, off, observed);
        if let Some((t, seen)) = self.checker.on_warp_wait_passed(base, lanes, key, observed, pc) {
            self.report_stale(t, BarrierWait { cta, off, target }, observed, seen, pc);
        }
    }

    /// A wait observed completed phase `observed` of `(cta, off)`.
    fn note_observed(&mut self, cta: usize, off: u32, observed: i64) {
        if let Some(b) = self.exec.ctas[cta].barriers.get_mut(self.cx.layout, off) {
            b.mark_observed(observed);
        }
    }

    /// Lanes `lanes` of warp `wi` start a wait on `(cta, off)` for `target`, which passes at
    /// once observing `observed` or (`None`) blocks: see [`Self::check_skipped_phases`] (the
    /// first lane found is reported).
    pub fn check_skipped_phases_warp(
        &mut self,
        wi: usize,
        lanes: u32,
        BarrierWait { cta, off, target }: BarrierWait,
        observed: Option<i64>,
        pc: u32,
    ) {
        if !C::ENABLED {
            return;
        }
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off) else { return };
        let goal = observed.unwrap_or(b.phase as i64);
        let key = self.barrier_key(cta, off);
        let base = self.cluster_thread(wi, 0);
        for l in
            crate::sim::engine::warp::lanes(self.checker.lanes_to_check(base, lanes, key, goal, observed.is_some()))
        {
            let t = self.cluster_thread(wi, l);
            if self.check_skipped_phases(t, cta, off, target, observed, pc) {
                return;
            }
        }
    }

    /// Thread `t` starts a parity wait on `(cta, off)` that passes at once observing
    /// `observed`, or (`None`) blocks until the current phase completes. The completed phases
    /// it skips since the last one it observed, when no wait observed them, were lost: the
    /// parity is stale (same parity as the phase it last observed), a pipeline role starts on
    /// the wrong parity (its first wait skips phase 0), or arrivals outran the waiters (two or
    /// more phases skipped). Returns whether it reported.
    pub fn check_skipped_phases(
        &mut self,
        t: u32,
        cta: usize,
        off: u32,
        target: WaitTarget,
        observed: Option<i64>,
        pc: u32,
    ) -> bool {
        if !C::ENABLED {
            return false;
        }
        let WaitTarget::Parity(parity) = target else { return false };
        let Some(b) = self.exec.ctas[cta].barriers.get(self.cx.layout, off).filter(|b| b.usable()) else {
            return false;
        };
        let key = self.barrier_key(cta, off);
        let seen = self.checker.last_observed(t, key);
        let from = seen.unwrap_or(-1);
        let goal = observed.unwrap_or(b.phase as i64);
        let who = t % self.exec.threads_per_cta;
        let own = (t / self.exec.threads_per_cta) as usize;
        // The thread arrived and now waits on the same barrier: it waits for its own arrival's
        // phase. A wait that returns on an earlier phase did not wait for it.
        let arrived = self.checker.last_arrival_phase(t, key).map(|k| k as i64).filter(|&k| k > from);
        if let (Some(o), Some(k)) = (observed, arrived) {
            if o < k {
                let (category, msg) = if o < 0 {
                    (
                        Category::WrongParity,
                        format!(
                            "thread {who} arrived in phase {k} and then waits on parity {parity}, which the fresh \
                             barrier satisfies at once (the phase before phase 0): it goes on without waiting for \
                             the other arrivals of phase {k} (wait on the parity of the phase you arrived in)"
                        ),
                    )
                } else {
                    (
                        Category::ArrivalOverflow,
                        format!(
                            "thread {who}'s arrival counted toward phase {k} because phase {o} had completed without \
                             it, and its wait on parity {parity} returns on phase {o}: a phase completes before every \
                             thread of its round arrived (an init count smaller than the arrivals per phase? an extra \
                             arrival?)"
                        ),
                    )
                };
                self.finding(category, own, Some(t), Some((cta, off)), Some(pc), msg);
                return true;
            }
        }
        if goal - from <= 1 {
            // The phase after the last one observed (or an old one, which the stale check of
            // `on_wait_passed` reports): nothing skipped.
            return false;
        }
        let skipped = b.unobserved_between(from, goal);
        if skipped.is_empty() {
            return false;
        }
        let list = skipped.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" and ");
        let lost = if skipped.len() == 1 { format!("phase {list}") } else { format!("phases {list}") };
        let outcome = match observed {
            Some(o) => format!("the wait returns at once on phase {o}"),
            None => format!("it waits for the end of phase {goal}"),
        };
        let same_parity = (goal - from) % 2 == 0;
        let (category, msg) = match seen {
            None if same_parity => (
                Category::WrongParity,
                format!(
                    "thread {who}'s first wait on this barrier is on parity {parity}, the parity of the phase before \
                     phase 0: {outcome}, skipping {lost}, which completed and no thread observed (a consumer starting \
                     on the producer's parity? consumers of `full` start on parity 0, producers on `empty` on \
                     parity 1)"
                ),
            ),
            Some(_) if same_parity => (
                Category::StaleParity,
                format!(
                    "thread {who} waits on parity {parity}, the parity of phase {from}, which it observed last: \
                     {outcome}, skipping {lost}, which completed and no thread observed (a missing `phase ^= 1`?)"
                ),
            ),
            _ if skipped.len() >= 2 => (
                Category::ArrivalOverflow,
                format!(
                    "the barrier completed {lost} since thread {who} last observed it ({}), and no thread observed \
                     them: arrivals outran its waiters (a duplicated arrive? an init count smaller than the arrivals \
                     per phase?); thread {who}'s wait on parity {parity}: {outcome}",
                    if seen.is_some() { format!("phase {from}") } else { "never: the phase before phase 0".into() }
                ),
            ),
            _ => return false,
        };
        self.finding(category, own, Some(t), Some((cta, off)), Some(pc), msg);
        true
    }

    fn report_stale(
        &mut self,
        t: u32,
        BarrierWait { cta, off, target }: BarrierWait,
        observed: i64,
        seen: i64,
        pc: u32,
    ) {
        let phase = self.exec.ctas[cta].barriers.get(self.cx.layout, off).map_or(0, |b| b.phase);
        let parity = target.parity();
        let msg = format!(
            "thread {} waited on parity {parity} while the barrier is in phase {phase}: the wait returned at \
             once, observing phase {observed}, which this thread had already consumed (it last observed phase \
             {seen}); the parity is stale (a missing `phase ^= 1`, or a wait two phases behind)",
            t % self.exec.threads_per_cta
        );
        self.finding(Category::StaleParity, cta, Some(t), Some((cta, off)), Some(pc), msg);
    }

    /// Thread `t`'s wait on `(cta, off)` passed: acquire the observed phase and check the thread
    /// does not consume a phase it already consumed (stale parity, ABA).
    pub fn wait_passed(&mut self, t: u32, cta: usize, off: u32, target: WaitTarget, stale_check: bool, pc: u32) {
        let Some(observed) = self.observed_by_wait(cta, off, target) else { return };
        self.touch_observed(cta, off, observed);
        if !C::ENABLED {
            return;
        }
        let key = self.barrier_key(cta, off);
        if stale_check {
            self.check_skipped_phases(t, cta, off, target, Some(observed), pc);
        }
        self.note_observed(cta, off, observed);
        if let Some(seen) = self.checker.on_wait_passed(t, key, observed, stale_check, pc) {
            self.report_stale(t, BarrierWait { cta, off, target }, observed, seen, pc);
        }
    }

    pub fn describe_arrival(&self, a: &Arrival) -> String {
        let tpc = self.exec.threads_per_cta;
        let who = match a.actor {
            Actor::Thread(t) => format!("thread {}", t % tpc),
            Actor::Warp { base, lanes } => {
                let first = base + lanes.trailing_zeros();
                let last = base + 31 - lanes.leading_zeros();
                format!("threads {}-{} ({} lanes of a warp together)", first % tpc, last % tpc, lanes.count_ones())
            }
            Actor::Agent { kind, issuer } => format!("{kind} issued by thread {}", issuer % tpc),
        };
        let what = if a.count > 0 {
            format!("arrived x{}", a.count)
        } else if a.tx >= 0 {
            format!("expect_tx +{}", a.tx)
        } else {
            format!("complete_tx {}", -a.tx)
        };
        let loc = a.loc.map(|l| format!(" at {l}")).unwrap_or_default();
        format!("{who} {what} in phase {} (tick {}){loc}", a.phase, a.tick)
    }
}
