//! The Blackwell GEMM of `examples/src/gemm_sm100.rs`, written only in the DSL:
//! `C (M x N, bf16) = A (M x K, row-major) * B (N x K, K-major)^T`, f32 accumulation in tensor
//! memory. The protocol is the builder version's, statement for statement (same pipelines,
//! barriers, commits, fences and epilogue), so the two compute the same C bit for bit:
//! - warp 0, one elected thread: the TMA producer of a `T.pipeline` of shared-memory stages
//!   (`stage_full` / `stage_empty`, no hand-kept parity).
//! - warp 1: allocates tensor memory; one elected thread issues every `tcgen05.mma`, hands each
//!   stage back with `tcgen05.commit` on its `empty` barrier and publishes each accumulator with
//!   a commit on the accumulator pipeline's `full` barrier (`acc_full` / `acc_empty`).
//! - warps 2-5: the epilogue warpgroup: wait for the accumulator, fence, `tcgen05.ld` 64
//!   columns, `tcgen05.wait::ld`, fence and release the accumulator after the tile's last load,
//!   convert to bf16 into a swizzled staging tile of the warp's own, TMA store.
//! - `CTAS = 2` (`.cta_group::2`): a CTA pair computes 256 x `BN` tiles; the even CTA's MMAs read
//!   both CTAs' stages and write both CTAs' tensor memory, its commits are multicast to both
//!   CTAs; the odd CTA's warp 1 relays its stage fills to the even CTA's `pair_full` barriers.
//!
//! The DSL reads tensor memory one register at a time (`tcgen05.ld.32x32b.x1`), where the
//! builder loads 32 columns per instruction (`.x32`): the same columns, in more instructions.
//! The host side (tensor maps, launch, arguments) is the builder GEMM's (`gemm_sm100`).

use crate::gemm::BLOCK_K;
use crate::gemm_sm100::{Sm100Bug, Sm100Config, BLOCK_M, THREADS};
use phaser::problem::{Example, Problem, Size};
use phaser::runtime::{Device, RuntimeError};
use phaser::Kernel;

/// Rows of one epilogue warp's staging tile and TMA store box (its 32 tensor-memory lanes).
const EPI_ROWS: u32 = 32;
/// Columns one epilogue step loads, converts and stores (a 128-byte swizzle row of bf16).
const EPI_COLS: u32 = 64;

/// The `BUG` selector of [`gemm_sm100_dsl`]: 0 is the correct kernel.
pub fn bug_code(bug: Option<Sm100Bug>) -> u32 {
    match bug {
        None => 0,
        Some(Sm100Bug::CommitToWrongBarrier) => 1,
        Some(Sm100Bug::EpilogueSkipsAccumulatorWait) => 2,
        Some(Sm100Bug::MissingAfterThreadSyncFence) => 3,
        Some(Sm100Bug::MissingBeforeThreadSyncFence) => 4,
        Some(Sm100Bug::StageReusedEarly) => 5,
    }
}

