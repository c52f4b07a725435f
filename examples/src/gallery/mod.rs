//! The gallery: every example kernel of the project, each with a host-side check against a
//! CPU reference. The CLI runs them (`phaser run`), dumps their PTX (`phaser ptx DIR`), and
//! the test suite assembles all of it with ptxas.

pub mod cluster_multicast;
pub mod cp_async_mbarrier;
pub mod dsl_pipeline;
pub mod dsl_seeds;
pub mod phase_table;
pub mod pipeline;
pub mod seeds;
pub mod stream_axpb;
pub mod tma_two_stage;

use phaser::codegen::{Kernel, Target};
use phaser::runtime::{Device, RuntimeError};
use std::time::Duration;

/// How big a run should be: `Quick` keeps simulator runs to seconds, `Full` is for GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Quick,
    Full,
}

/// The result of running one example and checking its output.
#[derive(Debug)]
pub struct Outcome {
    pub name: &'static str,
    pub passed: bool,
    /// What was checked, or what differed.
    pub detail: String,
    pub elapsed: Option<Duration>,
}

impl Outcome {
    pub fn check(name: &'static str, passed: bool, detail: impl Into<String>) -> Outcome {
        Outcome { name, passed, detail: detail.into(), elapsed: None }
    }
}

/// One gallery entry: builds its kernels, runs them on a device and checks the result.
pub struct Example {
    pub name: &'static str,
    pub about: &'static str,
    /// Every kernel the example launches (for PTX dumps and ptxas), for `target`.
    pub kernels: fn(Target) -> phaser::codegen::Result<Vec<Kernel>>,
    pub run: fn(&Device, Size) -> Result<Outcome, RuntimeError>,
    /// Whether the example needs a GPU-only feature the simulator does not model.
    pub gpu_only: bool,
}

/// Every example, in the order the CLI runs them.
pub fn examples() -> Vec<Example> {
    let mut v = Vec::new();
    v.extend(seeds::examples());
    v.extend(tma_two_stage::examples());
    v.extend(stream_axpb::examples());
    v.extend(cluster_multicast::examples());
    v.extend(cp_async_mbarrier::examples());
    v.extend(phase_table::examples());
    v.extend(pipeline::examples());
    v.extend(dsl_seeds::examples());
    v.extend(dsl_pipeline::examples());
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
            let n = seen.entry(k.name.as_str()).or_insert(0);
            *n += 1;
            if *n == 1 {
                k.name.clone()
            } else {
                format!("{}.{}", k.name, n)
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

thread_local! {
    /// FNV-1a over every output an example downloaded (see [`record_output`]).
    static OUTPUT_DIGEST: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Fold a downloaded output into the running example's digest: equal digests on the GPU and
/// in the simulator (same seed) mean bit-identical outputs.
pub fn record_output<T: phaser::runtime::Elem>(data: &[T]) {
    OUTPUT_DIGEST.with(|d| {
        let mut h = d.get().unwrap_or(0xcbf2_9ce4_8422_2325);
        for x in data {
            for b in x.to_bits().to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        d.set(Some(h));
    });
}

/// Run one example and return its outcome with the digest of everything it downloaded.
pub fn run_example(e: &Example, dev: &Device, size: Size) -> (Result<Outcome, RuntimeError>, Option<u64>) {
    OUTPUT_DIGEST.with(|d| d.set(None));
    let r = (e.run)(dev, size);
    (r, OUTPUT_DIGEST.with(|d| d.take()))
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
