//! The gallery: every example kernel of the project, each with a host-side check against a
//! CPU reference. The CLI runs them (`phaser run`), dumps their PTX (`phaser ptx DIR`), and
//! the test suite assembles all of it with ptxas.

pub mod attention_dsl;
pub mod cluster_multicast;
pub mod cluster_reduce;
pub mod cp_async_mbarrier;
pub mod dsl_pipeline;
pub mod dsl_seeds;
pub mod gemm_allgather_dsl;
pub mod gemm_dsl;
pub mod gemm_fp8_dsl;
pub mod gemm_sm100;
pub mod gemm_sm100_dsl;
pub mod phase_table;
pub mod pipeline;
pub mod pipeline_async_dsl;
pub mod pipeline_multicast_dsl;
pub mod row_reduce;
pub mod seeds;
pub mod stream_axpb;
pub mod stream_ldg;
pub mod stream_plan;
pub mod tma_two_stage;
pub mod transpose_swizzled;

// The harness is the facade's public `phaser::problem`: an example's host side uses only
// public API, so it can be copied into a user crate (`examples/user-crate` compiles two).
pub use phaser::problem::{
    explore_problem, random_f32, random_u32, run, run_problem, simulate_problem, BufferId, Example, Outcome, Outputs,
    Problem, Run, POISON_U32,
};
pub use phaser::registry::Size;

use phaser::codegen::{Kernel, Target};

/// The gallery as the `phaser` CLI runs it (`phaser::registry`): the gallery binary is
/// `phaser::cli::main()` with these registered (`src/main.rs`).
pub fn registered() -> Vec<phaser::registry::Example> {
    examples().into_iter().map(Into::into).collect()
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
    v.extend(pipeline_async_dsl::examples());
    v.extend(pipeline_multicast_dsl::examples());
    v.extend(transpose_swizzled::examples());
    v.extend(row_reduce::examples());
    v.extend(cluster_reduce::examples());
    v.extend(gemm_dsl::examples());
    v.extend(gemm_allgather_dsl::examples());
    v.extend(gemm_fp8_dsl::examples());
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
