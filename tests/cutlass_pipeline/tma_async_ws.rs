//! CUTLASS `test/unit/pipeline/pipeline_tma_async_warp_specialized.cu`: 384 threads per CTA;
//! warpgroup 0 produces (its warp 0's elected lane, the leader), warpgroup 1 consumes,
//! warpgroup 2 only gives its registers back (`setmaxnreg`). The producer's tail loop is
//! CUTLASS's `producer_acquire`, whose `arrive.expect_tx` nobody completes or waits for: the
//! `full` barriers are left mid-phase, which the simulator reports as warnings only.

use super::tma_async::{gate_the_release, producer_acquire, producer_commit, PER_CTA_BYTES};
use super::*;
use phaser::LaunchConfig;

/// The file's `TEST`s in order.
pub const CONFIGS: &[Config] = &[
    cfg(1, 1, 2),
    cfg(1, 1, 5),
    cfg(1, 1, 10),
    cfg(2, 2, 2),
    cfg(2, 2, 5),
    cfg(2, 2, 7),
    cfg(4, 4, 2),
    cfg(4, 4, 7),
    cfg(2, 1, 2),
    cfg(2, 1, 7),
    cfg(1, 2, 2),
    cfg(1, 2, 7),
    cfg(4, 1, 2),
    cfg(4, 1, 7),
    cfg(1, 4, 2),
    cfg(1, 4, 7),
    cfg(2, 4, 2),
    cfg(2, 4, 7),
    cfg(4, 2, 2),
    cfg(4, 2, 7),
];

/// Words each CTA writes: the consumer's waits, its read and release states, the producer's
/// write and tail states.
const WORDS: u32 = 5;
/// The dummy accumulators CUTLASS keeps live in the consumer (`int arr[168]`).
pub const DUMMY: u32 = 168;

#[phaser::kernel(target = "sm_90a")]
pub fn cutlass_pipeline_tma_async_ws(
    out: &mut [u32],
    data: &mut [i32],
    iterations: u32,
    #[comptime] M: u32,
    #[comptime] N: u32,
    #[comptime] STAGES: u32,
) {
    // `__launch_bounds__(384, 1)`: 65536 / 384 registers, rounded down to a multiple of 8,
    // at entry; the warpgroups' setmaxnreg split (232 + 232 + 40) uses the whole pool.
    T.require_block(384, 1, 1);
    T.max_registers(168);
    T.cluster_dims(M, N, 1);
    let tx_bytes = PER_CTA_BYTES * (M + N - 1);
    let pipe = T.pipeline.new_multicast(STAGES, 1, M, N, "cta");
    T.pipeline.init(pipe);
    let tid = T.thread_idx();
    let warp_group = tid / 128;
    let warp_in_group = (tid / 32) % 4;
    let is_leader = tid % 128 == 0;
    let at = T.cluster_cta_rank() * WORDS;
    if warp_group == 0 {
        T.ptx.setmaxnreg.inc(232);
        let lane_predicate = T.ptx.elect_sync();
        if warp_in_group == 0 && lane_predicate {
            let prologue = iterations.min(STAGES);
            let write = T.pipeline.producer_state(pipe);
            for _i in 0..prologue {
                producer_acquire(pipe, write, is_leader, tx_bytes);
                producer_commit(pipe, write, is_leader, M, N);
                T.pipeline.advance(write);
            }
            for _k in 0..iterations - prologue {
                producer_acquire(pipe, write, is_leader, tx_bytes);
                producer_commit(pipe, write, is_leader, M, N);
                T.pipeline.advance(write);
            }
            // Tail loop: `tma_k_prologue == Stages ? smem_pipe_write : PipelineState{}`; with
            // fewer iterations than stages the write state is (iterations, 1), and S -
            // iterations more advances bring it to PipelineState{}'s (0, 0).
            let tail = T.pipeline.clone_state(write);
            if prologue < STAGES {
                T.pipeline.advance(tail, STAGES - prologue);
            }
            for _i in 0..prologue {
                producer_acquire(pipe, tail, is_leader, tx_bytes);
                T.pipeline.advance(tail);
            }
            out[at + 3] = T.pipeline.stage(write) * 2 + T.pipeline.phase(write);
            out[at + 4] = T.pipeline.stage(tail) * 2 + T.pipeline.phase(tail);
        }
    } else if warp_group == 1 {
        T.ptx.setmaxnreg.inc(232);
        let read = T.pipeline.consumer_state(pipe);
        let release = T.pipeline.consumer_state(pipe);
        // Simulates accumulators and extra register pressure.
        let mut arr = T.registers::<i32>([DUMMY]);
        let mut waited = 0;
        // Prologue MMAs: K_PIPE_MMAS = 1 in flight.
        T.pipeline.consumer_wait(pipe, read);
        T.pipeline.advance(read);
        waited += 1;
        for _k in 0..iterations - 1 {
            T.pipeline.consumer_wait(pipe, read);
            // Dummy op, which never happens (warpgroup 1 is threads 128..256).
            if tid > 256 {
                #[unroll]
                for i in 0..DUMMY {
                    arr[i] += data[i];
                }
            }
            gate_the_release();
            T.pipeline.consumer_release(pipe, release);
            T.pipeline.advance(read);
            T.pipeline.advance(release);
            waited += 1;
        }
        if tid > 256 {
            #[unroll]
            for i in 0..DUMMY {
                data[i] = arr[i];
            }
        }
        // Tail loop.
        gate_the_release();
        T.pipeline.consumer_release(pipe, release);
        T.pipeline.advance(release);
        if tid % 128 == 0 {
            out[at] = waited;
            out[at + 1] = T.pipeline.stage(read) * 2 + T.pipeline.phase(read);
            out[at + 2] = T.pipeline.stage(release) * 2 + T.pipeline.phase(release);
        }
    } else {
        T.ptx.setmaxnreg.dec(40);
    }
}

pub fn run(dev: &Device, case: &Case) -> Outcome {
    let Config { m, n, stages } = case.cfg;
    let ctas = m * n;
    let mut out = dev.alloc::<u32>((ctas * WORDS) as usize).map_err(|e| fail(case, e))?;
    let mut data = dev.alloc::<i32>(DUMMY as usize).map_err(|e| fail(case, e))?;
    let launch = LaunchConfig { grid: [m, n, 1], ..LaunchConfig::linear(1, 384) };
    let report = cutlass_pipeline_tma_async_ws::launch(dev, launch, &mut out, &mut data, case.iterations, m, n, stages)
        .map_err(|e| fail(case, e))?;
    let it = case.iterations as u64;
    let s = stages as u64;
    let tail = if it >= s { state_after(it + s, stages, 1) } else { state_after(it, stages, 0) };
    let want: Vec<u32> = (0..ctas)
        .flat_map(|_| {
            let read = state_after(it, stages, 0);
            [case.iterations, read, read, state_after(it, stages, 1), tail]
        })
        .collect();
    expect_out(dev, case, &out, &want)?;
    Ok(report)
}
