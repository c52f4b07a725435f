//! The step chooser of explored and replayed executions: it follows a prefix of steps, then
//! takes the first enabled actor not in the sleep set, and records every step (what was
//! enabled, who ran, what it touched) for the explorer.

use crate::report::schedule::Actor;
use crate::sim::engine::chooser::{Chooser, StepChooser};
use crate::sim::explore::footprint::Footprint;
use std::sync::{Arc, Mutex};

/// One step as the run recorded it.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub enabled: Vec<Actor>,
    pub chosen: Actor,
    pub footprint: Footprint,
    /// The async ops the step issued (they happen after it).
    pub spawned: Vec<Actor>,
    /// The sleep set on entering the step's state (beyond the prefix; empty within it).
    pub sleep: Vec<(Actor, Footprint)>,
    /// What kind of step it was (`StepChooser::done`).
    pub kind: &'static str,
}

/// Why a run ended before its kernel did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Every enabled actor is asleep: each continuation is equivalent to one explored already.
    SleepBlocked,
    /// `SimConfig::explore_max_depth` steps were taken.
    Depth,
}

/// One execution's instructions and record.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// The steps to take first.
    pub prefix: Vec<Actor>,
    /// The sleep set after the prefix's last step (before filtering by that step).
    pub branch_sleep: Vec<(Actor, Footprint)>,
    /// Use sleep sets beyond the prefix (exploring; a replay runs on the first enabled actor).
    pub use_sleep: bool,
    pub max_depth: u64,
    pub steps: Vec<Recorded>,
    pub cut: Option<Cut>,
    /// The execution's loop trip counts (`Engine::loop_trips`), set when it finished.
    pub trips: Vec<(Option<phaser_codegen::SourceLoc>, u32, u32, u32)>,
    sleep: Vec<(Actor, Footprint)>,
}

impl Run {
    pub fn explore(prefix: Vec<Actor>, branch_sleep: Vec<(Actor, Footprint)>, max_depth: u64) -> Run {
        Run { prefix, branch_sleep, use_sleep: true, max_depth, ..Run::default() }
    }
    pub fn replay(prefix: Vec<Actor>) -> Run {
        Run { prefix, max_depth: u64::MAX, ..Run::default() }
    }
}

pub(crate) type SharedRun = Arc<Mutex<Run>>;

/// The `Chooser` of step mode over a shared `Run`.
pub(crate) struct Guided {
    run: SharedRun,
}

impl Guided {
    pub fn new(run: SharedRun) -> Guided {
        Guided { run }
    }
    fn run(&self) -> std::sync::MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl StepChooser for Guided {
    fn next(&mut self, enabled: &[Actor]) -> Result<Option<Actor>, String> {
        let mut r = self.run();
        let k = r.steps.len();
        if k as u64 >= r.max_depth {
            r.cut = Some(Cut::Depth);
            return Ok(None);
        }
        let (chosen, sleep) = if k < r.prefix.len() {
            let a = r.prefix[k];
            if !enabled.contains(&a) {
                let names: Vec<String> = enabled.iter().map(|a| a.to_string()).collect();
                return Err(format!(
                    "`{a}` cannot run at this step (the actors that can: {}); the schedule was recorded for another \
                     kernel, launch shape, inputs or build",
                    names.join(" ")
                ));
            }
            (a, Vec::new())
        } else {
            match enabled.iter().find(|a| !r.sleep.iter().any(|(s, _)| s == *a)) {
                Some(&a) => (a, r.sleep.clone()),
                None => {
                    r.cut = Some(Cut::SleepBlocked);
                    return Ok(None);
                }
            }
        };
        r.steps.push(Recorded {
            enabled: enabled.to_vec(),
            chosen,
            footprint: Footprint::default(),
            spawned: vec![],
            sleep,
            kind: "",
        });
        Ok(Some(chosen))
    }

    fn done(&mut self, footprint: Footprint, spawned: Vec<Actor>, kind: &'static str) {
        let mut r = self.run();
        let k = r.steps.len() - 1;
        let chosen = r.steps[k].chosen;
        if r.use_sleep && k + 1 >= r.prefix.len() {
            let mut sleep = if k + 1 == r.prefix.len() { r.branch_sleep.clone() } else { std::mem::take(&mut r.sleep) };
            // An actor stays asleep while what runs is independent of its next step.
            sleep.retain(|(a, f)| *a != chosen && !f.wakes(&footprint));
            r.sleep = sleep;
        }
        let step = &mut r.steps[k];
        step.footprint = footprint;
        step.spawned = spawned;
        step.kind = kind;
    }
}

/// The round-based questions have fixed answers in step mode (the steps are the choices):
/// no spurious `try_wait` failure, pieces of a copy land in address order.
impl Chooser for Guided {
    fn warp_order(&mut self, n: usize, out: &mut Vec<usize>) {
        out.clear();
        out.extend(0..n);
    }
    fn quantum(&mut self) -> u32 {
        1
    }
    fn scramble_group(&mut self) -> bool {
        false
    }
    fn pick(&mut self, _n: usize) -> usize {
        0
    }
    fn spurious_try_wait(&mut self) -> bool {
        false
    }
    fn complete_async(&mut self, _age: u64, stalled: bool) -> bool {
        stalled
    }
    fn piece(&mut self, _n: usize) -> usize {
        0
    }
    fn stalled_pick(&mut self, _n: usize) -> usize {
        0
    }
    fn stepper(&mut self) -> Option<&mut dyn StepChooser> {
        Some(self)
    }
}
