//! CUTLASS `test/unit/pipeline/pipeline_tma_async_warp_specialized_persistent.cu`: a
//! persistent warp-specialized kernel. Warpgroup 0 produces `tiles` tiles of `iterations`
//! stages each; math warpgroups 1 and 2 take the tiles in turn (tile 0, 2, .. and 1, 3, ..),
//! ordered by an `OrderedSequenceBarrier<2, 2>` (written by hand: four barriers of 128
//! arrivals and a 2-stage state) for their mainloop and their epilogue.
//!
//! CUTLASS ends the kernel with `cluster_arrive_relaxed()` + `cluster_wait()`. In a cluster
//! of more than one CTA, a math warpgroup's last `consumer_release` arrives on a peer's
//! `empty` barrier, and `.relaxed` orders no memory access before the arrive: the peer may
//! exit first (the simulator's `access-to-exited-cta`, a true positive). The port ends with
//! the release arrive CUTLASS's fix needs (`RELAXED_EXIT = 0`); `RELAXED_EXIT = 1` keeps
//! CUTLASS's relaxed one, for the test that the finding stays.

use super::tma_async::{gate_the_release, producer_acquire, producer_commit, PER_CTA_BYTES};
use super::tma_async_ws::{CONFIGS as WS_CONFIGS, DUMMY};
use super::*;
use phaser::LaunchConfig;

/// The file's `TEST`s: the same shapes and stages as the warp-specialized file.
pub const CONFIGS: &[Config] = WS_CONFIGS;

/// Words each CTA writes: the producer's tiles and final state, each math warpgroup's
/// tiles, waits and final tile state.
const WORDS: u32 = 8;

/// CUTLASS's `dma_wg_simulation`: one tile of `iterations` stages from `start` (a copy: the
/// caller advances its own state by the tile).
#[phaser::device]
fn dma_tile(
    pipe: Pipeline,
    start: PipelineState,
    iterations: u32,
    is_leader: bool,
    tx_bytes: u32,
    rows: u32,
    cols: u32,
    stages: u32,
) {
    let warp_in_group = (T.thread_idx() / 32) % 4;
    let lane_predicate = T.ptx.elect_sync();
    if warp_in_group == 0 && lane_predicate {
        let st = T.pipeline.clone_state(start);
        let prologue = iterations.min(stages);
        for _i in 0..prologue {
            producer_acquire(pipe, st, is_leader, tx_bytes);
            producer_commit(pipe, st, is_leader, rows, cols);
            T.pipeline.advance(st);
        }
        for _k in 0..iterations - prologue {
            producer_acquire(pipe, st, is_leader, tx_bytes);
            producer_commit(pipe, st, is_leader, rows, cols);
            T.pipeline.advance(st);
        }
    }
}

/// CUTLASS's `math_wg_simulation`: one tile's waits and releases from `start` (copies).
/// Returns the waits passed.
#[phaser::device]
fn math_tile(pipe: Pipeline, start: PipelineState, iterations: u32, data: &mut [i32]) -> u32 {
    let rd = T.pipeline.clone_state(start);
    let release = T.pipeline.clone_state(start);
    let tid = T.thread_idx();
    let mut arr = T.registers::<i32>([DUMMY]);
    let mut waited = 0;
    T.pipeline.consumer_wait(pipe, rd);
    T.pipeline.advance(rd);
    waited += 1;
    for _k in 0..iterations - 1 {
        T.pipeline.consumer_wait(pipe, rd);
        // Dummy op, which never happens (no thread is past 384).
        if tid > 384 {
            #[unroll]
            for i in 0..DUMMY {
                arr[i] += data[i];
            }
        }
        gate_the_release();
        T.pipeline.consumer_release(pipe, release);
        T.pipeline.advance(rd);
        T.pipeline.advance(release);
        waited += 1;
    }
    if tid > 384 {
        #[unroll]
        for i in 0..DUMMY {
            data[i] = arr[i];
        }
    }
    T.pipeline.consumer_release(pipe, release);
    T.pipeline.advance(release);
    waited
}

/// `OrderedSequenceBarrier::wait`: this group's barrier of the current stage.
#[phaser::device]
fn sequence_wait(bars: Barriers, seq: PipelineState, group: u32) {
    T.ptx.mbarrier.try_wait(bars.ptr_to([T.pipeline.stage(seq) * 2 + group]), T.pipeline.phase(seq));
}

/// `OrderedSequenceBarrier::arrive`: the other group's barrier of this stage, then the next
/// stage.
#[phaser::device]
fn sequence_arrive(bars: Barriers, seq: PipelineState, group: u32) {
    T.ptx.mbarrier.arrive(bars.ptr_to([T.pipeline.stage(seq) * 2 + (group + 1) % 2]));
    T.pipeline.advance(seq);
}

