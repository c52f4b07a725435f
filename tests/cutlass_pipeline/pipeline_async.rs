//! CUTLASS `test/unit/pipeline/pipeline_async.cu`: a `PipelineAsync` with two producer
//! arrivals per stage (`producer_arv_count = 2`: the elected lanes of warps 0 and 1) and one
//! consumer (warp 2's elected lane), in every CTA of the cluster independently
//! (`T.pipeline.new_async`). CUTLASS launches each case twice.

use super::*;
use phaser::LaunchConfig;

/// The file's `TEST`s in order.
pub const CONFIGS: &[Config] = &[
    cfg(1, 1, 2),
    cfg(1, 1, 5),
    cfg(1, 1, 10),
    cfg(2, 2, 2),
    cfg(2, 2, 5),
    cfg(2, 2, 10),
    cfg(1, 2, 2),
    cfg(1, 2, 7),
    cfg(1, 2, 10),
    cfg(2, 1, 2),
    cfg(2, 1, 7),
    cfg(4, 1, 2),
    cfg(4, 1, 7),
    cfg(1, 4, 2),
    cfg(1, 4, 7),
    cfg(2, 4, 2),
    cfg(2, 4, 7),
    cfg(4, 2, 2),
    cfg(4, 2, 7),
    cfg(4, 4, 2),
    cfg(4, 4, 3),
    cfg(4, 4, 4),
    cfg(4, 4, 5),
    cfg(4, 4, 6),
    cfg(4, 4, 7),
    cfg(4, 4, 8),
    cfg(4, 4, 9),
    cfg(4, 4, 10),
    cfg(4, 4, 11),
];

/// Words each CTA writes: the consumer's waits and read state, each producer's write state.
const WORDS: u32 = 4;

#[phaser::kernel(target = "sm_90a")]
pub fn cutlass_pipeline_async(
    out: &mut [u32],
    iterations: u32,
    #[comptime] M: u32,
    #[comptime] N: u32,
    #[comptime] STAGES: u32,
) {
    T.require_block(96, 1, 1);
    T.cluster_dims(M, N, 1);
    // This example showcases 2 producers, 1 consumer.
    let pipe = T.pipeline.new_async(STAGES, 2, 1);
    T.pipeline.init(pipe);
    // Ensure all CTAs in the cluster have completed init before issuing commits.
    T.ptx.barrier.cluster.arrive_relaxed();
    T.ptx.barrier.cluster.wait();
    T.cuda.cta_sync();
    let warp = T.warp_idx();
    let at = T.cluster_cta_rank() * WORDS;
    if T.ptx.elect_sync() {
        if warp == 0 || warp == 1 {
            let write = T.pipeline.producer_state(pipe);
            let prologue = iterations.min(STAGES);
            for _i in 0..prologue {
                T.pipeline.producer_arrive(pipe, write);
                T.pipeline.advance(write);
            }
            for _i in 0..iterations - prologue {
                T.pipeline.producer_acquire(pipe, write);
                T.pipeline.producer_arrive(pipe, write);
                T.pipeline.advance(write);
            }
            out[at + 2 + warp] = T.pipeline.stage(write) * 2 + T.pipeline.phase(write);
        } else {
            let read = T.pipeline.consumer_state(pipe);
            let mut waited = 0;
            for _iter in 0..iterations {
                // PipelineAsync's consumer_wait: a test_wait first, the blocking wait if needed.
                let done = T.ptx.mbarrier.test_wait(T.pipeline.full(pipe, read), T.pipeline.phase(read));
                T.pipeline.consumer_wait_with_token(pipe, read, done);
                T.pipeline.consumer_release(pipe, read);
                T.pipeline.advance(read);
                waited += 1;
            }
            out[at] = waited;
            out[at + 1] = T.pipeline.stage(read) * 2 + T.pipeline.phase(read);
        }
    }
    // To make sure remote shared memory is not destroyed.
    T.ptx.barrier.cluster.arrive();
    T.ptx.barrier.cluster.wait();
}

pub fn run(dev: &Device, case: &Case) -> Outcome {
    let Config { m, n, stages } = case.cfg;
    let ctas = m * n;
    let launch = LaunchConfig { grid: [m, n, 1], ..LaunchConfig::linear(1, 96) };
    let it = case.iterations as u64;
    let want: Vec<u32> = (0..ctas)
        .flat_map(|_| {
            let w = state_after(it, stages, 1);
            [case.iterations, state_after(it, stages, 0), w, w]
        })
        .collect();
    let mut last = None;
    // CUTLASS's `run` launches the kernel twice.
    for _ in 0..2 {
        let mut out = dev.alloc::<u32>((ctas * WORDS) as usize).map_err(|e| fail(case, e))?;
        let report = cutlass_pipeline_async::launch(dev, launch, &mut out, case.iterations, m, n, stages)
            .map_err(|e| fail(case, e))?;
        expect_out(dev, case, &out, &want)?;
        last = Some(report);
    }
    Ok(last.expect("two launches"))
}
