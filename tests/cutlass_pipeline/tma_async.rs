//! CUTLASS `test/unit/pipeline/pipeline_tma_async.cu`: one 128-thread CTA per cluster
//! position, every thread both producer and consumer (`ThreadCategory::ProducerConsumer`) of a
//! `PipelineTmaAsync` built with the cluster shape. Each stage of CTA `(x, y)` is filled by
//! the `M + N - 1` CTAs of its row and column (4 bytes each, completed by hand where the TMA
//! multicast would: CUTLASS's unit-test `producer_commit`) and released to them
//! (`T.pipeline.new_multicast`: CUTLASS's signalling threads and `dst_blockid`).

use super::*;
use phaser::LaunchConfig;

/// The file's `TEST`s in order: `GemmShape<M, N, 1>` clusters and stage counts.
pub const CONFIGS: &[Config] = &[
    cfg(1, 1, 2),
    cfg(1, 1, 5),
    cfg(1, 1, 10),
    cfg(2, 2, 2),
    cfg(2, 2, 5),
    cfg(2, 2, 10),
    cfg(4, 4, 2),
    cfg(4, 4, 10),
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
];

/// What each producer CTA's copy would bring (`sizeof(uint32_t)`).
pub const PER_CTA_BYTES: u32 = 4;
/// Words each CTA writes: consumer waits passed, the read state's `stage * 2 + phase`, the
/// write state's, and the TMA iterations left (0).
const WORDS: u32 = 4;

/// CUTLASS's `producer_acquire`: wait until the stage is empty; the leader then registers the
/// whole stage's bytes (`arrive_and_expect_tx`).
#[phaser::device]
pub fn producer_acquire(pipe: Pipeline, st: PipelineState, is_leader: bool, tx_bytes: u32) {
    T.pipeline.producer_acquire(pipe, st);
    if is_leader {
        T.pipeline.producer_commit(pipe, st, tx_bytes);
    }
}

/// CUTLASS's unit-test `producer_commit`: the leader completes `bytes` on its own `full`
/// barrier and on that of every other CTA of its row and column, as the multicast TMA would.
#[phaser::device]
pub fn producer_commit(pipe: Pipeline, st: PipelineState, is_leader: bool, rows: u32, cols: u32) {
    if is_leader {
        let full = T.pipeline.full(pipe, st);
        T.ptx.mbarrier.complete_tx(full, PER_CTA_BYTES);
        let x = T.cluster_ctaid();
        let y = T.cluster_ctaid_y();
        for n in 0..cols {
            if n != y {
                T.ptx.mbarrier.complete_tx_remote(T.ptx.mapa(full, x + n * rows), PER_CTA_BYTES);
            }
        }
        for m in 0..rows {
            if m != x {
                T.ptx.mbarrier.complete_tx_remote(T.ptx.mapa(full, m + y * rows), PER_CTA_BYTES);
            }
        }
    }
}

/// Where a real mainloop's wgmma would be: a point every thread of the consumer warpgroup
/// reaches before the release. CUTLASS's test has none: only its signalling threads (one per
/// destination CTA: thread 0 alone in a 1 x 1 cluster) arrive, so a thread that signals
/// nothing gates nothing, and the producer may refill a stage twice while it is descheduled:
/// its parity wait then names a phase two behind, and it waits forever (the simulator's
/// stale-parity deadlock, a true positive; `GATED = 0` keeps CUTLASS's code for the test
/// that says so). The hardware's warps rarely drift that far, but nothing forbids it. With
/// wgmma, the warpgroup-wide MMA is this gate. The warp converges first (`bar.warp.sync`):
/// its lanes leave the wait's retry loop one by one, and `bar.sync` is `.aligned`.
#[phaser::device]
pub fn gate_the_release() {
    T.cuda.warp_sync();
    T.cuda.warpgroup_sync();
}

#[phaser::kernel(target = "sm_90a")]
pub fn cutlass_pipeline_tma_async(
    out: &mut [u32],
    iterations: u32,
    #[comptime] M: u32,
    #[comptime] N: u32,
    #[comptime] STAGES: u32,
    #[comptime] GATED: u32,
) {
    T.require_block(128, 1, 1);
    T.cluster_dims(M, N, 1);
    // #Producers = #RowsInCluster + #ColsInCluster - 1
    let tx_bytes = PER_CTA_BYTES * (M + N - 1);
    // CUTLASS's constructor (thread 0 inits, fence_barrier_init), `__syncthreads()` and the
    // cluster arrive/wait before any commit: T.pipeline.init.
    let pipe = T.pipeline.new_multicast(STAGES, 1, M, N, "cta");
    T.pipeline.init(pipe);
    let tid = T.thread_idx();
    let warp = tid / 32;
    let is_leader = tid % 128 == 0;
    let lane_predicate = T.ptx.elect_sync();

    let read = T.pipeline.consumer_state(pipe);
    let write = T.pipeline.producer_state(pipe);
    let release = T.pipeline.consumer_state(pipe);
    let prologue = iterations.min(STAGES);
    // DMA prologue: every thread waits for the empty stage, the leader commits.
    for _i in 0..prologue {
        producer_acquire(pipe, write, is_leader, tx_bytes);
        producer_commit(pipe, write, is_leader, M, N);
        T.pipeline.advance(write);
    }
    let mut tma_left = iterations - prologue;
    // MMA prologue (K_TILE_MMAS = 1 in flight): wait, no release.
    let mut waited = 0;
    T.pipeline.consumer_wait(pipe, read);
    T.pipeline.advance(read);
    waited += 1;
    for _iter in 0..iterations - 1 {
        T.pipeline.consumer_wait(pipe, read);
        if GATED == 1 {
            gate_the_release();
        }
        T.pipeline.consumer_release(pipe, release);
        if lane_predicate && warp == 0 && tma_left > 0 {
            producer_acquire(pipe, write, is_leader, tx_bytes);
            producer_commit(pipe, write, is_leader, M, N);
            T.pipeline.advance(write);
            tma_left -= 1;
        }
        T.pipeline.advance(read);
        T.pipeline.advance(release);
        waited += 1;
    }
    // To make sure remote shared memory is not destroyed while peers arrive on it.
    T.ptx.barrier.cluster.arrive();
    T.ptx.barrier.cluster.wait();
    if tid == 0 {
        let at = T.cluster_cta_rank() * WORDS;
        out[at] = waited;
        out[at + 1] = T.pipeline.stage(read) * 2 + T.pipeline.phase(read);
        out[at + 2] = T.pipeline.stage(write) * 2 + T.pipeline.phase(write);
        out[at + 3] = tma_left;
    }
}

pub fn run(dev: &Device, case: &Case) -> Outcome {
    let Config { m, n, stages } = case.cfg;
    let ctas = m * n;
    let mut out = dev.alloc::<u32>((ctas * WORDS) as usize).map_err(|e| fail(case, e))?;
    let launch = LaunchConfig { grid: [m, n, 1], ..LaunchConfig::linear(1, 128) };
    let report = cutlass_pipeline_tma_async::launch(dev, launch, &mut out, case.iterations, m, n, stages, 1)
        .map_err(|e| fail(case, e))?;
    // Every thread's leader-side state: the read state advanced `iterations` times, and thread
    // 0 (the leader, warp 0's elected lane) did every one of the `iterations` commits.
    let it = case.iterations as u64;
    let want: Vec<u32> =
        (0..ctas).flat_map(|_| [case.iterations, state_after(it, stages, 0), state_after(it, stages, 1), 0]).collect();
    expect_out(dev, case, &out, &want)?;
    Ok(report)
}
