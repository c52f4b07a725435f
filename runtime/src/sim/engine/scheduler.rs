//! The seeded scheduler: the `Chooser` of sampled runs (round-robin, random, adversarial), so
//! one seed replays one execution.

use crate::sim::config::{SimConfig, Strategy};
use crate::sim::engine::chooser::Chooser;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
// The algorithm is named (not `StdRng`, which may change between `rand` versions), so a
// printed seed replays the same schedule on every build.
use rand_chacha::ChaCha8Rng;

pub struct Scheduler {
    pub strategy: Strategy,
    rng: ChaCha8Rng,
    /// Spurious `try_wait` failures left (bounded so a retry loop always finishes).
    spurious_left: u32,
}

impl Scheduler {
    pub fn new(cfg: &SimConfig, salt: u64) -> Scheduler {
        let seed = cfg.seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Scheduler { strategy: cfg.strategy, rng: ChaCha8Rng::seed_from_u64(seed), spurious_left: 10_000 }
    }
}

impl Chooser for Scheduler {
    /// The order warps run in this round.
    fn warp_order(&mut self, n: usize, out: &mut Vec<usize>) {
        out.clear();
        out.extend(0..n);
        match self.strategy {
            Strategy::RoundRobin => {}
            Strategy::Random | Strategy::Adversarial => out.shuffle(&mut self.rng),
        }
    }

    /// Warp-instructions a warp runs per turn.
    fn quantum(&mut self) -> u32 {
        match self.strategy {
            Strategy::RoundRobin => 64,
            Strategy::Random => self.rng.random_range(1..=64),
            Strategy::Adversarial => self.rng.random_range(1..=6),
        }
    }

    /// Whether to run a lane group other than the lowest-pc one (Random only, sometimes).
    fn scramble_group(&mut self) -> bool {
        self.strategy == Strategy::Random && self.rng.random_ratio(1, 8)
    }

    fn pick(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// Whether a satisfiable `try_wait` reports false anyway (hardware time limit).
    fn spurious_try_wait(&mut self) -> bool {
        let p = match self.strategy {
            Strategy::RoundRobin => return false,
            Strategy::Random => 16,
            Strategy::Adversarial => 2,
        };
        if self.spurious_left > 0 && self.rng.random_ratio(1, p) {
            self.spurious_left -= 1;
            true
        } else {
            false
        }
    }

    /// Whether an async op issued `age` rounds ago completes now; `stalled`: no thread ran.
    fn complete_async(&mut self, age: u64, stalled: bool) -> bool {
        match self.strategy {
            Strategy::RoundRobin => age >= 1 || stalled,
            Strategy::Random => stalled || self.rng.random_ratio(1, 3),
            Strategy::Adversarial => false,
        }
    }

    /// Which of the `n` pieces of a copy not landed yet lands next.
    fn piece(&mut self, n: usize) -> usize {
        match self.strategy {
            Strategy::RoundRobin => 0,
            Strategy::Random => self.rng.random_range(0..n),
            // Last bytes first: a consumer that reads early sees the front missing.
            Strategy::Adversarial => n - 1,
        }
    }

    /// Which of `n` pending async ops completes when threads are stalled.
    fn stalled_pick(&mut self, n: usize) -> usize {
        match self.strategy {
            Strategy::RoundRobin => 0,
            Strategy::Random => self.rng.random_range(0..n),
            // Newest first: exposes code that assumes copies land in issue order.
            Strategy::Adversarial => n - 1,
        }
    }
}
