//! The seeds' experiments written in the `#[phaser::kernel]` DSL (the builder versions are in
//! `seeds.rs`), plus the seeds' two-stage `phase_tma` loop with ordinary arrivals.

use super::{seeds, BufferId, Example, Outcome, Problem, POISON_U32};
use phaser::{Device, LaunchConfig, RuntimeError};

/// Experiment 1: 8 threads, a barrier expecting `num_threads` (4) arrivals; threads below it
/// publish `tid*tid`, arrive, wait, then write the sum of all published values to `out[tid]`.
#[phaser::kernel(target = "sm_90a")]
pub fn dsl_seed_thread_arrive_wait(out: &mut [u32], num_threads: u32) {
    T.require_block(8, 1, 1);
    let bar = T.alloc_barriers(1);
    let partial = T.alloc_shared::<u32>([8]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), num_threads);
    }
    T.cuda.cta_sync();
    if tid < num_threads {
        partial[tid] = tid * tid;
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
        let mut sum = 0;
        for i in 0..num_threads {
            sum += partial[i];
        }
        out[tid] = sum;
    }
}

/// Experiment 2: a count-1 barrier; thread 0 fills `data[i] = 1.5*i` and arrives; threads 1-4
/// wait, then each copies the 32 values to `out[(tid-1)*32 + i]`.
#[phaser::kernel(target = "sm_90a")]
pub fn dsl_seed_producer_consumer(out: &mut [f32]) {
    T.require_block(32, 1, 1);
    let bar = T.alloc_barriers(1);
    let data = T.alloc_shared::<f32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        for i in 0..32 {
            data[i] = i as f32 * 1.5;
        }
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    }
    if tid >= 1 && tid <= 4 {
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
        let base = (tid - 1) * 32;
        for i in 0..32 {
            out[base + i] = data[i];
        }
    }
}

/// Experiment 3: 32 threads, `ROUNDS` rounds of arrive + wait(parity); after each round thread 0
/// probes the phase with `test_wait(parity 0)` into `out[round]` (1,0,1,0,...); `out[ROUNDS]`
/// holds the probe right after init (0).
#[phaser::kernel(target = "sm_90a")]
pub fn dsl_seed_phase_flip(out: &mut [u32], #[comptime] ROUNDS: u32) {
    T.require_block(32, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 32);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        out[ROUNDS] = T.ptx.mbarrier.test_wait(bar.ptr_to([0]), 0) as u32;
    }
    let mut phase = 0;
    for round in 0..ROUNDS {
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), phase);
        if tid == 0 {
            let probe = T.ptx.mbarrier.test_wait(bar.ptr_to([0]), 0) as u32;
            out[round] = probe;
            T.probe("phase_flip", [round, phase, probe]);
        }
        phase ^= 1;
    }
}

/// Fields recorded per iteration of [`dsl_phase_tma`].
pub const PHASE_TMA_FIELDS: usize = 5;

