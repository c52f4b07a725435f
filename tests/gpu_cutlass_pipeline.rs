//! CUTLASS's sm_90 pipeline unit tests, ported to the DSL (`tests/cutlass_pipeline/`), on the
//! GPU: CUTLASS's whole matrix (cluster shapes x stages x its five draws plus 1, S, S + 1),
//! each launch checked against the results the host predicts (`tests/sim_cutlass_pipeline.rs`
//! runs the same kernels in the simulator). Shapes of up to 8 CTAs are portable clusters;
//! the 4 x 4 ones (16 CTAs) need the non-portable opt-in, which the launch sets, and run in
//! their own tests. Run by `.ci/gpu-bundle`.

mod cutlass_pipeline;

use cutlass_pipeline::*;

fn gpu() -> Device {
    Device::cuda(0).expect("needs a CUDA GPU")
}

/// Runs CUTLASS's matrix of `configs` whose clusters have at most 8 CTAs (`small`) or more.
fn run_matrix(file: &str, configs: &[Config], small: bool, run: impl Fn(&Device, &Case) -> Outcome) {
    let dev = gpu();
    let picked: Vec<Config> = configs.iter().copied().filter(|c| (c.m * c.n <= 8) == small).collect();
    let cases = matrix(&picked);
    let failures: Vec<String> = cases.iter().filter_map(|c| run(&dev, c).err()).collect();
    println!("{file}: {} launches, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{file}:\n{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_gpu() {
    run_matrix("pipeline_tma_async.cu", tma_async::CONFIGS, true, tma_async::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_16_cta_clusters_gpu() {
    run_matrix("pipeline_tma_async.cu (4 x 4)", tma_async::CONFIGS, false, tma_async::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_ws_gpu() {
    run_matrix("pipeline_tma_async_warp_specialized.cu", tma_async_ws::CONFIGS, true, tma_async_ws::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_ws_16_cta_clusters_gpu() {
    run_matrix("pipeline_tma_async_warp_specialized.cu (4 x 4)", tma_async_ws::CONFIGS, false, tma_async_ws::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_ws_persistent_gpu() {
    let file = "pipeline_tma_async_warp_specialized_persistent.cu";
    run_matrix(file, tma_async_ws_persistent::CONFIGS, true, tma_async_ws_persistent::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_ws_persistent_16_cta_clusters_gpu() {
    let file = "pipeline_tma_async_warp_specialized_persistent.cu (4 x 4)";
    run_matrix(file, tma_async_ws_persistent::CONFIGS, false, tma_async_ws_persistent::run);
}

/// CUTLASS's own ending (`barrier.cluster.arrive.relaxed`) runs on the hardware too: the
/// simulator's finding about it is a rule of the memory model, not a hang.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tma_async_ws_persistent_as_written_gpu() {
    let configs: Vec<Config> = tma_async_ws_persistent::CONFIGS.iter().copied().filter(|c| c.m * c.n > 1).collect();
    run_matrix("persistent, relaxed exit", &configs, true, |dev, case| {
        tma_async_ws_persistent::launch(dev, case, 1).map(|(r, _)| r).map_err(|e| fail(case, e))
    });
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn pipeline_async_gpu() {
    run_matrix("pipeline_async.cu", pipeline_async::CONFIGS, true, pipeline_async::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn pipeline_async_16_cta_clusters_gpu() {
    run_matrix("pipeline_async.cu (4 x 4)", pipeline_async::CONFIGS, false, pipeline_async::run);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn sequence_barrier_gpu() {
    run_matrix("sequence_barrier.cu", sequence_barrier::CONFIGS, true, sequence_barrier::run);
}