#[phaser::kernel(target = "sm_100a")]
pub fn gemm_sm100_dsl(
    #[tma(box = [BLOCK_M, BLOCK_K], swizzle = "128B")] a: TensorMap<bf16, 2>,
    #[tma(box = [BN / CTAS, BLOCK_K], swizzle = "128B")] b: TensorMap<bf16, 2>,
    #[tma(box = [EPI_ROWS, EPI_COLS], swizzle = "128B")] c: TensorMap<bf16, 2>,
    m: u32,
    n: u32,
    k: u32,
    #[comptime] BN: u32,
    #[comptime] STAGES: u32,
    #[comptime] ACC_STAGES: u32,
    #[comptime] CTAS: u32,
    #[comptime] TMEM_COLS: u32,
    #[comptime] BUG: u32,
) {
    T.require_block(THREADS, 1, 1);
    if CTAS > 1 {
        T.cluster_dims(CTAS, 1, 1);
    }
    let tile_m = BLOCK_M * CTAS;
    let b_rows = BN / CTAS;
    // `stage_full`: the producer's arrive.expect_tx; `stage_empty`: one commit (multicast by the
    // pair's MMA thread into both CTAs with CTAS = 2).
    let stage = T.pipeline.new_threads(STAGES, 1);
    // `acc_full`: one commit; `acc_empty`: each epilogue warp of each CTA of the pair.
    let acc = T.pipeline.new_cluster(ACC_STAGES, 4, CTAS);
    // 2-CTA: the odd CTA's stage fills, relayed to the even CTA's MMA thread.
    let pair_full = T.alloc_barriers(STAGES);
    let tmem_slot = T.alloc_shared::<u32>([1]);
    let a_ring = T.alloc_shared::<bf16>([STAGES, BLOCK_M, BLOCK_K], "128B");
    let b_ring = T.alloc_shared::<bf16>([STAGES, BN / CTAS, BLOCK_K], "128B");
    // Two staging tiles per epilogue warp.
    let c_tiles = T.alloc_shared::<bf16>([4, 2, EPI_ROWS, EPI_COLS], "128B");
    let stage_bytes = a_ring[0].bytes() + b_ring[0].bytes();

    // Set-up: barriers (thread 0), tensor memory (warp 1), then one CTA (cluster) barrier so
    // every thread sees both.
    T.pipeline.init(stage);
    T.pipeline.init(acc);
    let tid = T.thread_idx();
    if CTAS > 1 {
        if tid == 0 {
            for s in 0..STAGES {
                T.ptx.mbarrier.init(pair_full.ptr_to([s]), 1);
            }
            T.ptx.fence.mbarrier_init();
        }
    }
    let warp = T.warp_idx();
    if warp == 1 {
        if CTAS > 1 {
            T.ptx.tcgen05.alloc(tmem_slot, TMEM_COLS, "cta_group::2");
            T.ptx.tcgen05.relinquish_alloc_permit("cta_group::2");
        } else {
            T.ptx.tcgen05.alloc(tmem_slot, TMEM_COLS);
            T.ptx.tcgen05.relinquish_alloc_permit();
        }
    }
    if CTAS > 1 {
        T.cuda.cluster_sync();
    } else {
        T.cuda.cta_sync();
    }
    let tmem = tmem_slot[0];

    // The tile walk every role repeats identically: persistent, one tile (of a CTA or a pair)
    // at a time, M fastest.
    let tiles_m = (m + tile_m - 1) / tile_m;
    let tiles_n = (n + BN - 1) / BN;
    let total = tiles_m * tiles_n;
    let first = T.block_idx() / CTAS;
    let step = T.grid_dim() / CTAS;
    let rank = if CTAS > 1 { T.cluster_cta_rank() } else { 0 };
    let k_blocks = (k + BLOCK_K - 1) / BLOCK_K;

    if warp == 0 {
        // One elected thread issues every TMA load.
        if T.ptx.elect_sync() {
            let st = T.pipeline.producer_state(stage);
            let mut t = first;
            while t < total {
                let m0 = t % tiles_m * tile_m;
                let n0 = t / tiles_m * BN;
                // This CTA's rows of A and of B (its half of them with CTAS = 2).
                let a_row = rank * BLOCK_M + m0;
                let b_row = rank * b_rows + n0;
                for kb in 0..k_blocks {
                    let k0 = kb * BLOCK_K;
                    if BUG != 5 {
                        T.pipeline.producer_acquire(stage, st);
                    }
                    let full = T.pipeline.producer_commit(stage, st, stage_bytes);
                    let s = T.pipeline.stage(st);
                    T.tma.load(a_ring[s], a, [a_row, k0], full);
                    T.tma.load(b_ring[s], b, [b_row, k0], full);
                    T.pipeline.advance(st);
                }
                t += step;
            }
            T.pipeline.producer_tail(stage, st);
        }
    } else {
        if warp == 1 {
            if T.ptx.elect_sync() {
                if rank == 0 {
                    // The MMA thread: per tile an accumulator buffer, per K block four MMAs and
                    // a commit that hands the stage back, per tile a commit that publishes the
                    // accumulator.
                    let st = T.pipeline.consumer_state(stage);
                    let acc_st = T.pipeline.producer_state(acc);
                    let mut t = first;
                    while t < total {
                        // The epilogue released this buffer (its loads fenced before the
                        // release): order our MMAs after them.
                        T.pipeline.producer_acquire(acc, acc_st);
                        T.ptx.tcgen05.fence.after_thread_sync();
                        let d = tmem + T.pipeline.stage(acc_st) * BN;
                        for kb in 0..k_blocks {
                            T.pipeline.consumer_wait(stage, st);
                            let s = T.pipeline.stage(st);
                            if CTAS > 1 {
                                // The odd CTA's half of the stage, relayed by its warp 1.
                                let phase = T.pipeline.phase(st);
                                T.ptx.mbarrier.try_wait_sem(pair_full.ptr_to([s]), phase, "acquire", "cluster");
                            }
                            let a_addr = T.tile_addr(a_ring, [s, 0, 0]);
                            let b_addr = T.tile_addr(b_ring, [s, 0, 0]);
                            #[unroll]
                            for kk in 0..BLOCK_K / 16 {
                                // K block 0 overwrites the accumulator (`add`, enable-input-d, is false
                                // on its first MMA); one K = 16 step is 32 bytes along the row.
                                let a_desc =
                                    T.ptx.tcgen05.smem_desc(a_addr + 32 * kk, BLOCK_M, BLOCK_K, "bf16", "k", "128B");
                                let b_desc =
                                    T.ptx.tcgen05.smem_desc(b_addr + 32 * kk, b_rows, BLOCK_K, "bf16", "k", "128B");
                                let add = kk > 0 || kb > 0;
                                if CTAS > 1 {
                                    T.ptx.tcgen05.mma(d, a_desc, b_desc, add, "bf16", tile_m, BN, "cta_group::2");
                                } else {
                                    T.ptx.tcgen05.mma(d, a_desc, b_desc, add, "bf16", tile_m, BN);
                                }
                            }
                            // Arrives once these MMAs (every earlier one of this thread) finished
                            // reading; a pair's commits reach both CTAs' barriers.
                            // BUG 1 commits to the stage's `full` barrier instead.
                            let release =
                                if BUG == 1 { T.pipeline.full(stage, st) } else { T.pipeline.empty(stage, st) };
                            if CTAS > 1 {
                                T.ptx.tcgen05.commit_multicast(release, 3, "cta_group::2");
                            } else {
                                T.ptx.tcgen05.commit(release);
                            }
                            T.pipeline.advance(st);
                        }
                        let acc_full = T.pipeline.full(acc, acc_st);
                        if CTAS > 1 {
                            T.ptx.tcgen05.commit_multicast(acc_full, 3, "cta_group::2");
                        } else {
                            T.ptx.tcgen05.commit(acc_full);
                        }
                        T.pipeline.advance(acc_st);
                        t += step;
                    }
                    T.pipeline.producer_tail(acc, acc_st);
                } else {
                    if CTAS > 1 {
                        // The odd CTA's relay: each fill of its own stage is an arrival on the
                        // even CTA's `pair_full`.
                        let st = T.pipeline.consumer_state(stage);
                        let mut t = first;
                        while t < total {
                            for _kb in 0..k_blocks {
                                T.pipeline.consumer_wait(stage, st);
                                T.ptx.mbarrier.arrive_remote(pair_full.ptr_to([T.pipeline.stage(st)]), 0);
                                T.pipeline.advance(st);
                            }
                            t += step;
                        }
                    }
                }
            }
        } else {
            // Warps 2-5: per tile, 64 accumulator columns at a time from tensor memory to bf16
            // in shared memory to C with TMA stores.
            let lane = T.lane_idx();
            // Warp w accesses lanes 32 (w % 4) .. 32 (w % 4) + 31 (PTX ISA "Access
            // restrictions").
            let quarter = warp & 3;
            let tmem_rows = tmem + quarter * (EPI_ROWS << 16);
            let ew = warp - 2;
            let st = T.pipeline.consumer_state(acc);
            let mut used = 0;
            let mut vals = T.registers::<f32>([EPI_COLS]);
            let mut t = first;
            while t < total {
                let m0 = t % tiles_m * tile_m;
                let n0 = t / tiles_m * BN;
                if BUG != 2 {
                    T.pipeline.consumer_wait(acc, st);
                }
                if BUG != 3 {
                    T.ptx.tcgen05.fence.after_thread_sync();
                }
                let tile_tmem = tmem_rows + T.pipeline.stage(st) * BN;
                // Global row of this warp's 32 rows: the tile's, the CTA's 128 within a pair,
                // the warp's.
                let row0 = rank * BLOCK_M + m0 + quarter * EPI_ROWS;
                #[unroll]
                for chunk in 0..BN / EPI_COLS {
                    #[unroll]
                    for col in 0..EPI_COLS {
                        let at = tile_tmem + chunk * EPI_COLS + col;
                        vals[col] = T.ptx.tcgen05.ld::<f32>(at);
                    }
                    T.ptx.tcgen05.wait.ld();
                    if chunk + 1 == BN / EPI_COLS {
                        // Every load of this accumulator is complete: hand it back to the MMA
                        // thread.
                        if BUG != 4 {
                            T.ptx.tcgen05.fence.before_thread_sync();
                        }
                        T.pipeline.consumer_release(acc, st);
                    }
                    // The staging tile's previous TMA store (two chunks back) must have read it.
                    let staging = c_tiles[ew][used & 1];
                    if lane == 0 {
                        T.ptx.cp_async.bulk.wait_group_read(1);
                    }
                    T.cuda.warp_sync();
                    #[unroll]
                    for c16 in 0..EPI_COLS / 8 {
                        // Columns 8 c16 .. 8 c16 + 7 of row `lane`: one 16-byte chunk, swizzled.
                        let at = T.tile_addr(staging, [lane, c16 * 8]);
                        #[unroll]
                        for p in 0..4 {
                            let pair = T.pack.bf16x2(vals[c16 * 8 + 2 * p], vals[c16 * 8 + 2 * p + 1]);
                            T.ptx.st.shared(at + 4 * p, pair);
                        }
                    }
                    // Generic-proxy writes before the async-proxy (TMA) read; the warp converges
                    // so lane 0's store sees every lane's writes.
                    T.ptx.fence.proxy_async("shared::cta");
                    T.cuda.warp_sync();
                    if lane == 0 {
                        T.tma.store(c, [row0, n0 + chunk * EPI_COLS], staging);
                        T.ptx.cp_async.bulk.commit_group();
                    }
                    used += 1;
                }
                T.pipeline.advance(st);
                t += step;
            }
            // Stores still reading the staging tiles finish before the CTA exits.
            if lane == 0 {
                T.ptx.cp_async.bulk.wait_group(0);
            }
        }
    }

    // Tear-down: every tensor-memory access of the CTA (the pair) is done before warp 1 frees
    // the columns.
    T.ptx.tcgen05.fence.before_thread_sync();
    if CTAS > 1 {
        T.cuda.cluster_sync();
    } else {
        T.cuda.cta_sync();
    }
    if warp == 1 {
        T.ptx.tcgen05.fence.after_thread_sync();
        if CTAS > 1 {
            T.ptx.tcgen05.dealloc(tmem, TMEM_COLS, "cta_group::2");
        } else {
            T.ptx.tcgen05.dealloc(tmem, TMEM_COLS);
        }
    }
    if CTAS > 1 {
        // No CTA exits before its peer freed the pair's columns.
        T.cuda.cluster_sync();
    }
}

