//! The gallery: every example kernel of the project, each with a host-side check against a
//! CPU reference. The CLI runs them (`phaser run`), dumps their PTX (`phaser ptx DIR`), and
//! the test suite assembles all of it with ptxas.

pub mod attention_dsl;
pub mod cluster_multicast;
pub mod cluster_reduce;
pub mod cp_async_mbarrier;
pub mod dsl_pipeline;
pub mod dsl_seeds;
pub mod gemm_dsl;
pub mod gemm_sm100;
pub mod gemm_sm100_dsl;
pub mod phase_table;
pub mod pipeline;
pub mod problem;
pub mod row_reduce;
pub mod seeds;
pub mod stream_axpb;
pub mod stream_ldg;
pub mod stream_plan;
pub mod tma_two_stage;
pub mod transpose_swizzled;

pub use problem::{explore_problem, run_problem, simulate_problem, BufferId, Outputs, Problem};

use phaser::codegen::{Kernel, Target};
use phaser::runtime::{Device, RuntimeError};
use std::time::Duration;

/// How big a run should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Size {
    /// The smallest problem that still exercises every path of the protocol: one CTA (or
    /// one cluster) walking enough tiles that every ring wraps. The mutation suite simulates
    /// every mutant at this size under three schedules.
    Small,
    /// Small, ragged shapes over several CTAs: seconds in the simulator.
    Quick,
    /// GPU-sized problems.
    Full,
}

/// The verdict of an example's check against its CPU reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
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

/// One gallery entry: its kernels, the host setup of a run, and the check of its outputs.
pub struct Example {
    pub name: &'static str,
    pub about: &'static str,
    /// Every kernel the example launches (for PTX dumps and ptxas), for `target`.
    pub kernels: fn(Target) -> phaser::codegen::Result<Vec<Kernel>>,
    /// Upload the inputs drawn from `seed` and describe the launches (see [`Problem`]).
    pub setup: fn(&Device, Size, u64) -> Result<Problem, RuntimeError>,
    /// Compare the outputs with the CPU reference.
    pub check: fn(&Problem, &Outputs) -> Outcome,
}

/// One example run on one device.
#[derive(Debug)]
pub struct Run {
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
        Err(RuntimeError::TargetMismatch { target, major, minor, .. }) => {
            let why = format!("needs {target} (this GPU is compute capability {major}.{minor})");
            return Ok(Run { outcome: Outcome::skipped(why), digest: 0, elapsed: None, findings: Vec::new() });
        }
        out => out?,
    };
    let findings =
        out.launches.iter().filter_map(|l| l.sim.as_ref()).flat_map(|r| &r.findings).map(|f| f.to_string()).collect();
    let mut outcome = (e.check)(&p, &out);
    // On an exhaustive simulator (`phaser check --exhaustive`), what each launch's exploration covered.
    for x in out.launches.iter().filter_map(|l| l.sim.as_ref()?.exploration.as_ref()) {
        let verdict = if x.complete() { "complete" } else { "NOT complete (bound reached)" };
        outcome.detail.push_str(&format!(
            "; `{}` explored: {} executions, {} states, {verdict}",
            x.kernel, x.executions, x.states
        ));
    }
    Ok(Run { outcome, digest: out.digest(), elapsed: out.elapsed(), findings })
}

/// The gallery as the `phaser` CLI runs it (`phaser::registry`): the gallery binary is
/// `phaser::cli::main()` with these registered (`src/main.rs`).
pub fn registered() -> Vec<phaser::registry::Example> {
    examples()
        .into_iter()
        .map(|e| {
            let (setup, check, kernels) = (e.setup, e.check, e.kernels);
            phaser::registry::Example {
                name: e.name.to_string(),
                about: e.about.to_string(),
                kernels: Box::new(kernels),
                run: Box::new(move |dev, size, seed| {
                    let size = match size {
                        phaser::registry::Size::Small => Size::Small,
                        phaser::registry::Size::Quick => Size::Quick,
                        phaser::registry::Size::Full => Size::Full,
                    };
                    let e = Example { name: "", about: "", kernels, setup, check };
                    let r = run(&e, dev, size, seed)?;
                    Ok(phaser::registry::ExampleRun {
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
        })
        .collect()
}

/// The example named `name`.
pub fn find(name: &str) -> Option<Example> {
    examples().into_iter().find(|e| e.name == name)
}

/// Every example, in the order the CLI runs them.
pub fn examples() -> Vec<Example> {
    let mut v = Vec::new();
    v.extend(seeds::examples());
    v.extend(tma_two_stage::examples());
    v.extend(stream_axpb::examples());
    v.extend(stream_ldg::examples());
    v.extend(cluster_multicast::examples());
    v.extend(cp_async_mbarrier::examples());
    v.extend(phase_table::examples());
    v.extend(pipeline::examples());
    v.extend(dsl_seeds::examples());
    v.extend(dsl_pipeline::examples());
    v.extend(transpose_swizzled::examples());
    v.extend(row_reduce::examples());
    v.extend(cluster_reduce::examples());
    v.extend(gemm_dsl::examples());
    v.extend(attention_dsl::examples());
    v.extend(gemm_sm100::examples());
    v.extend(gemm_sm100_dsl::examples());
    v
}

/// The kernels of every example for `target`, each distinct kernel once (specializations of
/// one kernel share its name but differ in IR, so all of them are kept).
pub fn all_kernels(target: Target) -> phaser::codegen::Result<Vec<Kernel>> {
    let mut out: Vec<Kernel> = Vec::new();
    for e in examples() {
        for k in (e.kernels)(target)? {
            if !out.contains(&k) {
                out.push(k);
            }
        }
    }
    Ok(out)
}

/// A file stem per kernel: its name, plus `.2`, `.3`, ... for further specializations.
pub fn file_stems(kernels: &[Kernel]) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    kernels
        .iter()
        .map(|k| {
            let n = seen.entry(k.name()).or_insert(0);
            *n += 1;
            if *n == 1 {
                k.name().to_owned()
            } else {
                format!("{}.{}", k.name(), n)
            }
        })
        .collect()
}

/// Fresh random `u32`s for an input (tests must not run on zeros). ChaCha8, named so a
/// printed seed reproduces the inputs with any `rand` version.
pub fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    use rand::{Rng, SeedableRng};
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random()).collect()
}

/// Fresh random `f32`s in [-1, 1) (ChaCha8, like [`random_u32`]).
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect()
}

/// Seed forced by `phaser run --seed N` / [`set_seed`] (differential runs need equal inputs).
static SEED_OVERRIDE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Make every later [`fresh_seed`] return `seed`, so two backends see the same inputs.
pub fn set_seed(seed: u64) {
    let _ = SEED_OVERRIDE.set(seed);
}

/// A seed that differs per run (time-based) unless [`set_seed`] fixed one; callers print it so
/// a failure can be replayed.
pub fn fresh_seed() -> u64 {
    if let Some(&s) = SEED_OVERRIDE.get() {
        return s;
    }
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// Poison value written into outputs before a run, so unwritten elements are caught.
pub const POISON_U32: u32 = 0xDEAD_BEEF;
