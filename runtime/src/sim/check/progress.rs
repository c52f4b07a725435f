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

/// A warp's state as saved for comparison.
struct Saved {
    regs: Vec<u64>,
    pc: [u32; 32],
    runnable: u32,
    blocked: u32,
    epoch: Epoch,
}

#[derive(Default)]
pub struct CycleWatch {
    /// Back-edges since the warp's last effect.
    back_edges: u64,
    saved_at: u64,
    saved: Option<Saved>,
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

impl CycleWatch {
    /// The warp (registers, program counters, lane masks) took a loop back-edge under `now`.
    #[inline]
    pub fn back_edge(&mut self, regs: &[u64], pc: &[u32; 32], runnable: u32, blocked: u32, now: Epoch) {
        self.back_edges += 1;
        let b = self.back_edges;
        if b < THRESHOLD {
            return;
        }
        if b.is_power_of_two() {
            self.saved = Some(Saved { regs: regs.to_vec(), pc: *pc, runnable, blocked, epoch: now });
            self.saved_at = b;
        } else if b - self.saved_at <= WINDOW {
            if let Some(s) = &self.saved {
                if s.epoch == now && s.pc == *pc && s.runnable == runnable && s.blocked == blocked && s.regs == regs {
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
