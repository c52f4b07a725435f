//! `T.pipeline.*`: full/empty mbarrier pipelines with the stage and phase bookkeeping done
//! by the builder (CUTLASS's `PipelineTmaAsync` + `PipelineState`).

use crate::builder::{Arrivals, ClusterSync, Pipeline, PipelineConfig};

/// How a cluster pipeline's consumers hand stages back to the other CTAs (see `ClusterSync`).
const CLUSTER_SYNC: super::Choice<ClusterSync> =
    choice!["cluster" => ClusterSync::ClusterScope, "cta" => ClusterSync::CtaScope];

ops! {
    /// an S-stage full/empty pipeline: `full` expects 1 producer arrival (+ tx bytes), `empty` one per consumer warp
    "pipeline.new" ["cutlass:PipelineTmaAsync"] (stages: Const = 2, consumer_warps: Const) -> Pipeline
        = |k, call| k.pipeline(call.name(), PipelineConfig::tma(stages, Arrivals::Warps(consumer_warps)));
    /// ... with `empty` expecting one arrival per consumer thread
    "pipeline.new_threads" (stages: Const = 2, consumer_threads: Const = 64) -> Pipeline
        = |k, call| k.pipeline(call.name(), PipelineConfig::tma(stages, Arrivals::Threads(consumer_threads)));
    /// a cluster pipeline: each CTA's producer fills its stage (multicast slices from every CTA), the consumer warps of all `ctas` CTAs release it (`mapa` + remote arrive on every CTA's `empty`)
    "pipeline.new_cluster" (stages: Const = 2, consumer_warps: Const, ctas: Const = 2; sync: Choice(CLUSTER_SYNC)) -> Pipeline
        = |k, call| {
            let cfg = PipelineConfig { consumer_ctas: ctas, ..PipelineConfig::tma(stages, Arrivals::Warps(consumer_warps)) };
            k.pipeline(call.name(), cfg).with_cluster_sync(sync)
        };
    /// ... with `empty` expecting one arrival per consumer thread of each CTA (e.g. one leader per warpgroup, after its `wgmma.wait_group`)
    "pipeline.new_cluster_threads" (stages: Const = 2, consumer_threads: Const = 2, ctas: Const = 2; sync: Choice(CLUSTER_SYNC)) -> Pipeline
        = |k, call| {
            let cfg = PipelineConfig { consumer_ctas: ctas, ..PipelineConfig::tma(stages, Arrivals::Threads(consumer_threads)) };
            k.pipeline(call.name(), cfg).with_cluster_sync(sync)
        };
    /// CUTLASS's 2-D multicast pipeline (`PipelineTmaAsync` with a cluster shape): in a `rows x cols` cluster each stage is filled by, and released to, the `rows + cols - 1` CTAs of the same row (`%cluster_ctaid.y`) and column (`.x`); `empty` expects one arrival per consumer warpgroup from each; every thread of a consumer warpgroup calls `consumer_release` and CUTLASS's 16 signalling threads arrive
    "pipeline.new_multicast" (stages: Const = 2, consumer_warpgroups: Const = 1, rows: Const = 2, cols: Const = 2; sync: Choice(CLUSTER_SYNC)) -> Pipeline
        = |k, call| Pipeline::new_rows_cols(k, call.name(), stages, Arrivals::Warpgroups(consumer_warpgroups), rows, cols).with_cluster_sync(sync);
    /// CUTLASS's `PipelineAsync`: `full` expects `producer_threads` arrivals (each producer thread's `producer_arrive`), `empty` `consumer_threads` (each consumer thread's `consumer_release`)
    "pipeline.new_async" ["cutlass:PipelineAsync"] (stages: Const = 2, producer_threads: Const = 2, consumer_threads: Const = 1) -> Pipeline
        = |k, call| {
            let cfg = PipelineConfig { producers: Arrivals::Threads(producer_threads), ..PipelineConfig::tma(stages, Arrivals::Threads(consumer_threads)) };
            k.pipeline(call.name(), cfg)
        };
    /// thread 0 inits every barrier, `fence.mbarrier_init`, then the CTA syncs (all threads call it)
    "pipeline.init" (pipe: Pipeline) -> Unit = |k, call| pipe.init(k);
    /// stage 0, phase 1 (a fresh `empty` barrier passes a parity-1 wait: every buffer starts empty)
    "pipeline.producer_state" ["cutlass:make_producer_start_state"] (pipe: Pipeline) -> PipelineState
        = |k, call| pipe.producer_start_state(k);
    /// stage 0, phase 0 (consumers wait for the first fill)
    "pipeline.consumer_state" (pipe: Pipeline) -> PipelineState = |k, call| pipe.consumer_start_state(k);
    /// wait until the state's stage is empty
    "pipeline.producer_acquire" ["cutlass:PipelineTmaAsync::producer_acquire"] (pipe: Pipeline, state: PipelineState) -> Unit
        = |k, call| pipe.producer_acquire(k, &state);
    /// `arrive.expect_tx(bytes)` on the stage's `full` barrier; returns it (the TMA load's barrier)
    "pipeline.producer_commit" (pipe: Pipeline, state: PipelineState, bytes: TxBytes) -> Barrier
        = |k, call| pipe.producer_commit(k, &state, bytes);
    /// plain arrive on `full` (a producer that stored with ordinary instructions)
    "pipeline.producer_arrive" (pipe: Pipeline, state: PipelineState) -> Unit = |k, call| pipe.producer_arrive(k, &state);
    /// wait until the state's stage is full
    "pipeline.consumer_wait" ["cutlass:PipelineTmaAsync::consumer_wait"] (pipe: Pipeline, state: PipelineState) -> Unit
        = |k, call| pipe.consumer_wait(k, &state);
    /// arrive on the stage's `empty` barrier (once per consumer warp or thread, as declared)
    "pipeline.consumer_release" ["cutlass:PipelineTmaAsync::consumer_release"] (pipe: Pipeline, state: PipelineState) -> Unit
        = |k, call| pipe.consumer_release(k, &state);
    /// wait for the consumers' last releases so the CTA does not exit with copies in flight
    "pipeline.producer_tail" ["cutlass:PipelineTmaAsync::producer_tail"] (pipe: Pipeline, state: PipelineState) -> Unit
        = |k, call| pipe.producer_tail(k, &state);
    /// an independent copy of a state (new registers; advancing one leaves the other)
    "pipeline.clone_state" (state: PipelineState) -> PipelineState = |k, call| state.clone_into_new(k);
    /// next stage (`n` stages on, `n` a constant or a run-time u32); the parity flips whenever the index wraps at S
    "pipeline.advance" (state: PipelineState; n: U32 = 2) -> Unit = |k, call| match n {
        Some(n) => state.advance_by_value(k, n),
        None => state.advance(k),
    };
    /// one non-blocking try at `producer_acquire`: true if the stage is empty now (CUTLASS's token)
    "pipeline.producer_try_acquire" ["cutlass:PipelineTmaAsync::producer_try_acquire"] (pipe: Pipeline, state: PipelineState) -> Bool
        = |k, call| pipe.producer_try_acquire(k, &state);
    /// `producer_acquire` unless the token says the stage is already empty
    "pipeline.producer_acquire_with_token" (pipe: Pipeline, state: PipelineState, token: Bool) -> Unit
        = |k, call| pipe.producer_acquire_with_token(k, &state, token);
    /// one non-blocking try at `consumer_wait`: true if the stage is full now (CUTLASS's token)
    "pipeline.consumer_try_wait" ["cutlass:PipelineTmaAsync::consumer_try_wait"] (pipe: Pipeline, state: PipelineState) -> Bool
        = |k, call| pipe.consumer_try_wait(k, &state);
    /// `consumer_wait` unless the token says the stage is already full
    "pipeline.consumer_wait_with_token" (pipe: Pipeline, state: PipelineState, token: Bool) -> Unit
        = |k, call| pipe.consumer_wait_with_token(k, &state, token);
    /// the state's stage index
    "pipeline.stage" (state: PipelineState) -> U32 = |k, call| state.index();
    /// the state's phase parity
    "pipeline.phase" (state: PipelineState) -> U32 = |k, call| state.phase();
    /// the stage's `full` barrier
    "pipeline.full" (pipe: Pipeline, state: PipelineState) -> Barrier = |k, call| pipe.full_barrier(k, &state);
    /// the stage's `empty` barrier
    "pipeline.empty" (pipe: Pipeline, state: PipelineState) -> Barrier = |k, call| pipe.empty_barrier(k, &state);
}
