//! CUTLASS's `PipelineAsync` in the DSL (`T.pipeline.new_async`: several producer threads, no
//! transaction bytes): the pipeline of `tests/cutlass_pipeline/pipeline_async.rs` with data in
//! its stages, so the checker has reads to order.
//!
//! 96 threads: the elected lanes of warps 0 and 1 each write their word of a stage and arrive
//! on its `full` barrier (two producer arrivals per phase); warp 2's elected lane waits for the
//! stage, adds both words to its sum and releases it (one consumer arrival on `empty`). `out`
//! gets the sum, then the consumer's and each producer's final state (`stage * 2 + phase`).

use phaser::problem::{BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::{Device, LaunchConfig, RuntimeError};

/// Words of `out`: the consumer's sum and state, each producer's state.
pub const WORDS: u32 = 4;

#[phaser::kernel(target = "sm_90a")]
pub fn pipeline_async_dsl(out: &mut [u32], iterations: u32, #[comptime] STAGES: u32) {
    T.require_block(96, 1, 1);
    let pipe = T.pipeline.new_async(STAGES, 2, 1);
    let ring = T.alloc_shared::<u32>([STAGES * 2]);
    T.pipeline.init(pipe);
    T.cuda.cta_sync();
    let warp = T.warp_idx();
    if T.ptx.elect_sync() {
        if warp < 2 {
            let write = T.pipeline.producer_state(pipe);
            for i in 0..iterations {
                T.pipeline.producer_acquire(pipe, write);
                ring[T.pipeline.stage(write) * 2 + warp] = i * 2 + warp;
                T.pipeline.producer_arrive(pipe, write);
                T.pipeline.advance(write);
            }
            out[2 + warp] = T.pipeline.stage(write) * 2 + T.pipeline.phase(write);
        } else {
            let read = T.pipeline.consumer_state(pipe);
            let mut sum = 0;
            for _i in 0..iterations {
                T.pipeline.consumer_wait(pipe, read);
                let s = T.pipeline.stage(read);
                sum += ring[s * 2] + ring[s * 2 + 1];
                T.pipeline.consumer_release(pipe, read);
                T.pipeline.advance(read);
            }
            out[0] = sum;
            out[1] = T.pipeline.stage(read) * 2 + T.pipeline.phase(read);
        }
    }
}

/// The pipeline depths the gallery launches, one launch each.
pub const DEPTHS: [u32; 2] = [2, 3];

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "pipeline_async_dsl",
        about: "CUTLASS's PipelineAsync in the DSL (T.pipeline.new_async): two producer threads fill each stage, \
                one consumer sums it, S = 2, 3",
        kernels: |t| DEPTHS.iter().map(|&s| pipeline_async_dsl::build(t, s)).collect::<Result<Vec<_>, _>>(),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub iterations: u32,
    pub out: BufferId<u32>,
}

/// `iterations` rounds through every depth of [`DEPTHS`] (more than a ring, so it wraps).
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    let iterations = match size {
        Size::Small => 5u32,
        Size::Quick => 7,
        Size::Full => 1000,
    };
    let mut p = Problem::new(seed);
    let out = p.output(dev, WORDS as usize, u32::MAX)?;
    for stages in DEPTHS {
        let k = pipeline_async_dsl::kernel_for(stages)?;
        p.launch(k, LaunchConfig::linear(1, 96), [out.into(), iterations.into()], [out.into()]);
    }
    p.set_host(Host { iterations, out });
    Ok(p)
}

/// The state after `n` advances of a ring of `stages` starting at phase `phase`.
fn state_after(n: u32, stages: u32, phase: u32) -> u32 {
    (n % stages) * 2 + (phase ^ (n / stages) % 2)
}

/// `out` after `n` iterations through `stages` stages: round i brings 2i (warp 0) and 2i + 1
/// (warp 1), so the sum of 4i + 1; the consumer's state, then each producer's.
pub fn expected(n: u32, stages: u32) -> Vec<u32> {
    let sum = (0..n).map(|i| 4 * i + 1).sum::<u32>();
    vec![sum, state_after(n, stages, 0), state_after(n, stages, 1), state_after(n, stages, 1)]
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
    Outcome::new(passed, format!("{n} iterations: {}", details.join("; ")))
}