/// The DSL GEMM for `cfg` (its bug included), built once per configuration and cached.
pub fn kernel(cfg: &Sm100Config) -> phaser::codegen::Result<Kernel> {
    if let Some(p) = cfg.problem() {
        let mut k = phaser::codegen::builder::KernelBuilder::new("gemm_sm100_dsl", phaser::Target::Sm100a);
        k.error(format!("sm100 GEMM configuration: {p}"));
        return k.finish();
    }
    gemm_sm100_dsl::kernel_for(
        cfg.block_n,
        cfg.stages,
        cfg.acc_stages,
        cfg.ctas(),
        cfg.tmem_columns(),
        bug_code(cfg.bug),
    )
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "gemm_sm100_dsl",
            about: "the Blackwell bf16 GEMM written in the DSL: TMA producer, tcgen05.mma with commits into \
                    T.pipeline stage and accumulator barriers, TMEM->bf16->TMA-store epilogue (sm_100a; \
                    simulator or B200)",
            kernels: |_| Ok(vec![kernel(&super::gemm_sm100::config(false))?]),
            setup: |dev, size, seed| setup(dev, size, seed, false),
            check: super::gemm_sm100::check,
        },
        Example {
            name: "gemm_sm100_dsl_2cta",
            about: "the DSL Blackwell GEMM with .cta_group::2: a CTA pair issues M = 256 MMAs over both CTAs' \
                    shared and tensor memory (sm_100a; simulator or B200)",
            kernels: |_| Ok(vec![kernel(&super::gemm_sm100::config(true))?]),
            setup: |dev, size, seed| setup(dev, size, seed, true),
            check: super::gemm_sm100::check,
        },
    ]
}

/// The builder example's problem (same shapes, inputs, tensor maps and launch), with the DSL
/// kernel.
fn setup(dev: &Device, size: Size, seed: u64, two_cta: bool) -> Result<Problem, RuntimeError> {
    let k = kernel(&super::gemm_sm100::config(two_cta))?;
    super::gemm_sm100::setup_with(dev, size, seed, two_cta, k)
}
