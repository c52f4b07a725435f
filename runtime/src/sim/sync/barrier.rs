//! The mbarrier state machine (PTX ISA semantics).
//!
//! A phase completes when its pending arrival count and its tx-count are both zero; then the
//! pending count resets to the expected count (less the arrivals dropped by `arrive_drop`)
//! and the phase number advances (its parity flips). A wait on parity `p` is satisfied while
//! the current phase parity differs from `p`, i.e. once the phase with parity `p` completed.

use phaser_codegen::SourceLoc;
use std::collections::VecDeque;

/// Largest `|tx-count|` PTX allows (codegen's limits table).
pub const TX_LIMIT: i64 = phaser_codegen::arch::MAX_TX_BYTES as i64;
/// Arrivals remembered per barrier for deadlock reports.
const LAST_ARRIVALS: usize = 6;

/// Who performed an arrival or a tx update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// A thread, by index in its cluster.
    Thread(u32),
    /// Lanes `lanes` of the warp whose lane 0 is cluster thread `base`, arriving together.
    Warp { base: u32, lanes: u32 },
    /// An async agent acting for the thread that issued it.
    Agent { kind: &'static str, issuer: u32 },
}

impl Actor {
    /// Whether thread `t` is this actor, or one of its lanes (an agent acts for its issuer,
    /// but is not the issuer's own arrival).
    pub fn includes(&self, t: u32) -> bool {
        match *self {
            Actor::Thread(u) => u == t,
            Actor::Warp { base, lanes } => t >= base && t - base < 32 && lanes & (1 << (t - base)) != 0,
            Actor::Agent { .. } => false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Arrival {
    pub actor: Actor,
    /// Arrivals (0 for a pure tx update).
    pub count: u32,
    /// tx bytes added (`expect_tx`, positive) or completed (negative).
    pub tx: i64,
    /// The phase the arrival counted toward.
    pub phase: u64,
    pub loc: Option<SourceLoc>,
    pub tick: u64,
}

/// Bytes one instruction registered (`expect_tx`) or delivered (`complete_tx`, copies) in a
/// phase: a byte-count bug names both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxSite {
    pub pc: u32,
    pub loc: Option<SourceLoc>,
    /// Who: a thread's `expect_tx`/`complete_tx` or an async copy.
    pub actor: Actor,
    pub registered: u64,
    pub delivered: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Barrier {
    pub inited: bool,
    pub invalidated: bool,
    pub expected: u32,
    pub pending: i64,
    pub tx: i64,
    /// Completed phases so far; the current phase's parity is `phase & 1`.
    pub phase: u64,
    /// Arrivals dropped (by `arrive_drop`) from the next phase's expected count on.
    pub drop_next: u32,
    /// Arrivals received in the current phase.
    pub received: u32,
    pub init_by: u32,
    pub init_pc: u32,
    pub init_loc: Option<SourceLoc>,
    /// The initializing thread's loop counters at the init (end-of-kernel findings name it).
    pub init_counters: Vec<u64>,
    pub last: VecDeque<Arrival>,
    /// Who arrived in the current phase, and in the last completed one (each actor once):
    /// what the bare-arrival check asks (`check_copy_after_bare_arrival`), whichever of them
    /// arrived last. Bounded by the phase's expected count: only arrivals that fit in what the
    /// phase still expects are kept (each takes at least one), and an arrival beyond it is an
    /// overflow, reported on its own.
    pub arrivers: Vec<Actor>,
    pub completed_arrivers: Vec<Actor>,
    /// tx bytes of the current phase per instruction, and of the last completed phase.
    pub tx_sites: Vec<TxSite>,
    pub completed_tx_sites: Vec<TxSite>,
    /// Which of the last 64 completed phases some wait observed: bit `i` is phase
    /// `phase - 1 - i` (a waiter that skips a phase no one observed lost it).
    pub observed: u64,
    /// Arrivals ever made on this barrier since its init (a fresh barrier has none).
    pub ever_arrived: u64,
}

/// What one arrival did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArriveOutcome {
    /// The pending count would have gone negative.
    pub overflow: bool,
    /// The arrival completed the phase.
    pub completed: bool,
    /// The `mbarrier.arrive` state token: phase in the high half, pending count after in the low.
    pub token: u64,
}

impl Barrier {
    pub fn new_uninit() -> Barrier {
        Barrier::default()
    }

    pub fn init(&mut self, count: u32, by: u32, pc: u32, loc: Option<SourceLoc>, counters: Vec<u64>) {
        *self = Barrier {
            inited: true,
            expected: count,
            pending: count as i64,
            init_by: by,
            init_pc: pc,
            init_loc: loc,
            init_counters: counters,
            ..Barrier::default()
        };
    }

    /// Add `bytes` registered or delivered by `pc` to this phase's tx sites.
    fn count_tx(&mut self, pc: u32, loc: Option<SourceLoc>, actor: Actor, registered: u64, delivered: u64) {
        match self.tx_sites.iter_mut().find(|s| s.pc == pc && s.actor == actor) {
            Some(s) => {
                s.registered += registered;
                s.delivered += delivered;
            }
            None => self.tx_sites.push(TxSite { pc, loc, actor, registered, delivered }),
        }
    }

    pub fn invalidate(&mut self) {
        self.inited = false;
        self.invalidated = true;
    }

    pub fn usable(&self) -> bool {
        self.inited && !self.invalidated
    }

    /// A wait observed completed phase `phase` (`-1`, the phase before phase 0, is not one).
    pub fn mark_observed(&mut self, phase: i64) {
        let back = self.phase as i64 - 1 - phase;
        if phase >= 0 && (0..64).contains(&back) {
            self.observed |= 1 << back;
        }
    }

    /// The completed phases strictly between `after` and `before` that no wait observed
    /// (phases more than 64 back count as observed: too old to know).
    pub fn unobserved_between(&self, after: i64, before: i64) -> Vec<u64> {
        let last = self.phase as i64 - 1;
        (after + 1..before.min(last + 1))
            .filter(|&q| q >= 0 && last - q < 64 && self.observed & (1 << (last - q)) == 0)
            .map(|q| q as u64)
            .collect()
    }

    fn remember(&mut self, a: Arrival) {
        if self.last.len() == LAST_ARRIVALS {
            self.last.pop_front();
        }
        self.last.push_back(a);
    }

    /// `count` arrivals (`drop`: also lower the expected count from the next phase on).
    pub fn arrive(&mut self, count: u32, drop: bool, actor: Actor, loc: Option<SourceLoc>, tick: u64) -> ArriveOutcome {
        let phase = self.phase;
        self.ever_arrived += count as u64;
        self.remember(Arrival { actor, count, tx: 0, phase, loc, tick });
        let overflow = (count as i64) > self.pending;
        if count > 0 && !overflow && !self.arrivers.contains(&actor) {
            self.arrivers.push(actor);
        }
        self.pending = (self.pending - count as i64).max(0);
        self.received += count;
        if drop {
            self.drop_next += count;
        }
        let token = (phase << 32) | (self.pending as u64 & 0xFFFF_FFFF);
        let completed = self.try_complete();
        ArriveOutcome { overflow, completed, token }
    }

    /// `tx += bytes`; returns whether `|tx|` left the allowed range.
    pub fn expect_tx(&mut self, bytes: u32, actor: Actor, pc: u32, loc: Option<SourceLoc>, tick: u64) -> bool {
        self.tx += bytes as i64;
        self.remember(Arrival { actor, count: 0, tx: bytes as i64, phase: self.phase, loc, tick });
        self.count_tx(pc, loc, actor, bytes as u64, 0);
        self.tx.abs() > TX_LIMIT
    }

    /// `tx -= bytes`; returns (`|tx|` out of range, the phase completed).
    pub fn complete_tx(
        &mut self,
        bytes: u32,
        actor: Actor,
        pc: u32,
        loc: Option<SourceLoc>,
        tick: u64,
    ) -> (bool, bool) {
        self.tx -= bytes as i64;
        let last =
            self.last.back_mut().filter(|a| a.actor == actor && a.tx < 0 && a.loc == loc && a.phase == self.phase);
        match last {
            // Pieces of one copy are remembered as one update.
            Some(a) => a.tx -= bytes as i64,
            None => self.remember(Arrival { actor, count: 0, tx: -(bytes as i64), phase: self.phase, loc, tick }),
        }
        self.count_tx(pc, loc, actor, 0, bytes as u64);
        let over = self.tx.abs() > TX_LIMIT;
        (over, self.try_complete())
    }

    /// Complete the phase if nothing is pending; returns whether it did.
    pub fn try_complete(&mut self) -> bool {
        if !self.usable() || self.pending != 0 || self.tx != 0 {
            return false;
        }
        self.phase += 1;
        self.expected = self.expected.saturating_sub(self.drop_next);
        self.drop_next = 0;
        self.pending = self.expected as i64;
        self.received = 0;
        self.completed_tx_sites = std::mem::take(&mut self.tx_sites);
        self.completed_arrivers = std::mem::take(&mut self.arrivers);
        self.observed <<= 1;
        true
    }

    /// Whether thread `t` arrived in the last completed phase (alone or with lanes of its warp).
    pub fn arrived_in_completed_phase(&self, t: u32) -> bool {
        self.completed_arrivers.iter().any(|a| a.includes(t))
    }

    /// Whether a copy thread `t` issues on this barrier now may be the bare-arrival bug
    /// (`check_copy_after_bare_arrival`), as far as the completed phase decides: `t` arrived
    /// in it and it completed with no bytes. The rest is whether the current phase is untouched.
    pub fn completed_bare_with_arrival_of(&self, t: u32) -> bool {
        self.phase > 0 && self.completed_tx_sites.is_empty() && self.arrived_in_completed_phase(t)
    }

    /// Whether a wait on `parity` is satisfied now.
    #[inline]
    pub fn parity_done(&self, parity: u64) -> bool {
        self.usable() && (self.phase & 1) != (parity & 1)
    }

    /// The phase a successful wait on `parity` observes: the latest completed phase with that
    /// parity (`-1` is the virtual phase before phase 0, which a fresh barrier "completed").
    pub fn observed_for_parity(&self, parity: u64) -> i64 {
        let cur = self.phase as i64;
        if ((cur - 1) & 1) as u64 == (parity & 1) {
            cur - 1
        } else {
            cur - 2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: u32) -> Actor {
        Actor::Thread(i)
    }

    #[test]
    fn phase_completes_only_when_pending_and_tx_are_zero() {
        let mut b = Barrier::default();
        b.init(2, 0, 0, None, Vec::new());
        assert!(!b.expect_tx(64, t(0), 0, None, 0));
        assert!(!b.arrive(1, false, t(0), None, 0).completed);
        assert!(!b.arrive(1, false, t(1), None, 0).completed, "tx 64 still pending");
        assert_eq!((b.pending, b.tx, b.phase), (0, 64, 0));
        let (over, done) = b.complete_tx(32, t(2), 0, None, 0);
        assert!(!over && !done);
        let (_, done) = b.complete_tx(32, t(2), 0, None, 0);
        assert!(done);
        assert_eq!((b.pending, b.tx, b.phase), (2, 0, 1));
    }

    #[test]
    fn fresh_barrier_satisfies_parity_one_and_not_zero() {
        let mut b = Barrier::default();
        b.init(1, 0, 0, None, Vec::new());
        assert!(b.parity_done(1));
        assert!(!b.parity_done(0));
        assert_eq!(b.observed_for_parity(1), -1);
        b.arrive(1, false, t(0), None, 0);
        assert!(b.parity_done(0) && !b.parity_done(1));
        assert_eq!(b.observed_for_parity(0), 0);
    }

    #[test]
    fn tx_may_go_negative_before_expect_and_overflow_is_reported() {
        let mut b = Barrier::default();
        b.init(1, 0, 0, None, Vec::new());
        let (over, done) = b.complete_tx(16, t(0), 0, None, 0);
        assert!(!over && !done);
        assert_eq!(b.tx, -16);
        assert!(!b.expect_tx(16, t(0), 0, None, 0));
        assert!(b.arrive(1, false, t(0), None, 0).completed);
        assert!(b.expect_tx(1 << 20, t(0), 0, None, 0), "2^20 bytes exceed the tx range");
    }

    #[test]
    fn extra_arrival_overflows_and_arrive_drop_lowers_the_next_count() {
        let mut b = Barrier::default();
        b.init(2, 0, 0, None, Vec::new());
        b.expect_tx(8, t(0), 0, None, 0);
        assert!(!b.arrive(2, false, t(0), None, 0).overflow);
        assert!(b.arrive(1, false, t(0), None, 0).overflow, "pending was 0, waiting for tx");
        b.complete_tx(8, t(0), 0, None, 0);
        assert_eq!(b.phase, 1);
        let o = b.arrive(1, true, t(0), None, 0);
        assert_eq!(o.token >> 32, 1);
        assert_eq!(o.token & 0xFFFF_FFFF, 1);
        b.arrive(1, false, t(1), None, 0);
        assert_eq!((b.phase, b.expected, b.pending), (2, 1, 1));
    }
}
