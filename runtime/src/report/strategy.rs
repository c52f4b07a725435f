//! How a checked run interleaved its warps: the simulator's setting, recorded in its report.

/// How the scheduler interleaves warps, lanes and async agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Warps in order, fixed quanta; async copies land one scheduler round after issue.
    RoundRobin,
    /// Seeded random warp order, quanta, lane groups, `elect.sync` winners and copy completion.
    Random,
    /// Seeded, hostile: tiny quanta, async copies land as late as possible (only when no thread
    /// can run) and newest first, `try_wait` fails spuriously when it may.
    Adversarial,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::RoundRobin => "round-robin",
            Strategy::Random => "random",
            Strategy::Adversarial => "adversarial",
        }
    }
}
