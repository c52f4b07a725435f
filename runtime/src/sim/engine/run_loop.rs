//! One cluster's scheduling loop: rounds in which every warp runs a quantum, async agents
//! complete when the scheduler says, blocked lanes wake when their wait is satisfied; the end
//! of the cluster, a deadlock or a livelock ends it.

use crate::error::Result;
use crate::report::trace::TraceKind;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::step_round::{ClusterTouch, NamedTouch};
use crate::sim::engine::warp::{lanes, WaitFor, WaitTarget};

/// How a round left the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundEnd {
    Running,
    /// Every thread exited (and every copy landed), or a finding stopped it.
    Finished,
}

impl<C: Checker> Engine<'_, C> {
    /// One scheduler round.
    pub fn round(&mut self) -> Result<RoundEnd> {
        if self.sched.stepper().is_some() {
            return self.step_round();
        }
        if self.abort {
            return Ok(RoundEnd::Finished);
        }
        if self.exec.live_threads == 0 {
            while !self.async_ops.in_flight.is_empty() {
                self.complete_next_piece(0)?;
            }
            return Ok(RoundEnd::Finished);
        }
        self.time.round += 1;
        let mut order = std::mem::take(&mut self.order);
        self.sched.warp_order(self.exec.warps.len(), &mut order);
        let mut progressed = false;
        let (polls0, effects0) = (self.time.polls_failed, self.time.slow_effects);
        for &wi in order.iter() {
            if self.exec.warps[wi].live() == 0 {
                continue;
            }
            self.wake(wi);
            if self.exec.warps[wi].runnable == 0 {
                continue;
            }
            let q = self.sched.quantum();
            if self.run_warp(wi, q)? > 0 {
                progressed = true;
            }
            if self.abort {
                return Ok(RoundEnd::Finished);
            }
        }
        self.order = order;
        // Lanes waiting for their global atomics go on at the epoch's end: not stuck.
        let atomics = !self.global.atomics.is_empty();
        let spinning = self.time.polls_failed > polls0 && self.time.slow_effects == effects0;
        let completed = self.step_agents(!progressed || spinning)?;
        if !progressed && completed == 0 && !atomics && !self.timeout_try_waits() {
            self.report_deadlock(false);
            return Ok(RoundEnd::Finished);
        }
        // Every live lane is blocked or spins on a failing test_wait, nothing but polls ran
        // and no async op is left to change a barrier: the polls can never succeed.
        let all_spinning = self.exec.warps.iter().all(|w| w.runnable & !w.spinning == 0);
        if spinning && completed == 0 && self.async_ops.in_flight.is_empty() && all_spinning && !atomics {
            self.report_deadlock(true);
            return Ok(RoundEnd::Finished);
        }
        Ok(RoundEnd::Running)
    }

    /// Complete the async work the scheduler picks; returns how many pieces completed.
    fn step_agents(&mut self, stalled: bool) -> Result<usize> {
        if self.async_ops.in_flight.is_empty() {
            return Ok(0);
        }
        let mut done = 0;
        let mut i = 0;
        while i < self.async_ops.in_flight.len() {
            let age = self.time.round.saturating_sub(self.async_ops.in_flight[i].round);
            if self.async_op_ready(i) && self.sched.complete_async(age, false) {
                if self.complete_next_piece(i)? {
                    // The op is gone: index `i` now holds the next one.
                } else {
                    i += 1;
                }
                done += 1;
            } else {
                i += 1;
            }
        }
        if done == 0 && stalled && !self.async_ops.in_flight.is_empty() {
            // The oldest op is always ready (ops wait only for older ones).
            let ready: Vec<usize> = (0..self.async_ops.in_flight.len()).filter(|&i| self.async_op_ready(i)).collect();
            let i = ready[self.sched.stalled_pick(ready.len())];
            self.complete_next_piece(i)?;
            done = 1;
        }
        Ok(done)
    }

    /// A `test_wait`/`try_wait` failed (or timed out spuriously).
    pub fn poll_failed(&mut self) {
        self.time.polls_failed += 1;
    }

    /// Whether a wait on `(cta, off)` for `target` is satisfied now.
    #[inline]
    pub fn satisfied(&self, cta: usize, off: u32, target: WaitTarget) -> bool {
        match self.exec.ctas[cta].barriers.get(self.cx.layout, off) {
            Some(b) => match target {
                WaitTarget::Parity(p) => b.parity_done(p),
                WaitTarget::Phase(k) => b.usable() && b.phase > k,
            },
            None => false,
        }
    }

    /// Wake lanes of warp `wi` whose wait is now satisfied.
    pub fn wake(&mut self, wi: usize) {
        let blocked = self.exec.warps[wi].blocked;
        // Lanes of a warp usually wait for the same barrier phase: decide once, and let the
        // checker handle them together.
        let mut group: Option<(u32, u32, WaitTarget, u32, bool)> = None;
        let mut group_lanes = 0u32;
        let mut woken = 0u32;
        for l in lanes(blocked) {
            let b = self.exec.warps[wi].wait[l];
            let t = self.cluster_thread(wi, l);
            let ready = match b {
                WaitFor::Nothing => true,
                WaitFor::Mbarrier { cta, off, target, result, pc, .. } => {
                    let ok = match group {
                        Some((c, o, tg, p, ok)) if (c, o, tg, p) == (cta, off, target, pc) => ok,
                        _ => {
                            self.flush_woken(wi, group, group_lanes);
                            group_lanes = 0;
                            let ok = self.satisfied(cta as usize, off, target);
                            group = Some((cta, off, target, pc, ok));
                            ok
                        }
                    };
                    if ok {
                        group_lanes |= 1 << l;
                        if let Some(r) = result {
                            self.exec.warps[wi].regs[r as usize * 32 + l] = 1;
                        }
                        self.trace_bar(cta as usize, off, Some(t), TraceKind::WaitEnd);
                    }
                    ok
                }
                WaitFor::NamedBarrier { .. }
                | WaitFor::WarpSync { .. }
                | WaitFor::GlobalAtomic { .. }
                | WaitFor::WgmmaConverge { .. } => self.wait_done(wi, l),
                WaitFor::ClusterBarrier { generation, .. } => {
                    let ok = self.wait_done(wi, l);
                    if ok {
                        self.checker.on_cluster_wait_passed(t, generation);
                    }
                    ok
                }
                WaitFor::CpAsyncGroups { n, .. } => self.async_ops.groups[t as usize].cp_async.retired(n),
                WaitFor::BulkGroups { n, .. } => {
                    let g = &mut self.async_ops.groups[t as usize].bulk;
                    let ok = g.retired(n);
                    if ok {
                        let retired = g.committed.len().saturating_sub(n as usize);
                        self.checker.on_stores_observed(t, retired);
                    }
                    ok
                }
                WaitFor::WgmmaGroups { n, .. } => self.wgmma_wait_ready(wi, n),
                WaitFor::RegisterPool { count, .. } => {
                    let ok = self.wait_done(wi, l);
                    if ok {
                        self.exec.warps[wi].regs_per_thread = count;
                    }
                    ok
                }
            };
            if ready {
                woken |= 1 << l;
            }
        }
        self.flush_woken(wi, group, group_lanes);
        let w = &mut self.exec.warps[wi];
        w.blocked &= !woken;
        w.runnable |= woken;
        for l in lanes(woken) {
            w.wait[l] = WaitFor::Nothing;
        }
    }

    /// Whether lane `l` of warp `wi` could stop waiting now (`wake` lets it go), asked without
    /// changing anything (the step mode's enabled actors ask it every step).
    pub fn wait_done(&self, wi: usize, l: usize) -> bool {
        let w = &self.exec.warps[wi];
        let t = self.cluster_thread(wi, l) as usize;
        match w.wait[l] {
            WaitFor::Nothing => true,
            WaitFor::Mbarrier { cta, off, target, .. } => self.satisfied(cta as usize, off, target),
            WaitFor::NamedBarrier { id, generation, .. } => {
                self.exec.ctas[w.cta].named[id as usize].generation > generation
            }
            WaitFor::ClusterBarrier { generation, .. } => self.exec.cluster_barrier.generation > generation,
            WaitFor::CpAsyncGroups { n, .. } => self.async_ops.groups[t].cp_async.is_retired(n),
            WaitFor::BulkGroups { n, .. } => self.async_ops.groups[t].bulk.is_retired(n),
            WaitFor::RegisterPool { count, .. } => self.register_pool_free(wi) >= count as u64,
            WaitFor::WgmmaGroups { n, .. } => self.wgmma_groups_complete(wi, n),
            // Released by the last lane to arrive, never by polling.
            WaitFor::WarpSync { .. } | WaitFor::GlobalAtomic { .. } | WaitFor::WgmmaConverge { .. } => false,
        }
    }

    /// The lanes of warp `wi` whose mbarrier wait `group` passed acquire the phase.
    fn flush_woken(&mut self, wi: usize, group: Option<(u32, u32, WaitTarget, u32, bool)>, lanes: u32) {
        if let Some((cta, off, target, pc, true)) = group {
            if lanes != 0 {
                self.wait_passed_warp(wi, lanes, cta as usize, off, target, pc);
            }
        }
    }

    /// Time out every lane blocked in a `try_wait` (it returns false); false if there was none.
    pub(crate) fn timeout_try_waits(&mut self) -> bool {
        let mut any = false;
        for wi in 0..self.exec.warps.len() {
            for l in lanes(self.exec.warps[wi].blocked) {
                if let WaitFor::Mbarrier { result: Some(r), cta, off, .. } = self.exec.warps[wi].wait[l] {
                    let t = self.cluster_thread(wi, l);
                    let w = &mut self.exec.warps[wi];
                    w.regs[r as usize * 32 + l] = 0;
                    w.blocked &= !(1 << l);
                    w.runnable |= 1 << l;
                    w.yielded |= 1 << l;
                    w.wait[l] = WaitFor::Nothing;
                    self.trace_bar(cta as usize, off, Some(t), TraceKind::WaitEnd);
                    any = true;
                }
            }
        }
        any
    }

    /// The lane group to run next: runnable lanes at the lowest pc (others first if they yielded).
    pub fn pick_group(&mut self, wi: usize) -> Option<(u32, u32)> {
        let scramble = self.sched.scramble_group();
        let w = &mut self.exec.warps[wi];
        if w.runnable == 0 {
            return None;
        }
        let mut cand = w.runnable & !w.yielded;
        if cand == 0 {
            w.yielded = 0;
            cand = w.runnable;
        }
        let best = if scramble {
            let k = self.sched.pick(cand.count_ones() as usize);
            self.exec.warps[wi].pc[lanes(cand).nth(k).unwrap_or(0)]
        } else {
            lanes(cand).map(|l| w.pc[l]).min().unwrap_or(u32::MAX)
        };
        let w = &self.exec.warps[wi];
        let mask = lanes(cand).filter(|&l| w.pc[l] == best).fold(0u32, |m, l| m | 1 << l);
        Some((mask, best))
    }

    /// Lanes `mask` of warp `wi` leave the kernel.
    pub fn exit_lanes(&mut self, wi: usize, mask: u32) {
        let w = &mut self.exec.warps[wi];
        w.runnable &= !mask;
        w.exited |= mask;
        // The lanes' watched global writes count for every warp once they are gone.
        self.global.watched_writes -= w.cycle.effect();
        let c = w.cta;
        let k = mask.count_ones();
        if !w.warp_syncs.is_empty() {
            self.warp_sync_lanes_exited(wi, mask);
        }
        if C::ENABLED {
            for l in lanes(mask) {
                let t = self.cluster_thread(wi, l);
                self.checker.on_thread_exit(t);
            }
        }
        self.exec.live_threads -= k;
        self.exec.ctas[c].exited += k;
        self.time.effects += 1;
        if self.exec.ctas[c].exited == self.exec.threads_per_cta {
            self.check_copies_at_exit(c);
            let issues = self.checker.on_cta_exit(c);
            for i in issues {
                self.report_late(i);
            }
            self.tcgen05_cta_exited(c);
        }
        // Exits count toward the whole-CTA rounds (`bar.sync id` without a thread count); a
        // round with a count does not change.
        for id in 0..16 {
            let nb = &self.exec.ctas[c].named[id];
            if nb.arrived > 0 && nb.expected.is_none() {
                let generation = nb.generation;
                self.check_named(c, id);
                let completed = self.exec.ctas[c].named[id].generation != generation;
                self.touch_named(NamedTouch { cta: c, id: id as u8, round: generation, counts_exits: true, completed });
            }
        }
        if self.exec.cluster_barrier.arrived > 0 {
            let round = self.exec.cluster_barrier.generation;
            let completed = self.check_cluster_barrier();
            self.touch_cluster(ClusterTouch { round, arrival: false, completed });
        }
    }

    /// Block lane `l` of warp `wi`.
    pub fn block_lane(&mut self, wi: usize, l: usize, b: WaitFor) {
        let w = &mut self.exec.warps[wi];
        w.runnable &= !(1 << l);
        w.blocked |= 1 << l;
        w.wait[l] = b;
    }

    /// Complete `bar.sync id` of CTA `c` if every expected thread arrived.
    pub fn check_named(&mut self, c: usize, id: usize) {
        let cta = &self.exec.ctas[c];
        let nb = &cta.named[id];
        let ready = match nb.expected {
            Some(e) => nb.arrived >= e,
            None => nb.arrived + cta.exited >= self.exec.threads_per_cta,
        };
        if !ready {
            return;
        }
        self.check_bar_completion_warps(c, id);
        let nb = &mut self.exec.ctas[c].named[id];
        let waiters = std::mem::take(&mut nb.waiters);
        nb.generation += 1;
        nb.arrived = 0;
        nb.expected = None;
        nb.round_lanes.iter_mut().for_each(|m| *m = 0);
        self.checker.on_named_complete(c, id, &waiters);
        self.time.effects += 1;
    }

    /// Complete the cluster barrier's round if every thread arrived or exited; whether it did.
    pub fn check_cluster_barrier(&mut self) -> bool {
        let exited: u32 = self.exec.ctas.iter().map(|c| c.exited).sum();
        let cb = &mut self.exec.cluster_barrier;
        if cb.arrived + exited < self.exec.threads as u32 {
            return false;
        }
        let round = cb.generation;
        cb.generation += 1;
        cb.arrived = 0;
        self.checker.on_cluster_complete(round);
        if let Some(go) = self.global_order.as_mut() {
            go.cluster_barrier();
        }
        self.time.effects += 1;
        true
    }
}
