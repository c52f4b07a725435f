//! Non-progress detection without a step budget: a warp that runs loops without any effect
//! (no shared store, arrival, copy, exit: only arithmetic, loads, failed polls and global
//! writes) and whose whole state (registers, program counters, lane masks) comes back
//! identical while nothing else in the grid changed memory or barriers, will repeat forever.
//! When every live warp is either repeating or waits, the launch can never finish: a finding,
//! after a few thousand loop iterations instead of `SimConfig::max_steps` thread-instructions.
//!
//! Only the registers that can reach an observable act (a branch condition, an operand of an
//! instruction with effects: [`observable_registers`]) are compared: a counter nothing reads
//! (`loop { x += 1 }`, a spin loop counting its polls) does not hide a repetition.
//!
//! Global writes of a watched warp (a loop of atomics, a store in a spin loop) do not end the
//! repetitions of the grid: they go into the warp's [`Footprint`] with the global locations it
//! reads observably. The rule (`grid.rs::stuck`): the launch can never finish when every live
//! warp repeats or waits, nothing is in flight, every global write since the repetitions were
//! seen was made by a warp still watched (so it is in that warp's footprint), and no footprint
//! writes a location any footprint reads. Then what each repeating warp reads stays as it was
//! when its state repeated, so it repeats again, and its writes reach nothing any warp reads.
//! A legal spin on a flag written by another warp is not flagged: the writer is not repeating
//! (it is still computing) or its footprint writes what the spinner reads.
//!
//! Cost: one counter per loop back-edge; the state is copied and compared only in warps that
//! ran thousands of back-edges without an effect (at powers of two, then for a short window:
//! Brent's cycle detection, limited to loops whose state repeats within `WINDOW` iterations).
//! A footprint holds at most `FOOTPRINT` locations: a warp writing more ends its watch.

use phaser_codegen::ir::{Inst, Stmt, StmtKind, Value};
use std::collections::HashSet;

/// The registers whose values can reach what a warp does observably: a branch condition,
/// or an operand of an instruction that is not pure (memory, synchronization, async work,
/// side effects), and whatever a pure instruction defining one of those reads (a fixpoint over
/// the kernel). A register outside the set never changes the warp's future, so two states
/// equal on the set behave the same.
pub fn observable_registers(body: &[Stmt]) -> Vec<u32> {
    fn mark(v: &Value, set: &mut Vec<bool>) -> bool {
        let Value::Reg(r) = v else { return false };
        let i = r.id as usize;
        if set.len() <= i {
            set.resize(i + 1, false);
        }
        !std::mem::replace(&mut set[i], true)
    }
    fn seed<'a>(block: &'a [Stmt], set: &mut Vec<bool>, pure: &mut Vec<&'a Inst>) {
        for s in block {
            match &s.kind {
                StmtKind::Inst(i) if i.effects().is_pure() => pure.push(i),
                StmtKind::Inst(i) => i.for_each_use(|v| {
                    mark(v, set);
                }),
                StmtKind::If { cond, then_body, else_body } => {
                    mark(cond, set);
                    seed(then_body, set, pure);
                    seed(else_body, set, pure);
                }
                StmtKind::Loop { body, latch } => {
                    seed(body, set, pure);
                    seed(latch, set, pure);
                }
                StmtKind::Break | StmtKind::Continue | StmtKind::Return => {}
            }
        }
    }
    let (mut set, mut pure) = (Vec::new(), Vec::new());
    seed(body, &mut set, &mut pure);
    loop {
        let mut changed = false;
        for i in &pure {
            let mut feeds = false;
            i.for_each_def(|r| feeds |= set.get(r.id as usize).copied().unwrap_or(false));
            if feeds {
                i.for_each_use(|v| changed |= mark(v, &mut set));
            }
        }
        if !changed {
            break;
        }
    }
    (0..set.len() as u32).filter(|&r| set[r as usize]).collect()
}

