//! CUTLASS's sm_90 pipeline unit tests, ported to the DSL (`tests/cutlass_pipeline/`), in the
//! simulator under its checker: no error finding (a false alarm, since the H200 runs every
//! case) and the results each CTA writes. The default tests run a representative subset (the
//! corner counts 1, S, S + 1 and one CUTLASS draw, capped, for shapes of every kind); the
//! `#[ignore]`d `full_matrix_*` tests run CUTLASS's whole matrix
//! (`cargo test --test sim_cutlass_pipeline -- --ignored`), printing the launch counts.

mod cutlass_pipeline;

use cutlass_pipeline::*;
use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::Device;

fn sim(strategy: Strategy, seed: u64) -> Device {
    Device::sim(
        SimConfig { threads: 1, echo_printf: false, trace: false, ..SimConfig::default() }
            .with_strategy(strategy)
            .with_seed(seed),
    )
}

/// Runs every case under every schedule; returns (launches, warnings). Panics with every
/// failing case (an error finding fails the launch, so it is an `Err` here).
fn run_cases(
    file: &str,
    cases: &[Case],
    schedules: &[(Strategy, u64)],
    run: fn(&Device, &Case) -> Outcome,
) -> (usize, usize) {
    let mut failures = Vec::new();
    let (mut launches, mut warnings) = (0, 0);
    for &(strategy, seed) in schedules {
        let dev = sim(strategy, seed);
        for case in cases {
            launches += 1;
            match run(&dev, case) {
                Ok(report) => warnings += sim_warnings(&report).len(),
                Err(e) => failures.push(format!("{strategy:?} seed {seed}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{file}: {} of {launches} launches failed:\n{}", failures.len(), failures.join("\n"));
    (launches, warnings)
}

const SCHEDULES: &[(Strategy, u64)] = &[(Strategy::RoundRobin, 0), (Strategy::Random, 1), (Strategy::Adversarial, 2)];

fn full(file: &str, configs: &[Config], run: fn(&Device, &Case) -> Outcome) {
    let cases = matrix(configs);
    let (launches, warnings) = run_cases(file, &cases, &[(Strategy::Random, 0x5eed)], run);
    println!("{file}: {launches} launches of CUTLASS's matrix, 0 failed, {warnings} warnings");
}

// ---- pipeline_tma_async.cu ----------------------------------------------------------------

#[test]
fn tma_async_subset() {
    let configs = [cfg(1, 1, 2), cfg(2, 2, 2), cfg(1, 2, 7), cfg(2, 1, 2), cfg(2, 4, 2)];
    run_cases("pipeline_tma_async.cu", &subset(&configs, 24), SCHEDULES, tma_async::run);
}

#[test]
#[ignore = "CUTLASS's whole matrix: minutes"]
fn full_matrix_tma_async() {
    full("pipeline_tma_async.cu", tma_async::CONFIGS, tma_async::run);
}

// ---- pipeline_tma_async_warp_specialized.cu ------------------------------------------------

#[test]
fn tma_async_ws_subset() {
    let configs = [cfg(1, 1, 2), cfg(2, 2, 2), cfg(2, 1, 7), cfg(1, 4, 2)];
    let cases = subset(&configs, 24);
    let (launches, warnings) =
        run_cases("pipeline_tma_async_warp_specialized.cu", &cases, SCHEDULES, tma_async_ws::run);
    // The producer's tail (CUTLASS's producer_acquire) leaves `full` barriers mid-phase with
    // nobody waiting: a warning in every launch, never an error.
    assert!(warnings >= launches, "{warnings} warnings in {launches} launches");
    let report = tma_async_ws::run(&sim(Strategy::RoundRobin, 0), &Case { cfg: cfg(1, 1, 2), iterations: 3 }).unwrap();
    let sim_report = report.sim.as_ref().unwrap();
    assert!(!sim_report.has_errors(), "{}", sim_report.text());
    let warned = sim_warnings(&report);
    assert!(
        !warned.is_empty() && warned.iter().all(|w| w.starts_with("warning[") && w.contains("pipe_full[")),
        "{warned:#?}"
    );
}

#[test]
#[ignore = "CUTLASS's whole matrix: minutes"]
fn full_matrix_tma_async_ws() {
    full("pipeline_tma_async_warp_specialized.cu", tma_async_ws::CONFIGS, tma_async_ws::run);
}

// ---- pipeline_tma_async_warp_specialized_persistent.cu -------------------------------------

#[test]
fn tma_async_ws_persistent_subset() {
    let configs = [cfg(1, 1, 2), cfg(2, 2, 2), cfg(1, 2, 7), cfg(4, 1, 2)];
    run_cases(
        "pipeline_tma_async_warp_specialized_persistent.cu",
        &subset(&configs, 24),
        SCHEDULES,
        tma_async_ws_persistent::run,
    );
}

#[test]
#[ignore = "CUTLASS's whole matrix: minutes"]
fn full_matrix_tma_async_ws_persistent() {
    full(
        "pipeline_tma_async_warp_specialized_persistent.cu",
        tma_async_ws_persistent::CONFIGS,
        tma_async_ws_persistent::run,
    );
}

// ---- pipeline_async.cu ---------------------------------------------------------------------

#[test]
fn pipeline_async_subset() {
    let configs = [cfg(1, 1, 2), cfg(2, 2, 5), cfg(4, 1, 7), cfg(2, 4, 2)];
    run_cases("pipeline_async.cu", &subset(&configs, 24), SCHEDULES, pipeline_async::run);
}

#[test]
#[ignore = "CUTLASS's whole matrix: minutes"]
fn full_matrix_pipeline_async() {
    full("pipeline_async.cu", pipeline_async::CONFIGS, pipeline_async::run);
}

// ---- sequence_barrier.cu -------------------------------------------------------------------

#[test]
fn sequence_barrier_subset() {
    run_cases("sequence_barrier.cu", &subset(sequence_barrier::CONFIGS, 24), SCHEDULES, sequence_barrier::run);
}

#[test]
#[ignore = "CUTLASS's whole matrix: minutes"]
fn full_matrix_sequence_barrier() {
    full("sequence_barrier.cu", sequence_barrier::CONFIGS, sequence_barrier::run);
}

// ---- CUTLASS's code as written: the true positives stay findings --------------------------

/// CUTLASS's `pipeline_tma_async.cu` without a gate before `consumer_release` (`GATED = 0`):
/// only the signalling threads release (thread 0 alone in a 1 x 1 cluster), so a thread
/// that falls behind gates nothing and the producer runs ahead of it: it ends up waiting on
/// a phase no arrival will complete. A true positive: the report names the barrier.
#[test]
fn tma_async_as_written_leaves_its_lagging_threads_waiting() {
    for (m, n) in [(1u32, 1u32), (2, 1), (1, 2)] {
        let dev = sim(Strategy::RoundRobin, 0);
        let mut out = dev.alloc::<u32>((4 * m * n) as usize).unwrap();
        let launch = phaser::LaunchConfig { grid: [m, n, 1], ..phaser::LaunchConfig::linear(1, 128) };
        let e = tma_async::cutlass_pipeline_tma_async::launch(&dev, launch, &mut out, 24, m, n, 2, 0).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("error[deadlock]") && text.contains("barrier `pipe_full[0]`"), "{text}");
        // In a 1 x 2 cluster under this schedule the lagging lane's last observed phase is
        // two behind, and the report says so (in the others its parity waits aliased to later
        // phases first, and the report names the missing arrival only).
        if (m, n) == (1, 2) {
            assert!(text.contains("the wait is 2 phases stale"), "{text}");
        }
    }
}

/// CUTLASS's persistent kernel ends with `barrier.cluster.arrive.relaxed`: in a 2-CTA
/// cluster the last remote `consumer_release` is not ordered before the peer's exit. The
/// finding quotes the rule and the fix.
#[test]
fn tma_async_ws_persistent_as_written_releases_into_an_exited_cta() {
    let dev = sim(Strategy::RoundRobin, 0);
    let case = Case { cfg: cfg(2, 1, 2), iterations: 3 };
    let e = tma_async_ws_persistent::launch(&dev, &case, 1).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("access-to-exited-cta"), "{text}");
    assert!(text.contains("which orders no memory access before it"), "{text}");
    // The port's release arrive is the fix.
    tma_async_ws_persistent::run(&dev, &case).unwrap();
}
