//! The shared memory wgmmas read, for the happens-before checker: a wgmma reads its operands
//! asynchronously from its issue until it completes, and its issuers may reuse (or hand back)
//! those bytes only after a `wgmma.wait_group` retired it. So a read stays on record, with the
//! threads that retired it and their clocks then (its *observers*), until a write ordered
//! after some observation replaces the bytes. A write that is not — a TMA load into a stage
//! whose consumer released it before its `wait_group`, a store into an operand in flight — is
//! a `WgmmaOperandRace`, attributed to the early release that let the writer in when there
//! was one.
//!
//! A warp's part of a wgmma is issued before the read exists here (it exists once all four
//! warps issued), so a release its first lane makes in between (the warpgroup's leader
//! releasing right after its own `mma_async`, the other warps not there yet) would be missed:
//! each thread's latest arrivals are kept, and those after its warp's issue are early releases
//! of the read from the start.

use super::BarrierKey;

/// An arrival by an issuing thread that had not observed the read's retirement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EarlyRelease {
    pub thread: u32,
    pub bar: BarrierKey,
    /// The thread's clock at the arrival (what an acquirer of it sees).
    pub clock: u32,
    pub pc: u32,
    /// The phase the arrival counted toward: the phase it released (set by `arrival_phase`,
    /// which the engine reports right after the arrival).
    pub phase: Option<u64>,
}

/// One wgmma's operand bytes.
#[derive(Clone, Debug)]
pub(crate) struct TensorRead {
    pub id: u32,
    pub cta: usize,
    pub ranges: Vec<(u32, u32)>,
    pub pc: u32,
    /// The issuing warpgroup's threads `[lo, hi)`.
    pub threads: (u32, u32),
    /// The tensor core finished reading.
    pub done: bool,
    /// Threads whose `wait_group` retired it, with their clocks then.
    pub observers: Vec<(u32, u32)>,
    pub early: Vec<EarlyRelease>,
}

impl TensorRead {
    /// Whether a thread with clock row `row` is ordered after the retirement.
    fn ordered(&self, row: &[u32]) -> bool {
        self.observers.iter().any(|&(o, c)| row.get(o as usize).is_some_and(|&r| r >= c))
    }
    fn overlaps(&self, cta: usize, off: u32, len: u32) -> bool {
        self.cta == cta && self.ranges.iter().any(|&(o, l)| o < off + len && off < o + l)
    }
}

/// A write that conflicts with a wgmma's read.
#[derive(Clone, Debug)]
pub(crate) struct ReadConflict {
    pub read: TensorRead,
    /// The early release the writer is ordered after (the hand-back that came too soon).
    pub culprit: Option<EarlyRelease>,
}

/// Early releases kept per read (the latest).
const EARLY_KEPT: usize = 8;
/// Arrivals kept per thread, for the reads issued after them (see the module's doc).
const RECENT_KEPT: usize = 4;

#[derive(Default)]
pub(crate) struct TensorReads {
    reads: Vec<TensorRead>,
    /// Each thread's latest arrivals.
    recent: std::collections::HashMap<u32, Vec<EarlyRelease>>,
}

impl TensorReads {
    /// A wgmma's read, issued by warps whose first lanes had clocks `issues` (thread, own
    /// clock at its `mma_async`): their arrivals since then are early releases of it already.
    pub fn issue(&mut self, mut read: TensorRead, issues: &[(u32, u32)]) {
        for &(t, at_issue) in issues {
            for e in self.recent.get(&t).into_iter().flatten() {
                if e.clock > at_issue && read.early.len() < EARLY_KEPT {
                    read.early.push(*e);
                }
            }
        }
        self.reads.push(read);
    }

    pub fn done(&mut self, id: u32) {
        if let Some(r) = self.reads.iter_mut().find(|r| r.id == id) {
            r.done = true;
        }
    }

    /// Thread `t` (clock `clock`) retired wgmma `id`.
    pub fn observed(&mut self, t: u32, clock: u32, id: u32) {
        if let Some(r) = self.reads.iter_mut().find(|r| r.id == id) {
            r.observers.push((t, clock));
        }
    }

    /// Thread `t` (row `row`, own clock `clock`) arrives on `bar` at `pc`: an early release of
    /// every read of its warpgroup it is not ordered after.
    pub fn arrival(&mut self, t: u32, row: &[u32], bar: BarrierKey, clock: u32, pc: u32) {
        let recent = self.recent.entry(t).or_default();
        if recent.len() == RECENT_KEPT {
            recent.remove(0);
        }
        recent.push(EarlyRelease { thread: t, bar, clock, pc, phase: None });
        for r in &mut self.reads {
            if (r.threads.0..r.threads.1).contains(&t) && !r.ordered(row) {
                if r.early.len() == EARLY_KEPT {
                    r.early.remove(0);
                }
                r.early.push(EarlyRelease { thread: t, bar, clock, pc, phase: None });
            }
        }
    }

