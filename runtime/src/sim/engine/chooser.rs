//! Every nondeterministic choice of the engine goes through a `Chooser`: the seeded scheduler
//! (`scheduler.rs`) answers the round-based questions from its strategy and seed; a step
//! chooser (`sim/explore/guided.rs`) makes the engine run one actor per round and names it,
//! which is what the explorer and a replayed `SimConfig::schedule` use.

use crate::report::schedule::Actor;
use crate::sim::explore::footprint::Footprint;

/// The engine's choices.
pub(crate) trait Chooser: Send {
    /// The order warps run in this round.
    fn warp_order(&mut self, n: usize, out: &mut Vec<usize>);
    /// Warp-instructions a warp runs per turn.
    fn quantum(&mut self) -> u32;
    /// Whether to run a lane group other than the lowest-pc one.
    fn scramble_group(&mut self) -> bool;
    /// One of `n` (which lane group, when scrambling).
    fn pick(&mut self, n: usize) -> usize;
    /// Whether a satisfiable `try_wait` reports false anyway (hardware time limit).
    fn spurious_try_wait(&mut self) -> bool;
    /// Whether an async op issued `age` rounds ago completes now; `stalled`: no thread ran.
    fn complete_async(&mut self, age: u64, stalled: bool) -> bool;
    /// Which of the `n` pieces of a copy not landed yet lands next.
    fn piece(&mut self, n: usize) -> usize;
    /// Which of `n` pending async ops completes when threads are stalled.
    fn stalled_pick(&mut self, n: usize) -> usize;
    /// `Some` when the engine runs one actor per round and asks this chooser which.
    fn stepper(&mut self) -> Option<&mut dyn StepChooser> {
        None
    }
}

/// The choices of the step mode: one actor per round.
pub(crate) trait StepChooser {
    /// The actor to run among `enabled` (sorted); `Ok(None)` ends the execution here (the
    /// explorer has seen everything after this point, or a bound was reached); `Err` names a
    /// step of a replayed schedule that cannot run.
    fn next(&mut self, enabled: &[Actor]) -> Result<Option<Actor>, String>;
    /// What the step just run touched, the async agents it started, and what kind of step it
    /// was (`Mbarrier::Arrive`, `load piece`: the explorer's race counts name it).
    fn done(&mut self, footprint: Footprint, spawned: Vec<Actor>, kind: &'static str);
}
