//! The watchdog's hold on a flag wait (`T.flag.wait`). The wait itself is a loop the builder
//! writes (an acquire load and a compare), so the simulator and the global order checker see
//! ordinary strong loads; these two instructions only mark the loop for the wait watchdog:
//! `Start` before it zeroes the try counter, `Try` in its body is one failed try. The printer
//! turns `Try` into the watchdog's check (`emit::watchdog`), or nothing without a watchdog;
//! the simulator, which has no clock, leaves the counters at `Start`'s zero (its own
//! infinite-loop report names a flag nobody can signal).

use super::value::{Reg, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum FlagSpin {
    /// Zero the counters before the wait's loop.
    Start { spins: Reg, started: Reg },
    /// One failed try of the wait on `base[index] >= expected`, which read `seen`.
    Try {
        /// The flag buffer's address (a buffer parameter's register names the buffer).
        base: Value,
        /// The flag's element index in the buffer (u32).
        index: Value,
        /// The value waited for (u32).
        expected: Value,
        /// What the failed try read (u32).
        seen: Value,
        /// Failed tries so far (u32).
        spins: Reg,
        /// `%globaltimer` at the wait's first watchdog check (u64).
        started: Reg,
    },
}

impl FlagSpin {
    pub fn for_each_use(&self, f: &mut dyn FnMut(&Value)) {
        match self {
            FlagSpin::Start { .. } => {}
            FlagSpin::Try { base, index, expected, seen, spins, started } => {
                [base, index, expected, seen].into_iter().for_each(&mut *f);
                f(&Value::Reg(*spins));
                f(&Value::Reg(*started));
            }
        }
    }

    pub fn for_each_def(&self, f: &mut dyn FnMut(Reg)) {
        match *self {
            FlagSpin::Start { spins, started } | FlagSpin::Try { spins, started, .. } => {
                f(spins);
                f(started);
            }
        }
    }
}

/// How every report names a flag: its buffer parameter and element, `flags[3]` (the
/// simulator's infinite-loop report and the GPU watchdog's record say the same).
pub fn flag_name(buffer: &str, index: u64) -> String {
    format!("{buffer}[{index}]")
}
