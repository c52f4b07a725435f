//! CUTLASS's `PipelineTmaAsync` over a cluster in the DSL (`T.pipeline.new_multicast`: each
//! stage of CTA `(x, y)` is filled by the CTAs of its row and column, and released to them by
//! CUTLASS's signalling threads): the pipeline of `tests/cutlass_pipeline/tma_async.rs` on a
//! 2 x 1 cluster, gated as a real mainloop's warpgroup-wide MMA gates it.
//!
//! 128 threads per CTA, each a producer and a consumer: per stage every thread waits for it to
//! be empty, the leader registers the row's and column's bytes and completes them on its own
//! `full` barrier and, through `mapa`, on its peers' (where the multicast TMA would); every
//! thread waits for the stage, the warpgroup meets (`bar.sync`), and the signalling threads
//! release it to the CTAs that filled it. `out` gets, per CTA, the waits passed, the read and
//! write states (`stage * 2 + phase`) and the commits left (0).

use phaser::problem::{BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::{Device, LaunchConfig, RuntimeError};

/// What each producer CTA's copy would bring (`sizeof(uint32_t)`).
pub const PER_CTA_BYTES: u32 = 4;
/// Words each CTA writes.
pub const WORDS: u32 = 4;
/// The cluster: `ROWS x COLS` CTAs.
pub const ROWS: u32 = 2;
pub const COLS: u32 = 1;

/// Wait until the stage is empty; the leader then registers the whole stage's bytes.
#[phaser::device]
pub fn multicast_acquire(pipe: Pipeline, st: PipelineState, is_leader: bool, tx_bytes: u32) {
    T.pipeline.producer_acquire(pipe, st);
    if is_leader {
        T.pipeline.producer_commit(pipe, st, tx_bytes);
    }
}

/// The leader completes `PER_CTA_BYTES` on its own `full` barrier and on that of every other
/// CTA of its row and column, as the multicast TMA would.
#[phaser::device]
pub fn multicast_commit(pipe: Pipeline, st: PipelineState, is_leader: bool, rows: u32, cols: u32) {
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

#[phaser::kernel(target = "sm_90a")]
pub fn pipeline_multicast_dsl(out: &mut [u32], iterations: u32, #[comptime] STAGES: u32) {
    T.require_block(128, 1, 1);
    T.cluster_dims(ROWS, COLS, 1);
    let tx_bytes = PER_CTA_BYTES * (ROWS + COLS - 1);
    let pipe = T.pipeline.new_multicast(STAGES, 1, ROWS, COLS, "cta");
    T.pipeline.init(pipe);
    let tid = T.thread_idx();
    let warp = tid / 32;
    let is_leader = tid % 128 == 0;
    let lane_predicate = T.ptx.elect_sync();

    let read = T.pipeline.consumer_state(pipe);
    let write = T.pipeline.producer_state(pipe);
    let release = T.pipeline.consumer_state(pipe);
    let prologue = iterations.min(STAGES);
    for _i in 0..prologue {
        multicast_acquire(pipe, write, is_leader, tx_bytes);
        multicast_commit(pipe, write, is_leader, ROWS, COLS);
        T.pipeline.advance(write);
    }
    let mut left = iterations - prologue;
    let mut waited = 0;
    T.pipeline.consumer_wait(pipe, read);
    T.pipeline.advance(read);
    waited += 1;
    for _iter in 0..iterations - 1 {
        T.pipeline.consumer_wait(pipe, read);
        // Where the mainloop's wgmma would be: the warpgroup meets before the release.
        T.cuda.warp_sync();
        T.cuda.warpgroup_sync();
        T.pipeline.consumer_release(pipe, release);
        if lane_predicate && warp == 0 && left > 0 {
            multicast_acquire(pipe, write, is_leader, tx_bytes);
            multicast_commit(pipe, write, is_leader, ROWS, COLS);
            T.pipeline.advance(write);
            left -= 1;
        }
        T.pipeline.advance(read);
        T.pipeline.advance(release);
        waited += 1;
    }
    // Peers still arrive on this CTA's barriers until every CTA is here.
    T.ptx.barrier.cluster.arrive();
    T.ptx.barrier.cluster.wait();
    if tid == 0 {
        let at = T.cluster_cta_rank() * WORDS;
        out[at] = waited;
        out[at + 1] = T.pipeline.stage(read) * 2 + T.pipeline.phase(read);
        out[at + 2] = T.pipeline.stage(write) * 2 + T.pipeline.phase(write);
        out[at + 3] = left;
    }
}

/// The pipeline depths the gallery launches, one launch each.
pub const DEPTHS: [u32; 2] = [2, 3];

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "pipeline_multicast_dsl",
        about: "CUTLASS's PipelineTmaAsync on a 2 x 1 cluster in the DSL (T.pipeline.new_multicast): each stage \
                filled by its row and column, released to them by the signalling threads, S = 2, 3",
        kernels: |t| DEPTHS.iter().map(|&s| pipeline_multicast_dsl::build(t, s)).collect::<Result<Vec<_>, _>>(),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub iterations: u32,
    pub out: BufferId<u32>,
}

/// `iterations` rounds through every depth of [`DEPTHS`] on one cluster.
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    let iterations = match size {
        Size::Small => 5u32,
        Size::Quick => 7,
        Size::Full => 1000,
    };
    let mut p = Problem::new(seed);
    let out = p.output(dev, (ROWS * COLS * WORDS) as usize, u32::MAX)?;
    for stages in DEPTHS {
        let k = pipeline_multicast_dsl::kernel_for(stages)?;
        let launch = LaunchConfig { grid: [ROWS, COLS, 1], ..LaunchConfig::linear(1, 128) };
        p.launch(k, launch, [out.into(), iterations.into()], [out.into()]);
    }
    p.set_host(Host { iterations, out });
    Ok(p)
}

/// The state after `n` advances of a ring of `stages` starting at phase `phase`.
fn state_after(n: u32, stages: u32, phase: u32) -> u32 {
    (n % stages) * 2 + (phase ^ (n / stages) % 2)
}

/// `out` after `n` iterations through `stages` stages: per CTA the waits passed, the read and
/// write states, no commit left.
pub fn expected(n: u32, stages: u32) -> Vec<u32> {
    let cta = [n, state_after(n, stages, 0), state_after(n, stages, 1), 0];
    (0..ROWS * COLS).flat_map(|_| cta).collect()
}

pub fn check(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let n = h.iterations;
    let mut passed = true;
    let details: Vec<String> = DEPTHS
        .iter()
        .enumerate()
        .map(|(i, &stages)| {
            let want = expected(n, stages);
            let got = out.get(i, h.out);
            passed &= got == want;
            if got == want {
                format!("S={stages} ok")
            } else {
                format!("S={stages}: got {got:?}, want {want:?}")
            }
        })
        .collect();
    Outcome::new(passed, format!("{n} iterations on a {ROWS} x {COLS} cluster: {}", details.join("; ")))
}
