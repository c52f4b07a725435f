//! Non-progress detection without a step budget: a warp that runs loops without any effect
//! (no store, arrival, copy, exit: only arithmetic, loads and failed polls) and whose whole
//! state (registers, program counters, lane masks) comes back identical while nothing else in
//! the grid changed memory or barriers, will repeat forever. When every live warp is either
//! repeating or waits, the launch can never finish: a finding, after a few thousand loop
//! iterations instead of `SimConfig::max_steps` thread-instructions.
//!
//! Cost: one counter per loop back-edge; the state is copied and compared only in warps that
//! ran thousands of back-edges without an effect (at powers of two, then for a short window:
//! Brent's cycle detection, limited to loops whose state repeats within `WINDOW` iterations).

use super::warp::Warp;

/// Back-edges without an effect before the state is first saved.
const THRESHOLD: u64 = 4096;
/// Back-edges after a save during which the state is compared with the saved one.
const WINDOW: u64 = 16;

/// Effect counters a repetition is valid under: global-memory writes of the launch and
/// effects in the warp's cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Epoch {
    pub global_writes: u64,
    pub cluster_effects: u64,
}

#[derive(Default)]
pub struct CycleWatch {
    /// Back-edges since the warp's last effect.
    back_edges: u64,
    saved_at: u64,
    saved: Option<(Vec<u64>, [u32; 32], u32, u32, Epoch)>,
    /// The state repeated under this epoch: the warp loops forever unless something changes.
    pub repeating: Option<Epoch>,
}

impl CycleWatch {
    /// The warp did something other warps can see.
    #[inline]
    pub fn effect(&mut self) {
        if self.back_edges != 0 {
            self.back_edges = 0;
            self.saved = None;
            self.repeating = None;
        }
    }
}

/// Warp `w` took a loop back-edge under `now`.
#[inline]
pub fn back_edge(w: &mut Warp, now: Epoch) {
    w.cycle.back_edges += 1;
    let b = w.cycle.back_edges;
    if b < THRESHOLD {
        return;
    }
    if b.is_power_of_two() {
        w.cycle.saved = Some((w.regs.clone(), w.pc, w.runnable, w.blocked, now));
        w.cycle.saved_at = b;
    } else if b - w.cycle.saved_at <= WINDOW {
        if let Some((regs, pc, runnable, blocked, epoch)) = &w.cycle.saved {
            if *epoch == now && *pc == w.pc && *runnable == w.runnable && *blocked == w.blocked && *regs == w.regs {
                w.cycle.repeating = Some(now);
            }
        }
    }
}

/// Whether warp `w` is known to repeat forever under `now`.
pub fn repeating(w: &Warp, now: Epoch) -> bool {
    w.cycle.repeating == Some(now)
}
