//! An example written as a [`Problem`]: its kernels, a setup that uploads inputs from a seed
//! and describes the launches, and a check of the outputs against a CPU reference. It
//! registers with the `phaser` CLI beside [`crate::Runnable`]s ([`crate::problems!`]).

use super::{run_problem, Outputs, Problem};
use crate::codegen::{CodegenError, Kernel, Target};
use crate::registry::{self, ExampleRun, Size};
use crate::runtime::{Device, RuntimeError};
use std::time::Duration;

/// The verdict of an example's check against its CPU reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the outputs matched the reference.
    pub passed: bool,
    /// Not run: the device cannot run the example's kernels (an sm_100a kernel on an sm_90
    /// GPU). Neither a pass nor a failure; `detail` says what it needs.
    pub skipped: bool,
    /// What was checked, or what differed.
    pub detail: String,
    /// Why the outputs are not bit-for-bit the same on every backend while each passes the
    /// check (the kernel uses `.approx` instructions, whose results the PTX ISA bounds but does
    /// not define): `phaser diff` then compares the checks, not the digests.
    pub approximate: Option<&'static str>,
}

impl Outcome {
    /// A pass or a failure, saying what was checked or what differed.
    pub fn new(passed: bool, detail: impl Into<String>) -> Outcome {
        Outcome { passed, skipped: false, detail: detail.into(), approximate: None }
    }
    /// Not run on this device, because of `why` (e.g. "needs sm_100a").
    pub fn skipped(why: impl Into<String>) -> Outcome {
        Outcome { passed: false, skipped: true, detail: why.into(), approximate: None }
    }
    /// This outcome, for outputs that are not bit-reproducible across backends because of `why`.
    pub fn approximate(self, why: &'static str) -> Outcome {
        Outcome { approximate: Some(why), ..self }
    }
    /// `PASS`, `FAIL` or `SKIP`.
    pub fn verdict(&self) -> &'static str {
        match (self.passed, self.skipped) {
            (true, _) => "PASS",
            (false, true) => "SKIP",
            (false, false) => "FAIL",
        }
    }
}

/// One example: its kernels, the host setup of a run, and the check of its outputs.
pub struct Example {
    /// The name `phaser run NAME` selects it by.
    pub name: &'static str,
    /// One line for `phaser list`.
    pub about: &'static str,
    /// Every kernel the example launches (what `phaser emit` prints), for `target`.
    pub kernels: fn(Target) -> Result<Vec<Kernel>, CodegenError>,
    /// Upload the inputs drawn from `seed` and describe the launches.
    pub setup: fn(&Device, Size, u64) -> Result<Problem, RuntimeError>,
    /// Compare the outputs with the CPU reference.
    pub check: fn(&Problem, &Outputs) -> Outcome,
}

/// One example run on one device.
#[derive(Debug)]
pub struct Run {
    /// The check's verdict.
    pub outcome: Outcome,
    /// [`Outputs::digest`] of everything the run wrote.
    pub digest: u64,
    /// Device time of the last launch (GPU).
    pub elapsed: Option<Duration>,
    /// The simulator's non-fatal findings (fatal ones are `RuntimeError::Simulation`).
    pub findings: Vec<String>,
}

/// Set up `e` from `seed`, run it on `dev` and check it. A GPU whose architecture cannot run
/// the example's kernels (sm_100a code on an sm_90 GPU) skips it: "needs sm_100a".
pub fn run(e: &Example, dev: &Device, size: Size, seed: u64) -> Result<Run, RuntimeError> {
    let mut p = (e.setup)(dev, size, seed)?;
    let out = match run_problem(dev, &mut p) {
        Ok(out) => out,
        Err(e) => match registry::skip_reason(&e) {
            Some(why) => {
                return Ok(Run { outcome: Outcome::skipped(why), digest: 0, elapsed: None, findings: Vec::new() })
            }
            None => return Err(e),
        },
    };
    let findings =
        out.launches.iter().filter_map(|l| l.sim.as_ref()).flat_map(|r| &r.findings).map(|f| f.to_string()).collect();
    let mut outcome = (e.check)(&p, &out);
    // On an exhaustive simulator (`phaser check --exhaustive`), what each launch's exploration covered.
    for x in out.launches.iter().filter_map(|l| l.sim.as_ref()?.exploration.as_ref()) {
        let verdict = if x.complete() { "complete" } else { "NOT complete (bound reached)" };
        let mode = if x.mode().is_empty() { String::new() } else { format!(" ({})", x.mode()) };
        // The instance's bounds besides the launch shape: stages and iterations per role.
        let instance = x.instance_text().trim_end().replace('\n', "; ");
        outcome.detail.push_str(&format!(
            "; `{}` explored{mode}: {instance}; {} executions, {} states, {verdict} (bounds: {})",
            x.kernel,
            x.executions,
            x.states,
            x.bounds_text()
        ));
    }
    Ok(Run { outcome, digest: out.digest(), elapsed: out.elapsed(), findings })
}

impl From<Example> for registry::Example {
    /// The example as the `phaser` CLI runs it.
    fn from(e: Example) -> registry::Example {
        let Example { name, about, kernels, setup, check } = e;
        registry::Example {
            name: name.to_owned(),
            about: about.to_owned(),
            kernels: Box::new(kernels),
            run: Box::new(move |dev, size, seed| {
                let r = run(&Example { name, about, kernels, setup, check }, dev, size, seed)?;
                Ok(ExampleRun {
                    passed: r.outcome.passed,
                    skipped: r.outcome.skipped,
                    detail: r.outcome.detail,
                    digest: r.digest,
                    approximate: r.outcome.approximate.map(str::to_owned),
                    elapsed: r.elapsed,
                    findings: r.findings,
                })
            }),
        }
    }
}

/// Register examples written as problems with the `phaser` CLI: each argument is a
/// `fn() -> Vec<phaser::problem::Example>`; `phaser::problems!(my_kernel::examples);` at the
/// crate's top level.
#[macro_export]
macro_rules! problems {
    ($($f:path),+ $(,)?) => {
        $crate::registry::submit! {
            $crate::registry::Examples({
                fn __phaser_problems() -> ::std::vec::Vec<$crate::registry::Example> {
                    let mut v = ::std::vec::Vec::new();
                    $(v.extend($f().into_iter().map($crate::registry::Example::from));)+
                    v
                }
                __phaser_problems
            })
        }
    };
}
