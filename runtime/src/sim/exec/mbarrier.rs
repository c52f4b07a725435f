//! `mbarrier.*`: init, inval, arrivals (batched per warp when every lane arrives on the same
//! barrier without completing a phase mid-warp), tx updates, waits and polls.

use crate::report::finding::Category;
use crate::report::trace::TraceKind;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::warp::{lanes, WaitFor, WaitTarget};
use crate::sim::sync::barrier::Actor;
use crate::sim::sync::barrier_ops::BarrierWait;
use phaser_codegen::ir::*;

impl<C: Checker> Engine<'_, C> {
    fn wait_target(&self, wi: usize, l: usize, on: &WaitOn) -> WaitTarget {
        match on {
            WaitOn::Parity(p) => WaitTarget::Parity(self.val(wi, l, p) & 1),
            WaitOn::State(s) => WaitTarget::Phase(self.val(wi, l, s) >> 32),
        }
    }

    fn begin_wait(
        &mut self,
        wi: usize,
        l: usize,
        BarrierWait { cta, off, target }: BarrierWait,
        result: Option<u32>,
        pc: u32,
    ) {
        let t = self.cluster_thread(wi, l);
        self.trace_bar(cta, off, Some(t), TraceKind::WaitBegin { parity: target.parity() });
        let since = self.time.tick;
        self.block_lane(wi, l, WaitFor::Mbarrier { cta: cta as u32, off, target, result, pc, since });
    }

    /// A plain `mbarrier.arrive` by several lanes on one barrier, as one update: true when
    /// done, false when the lanes must go one by one (different barriers, a misuse to report,
    /// or a phase that completes before the last lane).
    pub(crate) fn exec_mbarrier_warp(&mut self, wi: usize, mask: u32, pc: u32, op: &MbarrierOp) -> bool {
        if let MbarrierOp::Wait { bar, on, .. } = op {
            return self.wait_warp(wi, mask, pc, bar, on);
        }
        let MbarrierOp::Arrive { bar, count, space, state, drop, .. } = op else { return false };
        if mask.count_ones() < 2 {
            return false;
        }
        let first = mask.trailing_zeros() as usize;
        let addr = self.val(wi, first, bar);
        let per_lane = count.map(|v| self.val(wi, first, &v) as u32).unwrap_or(1);
        if lanes(mask)
            .any(|l| self.val(wi, l, bar) != addr || count.is_some_and(|v| self.val(wi, l, &v) as u32 != per_lane))
        {
            return false;
        }
        let own = self.exec.warps[wi].cta;
        let cluster = *space == BarSpace::Cluster;
        // Check the address quietly first: a bad one goes lane by lane to be reported.
        let a = addr as u32;
        let cta = match a >> crate::sim::engine::memory::CLUSTER_SHIFT {
            0 if addr >> 32 == 0 => own,
            hi if cluster && addr >> 32 == 0 && ((hi - 1) as usize) < self.exec.ctas.len() => (hi - 1) as usize,
            _ => return false,
        };
        let off = a & crate::sim::engine::memory::SHARED_OFFSET_MASK;
        if cta != own || !off.is_multiple_of(8) || self.cx.layout.outside_every_array(off) {
            return false;
        }
        let total = per_lane * mask.count_ones();
        match self.exec.ctas[cta].barriers.get(self.cx.layout, off) {
            Some(b) if b.usable() && b.pending > total as i64 => {}
            _ => return false,
        }
        let base = self.cluster_thread(wi, 0);
        if C::ENABLED {
            self.check_init_visible_warp(wi, mask, cta, off, pc, "arrives on");
            let key = self.barrier_key(cta, off);
            self.checker.on_warp_release(base, mask, key, pc);
        }
        let pending = self.exec.ctas[cta].barriers.get(self.cx.layout, off).map_or(0, |b| b.pending) as u64;
        let token = self.arrive_on(cta, off, total, *drop, Actor::Warp { base, lanes: mask }, pc);
        self.arrival_token_read(*state, cta, off);
        if let Some(s) = state {
            let phase = token & !0xFFFF_FFFF;
            for (i, l) in lanes(mask).enumerate() {
                let after = pending - per_lane as u64 * (i as u64 + 1);
                self.set(wi, l, *s, phase | after);
            }
        }
        true
    }

    /// An arrival whose state token is read beyond its phase (`Program::tokens_read`) changed
    /// what its thread observes depending on which arrivals came before it (the token's
    /// pending count): it is not a plain count-down step that commutes with the phase's
    /// others (`Object::MbarArrival`).
    fn arrival_token_read(&mut self, state: Option<Reg>, cta: usize, off: u32) {
        if state.is_some_and(|r| self.cx.program.tokens_read.get(r.id as usize).copied().unwrap_or(false)) {
            self.touch_changed(cta, off);
        }
    }

    /// A blocking wait of several lanes on one barrier for one target, decided once.
    fn wait_warp(&mut self, wi: usize, mask: u32, pc: u32, bar: &Value, on: &WaitOn) -> bool {
        if mask.count_ones() < 2 {
            return false;
        }
        let first = mask.trailing_zeros() as usize;
        let addr = self.val(wi, first, bar);
        let target = self.wait_target(wi, first, on);
        if lanes(mask).any(|l| self.val(wi, l, bar) != addr || self.wait_target(wi, l, on) != target) {
            return false;
        }
        if addr >> 32 != 0 || (addr as u32) >> crate::sim::engine::memory::CLUSTER_SHIFT != 0 {
            return false;
        }
        let (cta, off) = (self.exec.warps[wi].cta, addr as u32);
        if !off.is_multiple_of(8)
            || self.cx.layout.outside_every_array(off)
            || off as usize + 8 > self.exec.ctas[cta].smem.len()
        {
            return false;
        }
        if !self.exec.ctas[cta].barriers.get(self.cx.layout, off).is_some_and(|b| b.usable()) {
            return false;
        }
        self.check_init_visible_warp(wi, mask, cta, off, pc, "waits on");
        if self.satisfied(cta, off, target) {
            self.wait_passed_warp(wi, mask, cta, off, target, pc);
        } else {
            let wait = BarrierWait { cta, off, target };
            self.check_skipped_phases_warp(wi, mask, wait, None, pc);
            for l in lanes(mask) {
                self.begin_wait(wi, l, wait, None, pc);
            }
        }
        true
    }

    pub(crate) fn exec_mbarrier(&mut self, wi: usize, l: usize, pc: u32, op: &MbarrierOp) {
        let t = self.cluster_thread(wi, l);
        match op {
            MbarrierOp::Init { bar, count } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let count = self.val(wi, l, count);
                if count == 0 || count > phaser_codegen::arch::MAX_ARRIVALS as u64 {
                    let msg = format!(
                        "`mbarrier.init` with arrival count {count}: the count must be in 1..={} (a phase \
                         expecting no arrivals never completes by arriving; an arrival on it overflows)",
                        phaser_codegen::arch::MAX_ARRIVALS
                    );
                    self.finding(Category::InvalidInitCount, c, Some(t), Some((c, off)), Some(pc), msg);
                }
                let loc = self.loc(pc);
                let counters = self.loop_counters(t, pc);
                self.exec.ctas[c].barriers.entry(self.cx.layout, off).init(count as u32, t, pc, loc, counters);
                let key = self.barrier_key(c, off);
                self.checker.on_init(t, key);
                self.time.effects += 1;
                self.note_late_init(t, c, off, pc);
                self.trace_bar(c, off, Some(t), TraceKind::Init { count: count as u32 });
            }
            MbarrierOp::Inval { bar } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                if self.check_barrier_use(t, c, off, pc, "invalidates") {
                    self.exec.ctas[c].barriers.entry(self.cx.layout, off).invalidate();
                    self.trace_bar(c, off, Some(t), TraceKind::Inval);
                }
            }
            MbarrierOp::Arrive { bar, count, space, state, drop, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let n = count.map(|v| self.val(wi, l, &v) as u32).unwrap_or(1);
                if self.check_barrier_use(t, c, off, pc, "arrives on") {
                    let key = self.barrier_key(c, off);
                    self.checker.on_thread_release(t, key, pc, true);
                    let token = self.arrive_on(c, off, n, *drop, Actor::Thread(t), pc);
                    self.arrival_token_read(*state, c, off);
                    if let Some(s) = state {
                        self.set(wi, l, *s, token);
                    }
                }
            }
            MbarrierOp::ArriveExpectTx { bar, bytes, space, state, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let b = self.val(wi, l, bytes) as u32;
                if self.check_barrier_use(t, c, off, pc, "arrives (expect_tx) on") {
                    self.expect_tx_on(t, c, off, b, pc);
                    let key = self.barrier_key(c, off);
                    self.checker.on_thread_release(t, key, pc, true);
                    let token = self.arrive_on(c, off, 1, false, Actor::Thread(t), pc);
                    if let Some(s) = state {
                        self.set(wi, l, *s, token);
                    }
                }
            }
            MbarrierOp::ExpectTx { bar, bytes, space, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let b = self.val(wi, l, bytes) as u32;
                if self.check_barrier_use(t, c, off, pc, "expects tx on") {
                    self.expect_tx_on(t, c, off, b, pc);
                }
            }
            MbarrierOp::CompleteTx { bar, bytes, space, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let b = self.val(wi, l, bytes) as u32;
                if self.check_barrier_use(t, c, off, pc, "completes tx on") {
                    let key = self.barrier_key(c, off);
                    self.checker.on_thread_release(t, key, pc, false);
                    self.complete_tx_on(c, off, b, Actor::Thread(t), pc);
                }
            }
            MbarrierOp::TestWait { done, bar, on, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let target = self.wait_target(wi, l, on);
                let usable = self.check_barrier_use(t, c, off, pc, "test_waits on");
                let ok = usable && self.satisfied(c, off, target);
                // A test_wait polled in a loop is a wait (a one-off probe is not).
                let polled = self.cx.program.is_poll(pc);
                if ok {
                    self.wait_passed(t, c, off, target, polled, pc);
                    let w = &mut self.exec.warps[wi];
                    w.spinning &= !(1 << l);
                    w.poll_armed &= !(1 << l);
                } else {
                    self.poll_failed();
                    let w = &self.exec.warps[wi];
                    let first_failure = w.poll_armed & (1 << l) == 0 || w.last_failed_poll[l] != pc;
                    if polled && usable && first_failure {
                        self.check_skipped_phases(t, c, off, target, None, pc);
                    }
                    // The same test_wait failing twice with nothing else done in between:
                    // the lane is in a polling loop (a one-off probe that fails is not).
                    let w = &mut self.exec.warps[wi];
                    w.yielded |= 1 << l;
                    if w.poll_armed & (1 << l) != 0 && w.last_failed_poll[l] == pc {
                        w.spinning |= 1 << l;
                    } else {
                        w.poll_armed |= 1 << l;
                        w.last_failed_poll[l] = pc;
                    }
                }
                self.set(wi, l, *done, ok as u64);
            }
            MbarrierOp::TryWait { done, bar, on, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let target = self.wait_target(wi, l, on);
                if !self.check_barrier_use(t, c, off, pc, "waits on") {
                    self.set(wi, l, *done, 0);
                    self.exec.warps[wi].yielded |= 1 << l;
                    self.poll_failed();
                    return;
                }
                if self.satisfied(c, off, target) {
                    if self.sched.spurious_try_wait() {
                        self.set(wi, l, *done, 0);
                        self.exec.warps[wi].yielded |= 1 << l;
                        self.poll_failed();
                    } else {
                        self.wait_passed(t, c, off, target, true, pc);
                        self.set(wi, l, *done, 1);
                    }
                } else {
                    self.set(wi, l, *done, 0);
                    self.check_skipped_phases(t, c, off, target, None, pc);
                    self.begin_wait(wi, l, BarrierWait { cta: c, off, target }, Some(done.id), pc);
                }
            }
            MbarrierOp::Wait { bar, on, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let target = self.wait_target(wi, l, on);
                let usable = self.check_barrier_use(t, c, off, pc, "waits on");
                if usable && self.satisfied(c, off, target) {
                    self.wait_passed(t, c, off, target, true, pc);
                } else {
                    if usable {
                        self.check_skipped_phases(t, c, off, target, None, pc);
                    }
                    self.begin_wait(wi, l, BarrierWait { cta: c, off, target }, None, pc);
                }
            }
            MbarrierOp::PendingCount { dst, state } => {
                let v = self.val(wi, l, state) & 0xFFFF_FFFF;
                self.set(wi, l, *dst, v);
            }
        }
    }
}