/// The seeds' two-stage `phase_tma` loop, with an ordinary arrival standing in for each TMA
/// completion: two barriers (one per stage, count 1), `stage = iteration % 2`, wait on
/// `phase_tma`, flip it after stage 1. Thread 0 records per iteration
/// `(iteration, stage, waited parity, barrier parity after completion, phase_tma after)`;
/// the parity after completion is probed with `test_wait(parity 0)` (true = parity 1).
#[phaser::kernel(target = "sm_90a")]
pub fn dsl_phase_tma(out: &mut [u32], #[comptime] ITERS: u32) {
    T.require_block(32, 1, 1);
    let tma_bar = T.alloc_barriers(2);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(tma_bar.ptr_to([0]), 1);
        T.ptx.mbarrier.init(tma_bar.ptr_to([1]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    let mut phase_tma = 0;
    for iteration in 0..ITERS {
        let stage = iteration % 2;
        if tid == 0 {
            // The "transfer" of this stage completes: one ordinary arrival.
            T.ptx.mbarrier.arrive(tma_bar.ptr_to([stage]));
        }
        let waited = phase_tma;
        T.ptx.mbarrier.try_wait(tma_bar.ptr_to([stage]), phase_tma);
        let parity_after = T.ptx.mbarrier.test_wait(tma_bar.ptr_to([stage]), 0) as u32;
        if stage == 1 {
            phase_tma ^= 1;
        }
        if tid == 0 {
            let row = iteration * 5;
            out[row] = iteration;
            out[row + 1] = stage;
            out[row + 2] = waited;
            out[row + 3] = parity_after;
            out[row + 4] = phase_tma;
        }
        // Nobody arrives on a stage again before every thread has seen its completion.
        T.cuda.cta_sync();
    }
}

/// The seeds' table for the first four iterations of the `phase_tma` loop.
pub const PHASE_TMA_TABLE: [[u32; PHASE_TMA_FIELDS]; 4] =
    [[0, 0, 0, 1, 0], [1, 1, 0, 1, 1], [2, 0, 1, 0, 1], [3, 1, 1, 0, 0]];

/// Rounds of [`dsl_seed_phase_flip`] and iterations of [`dsl_phase_tma`] in the gallery.
pub const ROUNDS: u32 = 4;

pub fn examples() -> Vec<Example> {
    // The seeds' setups with the DSL kernels: same launches, same checks.
    vec![
        Example {
            name: "dsl_seed_thread_arrive_wait",
            about: "DSL: 8 threads, barrier expects 4; threads 0-3 arrive and wait, then read each other's data",
            kernels: |t| Ok(vec![dsl_seed_thread_arrive_wait::build(t)?]),
            setup: |dev, _size, seed| {
                seeds::setup_thread_arrive_wait(dev, dsl_seed_thread_arrive_wait::kernel()?, seed)
            },
            check: |p, out| seeds::check_thread_arrive_wait(out.get(0, *p.host())),
        },
        Example {
            name: "dsl_seed_producer_consumer",
            about: "DSL: count-1 barrier; thread 0 fills data[i] = 1.5*i and arrives; threads 1-4 wait and read",
            kernels: |t| Ok(vec![dsl_seed_producer_consumer::build(t)?]),
            setup: |dev, _size, seed| seeds::setup_producer_consumer(dev, dsl_seed_producer_consumer::kernel()?, seed),
            check: |p, out| seeds::check_producer_consumer(out.get(0, *p.host())),
        },
        Example {
            name: "dsl_seed_phase_flip",
            about: "DSL: 32 threads, 4 rounds of arrive + wait(parity); test_wait.parity probes read 1,0,1,0",
            kernels: |t| Ok(vec![dsl_seed_phase_flip::build(t, ROUNDS)?]),
            setup: |dev, _size, seed| {
                seeds::setup_phase_flip(dev, dsl_seed_phase_flip::kernel_for(ROUNDS)?, ROUNDS, seed)
            },
            check: |p, out| seeds::check_phase_flip(out.get(0, *p.host())),
        },
        Example {
            name: "dsl_phase_tma",
            about: "DSL: the seeds' 2-stage phase_tma loop (ordinary arrivals); records stage/parities per iteration",
            kernels: |t| Ok(vec![dsl_phase_tma::build(t, ROUNDS)?]),
            setup: setup_phase_tma,
            check: |p, out| check_phase_tma(out.get(0, *p.host())),
        },
    ]
}

/// Check a `dsl_phase_tma` output against the seeds' table.
pub fn check_phase_tma(got: &[u32]) -> Outcome {
    let rows: Vec<&[u32]> = got.chunks(PHASE_TMA_FIELDS).collect();
    let ok = rows.len() == PHASE_TMA_TABLE.len() && rows.iter().zip(&PHASE_TMA_TABLE).all(|(g, w)| *g == &w[..]);
    let detail = format!(
        "(iteration, stage, waited parity, parity after completion, phase_tma after) = {rows:?}, expected {:?}",
        PHASE_TMA_TABLE
    );
    Outcome::new(ok, detail)
}

/// `dsl_phase_tma` over `ROUNDS` iterations; the host data is the output buffer.
fn setup_phase_tma(dev: &Device, _size: super::Size, seed: u64) -> Result<Problem, RuntimeError> {
    let mut p = Problem::new(seed);
    let out = p.output(dev, PHASE_TMA_FIELDS * ROUNDS as usize, POISON_U32)?;
    p.launch(dsl_phase_tma::kernel_for(ROUNDS)?, LaunchConfig::linear(1, 32), [out.into()], [out.into()]);
    p.set_host::<BufferId<u32>>(out);
    Ok(p)
}