/// Back-edges without an effect before the state is first saved.
const THRESHOLD: u64 = 4096;
/// Back-edges after a save during which the state is compared with the saved one.
const WINDOW: u64 = 16;
/// Global locations a watched warp may touch before its watch ends (32 lanes, a few each).
const FOOTPRINT: usize = 256;

/// Effect counters a repetition is valid under: global-memory writes of the launch (but those
/// of watched warps, which are in their footprints) and effects in the warp's cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Epoch {
    pub global_writes: u64,
    pub cluster_effects: u64,
}

/// A warp's state as saved for comparison (the observable registers only).
struct Saved {
    regs: Vec<u64>,
    pc: [u32; 32],
    runnable: u32,
    blocked: u32,
    epoch: Epoch,
}

/// The global locations (address, bytes) a watched warp wrote, and read where the value read
/// reaches an observable register, since its watch began (its first save).
#[derive(Default, Debug)]
pub struct Footprint {
    pub reads: HashSet<(u64, u32)>,
    pub writes: HashSet<(u64, u32)>,
    /// Global writes made while watched (counted in `GlobalView::watched_writes`).
    pub write_count: u64,
}

impl Footprint {
    fn len(&self) -> usize {
        self.reads.len() + self.writes.len()
    }
}

/// Whether a location any of `writers` wrote overlaps one any of `readers` read.
pub fn footprints_overlap<'a>(
    writers: impl Iterator<Item = &'a Footprint> + Clone,
    readers: impl Iterator<Item = &'a Footprint> + Clone,
) -> bool {
    let overlap = |(a, n): (u64, u32), (b, m): (u64, u32)| a < b + m as u64 && b < a + n as u64;
    writers.flat_map(|f| f.writes.iter()).any(|&w| readers.clone().flat_map(|f| f.reads.iter()).any(|&r| overlap(w, r)))
}

/// What a global access did to the warp's watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalAccess {
    /// The warp is not watched: a write counts for every warp (it ends repetitions).
    Unwatched,
    /// In the footprint: a write counts in `GlobalView::watched_writes`.
    Recorded,
    /// The footprint was full: the watch ended, and its `n` recorded writes (and this one)
    /// count for every warp from now on.
    Ended(u64),
}

#[derive(Default)]
pub struct CycleWatch {
    /// Back-edges since the warp's last effect.
    back_edges: u64,
    saved_at: u64,
    saved: Option<Saved>,
    /// The state repeated under this epoch: the warp loops forever unless something changes.
    pub repeating: Option<Epoch>,
    /// What the warp touched in global memory while watched.
    pub footprint: Footprint,
}

impl CycleWatch {
    /// The warp did something other warps can see (or exited lanes): the watch starts over.
    /// Returns how many of its global writes were watched: they now count for every warp.
    #[inline]
    #[must_use = "the watched writes become everyone's: subtract them from `GlobalView::watched_writes`"]
    pub fn effect(&mut self) -> u64 {
        if self.back_edges == 0 {
            return 0;
        }
        self.back_edges = 0;
        self.saved = None;
        self.repeating = None;
        std::mem::take(&mut self.footprint).write_count
    }

    /// Whether the warp's state has been saved since its last effect: its global accesses go
    /// into its footprint.
    #[inline]
    pub fn watching(&self) -> bool {
        self.saved.is_some()
    }

    /// The warp wrote (`write`) or observably read `bytes` at global `addr`.
    pub fn global_access(&mut self, addr: u64, bytes: u32, write: bool) -> GlobalAccess {
        if !self.watching() {
            return GlobalAccess::Unwatched;
        }
        let (f, key) = (&mut self.footprint, (addr, bytes));
        let known = if write { f.writes.contains(&key) } else { f.reads.contains(&key) };
        if !known && f.len() >= FOOTPRINT {
            return GlobalAccess::Ended(self.effect());
        }
        if write {
            f.writes.insert(key);
            f.write_count += 1;
        } else {
            f.reads.insert(key);
        }
        GlobalAccess::Recorded
    }
}