    /// Thread `t`'s arrival on `bar` just recorded by `arrival` counted toward `phase`.
    pub fn arrival_phase(&mut self, t: u32, bar: BarrierKey, phase: u64) {
        if let Some(e) = self.recent.get_mut(&t).and_then(|v| v.last_mut()).filter(|e| e.bar == bar) {
            e.phase.get_or_insert(phase);
        }
        for r in &mut self.reads {
            if let Some(e) = r.early.iter_mut().rev().find(|e| e.thread == t && e.bar == bar) {
                e.phase.get_or_insert(phase);
            }
        }
    }

    /// Writer with clock row `row` writes `[off, off+len)` of `cta`: the reads it is ordered
    /// after are replaced (dropped); the first it is not is returned (and dropped, so one bug
    /// is reported once per wgmma).
    pub fn write(&mut self, row: &[u32], cta: usize, off: u32, len: u32) -> Option<ReadConflict> {
        if self.reads.is_empty() {
            return None;
        }
        let mut conflict = None;
        self.reads.retain(|r| {
            if !r.overlaps(cta, off, len) {
                return true;
            }
            if !r.ordered(row) && conflict.is_none() {
                // The writer saw this release (acquired the arriving thread's clock).
                let culprit =
                    r.early.iter().rev().find(|e| row.get(e.thread as usize).is_some_and(|&c| c >= e.clock)).copied();
                conflict = Some(ReadConflict { read: r.clone(), culprit });
            }
            false
        });
        conflict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(id: u32) -> TensorRead {
        TensorRead {
            id,
            cta: 0,
            ranges: vec![(1024, 2048)],
            pc: 7,
            threads: (128, 256),
            done: false,
            observers: Vec::new(),
            early: Vec::new(),
        }
    }

    fn bar() -> BarrierKey {
        BarrierKey { cta: 0, off: 8, slot: Some(1) }
    }

    #[test]
    fn a_write_after_an_observed_retirement_is_fine_and_replaces_the_read() {
        let mut t = TensorReads::default();
        t.issue(read(1), &[]);
        t.done(1);
        t.observed(130, 5, 1);
        let mut row = vec![0u32; 300];
        row[130] = 5; // the writer acquired thread 130's clock 5 (e.g. through its release)
        assert!(t.write(&row, 0, 2000, 64).is_none());
        assert!(t.write(&[0; 300], 0, 2000, 64).is_none(), "the read was replaced by the first write");
    }

    #[test]
    fn a_write_before_the_retirement_names_the_early_release() {
        let mut t = TensorReads::default();
        t.issue(read(1), &[]);
        // Thread 128 releases at clock 3 before retiring; retires at clock 4.
        t.arrival(128, &[0; 300], bar(), 3, 42);
        t.arrival_phase(128, bar(), 5);
        t.observed(128, 4, 1);
        let mut row = vec![0u32; 300];
        row[128] = 3; // the producer acquired the release, not the retirement
        let c = t.write(&row, 0, 1024, 16).expect("conflict");
        assert_eq!(c.read.id, 1);
        let e = c.culprit.expect("the early release");
        assert_eq!((e.thread, e.pc), (128, 42));
        assert_eq!(e.phase, Some(5), "the phase it released, for the finding's header");
        // Bytes outside the read, another CTA, or no read at all: nothing.
        let mut t = TensorReads::default();
        t.issue(read(2), &[]);
        assert!(t.write(&row, 0, 0, 1024).is_none());
        assert!(t.write(&row, 1, 1024, 16).is_none());
        assert!(t.write(&row, 0, 1024, 16).is_some(), "an unretired read conflicts even without a release");
    }

    #[test]
    fn a_release_between_the_warps_issue_and_the_fourth_warps_is_early() {
        let mut t = TensorReads::default();
        // Thread 128 (warp 4's first lane) issued its part at clock 2, released at clock 3,
        // and the fourth warp issued after that: the read is created with the release on it.
        t.arrival(128, &[0; 300], bar(), 1, 40);
        t.arrival(128, &[0; 300], bar(), 3, 42);
        t.arrival_phase(128, bar(), 5);
        t.issue(read(1), &[(128, 2), (160, 2)]);
        let mut row = vec![0u32; 300];
        row[128] = 3;
        let c = t.write(&row, 0, 1024, 16).expect("conflict");
        let e = c.culprit.expect("the release after the warp's issue");
        assert_eq!((e.thread, e.pc, e.phase), (128, 42, Some(5)));
        // The arrival before the issue (clock 1) is no release of this read.
        let mut t = TensorReads::default();
        t.arrival(128, &[0; 300], bar(), 1, 40);
        t.issue(read(1), &[(128, 2)]);
        let mut row = vec![0u32; 300];
        row[128] = 1;
        assert!(t.write(&row, 0, 1024, 16).expect("conflict").culprit.is_none());
    }

    #[test]
    fn arrivals_after_the_retirement_are_not_early() {
        let mut t = TensorReads::default();
        t.issue(read(1), &[]);
        t.observed(128, 4, 1);
        let mut row = vec![0u32; 300];
        row[128] = 4;
        t.arrival(128, &row, bar(), 4, 42);
        assert!(t.reads[0].early.is_empty());
        // Threads of another warpgroup do not release this read.
        t.arrival(5, &[0; 300], bar(), 1, 43);
        assert!(t.reads[0].early.is_empty());
    }
}
