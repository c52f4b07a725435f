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

use phaser_codegen::{Kernel, Target};
use phaser_runtime::{Device, RuntimeError};
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
    pub kernels: fn(Target) -> phaser_codegen::Result<Vec<Kernel>>,
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
pub fn all_kernels(target: Target) -> phaser_codegen::Result<Vec<Kernel>> {
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

/// Fresh random `u32`s for an input (tests must not run on zeros).
pub fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    use rand::{Rng, SeedableRng};
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| r.gen()).collect()
}

/// Fresh random `f32`s in [-1, 1).
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect()
}

/// A seed that differs per run (time-based), printed by callers so a failure can be replayed.
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// Poison value written into outputs before a run, so unwritten elements are caught.
pub const POISON_U32: u32 = 0xDEAD_BEEF;