impl CycleWatch {
    /// The warp (its `observable` registers, program counters, lane masks) took a loop
    /// back-edge under `now`.
    #[inline]
    pub fn back_edge(
        &mut self,
        regs: &[u64],
        observable: &[u32],
        pc: &[u32; 32],
        runnable: u32,
        blocked: u32,
        now: Epoch,
    ) {
        let lanes_of = |r: u32| &regs[r as usize * 32..r as usize * 32 + 32];
        self.back_edges += 1;
        let b = self.back_edges;
        if b < THRESHOLD {
            return;
        }
        if b.is_power_of_two() {
            let regs = observable.iter().flat_map(|&r| lanes_of(r).iter().copied()).collect();
            self.saved = Some(Saved { regs, pc: *pc, runnable, blocked, epoch: now });
            self.saved_at = b;
        } else if b - self.saved_at <= WINDOW {
            if let Some(s) = &self.saved {
                let same_regs = s.regs.chunks(32).zip(observable).all(|(saved, &r)| saved == lanes_of(r));
                if s.epoch == now && s.pc == *pc && s.runnable == runnable && s.blocked == blocked && same_regs {
                    self.repeating = Some(now);
                }
            }
        }
    }

    /// Whether the warp is known to repeat forever under `now`.
    pub fn repeats_under(&self, now: Epoch) -> bool {
        self.repeating == Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched() -> CycleWatch {
        let mut w = CycleWatch::default();
        for _ in 0..THRESHOLD {
            w.back_edge(&[0; 32], &[0], &[0; 32], 1, 0, Epoch::default());
        }
        assert!(w.watching());
        w
    }

    #[test]
    fn a_watched_warp_records_its_global_accesses_and_publishes_its_writes_when_it_stops() {
        let mut w = CycleWatch::default();
        assert_eq!(w.global_access(0x100, 4, true), GlobalAccess::Unwatched, "not watched yet");
        let mut w2 = watched();
        assert_eq!(w2.global_access(0x100, 4, true), GlobalAccess::Recorded);
        assert_eq!(w2.global_access(0x100, 4, true), GlobalAccess::Recorded);
        assert_eq!(w2.global_access(0x200, 4, false), GlobalAccess::Recorded);
        assert_eq!(w2.footprint.write_count, 2);
        assert_eq!(w2.effect(), 2, "both writes count for everyone now");
        assert!(!w2.watching() && w2.footprint.writes.is_empty());
        assert_eq!(w.effect(), 0);
    }

    #[test]
    fn a_full_footprint_ends_the_watch() {
        let mut w = watched();
        for i in 0..FOOTPRINT as u64 {
            assert_eq!(w.global_access(i * 4, 4, true), GlobalAccess::Recorded);
        }
        assert_eq!(w.global_access(0, 4, true), GlobalAccess::Recorded, "a known location takes no room");
        assert_eq!(w.global_access(1 << 20, 4, true), GlobalAccess::Ended(FOOTPRINT as u64 + 1));
        assert!(!w.watching());
    }

    #[test]
    fn footprints_overlap_when_a_write_reaches_a_read_byte() {
        let (mut a, mut b) = (watched(), watched());
        let _ = a.global_access(0x100, 4, true);
        let _ = b.global_access(0x104, 4, false);
        let both = |a: &CycleWatch, b: &CycleWatch| {
            let fs = [&a.footprint, &b.footprint];
            footprints_overlap(fs.into_iter(), fs.into_iter())
        };
        assert!(!both(&a, &b), "adjacent words");
        let _ = b.global_access(0x103, 1, false);
        assert!(both(&a, &b), "the last byte of the written word");
        // A warp's own read of what it writes counts too.
        let mut c = watched();
        let _ = c.global_access(0x300, 8, true);
        let _ = c.global_access(0x304, 4, false);
        assert!(footprints_overlap([&c.footprint].into_iter(), [&c.footprint].into_iter()));
    }
}