#[phaser::kernel(target = "sm_90a")]
pub fn cutlass_pipeline_tma_async_ws_persistent(
    out: &mut [u32],
    data: &mut [i32],
    iterations: u32,
    tiles_per_cluster: u32,
    #[comptime] M: u32,
    #[comptime] N: u32,
    #[comptime] STAGES: u32,
    #[comptime] RELAXED_EXIT: u32,
) {
    // `__launch_bounds__(384, 1)`: 65536 / 384 registers, rounded down to a multiple of 8,
    // at entry; the warpgroups' setmaxnreg split (232 + 232 + 40) uses the whole pool.
    T.require_block(384, 1, 1);
    T.max_registers(168);
    T.cluster_dims(M, N, 1);
    let tx_bytes = PER_CTA_BYTES * (M + N - 1);
    let pipe = T.pipeline.new_multicast(STAGES, 1, M, N, "cta");
    // The ping-pong barrier of the two math warpgroups: [depth 2][length 2], 128 each.
    let seq_bars = T.alloc_barriers(4);
    let seq_walk = T.pipeline.new_threads(2, 128);
    let tid = T.thread_idx();
    if tid == 0 {
        for i in 0..4 {
            T.ptx.mbarrier.init(seq_bars.ptr_to([i]), 128);
        }
    }
    // CUTLASS's constructors, `__syncthreads()` and the cluster arrive/wait (the fence of
    // T.pipeline.init covers the sequence barriers' inits too).
    T.pipeline.init(pipe);
    let warp_group = tid / 128;
    let is_leader = tid % 128 == 0;
    let at = T.cluster_cta_rank() * WORDS;
    let tile_start = T.pipeline.consumer_state(pipe);
    let mut tiles = tiles_per_cluster as i32;
    if warp_group == 2 {
        T.pipeline.advance(tile_start, iterations);
        tiles -= 1;
    }
    if warp_group == 0 {
        T.ptx.setmaxnreg.dec(40);
        let prologue_state = T.pipeline.producer_state(pipe);
        let mut produced = 0;
        while tiles > 0 {
            dma_tile(pipe, prologue_state, iterations, is_leader, tx_bytes, M, N, STAGES);
            T.pipeline.advance(prologue_state, iterations);
            tiles -= 1;
            produced += 1;
        }
        if tid == 0 {
            out[at] = produced;
            out[at + 1] = T.pipeline.stage(prologue_state) * 2 + T.pipeline.phase(prologue_state);
        }
    }
    if warp_group == 1 || warp_group == 2 {
        T.ptx.setmaxnreg.inc(232);
        let group = warp_group - 1;
        // Group 0 starts with the opposite phase: (0, 1) is two advances from (0, 0).
        let seq = T.pipeline.consumer_state(seq_walk);
        if group == 0 {
            T.pipeline.advance(seq, 2);
        }
        let mut taken = 0;
        let mut waited = 0;
        while tiles > 0 {
            // MMA
            sequence_wait(seq_bars, seq, group);
            waited += math_tile(pipe, tile_start, iterations, data);
            sequence_arrive(seq_bars, seq, group);
            // Epilogue, simulating a long-running stage.
            sequence_wait(seq_bars, seq, group);
            T.nanosleep(100000);
            sequence_arrive(seq_bars, seq, group);
            T.pipeline.advance(tile_start, iterations * 2);
            tiles -= 2;
            taken += 1;
        }
        if tid % 128 == 0 {
            out[at + 2 + 3 * group] = taken;
            out[at + 3 + 3 * group] = waited;
            out[at + 4 + 3 * group] = T.pipeline.stage(tile_start) * 2 + T.pipeline.phase(tile_start);
        }
    }
    // Makes sure remote shared memory is not destroyed.
    if RELAXED_EXIT == 1 {
        T.ptx.barrier.cluster.arrive_relaxed();
    } else {
        T.ptx.barrier.cluster.arrive();
    }
    T.ptx.barrier.cluster.wait();
}

/// CUTLASS's `tiles_per_cluster = (kNumIters % 10) + 1`.
pub fn tiles_for(iterations: u32) -> u32 {
    iterations % 10 + 1
}

pub fn launch(dev: &Device, case: &Case, relaxed_exit: u32) -> Result<(LaunchReport, Vec<u32>), phaser::RuntimeError> {
    let Config { m, n, stages } = case.cfg;
    let mut out = dev.alloc::<u32>((m * n * WORDS) as usize)?;
    let mut data = dev.alloc::<i32>(DUMMY as usize)?;
    let launch = LaunchConfig { grid: [m, n, 1], ..LaunchConfig::linear(1, 384) };
    let tiles = tiles_for(case.iterations);
    let report = cutlass_pipeline_tma_async_ws_persistent::launch(
        dev,
        launch,
        &mut out,
        &mut data,
        case.iterations,
        tiles,
        m,
        n,
        stages,
        relaxed_exit,
    )?;
    Ok((report, dev.download(&out)?))
}

pub fn run(dev: &Device, case: &Case) -> Outcome {
    let Config { m, n, stages } = case.cfg;
    let (report, got) = launch(dev, case, 0).map_err(|e| fail(case, e))?;
    let (it, t) = (case.iterations as u64, tiles_for(case.iterations) as u64);
    // Warpgroup 1 takes tiles 0, 2, ..; warpgroup 2 tiles 1, 3, .. (its state starts a tile on).
    let (k1, k2) = (t.div_ceil(2), t / 2);
    let want: Vec<u32> = (0..m * n)
        .flat_map(|_| {
            [
                t as u32,
                state_after(t * it, stages, 1),
                k1 as u32,
                (k1 * it) as u32,
                state_after(2 * k1 * it, stages, 0),
                k2 as u32,
                (k2 * it) as u32,
                state_after(it + 2 * k2 * it, stages, 0),
            ]
        })
        .collect();
    if got != want {
        return Err(fail(case, format!("got {got:?}, expected {want:?}")));
    }
    Ok(report)
}
