//! FP8 (e4m3) GEMMs in the DSL, with the bf16 GEMM's structure (`gemm_dsl.rs`: warp-specialized,
//! TMA producer, `T.pipeline` stages, two wgmma consumer warpgroups, persistent grouped raster,
//! 2-CTA clusters with B multicast, stmatrix + TMA-store epilogue):
//! `C (M x N, bf16) = dequant(A (M x K, e4m3, K-major)) * dequant(B (N x K, e4m3, K-major))^T`.
//!
//! - `gemm_fp8_dsl`: DeepGEMM's fine-grained scaling. A has an f32 scale per row and 128-wide
//!   K block (`sfa`, `[K / 128][M rounded up to 4]`: a K block's scales are contiguous), B one per 128 x 128
//!   block (`sfb`, `[ceil(N / 128)][K / 128]`). Promotion as DeepGEMM does: each 128-K block
//!   (one pipeline stage, four k32 wgmmas) is accumulated by the tensor core into a fresh f32
//!   fragment, which is then scale-added (`a_scale[row] * b_scale`, one `fma.rn` per element)
//!   into a separate f32 register accumulator, so precision does not collapse over long K. The
//!   scales take their own path: each consumer thread loads its two rows' A scales and the
//!   tile's B scale through the read-only cache while the wgmmas run. N of the gallery's tile
//!   is 128, so one B scale covers the whole tile per K block; a 192-wide tile
//!   ([`blockwise_tiles`], shared scales) spans two scale blocks and takes two per stage. `#[comptime] FRAGS`: 1 waits for each K
//!   block's wgmmas (`wait_group 0`) before promoting it; 2 keeps two fragments in flight
//!   (block kb + 1 issued into the other before block kb is promoted, `wait_group 1`), so the
//!   tensor core is not idle while the warpgroup scale-adds. `#[comptime] SCALES_SMEM` = 1
//!   ([`Scales::Shared`], one fragment): the producer brings each stage's scales with it (A's
//!   by TMA over `sfa`, in the stage's bytes; B's by a store before its arrival) and the
//!   consumers read them from shared memory, DeepGEMM's way: no global load on their path.
//!   `#[comptime] OUT_E4M3` = 1 ([`Output::E4m3`], the gallery's `gemm_fp8_e4m3_out_dsl`):
//!   the epilogue quantizes C for the next FP8 GEMM instead of rounding it to bf16: per row and
//!   128-column block (the tile's columns) the amax of the f32 accumulator (in-thread, then
//!   `T.fragment.quad_max` over the quad holding the row), its f32 scale `max(amax, 2^-64) /
//!   448` into `sfc` in the A scales' layout, and e4m3 bytes `C * (448 / max(amax, 2^-64))`
//!   (RNE, satfinite) staged in shared memory and TMA-stored as packed pairs.
//!   `#[comptime] SPLIT` > 1 (`Tiles::split`, small M: more work units than tiles): the bf16
//!   GEMM's split-K walk (`gemm_dsl::work_unit`): each work unit is a cluster tile's slice of whole
//!   K blocks, promoted block by block with their own scales from a zero accumulator, so a
//!   slice's partial is the promoted f32 sum of its blocks; the partials go from the
//!   registers to the workspace `ws` (`[SPLIT, m, n]`, `gemm_dsl::store_partial_pair`) and
//!   `gemm_splitk_reduce`, launched after, sums them in slice order into bf16 C. Not with the
//!   e4m3 output (its scales need the reduced C's amax) nor the in-kernel reductions
//!   ([`split_refusal`]).
//!   `#[comptime] TURNS` = 1 ([`Issue::Turns`], FRAGS 1): the two consumer warpgroups issue
//!   their K blocks in turn through named barriers 3 and 4, so one's block is queued behind
//!   the other's. Measured slower than issuing together on an H100 (run 23c,
//!   `bench/gemm_fp8.md`): the gallery issues together.
//!   `#[comptime] RELEASE_WG` = 1 ([`Release::PerWarpgroup`], shared scales): each warpgroup
//!   hands a stage back once, its leader after a `bar.sync` of its 128 threads (named barrier
//!   1 + w), instead of once per warp; a quarter of the remote arrivals.
//! - `gemm_fp8_tensor_dsl`: per-tensor scaling (what `torch._scaled_mm` does): one accumulator
//!   over all of K, multiplied once by `scale = scale_a * scale_b` in the epilogue.
//!
//! K must be a multiple of 128 (a scale block per stage) and N of 16 (C's 16-byte rows, e4m3's
//! too); TMA
//! zero-fills loads past M and N and clips the stores.

use super::gemm_dsl::{
    store_partial_pair, tile_origin, work_unit, Reduce, ReduceLaunch, Tiles, CONSUMERS, EPI, THREADS,
};
use half::bf16;
use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, RuntimeError, Swizzle};
use phaser::{Kernel, F8E4M3};

/// Registers per thread at entry, and after `setmaxnreg` (as `gemm_dsl`).
const ENTRY_REGS: u32 = 65536 / THREADS / 8 * 8;
const PRODUCER_REGS: u32 = 40;
const CONSUMER_REGS: u32 = (65536 - 128 * PRODUCER_REGS) / (128 * CONSUMERS) / 8 * 8;
/// K per pipeline stage: one 128-byte swizzled row of e4m3, and the scales' K block.
pub const BLOCK_K: u32 = 128;
/// Rows and columns of a scale block of B (and the K width of one of A).
pub const SCALE_BLOCK: u32 = 128;

/// The blockwise kernel. `BN` is 128 (one B scale per tile and K block) or, with shared scales,
/// one fragment and bf16 C, 192 (two: [`BLOCKWISE_WIDTHS`]); [`kernel_release`] refuses others.
#[phaser::kernel(target = "sm_90a")]
pub fn gemm_fp8_dsl(
    #[tma(box = [CONSUMERS * 64, BLOCK_K], swizzle = "128B", dims = [m, k])] a: TensorMap<e4m3, 2>,
    #[tma(box = [BN / CLUSTER, BLOCK_K], swizzle = "128B", dims = [n, k])] b: TensorMap<e4m3, 2>,
    #[tma(box = [EPI, EPI], swizzle = "128B", dims = [m, n])] c: TensorMap<bf16, 2>,
    #[tma(box = [1, CONSUMERS * 64], dims = [kb, row])] sfa_map: TensorMap<f32, 2>,
    sfa: &[f32],
    sfb: &[f32],
    sfc: &mut [f32],
    ws: &mut [f32],
    m: u32,
    n: u32,
    k: u32,
    #[comptime] BN: u32,
    #[comptime] STAGES: u32,
    #[comptime] CLUSTER: u32,
    #[comptime] GROUP_M: u32,
    #[comptime] FRAGS: u32,
    #[comptime] SCALES_SMEM: u32,
    #[comptime] OUT_E4M3: u32,
    #[comptime] SPLIT: u32,
    #[comptime] TURNS: u32,
    #[comptime] RELEASE_WG: u32,
) {
    T.require_block(THREADS, 1, 1);
    T.max_registers(ENTRY_REGS);
    if CLUSTER > 1 {
        T.cluster_dims(CLUSTER, 1, 1);
    }
    if SPLIT > 1 {
        // Where `gemm_splitk_reduce` is launched as this grid's programmatic dependent (the
        // bf16 GEMM's rule, `gemm_dsl::ReduceLaunch`; a no-op for the default plain launch).
        T.ptx.griddepcontrol.launch_dependents();
    }
    // One m64 slab per consumer warpgroup: the fresh fragment and the promoted accumulator
    // are 2 x BN / 2 registers.
    let bm = CONSUMERS * 64;
    // SCALES_SMEM: every consumer thread reads its stage's scales from shared memory, so each
    // warp releases the stage after its own reads (one arrival per warp, DeepGEMM's), or with
    // RELEASE_WG ([`Release::PerWarpgroup`]) one leader per warpgroup after a `bar.sync` of its
    // 128 threads; global scales: one leader per warpgroup, after its `wgmma.wait_group`.
    let pipe = if SCALES_SMEM == 1 && RELEASE_WG == 0 {
        T.pipeline.new_cluster(STAGES, CONSUMERS * 4, CLUSTER, "cta")
    } else {
        T.pipeline.new_cluster_threads(STAGES, CONSUMERS, CLUSTER, "cta")
    };
    let a_ring = T.alloc_shared::<e4m3>([STAGES, CONSUMERS, 64, BLOCK_K], "128B");
    let b_ring = T.alloc_shared::<e4m3>([STAGES, CLUSTER, BN / CLUSTER, BLOCK_K], "128B");
    let c_tiles = T.alloc_shared::<bf16>([CONSUMERS, 2, EPI, EPI], "128B");
    // SCALES_SMEM: a stage's A scales (its K block's, the tile's BM rows: TMA, in the stage's
    // bytes) and its B scale (the producer's store, before its arrival on `full`).
    let sfa_ring = T.alloc_shared::<f32>([STAGES, 1, CONSUMERS * 64]);
    // B's scales of a stage: one per 128-column block the tile spans (1 at BN = 128; 2 at
    // BN = 192, whose tiles start at a multiple of 64: columns 0..191 or 64..255 of blocks).
    let sfb_ring = T.alloc_shared::<f32>([STAGES, (BN + SCALE_BLOCK - 1) / SCALE_BLOCK]);
    let stage_bytes = a_ring[0].bytes() + b_ring[0].bytes();
    let scale_bytes = sfa_ring[0].bytes();
    T.pipeline.init(pipe);

    // The walk every role repeats: persistent, one cluster per step, over `SPLIT` work units
    // (K slices of whole K blocks, `split_unit`) per cluster tile.
    let tiles_n = (n + BN - 1) / BN;
    let cluster_rows = (m + bm * CLUSTER - 1) / (bm * CLUSTER);
    let tiles = tiles_n * cluster_rows;
    let total = tiles * SPLIT;
    let first = T.block_idx() / CLUSTER;
    let step = T.grid_dim() / CLUSTER;
    let rank = if CLUSTER > 1 { T.cluster_cta_rank() } else { 0 };
    let k_blocks = k / BLOCK_K;
    // A slice without a K block would wait for a stage no producer fills (a hang): the host
    // refuses such a launch (`split_problem`); a launch that skips it traps.
    if SPLIT > 1 {
        if k_blocks < SPLIT {
            T.ptx.trap();
        }
    }
    // `sfa`'s row stride: M rounded up to 4 (TMA's 16-byte global strides; `sfa_stride`).
    let sfa_row = (m + 3) / 4 * 4;
    let mut origin = T.registers::<u32>([2]);
    let mut unit = T.registers::<u32>([4]);

    let wg = T.warpgroup_idx();
    if wg == 0 {
        T.ptx.setmaxnreg.dec(PRODUCER_REGS);
        if T.warp_idx() == 0 {
            if T.ptx.elect_sync() {
                let st = T.pipeline.producer_state(pipe);
                let mut t = first;
                while t < total {
                    work_unit(unit, origin, t, tiles_n, cluster_rows, rank, GROUP_M, CLUSTER, bm, BN, k_blocks, SPLIT);
                    let kb0 = unit[1];
                    let kb1 = unit[2];
                    let m0 = origin[0];
                    let n0 = origin[1];
                    let b_scales = n0 / SCALE_BLOCK * k_blocks;
                    // A wide tile's second column block (the last block where the tile's
                    // columns past it are all past N: their C is clipped).
                    let b_scales1 =
                        if BN > SCALE_BLOCK { (n0 / SCALE_BLOCK + 1).min((n - 1) / SCALE_BLOCK) * k_blocks } else { 0 };
                    for kb in kb0..kb1 {
                        let k0 = kb * BLOCK_K;
                        // The B scales' loads are issued before the wait for the stage to empty,
                        // so their latency hides under the wait rather than delaying the refill.
                        let sb = if SCALES_SMEM == 1 { T.ld.nc(sfb, b_scales + kb) } else { 0.0 };
                        let sb1 = if SCALES_SMEM == 1 && BN > SCALE_BLOCK { T.ld.nc(sfb, b_scales1 + kb) } else { 0.0 };
                        T.pipeline.producer_acquire(pipe, st);
                        let s = T.pipeline.stage(st);
                        if SCALES_SMEM == 1 {
                            sfb_ring[s][0] = sb;
                            if BN > SCALE_BLOCK {
                                sfb_ring[s][1] = sb1;
                            }
                        }
                        let full = T.pipeline.producer_commit(pipe, st, stage_bytes + SCALES_SMEM * scale_bytes);
                        T.tma.load(a_ring[s], a, [m = m0, k = k0], full);
                        if SCALES_SMEM == 1 {
                            T.tma.load(sfa_ring[s], sfa_map, [kb = kb, row = m0], full);
                        }
                        if CLUSTER > 1 {
                            let slice = BN / CLUSTER;
                            let mask = (1 << CLUSTER) - 1;
                            T.tma.load_multicast(b_ring[s][rank], b, [n = n0 + rank * slice, k = k0], full, mask);
                        } else {
                            T.tma.load(b_ring[s][0], b, [n = n0, k = k0], full);
                        }
                        T.pipeline.advance(st);
                    }
                    t += step;
                }
                T.pipeline.producer_tail(pipe, st);
            }
        }
    } else {
        T.ptx.setmaxnreg.inc(CONSUMER_REGS);
        let cw = wg - 1;
        let tid = T.thread_idx() & 127;
        let leader = tid == 0;
        let bar_id = cw + 1;
        let lane = tid & 31;
        let st_row = (tid >> 5) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        let st_col = (lane >> 4) * 8;
        // The tensor core's fragments (one per K block in flight), and the promoted f32
        // accumulator.
        let mut acc = T.registers::<f32>([FRAGS, BN / 2]);
        let mut sum = T.registers::<f32>([BN / 2]);
        // This thread's first row in the warpgroup's 64 (the second is 8 below).
        let frag_row = T.fragment.row(acc[0], 0);
        // TURNS ([`Issue::Turns`]): the warpgroups issue their K blocks in turn (named barrier
        // 3 + w is warpgroup w's turn: its 128 threads wait there for the other's 128
        // arrivals), so the tensor core runs one's block while the other promotes its own.
        // The second gives the first its first turn.
        let my_turn = 3 + cw;
        let their_turn = 4 - cw;
        if TURNS == 1 {
            if cw == 1 {
                T.ptx.bar.arrive(their_turn, 256);
            }
        }
        let read = T.pipeline.consumer_state(pipe);
        // FRAGS = 2: the stage being promoted, one behind `read` (the stage issued last).
        let rel = if FRAGS == 2 { T.pipeline.consumer_state(pipe) } else { read };
        let mut t = first;
        while t < total {
            work_unit(unit, origin, t, tiles_n, cluster_rows, rank, GROUP_M, CLUSTER, bm, BN, k_blocks, SPLIT);
            let kb0 = unit[1];
            let kb1 = unit[2];
            let m0 = origin[0];
            let n0 = origin[1];
            // Rows past M read the last row's scales (their C is clipped by the store).
            let row0 = (m0 + cw * 64 + frag_row).min(m - 1);
            let row1 = (m0 + cw * 64 + frag_row + 8).min(m - 1);
            let b_scales = n0 / SCALE_BLOCK * k_blocks;
            #[unroll]
            for i in 0..BN / 2 {
                sum[i] = 0.0;
            }
            // Each K block of the unit (a slice's with split-K) promoted with its own scales: a
            // slice's partial is the promoted f32 sum of its blocks.
            if SCALES_SMEM == 1 {
                for kb in kb0..kb1 {
                    T.pipeline.consumer_wait(pipe, read);
                    let s = T.pipeline.stage(read);
                    // The stage's scales, read before its wgmmas are issued (their latency
                    // hides under the issue); the warp's release below follows the reads.
                    let sb = sfb_ring[s][0];
                    let sb1 = if BN > SCALE_BLOCK { sfb_ring[s][1] } else { sb };
                    let a0 = sfa_ring[s][0][cw * 64 + frag_row];
                    let a1 = sfa_ring[s][0][cw * 64 + frag_row + 8];
                    if TURNS == 1 {
                        T.ptx.bar.sync(my_turn, 256);
                    }
                    T.ptx.wgmma.fence();
                    #[unroll]
                    for kk in 0..BLOCK_K / 32 {
                        T.ptx.wgmma.mma_async(acc[0], a_ring[s][cw], b_ring[s], kk, kk > 0);
                    }
                    T.ptx.wgmma.commit_group();
                    if TURNS == 1 {
                        T.ptx.bar.arrive(their_turn, 256);
                    }
                    T.ptx.wgmma.wait_group(0);
                    if RELEASE_WG == 1 {
                        // Every thread of the warpgroup read its scales (the barrier orders
                        // those reads before the leader's release): one arrival per warpgroup.
                        T.ptx.bar.sync(bar_id, 128);
                        if leader {
                            T.pipeline.consumer_release(pipe, read);
                        }
                    } else {
                        // The stage's wgmmas retired and this warp read its scales: one
                        // arrival per warp (the pipeline elects lane 0).
                        T.pipeline.consumer_release(pipe, read);
                    }
                    T.pipeline.advance(read);
                    let s0 = a0 * sb;
                    let s1 = a1 * sb;
                    if BN == SCALE_BLOCK {
                        #[unroll]
                        for i in 0..BN / 2 {
                            sum[i] = acc[0][i].mul_add(T.fragment.of_row(acc[0], i, s0, s1), sum[i]);
                        }
                    } else {
                        // BN = 192: the tile's columns from `128 - n0 % 128` on (128 or 64; a
                        // multiple of 8, so each 8-column group of registers `4g..4g + 3` is in
                        // one block) take the second block's scale. The tile's start is uniform,
                        // so the branch is, and each copy picks its scales when it is built.
                        let t0 = a0 * sb1;
                        let t1 = a1 * sb1;
                        if n0 % SCALE_BLOCK == 0 {
                            #[unroll]
                            for i in 0..BN / 2 {
                                if 8 * (i / 4) < SCALE_BLOCK {
                                    sum[i] = acc[0][i].mul_add(T.fragment.of_row(acc[0], i, s0, s1), sum[i]);
                                } else {
                                    sum[i] = acc[0][i].mul_add(T.fragment.of_row(acc[0], i, t0, t1), sum[i]);
                                }
                            }
                        } else {
                            #[unroll]
                            for i in 0..BN / 2 {
                                if 8 * (i / 4) < SCALE_BLOCK / 2 {
                                    sum[i] = acc[0][i].mul_add(T.fragment.of_row(acc[0], i, s0, s1), sum[i]);
                                } else {
                                    sum[i] = acc[0][i].mul_add(T.fragment.of_row(acc[0], i, t0, t1), sum[i]);
                                }
                            }
                        }
                    }
                }
            } else if FRAGS == 1 {
                for kb in kb0..kb1 {
                    T.pipeline.consumer_wait(pipe, read);
                    let s = T.pipeline.stage(read);
                    if TURNS == 1 {
                        T.ptx.bar.sync(my_turn, 256);
                    }
                    T.ptx.wgmma.fence();
                    #[unroll]
                    for kk in 0..BLOCK_K / 32 {
                        T.ptx.wgmma.mma_async(acc[0], a_ring[s][cw], b_ring[s], kk, kk > 0);
                    }
                    T.ptx.wgmma.commit_group();
                    if TURNS == 1 {
                        T.ptx.bar.arrive(their_turn, 256);
                    }
                    // The K block's scales load while the wgmmas run.
                    let sb = T.ld.nc(sfb, b_scales + kb);
                    let s0 = T.ld.nc(sfa, kb * sfa_row + row0) * sb;
                    let s1 = T.ld.nc(sfa, kb * sfa_row + row1) * sb;
                    T.ptx.wgmma.wait_group(0);
                    // The stage's wgmmas retired: it can be refilled while this block is promoted.
                    if leader {
                        T.pipeline.consumer_release(pipe, read);
                    }
                    T.pipeline.advance(read);
                    #[unroll]
                    for i in 0..BN / 2 {
                        sum[i] = acc[0][i].mul_add(T.fragment.of_row(acc[0], i, s0, s1), sum[i]);
                    }
                }
            } else {
                // Two fragments in flight: block kb + 1's wgmmas are issued into the other
                // fragment before block kb is promoted, so the tensor core has a K block
                // queued while this warpgroup waits for block kb and scale-adds it. Block 0
                // goes into fragment 0; the loop takes two blocks a turn, so each
                // fragment's index is known when the kernel is built.
                T.pipeline.consumer_wait(pipe, read);
                let s = T.pipeline.stage(read);
                T.ptx.wgmma.fence();
                #[unroll]
                for kk in 0..BLOCK_K / 32 {
                    T.ptx.wgmma.mma_async(acc[0], a_ring[s][cw], b_ring[s], kk, kk > 0);
                }
                T.ptx.wgmma.commit_group();
                T.pipeline.advance(read);
                let mut kb = kb0;
                while kb < kb1 {
                    #[unroll]
                    for f in 0..2 {
                        let blk = kb + f;
                        if blk < kb1 {
                            let sb = T.ld.nc(sfb, b_scales + blk);
                            let s0 = T.ld.nc(sfa, blk * sfa_row + row0) * sb;
                            let s1 = T.ld.nc(sfa, blk * sfa_row + row1) * sb;
                            if blk + 1 < kb1 {
                                T.pipeline.consumer_wait(pipe, read);
                                let s = T.pipeline.stage(read);
                                T.ptx.wgmma.fence();
                                #[unroll]
                                for kk in 0..BLOCK_K / 32 {
                                    T.ptx.wgmma.mma_async(acc[1 - f], a_ring[s][cw], b_ring[s], kk, kk > 0);
                                }
                                T.ptx.wgmma.commit_group();
                                T.pipeline.advance(read);
                            }
                            // Block blk retired (only block blk + 1 may still run) ...
                            T.ptx.wgmma.wait_group(1);
                            if blk + 1 >= kb1 {
                                // ... and, the last block, nothing runs behind it.
                                T.ptx.wgmma.wait_group(0);
                            }
                            #[unroll]
                            for i in 0..BN / 2 {
                                sum[i] = acc[f][i].mul_add(T.fragment.of_row(acc[f], i, s0, s1), sum[i]);
                            }
                            // Block blk's stage is free once its wgmmas retired.
                            if leader {
                                T.pipeline.consumer_release(pipe, rel);
                            }
                            T.pipeline.advance(rel);
                        }
                    }
                    kb += 2;
                }
                // Every group retired already (the last block waited with 0), but ptxas does
                // not know the paths that skip it (`blk < kb1` false) are never taken and
                // would inject a wait of its own (C7517): this one says so and costs nothing.
                T.ptx.wgmma.wait_group(0);
            }

            if SPLIT > 1 {
                // Split-K: this slice's promoted f32 sums into its slice of the workspace
                // `[SPLIT, m, n]` (the bf16 GEMM's store: `store_partial_pair`);
                // `gemm_splitk_reduce` sums the slices in slice order into C.
                let base = unit[3] * m * n;
                let row0 = m0 + cw * 64;
                #[unroll]
                for p in 0..BN / 4 {
                    let row = row0 + T.fragment.row(sum, 2 * p);
                    let col = n0 + T.fragment.col(sum, 2 * p);
                    store_partial_pair(ws, base, row, col, m, n, sum[2 * p], sum[2 * p + 1]);
                }
            } else if OUT_E4M3 == 1 {
                // [`Output::E4m3`]: the tile's 128 columns are one column block of C's scales.
                // Each of this thread's two rows: amax over its 32 values, then over the quad
                // that holds the row; `inv = 448 / max(amax, floor)`, the stored scale
                // `max(amax, floor) / 448`.
                let mut amax0 = 0.0;
                let mut amax1 = 0.0;
                #[unroll]
                for i in 0..BN / 2 {
                    let x = sum[i].abs();
                    amax0 = T.fragment.of_row(sum, i, amax0.max(x), amax0);
                    amax1 = T.fragment.of_row(sum, i, amax1, amax1.max(x));
                }
                let a0 = T.fragment.quad_max(amax0).max(AMAX_FLOOR);
                let a1 = T.fragment.quad_max(amax1).max(AMAX_FLOOR);
                let inv0 = E4M3_MAX / a0;
                let inv1 = E4M3_MAX / a1;
                // One staging tile holds the warpgroup's 64 x 128 bytes (64 x 64 packed pairs);
                // the previous tile's store must have read it.
                let staging = c_tiles[cw][0];
                if leader {
                    T.ptx.cp_async.bulk.wait_group_read(0);
                }
                T.ptx.bar.sync(bar_id, 128);
                #[unroll]
                for p in 0..BN / 4 {
                    // Registers 2p, 2p + 1: adjacent columns of one row, one packed pair.
                    let i = 2 * p;
                    let inv = T.fragment.of_row(sum, i, inv0, inv1);
                    let pair = T.pack.e4m3x2(sum[i] * inv, sum[i + 1] * inv);
                    let at = T.tile_addr(staging, [T.fragment.row(sum, i), T.fragment.col(sum, i) / 2]);
                    T.ptx.st.shared(at, pair);
                }
                // The scales, `sfa`'s layout (`[ceil(N / 128)][sfa_stride(M)]`), by the thread
                // holding column 0 of the rows; rows past M have none.
                if T.fragment.col(sum, 0) == 0 {
                    let scales = n0 / SCALE_BLOCK * sfa_row;
                    let r0 = m0 + cw * 64 + frag_row;
                    if r0 < m {
                        sfc[scales + r0] = a0 / E4M3_MAX;
                    }
                    if r0 + 8 < m {
                        sfc[scales + r0 + 8] = a1 / E4M3_MAX;
                    }
                }
                T.ptx.fence.proxy_async("shared::cta");
                T.ptx.bar.sync(bar_id, 128);
                if leader {
                    T.tma.store(c, [m = m0 + cw * 64, n = n0 / 2], staging);
                    T.ptx.cp_async.bulk.commit_group();
                }
            } else {
                #[unroll]
                for sub in 0..BN / EPI {
                    let staging = c_tiles[cw][sub % 2];
                    // The store issued two sub-tiles ago must have read this staging tile. With
                    // an odd count a tile (BN = 192), the previous tile's last store, the
                    // latest, used this one: wait for every store (issued before this tile's
                    // mainloop, so long done; the bf16 GEMM's rule).
                    if leader {
                        if sub == 0 && (BN / EPI) % 2 == 1 {
                            T.ptx.cp_async.bulk.wait_group_read(0);
                        } else {
                            T.ptx.cp_async.bulk.wait_group_read(1);
                        }
                    }
                    T.ptx.bar.sync(bar_id, 128);
                    #[unroll]
                    for q in 0..EPI / 16 {
                        let g = (sub * EPI + q * 16) / 8;
                        T.ptx.stmatrix.x4(
                            T.tile_addr(staging, [st_row, q * 16 + st_col]),
                            T.pack.bf16x2(sum[4 * g], sum[4 * g + 1]),
                            T.pack.bf16x2(sum[4 * g + 2], sum[4 * g + 3]),
                            T.pack.bf16x2(sum[4 * g + 4], sum[4 * g + 5]),
                            T.pack.bf16x2(sum[4 * g + 6], sum[4 * g + 7]),
                        );
                    }
                    T.ptx.fence.proxy_async("shared::cta");
                    T.ptx.bar.sync(bar_id, 128);
                    if leader {
                        T.tma.store(c, [m = m0 + cw * 64, n = n0 + sub * EPI], staging);
                        T.ptx.cp_async.bulk.commit_group();
                    }
                }
            }
            t += step;
        }
        if TURNS == 1 {
            // The second warpgroup's last arrival gives the first a turn it does not take:
            // consumed, so no named barrier is left half arrived.
            if cw == 0 {
                T.ptx.bar.sync(my_turn, 256);
            }
        }
        if leader {
            T.ptx.cp_async.bulk.wait_group(0);
        }
    }
}

/// The per-tensor kernel: `scale` is `scale_a * scale_b`, applied to the f32 accumulator once.
#[phaser::kernel(target = "sm_90a")]
pub fn gemm_fp8_tensor_dsl(
    #[tma(box = [CONSUMERS * WG_M, BLOCK_K], swizzle = "128B", dims = [m, k])] a: TensorMap<e4m3, 2>,
    #[tma(box = [BN / CLUSTER, BLOCK_K], swizzle = "128B", dims = [n, k])] b: TensorMap<e4m3, 2>,
    #[tma(box = [EPI, EPI], swizzle = "128B", dims = [m, n])] c: TensorMap<bf16, 2>,
    scale: f32,
    m: u32,
    n: u32,
    k: u32,
    #[comptime] BN: u32,
    #[comptime] WG_M: u32,
    #[comptime] STAGES: u32,
    #[comptime] CLUSTER: u32,
    #[comptime] GROUP_M: u32,
) {
    T.require_block(THREADS, 1, 1);
    T.max_registers(ENTRY_REGS);
    if CLUSTER > 1 {
        T.cluster_dims(CLUSTER, 1, 1);
    }
    let bm = CONSUMERS * WG_M;
    let slabs = WG_M / 64;
    let pipe = T.pipeline.new_cluster_threads(STAGES, CONSUMERS, CLUSTER, "cta");
    let a_ring = T.alloc_shared::<e4m3>([STAGES, bm / 64, 64, BLOCK_K], "128B");
    let b_ring = T.alloc_shared::<e4m3>([STAGES, CLUSTER, BN / CLUSTER, BLOCK_K], "128B");
    let c_tiles = T.alloc_shared::<bf16>([CONSUMERS, 2, EPI, EPI], "128B");
    let stage_bytes = a_ring[0].bytes() + b_ring[0].bytes();
    T.pipeline.init(pipe);

    let tiles_n = (n + BN - 1) / BN;
    let cluster_rows = (m + bm * CLUSTER - 1) / (bm * CLUSTER);
    let total = tiles_n * cluster_rows;
    let first = T.block_idx() / CLUSTER;
    let step = T.grid_dim() / CLUSTER;
    let rank = if CLUSTER > 1 { T.cluster_cta_rank() } else { 0 };
    let k_blocks = k / BLOCK_K;
    let mut origin = T.registers::<u32>([2]);

    let wg = T.warpgroup_idx();
    if wg == 0 {
        T.ptx.setmaxnreg.dec(PRODUCER_REGS);
        if T.warp_idx() == 0 {
            if T.ptx.elect_sync() {
                let st = T.pipeline.producer_state(pipe);
                let mut t = first;
                while t < total {
                    tile_origin(origin, t, tiles_n, cluster_rows, rank, GROUP_M, CLUSTER, bm, BN);
                    let m0 = origin[0];
                    let n0 = origin[1];
                    for kb in 0..k_blocks {
                        let k0 = kb * BLOCK_K;
                        T.pipeline.producer_acquire(pipe, st);
                        let full = T.pipeline.producer_commit(pipe, st, stage_bytes);
                        let s = T.pipeline.stage(st);
                        T.tma.load(a_ring[s], a, [m = m0, k = k0], full);
                        if CLUSTER > 1 {
                            let slice = BN / CLUSTER;
                            let mask = (1 << CLUSTER) - 1;
                            T.tma.load_multicast(b_ring[s][rank], b, [n = n0 + rank * slice, k = k0], full, mask);
                        } else {
                            T.tma.load(b_ring[s][0], b, [n = n0, k = k0], full);
                        }
                        T.pipeline.advance(st);
                    }
                    t += step;
                }
                T.pipeline.producer_tail(pipe, st);
            }
        }
    } else {
        T.ptx.setmaxnreg.inc(CONSUMER_REGS);
        let cw = wg - 1;
        let tid = T.thread_idx() & 127;
        let leader = tid == 0;
        let bar_id = cw + 1;
        let slab0 = cw * slabs;
        let lane = tid & 31;
        let st_row = (tid >> 5) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        let st_col = (lane >> 4) * 8;
        let mut acc = T.registers::<f32>([slabs, BN / 2]);
        let read = T.pipeline.consumer_state(pipe);
        let release = T.pipeline.consumer_state(pipe);
        let mut t = first;
        while t < total {
            tile_origin(origin, t, tiles_n, cluster_rows, rank, GROUP_M, CLUSTER, bm, BN);
            let m0 = origin[0];
            let n0 = origin[1];
            T.pipeline.consumer_wait(pipe, read);
            let s = T.pipeline.stage(read);
            T.ptx.wgmma.fence();
            #[unroll]
            for kk in 0..BLOCK_K / 32 {
                #[unroll]
                for j in 0..slabs {
                    T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s], kk, kk > 0);
                }
            }
            T.ptx.wgmma.commit_group();
            T.pipeline.advance(read);
            for _kb in 1..k_blocks {
                T.pipeline.consumer_wait(pipe, read);
                let s = T.pipeline.stage(read);
                T.ptx.wgmma.fence();
                #[unroll]
                for kk in 0..BLOCK_K / 32 {
                    #[unroll]
                    for j in 0..slabs {
                        T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s], kk, true);
                    }
                }
                T.ptx.wgmma.commit_group();
                T.ptx.wgmma.wait_group(1);
                if leader {
                    T.pipeline.consumer_release(pipe, release);
                }
                T.pipeline.advance(release);
                T.pipeline.advance(read);
            }
            T.ptx.wgmma.wait_group(0);
            if leader {
                T.pipeline.consumer_release(pipe, release);
            }
            T.pipeline.advance(release);

            // The per-tensor scales, once.
            #[unroll]
            for j in 0..slabs {
                #[unroll]
                for i in 0..BN / 2 {
                    acc[j][i] = acc[j][i] * scale;
                }
            }
            #[unroll]
            for j in 0..slabs {
                #[unroll]
                for sub in 0..BN / EPI {
                    let staging = c_tiles[cw][(j * (BN / EPI) + sub) % 2];
                    if leader {
                        T.ptx.cp_async.bulk.wait_group_read(1);
                    }
                    T.ptx.bar.sync(bar_id, 128);
                    #[unroll]
                    for q in 0..EPI / 16 {
                        let g = (sub * EPI + q * 16) / 8;
                        T.ptx.stmatrix.x4(
                            T.tile_addr(staging, [st_row, q * 16 + st_col]),
                            T.pack.bf16x2(acc[j][4 * g], acc[j][4 * g + 1]),
                            T.pack.bf16x2(acc[j][4 * g + 2], acc[j][4 * g + 3]),
                            T.pack.bf16x2(acc[j][4 * g + 4], acc[j][4 * g + 5]),
                            T.pack.bf16x2(acc[j][4 * g + 6], acc[j][4 * g + 7]),
                        );
                    }
                    T.ptx.fence.proxy_async("shared::cta");
                    T.ptx.bar.sync(bar_id, 128);
                    if leader {
                        T.tma.store(c, [m = m0 + cw * WG_M + 64 * j, n = n0 + sub * EPI], staging);
                        T.ptx.cp_async.bulk.commit_group();
                    }
                }
            }
            t += step;
        }
        if leader {
            T.ptx.cp_async.bulk.wait_group(0);
        }
    }
}

/// Which scaling a kernel applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scaling {
    /// DeepGEMM's: per 1 x 128 of A, per 128 x 128 of B, promoted per K block.
    Blockwise,
    /// One scale per tensor (`torch._scaled_mm`), applied in the epilogue.
    PerTensor,
}

/// The gallery's configurations. Blockwise: 128 x 128 tiles (one B scale per tile and K block;
/// two 64-register accumulators per thread), 5 stages of 32 KiB, 2-CTA clusters with B
/// multicast. Per-tensor: the bf16 GEMM's 128 x 256 tiles, 4 stages (48 KiB each).
pub fn tiles(scaling: Scaling) -> Tiles {
    match scaling {
        Scaling::Blockwise => Tiles { block_n: SCALE_BLOCK, stages: 5, ..Tiles::gallery(true) },
        Scaling::PerTensor => Tiles::gallery(true),
    }
}

/// The configuration of `scaling` for M rows, and why: [`tiles`], without a cluster where
/// M fits one block row. A cluster pairs two block rows of M (its CTAs share B by multicast),
/// so at M ≤ `block_m` its second CTA's rows are all past M: it multiplies the TMA's zero fill
/// while its peer waits on the releases they share. Run 23a (H100, bench/gemm_fp8.md): at
/// 64 and 128 x 8192 x 8192 blockwise, 0.913x and 0.945x cuBLASLt without a cluster against
/// 0.79x with one.
pub fn tiles_for(scaling: Scaling, m: u32) -> (Tiles, &'static str) {
    let t = tiles(scaling);
    if m <= t.block_m() {
        (Tiles { cluster: 1, ..t }, "no cluster: M fits one block row, a 2-CTA cluster's second CTA would hold no rows")
    } else {
        (t, "2-CTA cluster along M, B multicast: M spans more than one block row")
    }
}

/// The 192-wide blockwise tile's rate over the 128-wide one's per useful flop, wave
/// quantization aside: fewer wgmma operand bytes and stage bytes per flop. Fitted to run 25
/// (H100, `bench/gemm_fp8.md`): at 8192³ the 192-wide tile was 1.021x and 1.048x the 128-wide
/// one in two passes, of which the waves (0.985 of the work useful against 0.970) explain
/// 1.015x; at 4096³ and 512x8192x8192 its waves (0.86, 0.65) lost 14% and 27%, as they predict.
pub const WIDE_TILE_RATE: f64 = 1.02;

/// The share of the SMs' MMA work in whole waves that is useful for an `m x n` C in tiles
/// `block_m x block_n` and clusters of `cluster` CTAs along M over `sms` SMs: the tiles' waste
/// at the edges times the last wave's idle CTA slots (a persistent grid walks the tiles in
/// waves of `sms / cluster` cluster tiles). 0 for an empty C or a zero dimension of the tile.
pub fn wave_efficiency(m: u32, n: u32, block_m: u32, block_n: u32, cluster: u32, sms: u32) -> f64 {
    if m == 0 || n == 0 || block_m == 0 || block_n == 0 || cluster == 0 {
        return 0.0;
    }
    let rows = (m as u64).div_ceil(block_m as u64 * cluster as u64);
    let cols = (n as u64).div_ceil(block_n as u64);
    let slots = (sms / cluster).max(1) as u64;
    let tiles = rows * cols;
    let waves = tiles as f64 / slots as f64;
    // Each factor is an exact integer over a larger one (below 2^53), so each quotient is at most 1.
    let edges =
        (m as f64 / (rows * block_m as u64 * cluster as u64) as f64) * (n as f64 / (cols * block_n as u64) as f64);
    edges * waves / waves.ceil()
}

/// The configuration of `scaling` storing `output` for an `m x n` C over `sms` SMs, and why:
/// [`tiles_for`]'s cluster, and, blockwise into bf16 C with the gallery's shared scales, the
/// width of [`BLOCKWISE_WIDTHS`] whose [`wave_efficiency`] times its rate ([`WIDE_TILE_RATE`]
/// for 192) is the highest (a tie keeps 128).
pub fn choose(scaling: Scaling, output: Output, m: u32, n: u32, sms: u32) -> (Tiles, String) {
    let (t, why) = tiles_for(scaling, m);
    if scaling != Scaling::Blockwise || output != Output::Bf16 {
        return (t, why.to_string());
    }
    let score = |w: u32| {
        let rate = if w > SCALE_BLOCK { WIDE_TILE_RATE } else { 1.0 };
        (wave_efficiency(m, n, t.block_m(), w, t.cluster, sms), rate)
    };
    let (narrow, wide) = (score(SCALE_BLOCK), score(192));
    let pick = if wide.0 * wide.1 > narrow.0 * narrow.1 { 192 } else { SCALE_BLOCK };
    let t = Tiles { cluster: t.cluster, ..blockwise_tiles(pick) };
    let why = format!(
        "{why}; {pick} wide: of the SMs' work {:.3} useful at 128 wide, {:.3} at 192 (x{WIDE_TILE_RATE} its rate)",
        narrow.0, wide.0
    );
    (t, why)
}

/// The blockwise kernel's fragments in flight, the gallery's choice: 1 (each K block waited
/// for, then promoted). Two are slower on the H200 (run 21: 0.77x against 0.90x of cuBLASLt at
/// 4096³; `bench/gemm_fp8.md`).
pub const FRAGS: u32 = 1;

/// Where the gallery's blockwise kernel reads its scales: shared memory, brought with each
/// stage (run 21: 0.98x / 0.97x of cuBLASLt at 4096³ / 8192³, against 0.90x / 0.82x from
/// global memory; `bench/gemm_fp8.md`). The per-tensor kernel has no per-block scales.
pub const SCALES: Scales = Scales::Shared;

/// The gallery's scale path for `scaling` ([`SCALES`] blockwise).
fn gallery_scales(scaling: Scaling) -> Scales {
    match scaling {
        Scaling::Blockwise => SCALES,
        Scaling::PerTensor => Scales::Global,
    }
}

/// The kernel of `scaling` for `t`, blockwise with the gallery's [`FRAGS`] and [`SCALES`].
pub fn kernel(scaling: Scaling, t: &Tiles) -> phaser::codegen::Result<Kernel> {
    kernel_with(scaling, t, FRAGS, gallery_scales(scaling))
}

/// The kernel of `scaling` for `t` (the blockwise kernel has one m64 slab per warpgroup and
/// N = 128 per tile: `t.wg_m` and `t.block_n` must be 64 and 128, else a build error) with
/// `frags` accumulator fragments in flight: blockwise 1 or 2 (2: K block kb + 1 is issued
/// before block kb is promoted); per-tensor has one accumulator over all of K, so 1.
pub fn kernel_with_frags(scaling: Scaling, t: &Tiles, frags: u32) -> phaser::codegen::Result<Kernel> {
    kernel_with(scaling, t, frags, Scales::Global)
}

/// Where the blockwise kernel's consumers read their scales from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scales {
    /// `ld.global.nc` every K block, by each consumer thread (the per-tensor kernel's; the
    /// blockwise kernel's before run 21).
    Global,
    /// Shared memory, brought in with each stage by the producer (A's by TMA, counted in the
    /// stage's bytes; B's one value by a store before its arrival), read after the stage's
    /// full wait; each consumer warp releases the stage (DeepGEMM's). One fragment only.
    Shared,
}

/// [`kernel_with_frags`] with the scales read from `scales`.
pub fn kernel_with(scaling: Scaling, t: &Tiles, frags: u32, scales: Scales) -> phaser::codegen::Result<Kernel> {
    kernel_out(scaling, t, frags, scales, Output::Bf16)
}

/// What the blockwise kernel's epilogue stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// C in bf16 (round to nearest even), through stmatrix and a TMA store.
    Bf16,
    /// C quantized for the next FP8 GEMM (DeepGEMM's and transformer-engine's fused output
    /// quantization): per row and 128-column block, `amax` of the f32 values, `a = max(amax,
    /// AMAX_FLOOR)`, the f32 scale `s = a / 448` (one `div.rn`) in `sfc`, laid out as the A
    /// scales (`[ceil(N / 128)][sfa_stride(M)]`), and e4m3 `C * (448 / a)` (the f32 reciprocal
    /// by one `div.rn`, the product rounded to f32, then `cvt.rn.satfinite`: nearest even,
    /// clamped to ±448): `C / s` up to two f32 roundings. One byte per element through shared
    /// memory and a TMA store whose map views each packed pair as one 16-bit element
    /// ([`problem_out`]). A block of zeros gets the floor's scale and zero bytes. Blockwise only.
    E4m3,
}

/// e4m3's largest finite value: the quantized output's scale maps a row block's amax onto it.
pub const E4M3_MAX: f32 = 448.0;
/// The least amax an output scale is made from (2^-64), so a block of zeros has a finite,
/// nonzero scale (2^-64 / 448, a normal f32) and its reciprocal stays finite.
pub const AMAX_FLOOR: f32 = 5.421_010_862_427_522e-20;

/// The order the blockwise kernel's two consumer warpgroups issue their K blocks' wgmmas in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Issue {
    /// Each as soon as its stage is full: the two issue at once, their blocks finish together
    /// and both promote while the tensor core has nothing queued (run 21c: the tensor pipe 75%
    /// busy).
    Together,
    /// In turn, through two named barriers (FlashAttention-3's ping-pong, per K block): one
    /// warpgroup's block is queued behind the other's, meant to run while the other promotes.
    /// Measured 3-8% slower than [`Issue::Together`] on an H100, the tensor pipe no busier
    /// (run 23c, `bench/gemm_fp8.md`). One fragment only (two fragments are another way to
    /// the same overlap).
    Turns,
}

/// [`kernel_with`] storing `output`: [`Output::E4m3`] is the blockwise kernel's.
pub fn kernel_out(
    scaling: Scaling,
    t: &Tiles,
    frags: u32,
    scales: Scales,
    output: Output,
) -> phaser::codegen::Result<Kernel> {
    kernel_issue(scaling, t, frags, scales, output, Issue::Together)
}

/// [`kernel_out`] with the consumers issuing their K blocks in `issue`'s order.
pub fn kernel_issue(
    scaling: Scaling,
    t: &Tiles,
    frags: u32,
    scales: Scales,
    output: Output,
    issue: Issue,
) -> phaser::codegen::Result<Kernel> {
    kernel_release(scaling, t, frags, scales, output, issue, Release::PerWarp)
}

/// How the blockwise kernel with shared scales hands a stage back after its K block: the
/// stage's scales are read by every consumer thread, so the release must follow all of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Release {
    /// Each consumer warp after its own reads (`bar.warp.sync`, lane 0 arrives: DeepGEMM's):
    /// 4 arrivals per warpgroup, in every CTA of the cluster.
    #[default]
    PerWarp,
    /// One thread per warpgroup after a `bar.sync` of its 128 threads (named barrier 1 + w,
    /// the epilogue's): a quarter of the arrivals, one CTA barrier more per K block.
    PerWarpgroup,
}

/// [`kernel_issue`] releasing each stage as `release` says ([`Release::PerWarpgroup`]: the
/// blockwise kernel with shared scales only).
pub fn kernel_release(
    scaling: Scaling,
    t: &Tiles,
    frags: u32,
    scales: Scales,
    output: Output,
    issue: Issue,
    release: Release,
) -> phaser::codegen::Result<Kernel> {
    if release == Release::PerWarpgroup && (scaling != Scaling::Blockwise || scales != Scales::Shared) {
        return Err(refused(format!(
            "a release per warpgroup is the blockwise kernel's with shared scales (the others release per \
             warpgroup already), not {scaling:?} with {scales:?} scales"
        )));
    }
    if issue == Issue::Turns && (scaling != Scaling::Blockwise || frags != 1) {
        return Err(refused(format!(
            "issuing in turns is the blockwise kernel's with 1 fragment, not {scaling:?} with {frags}"
        )));
    }
    if output == Output::E4m3 && scaling != Scaling::Blockwise {
        return Err(refused(format!("the e4m3 output is the blockwise kernel's, not {scaling:?}'s")));
    }
    if scales == Scales::Shared && (scaling != Scaling::Blockwise || frags != 1) {
        return Err(refused(format!(
            "shared-memory scales are the blockwise kernel's with 1 fragment, not {scaling:?} with {frags}"
        )));
    }
    let most = match scaling {
        Scaling::Blockwise => 2,
        Scaling::PerTensor => 1,
    };
    if frags == 0 || frags > most {
        return Err(refused(format!("{scaling:?} takes 1 to {most} accumulator fragments in flight, not {frags}")));
    }
    // N-major B is not the FP8 kernels' (FP8 wgmma reads K-major B only).
    if t.b_n_major {
        return Err(refused("no N-major B (FP8 wgmma reads K-major B only)"));
    }
    if let Some(why) = split_refusal(scaling, t, output) {
        return Err(refused(why));
    }
    match scaling {
        Scaling::Blockwise => {
            if let Some(why) = width_refusal(t, frags, scales, output) {
                return Err(refused(why));
            }
            let smem = (scales == Scales::Shared) as u32;
            let e4m3 = (output == Output::E4m3) as u32;
            let turns = (issue == Issue::Turns) as u32;
            let release_wg = (release == Release::PerWarpgroup) as u32;
            gemm_fp8_dsl::kernel_for(
                t.block_n,
                t.stages,
                t.cluster,
                t.group_m,
                frags,
                smem,
                e4m3,
                t.split.max(1),
                turns,
                release_wg,
            )
        }
        Scaling::PerTensor => gemm_fp8_tensor_dsl::kernel_for(t.block_n, t.wg_m, t.stages, t.cluster, t.group_m),
    }
}

/// The blockwise kernel's tile widths (N of a tile): 128, one B scale per tile and K block (the
/// gallery's), and 192, two (the tile's columns span two 128-column scale blocks, split at
/// column 128 or 64 by where the tile starts). 256 would not fit: the fresh fragment and the
/// promoted accumulator alone are 2 x 128 of a consumer thread's 232 registers.
pub const BLOCKWISE_WIDTHS: [u32; 2] = [128, 192];

/// The blockwise configuration `block_n` columns wide: [`tiles`]'s, with the stages that fit
/// shared memory at that width (a stage is `(128 + block_n) x 128` bytes, beside the
/// epilogue's 32 KiB of staging tiles, within 227 KiB: 5 of 32 KiB at 128, 4 of 40 KiB at 192).
/// A width outside [`BLOCKWISE_WIDTHS`] keeps 5 stages; the kernel refuses it by name.
pub fn blockwise_tiles(block_n: u32) -> Tiles {
    let stages = if block_n > SCALE_BLOCK { 4 } else { 5 };
    Tiles { block_n, stages, ..tiles(Scaling::Blockwise) }
}

/// Why the blockwise kernel cannot take `t`'s tile shape with these choices, if it cannot:
/// 64 rows per warpgroup, N in [`BLOCKWISE_WIDTHS`]; the 192-wide tile reads its two B scales
/// from shared memory (one fragment) and stores bf16 C (the e4m3 output's scale blocks are a
/// tile's 128 columns).
fn width_refusal(t: &Tiles, frags: u32, scales: Scales, output: Output) -> Option<String> {
    if t.wg_m != 64 || !BLOCKWISE_WIDTHS.contains(&t.block_n) {
        return Some(format!(
            "the blockwise kernel has 64 rows per warpgroup and N = 128 or 192 per tile, not {} and {} (N = 256: \
             two 128-register accumulators do not fit a consumer thread's registers)",
            t.wg_m, t.block_n
        ));
    }
    if t.block_n > SCALE_BLOCK && (scales != Scales::Shared || frags != 1 || output != Output::Bf16) {
        return Some(format!(
            "a tile {} wide (two B scale blocks) is the blockwise kernel's with shared scales, 1 fragment and bf16 C, \
             not {scales:?} scales, {frags} fragment(s) and {output:?} C",
            t.block_n
        ));
    }
    None
}

/// The FP8 kernels' build error: `why`, named as theirs.
fn refused(why: impl std::fmt::Display) -> phaser::codegen::CodegenError {
    phaser::codegen::CodegenError::new("gemm_fp8_dsl", None, format!("gemm_fp8_dsl: {why}"))
}

/// Why the FP8 kernel of `scaling` cannot split K as `t` says, if it cannot. Split-K is the
/// blockwise kernel's, into bf16 C, reduced by [`gemm_splitk_reduce`](super::gemm_dsl::gemm_splitk_reduce)
/// in a second launch: the per-tensor kernel has no slices of promotion to cut, the e4m3
/// output needs each row block's amax of the reduced C (which no slice has), and the bf16
/// GEMM's in-kernel reductions are not built into this kernel.
pub fn split_refusal(scaling: Scaling, t: &Tiles, output: Output) -> Option<String> {
    if t.split == 0 {
        return Some("split-K into 0 slices: at least 1 (1: no split)".into());
    }
    if t.split == 1 {
        return None;
    }
    if scaling != Scaling::Blockwise {
        return Some(format!("split-K (into {}) is the blockwise kernel's, not {scaling:?}'s", t.split));
    }
    if output == Output::E4m3 {
        return Some(format!(
            "split-K (into {}) with the e4m3 output: its scales need the amax of the reduced C, which no slice has; \
             split into bf16 C, or quantize without split-K",
            t.split
        ));
    }
    if t.reduce != Reduce::SecondLaunch {
        return Some(format!(
            "split-K (into {}) reduced by {:?}: the FP8 GEMM reduces its slices in a second launch \
             (Reduce::SecondLaunch, gemm_splitk_reduce) only",
            t.split, t.reduce
        ));
    }
    None
}

/// Why `t` cannot split an `m x n x k` FP8 GEMM, if it cannot: at most one slice per K block of
/// [`BLOCK_K`], the workspace indexed in u32 (the bf16 GEMM's rules, [`Tiles::split_problem_blocks`]).
pub fn split_problem(t: &Tiles, m: u32, n: u32, k: u32) -> Option<String> {
    t.split_problem_blocks(m, n, k, BLOCK_K)
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "gemm_fp8_dsl",
            about: "e4m3 GEMM with DeepGEMM's fine-grained scaling (1x128 A, 128x128 B scales, per-K-block promotion \
                    into an f32 register accumulator), bf16 C; the bf16 DSL GEMM's structure",
            kernels: |_| Ok(vec![kernel(Scaling::Blockwise, &tiles(Scaling::Blockwise))?]),
            setup: |dev, size, seed| setup(dev, size, seed, Scaling::Blockwise),
            check,
        },
        Example {
            name: "gemm_fp8_e4m3_out_dsl",
            about: "the blockwise e4m3 GEMM with its output quantized in the epilogue for the next FP8 GEMM: \
                    e4m3 C and an f32 scale per row and 128-column block (amax / 448, the A scales' layout)",
            kernels: |_| {
                let t = tiles(Scaling::Blockwise);
                Ok(vec![kernel_out(Scaling::Blockwise, &t, FRAGS, SCALES, Output::E4m3)?])
            },
            setup: |dev, size, seed| setup_out(dev, size, seed, Output::E4m3),
            check,
        },
        Example {
            name: "gemm_fp8_tensor_dsl",
            about: "e4m3 GEMM with per-tensor scales (torch._scaled_mm's), applied once in the epilogue, bf16 C",
            kernels: |_| Ok(vec![kernel(Scaling::PerTensor, &tiles(Scaling::PerTensor))?]),
            setup: |dev, size, seed| setup(dev, size, seed, Scaling::PerTensor),
            check,
        },
    ]
}

/// Elements of A and B together that [`Quantized::references`] dequantizes at once (32 MB of
/// f64).
const DEQUANTIZED_MAX: usize = 1 << 22;

/// Quantized inputs: the e4m3 elements and their scales (`sfa` `[K / 128][sfa_stride(M)]`, `sfb`
/// `[ceil(N / 128)][K / 128]`; per-tensor: one each).
pub struct Quantized {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub scaling: Scaling,
    pub a: Vec<F8E4M3>,
    pub b: Vec<F8E4M3>,
    pub sfa: Vec<f32>,
    pub sfb: Vec<f32>,
    /// Made by [`Quantized::exact`]: C must be the f64 product rounded to bf16, bit for bit.
    pub exact: bool,
}

/// `sfa`'s row stride (`[K / 128][sfa_stride(M)]`): M rounded up to 4, so each K block's row
/// starts 16-byte aligned (TMA's global strides); the kernel computes the same.
pub fn sfa_stride(m: u32) -> usize {
    (m as usize).div_ceil(4) * 4
}

/// The scale that maps `amax` onto e4m3's largest value (448), DeepGEMM's and torch's recipe.
fn scale_of(amax: f32) -> f32 {
    if amax > 0.0 {
        amax / 448.0
    } else {
        1.0
    }
}

impl Quantized {
    /// Random inputs whose magnitude varies by row and K block (2^-4 .. 2^3, so a scale
    /// applied to the wrong row or block shows), quantized as `scaling` says.
    pub fn random(m: u32, n: u32, k: u32, scaling: Scaling, seed: u64) -> Quantized {
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        let kbs = ku / BLOCK_K as usize;
        let nbs = nu.div_ceil(SCALE_BLOCK as usize);
        let magnitude = |r: usize, kb: usize, salt: usize| {
            2f32.powi((r.wrapping_mul(7).wrapping_add(kb.wrapping_mul(3)).wrapping_add(salt) % 8) as i32 - 4)
        };
        let mut xa = random_f32(mu * ku, seed);
        let mut xb = random_f32(nu * ku, seed ^ 0x5bd1_e995);
        for (i, x) in xa.iter_mut().enumerate() {
            *x *= magnitude(i / ku, i % ku / BLOCK_K as usize, 0);
        }
        for (i, x) in xb.iter_mut().enumerate() {
            *x *= magnitude(i / ku / SCALE_BLOCK as usize, i % ku / BLOCK_K as usize, 5);
        }
        let amax = |v: &mut dyn Iterator<Item = f32>| v.fold(0f32, |m, x| m.max(x.abs()));
        let (sfa, sfb) = match scaling {
            Scaling::Blockwise => {
                let mp = sfa_stride(m);
                let mut sfa = vec![0f32; kbs * mp];
                for kb in 0..kbs {
                    for r in 0..mu {
                        let row = &xa[r * ku + kb * BLOCK_K as usize..][..BLOCK_K as usize];
                        sfa[kb * mp + r] = scale_of(amax(&mut row.iter().copied()));
                    }
                }
                let mut sfb = vec![0f32; nbs * kbs];
                for nb in 0..nbs {
                    for kb in 0..kbs {
                        let rows = nb * SCALE_BLOCK as usize..((nb + 1) * SCALE_BLOCK as usize).min(nu);
                        let mut it =
                            rows.flat_map(|r| xb[r * ku + kb * BLOCK_K as usize..][..BLOCK_K as usize].iter().copied());
                        sfb[nb * kbs + kb] = scale_of(amax(&mut it));
                    }
                }
                (sfa, sfb)
            }
            Scaling::PerTensor => {
                (vec![scale_of(amax(&mut xa.iter().copied()))], vec![scale_of(amax(&mut xb.iter().copied()))])
            }
        };
        let mut q = Quantized { m, n, k, scaling, a: Vec::new(), b: Vec::new(), sfa, sfb, exact: false };
        q.a = xa.iter().enumerate().map(|(i, &x)| F8E4M3::from_f32(x / q.a_scale(i / ku, i % ku))).collect();
        q.b = xb.iter().enumerate().map(|(i, &x)| F8E4M3::from_f32(x / q.b_scale(i / ku, i % ku))).collect();
        q
    }

    /// Inputs whose product is exact at every step: elements of {-1, 0, 1} and power-of-two
    /// scales (2^-2 .. 2^2 by row and K block for A, 2^-1 .. 2^1 by block for B; per tensor
    /// 2^-2 and 2^1). Every partial sum is exact in f32 and in the tensor core's narrower FP8
    /// accumulator, so C is the f64 product rounded once to bf16, on the GPU and in the
    /// simulator: the check can demand every bit.
    pub fn exact(m: u32, n: u32, k: u32, scaling: Scaling, seed: u64) -> Quantized {
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        let (kbs, nbs) = (ku / BLOCK_K as usize, nu.div_ceil(SCALE_BLOCK as usize));
        let ternary = |len: usize, seed: u64| -> Vec<F8E4M3> {
            phaser::problem::random_u32(len, seed).into_iter().map(|x| F8E4M3::from_f32((x % 3) as f32 - 1.0)).collect()
        };
        let pow2 = |e: usize, span: usize| 2f32.powi((e % (2 * span + 1)) as i32 - span as i32);
        let mp = sfa_stride(m);
        let (sfa, sfb) = match scaling {
            Scaling::Blockwise => (
                (0..kbs * mp).map(|i| pow2((i % mp) * 7 + (i / mp) * 3, 2)).collect(),
                (0..nbs * kbs).map(|i| pow2(i / kbs + i % kbs, 1)).collect(),
            ),
            Scaling::PerTensor => (vec![0.25], vec![2.0]),
        };
        let (a, b) = (ternary(mu * ku, seed), ternary(nu * ku, seed ^ 0x5bd1_e995));
        Quantized { m, n, k, scaling, a, b, sfa, sfb, exact: true }
    }

    /// The scale of A's element (row `r`, column `kk`).
    pub fn a_scale(&self, r: usize, kk: usize) -> f32 {
        match self.scaling {
            Scaling::Blockwise => self.sfa[kk / BLOCK_K as usize * sfa_stride(self.m) + r],
            Scaling::PerTensor => self.sfa[0],
        }
    }

    /// The scale of B's element (row `j`, column `kk`).
    pub fn b_scale(&self, j: usize, kk: usize) -> f32 {
        match self.scaling {
            Scaling::Blockwise => {
                let kbs = self.k as usize / BLOCK_K as usize;
                self.sfb[j / SCALE_BLOCK as usize * kbs + kk / BLOCK_K as usize]
            }
            Scaling::PerTensor => self.sfb[0],
        }
    }

    /// The f64 product of the dequantized row `i` of A and row `j` of B, and the sum of its
    /// terms' magnitudes (what the accumulation's error scales with).
    pub fn reference(&self, i: usize, j: usize) -> (f64, f64) {
        let k = self.k as usize;
        (0..k).fold((0.0, 0.0), |(s, mag), kk| {
            let a = self.a[i * k + kk].to_f32() as f64 * self.a_scale(i, kk) as f64;
            let b = self.b[j * k + kk].to_f32() as f64 * self.b_scale(j, kk) as f64;
            (s + a * b, mag + (a * b).abs())
        })
    }

    /// [`Quantized::reference`] at each of `positions`, the same sums in the same order (so
    /// bit for bit the same), with A and B dequantized once rather than per product: a check's
    /// reference at the gallery's sizes. Past [`DEQUANTIZED_MAX`] elements (the full size's
    /// sampled check) it is `reference` per position, in bounded memory.
    pub fn references(&self, positions: &[(usize, usize)]) -> Vec<(f64, f64)> {
        let k = self.k as usize;
        if (self.m as usize + self.n as usize) * k > DEQUANTIZED_MAX {
            return positions.iter().map(|&(i, j)| self.reference(i, j)).collect();
        }
        let dequantize = |rows: usize, x: &[F8E4M3], scale: &dyn Fn(usize, usize) -> f32| -> Vec<f64> {
            (0..rows * k).map(|e| x[e].to_f32() as f64 * scale(e / k, e % k) as f64).collect()
        };
        let a = dequantize(self.m as usize, &self.a, &|r, kk| self.a_scale(r, kk));
        let b = dequantize(self.n as usize, &self.b, &|j, kk| self.b_scale(j, kk));
        positions
            .iter()
            .map(|&(i, j)| {
                let (ai, bj) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
                ai.iter().zip(bj).fold((0.0, 0.0), |(s, mag), (&a, &b)| (s + a * b, mag + (a * b).abs()))
            })
            .collect()
    }

    /// The K the tensor core accumulates before an f32 promotion: one scale block (blockwise),
    /// all of K (per-tensor).
    pub fn unpromoted_k(&self) -> u32 {
        match self.scaling {
            Scaling::Blockwise => BLOCK_K,
            Scaling::PerTensor => self.k,
        }
    }

    /// The tolerance of [`Output::E4m3`]'s C[i][j] (its byte times its block's scale `scale`)
    /// against [`Quantized::reference`]: the accumulation's part of [`Quantized::tolerance`]
    /// (`acc`), then e4m3's half-ulp after scaling: 2^-4 of the value (three mantissa bits;
    /// the two f32 roundings of the scaling add 2^-20 of that), or half the subnormal step,
    /// 2^-10 `scale`, near zero.
    pub fn tolerance_e4m3(&self, reference: f64, magnitude: f64, scale: f64) -> f64 {
        let blocks = (self.unpromoted_k() as f64 / BLOCK_K as f64).max(1.0);
        let acc = magnitude * 2f64.powi(-9) * blocks.sqrt();
        (reference.abs() + acc) * 2f64.powi(-4) * (1.0 + 2f64.powi(-20)) + acc + scale * 2f64.powi(-10)
    }

    /// The tolerance of C[i][j] against [`Quantized::reference`]: bf16's rounding (2^-8 of the
    /// value) plus 2^-9 of the terms' magnitude sum per 128 of K the tensor core accumulates
    /// unpromoted, growing as its square root (its FP8 accumulation keeps about 14 bits, not
    /// f32's 24: DeepSeek-V3's measurement; a random walk of those errors between promotions).
    pub fn tolerance(&self, reference: f64, magnitude: f64) -> f64 {
        let blocks = (self.unpromoted_k() as f64 / BLOCK_K as f64).max(1.0);
        reference.abs() * 2f64.powi(-8) + magnitude * 2f64.powi(-9) * blocks.sqrt()
    }
}

/// The blockwise `sfa` map's dimensions, innermost first: the padded rows, the K blocks (its
/// box is a stage's: `[BM, 1]`).
pub fn sfa_dims(q: &Quantized) -> [u64; 2] {
    [sfa_stride(q.m) as u64, (q.k / BLOCK_K) as u64]
}

/// What the check needs: the quantized inputs and C.
pub struct Host {
    pub q: Quantized,
    /// C: bf16 elements, or ([`Output::E4m3`]) its e4m3 bytes in pairs, each pair one 16-bit
    /// element (the lower column in the low byte), `[M][N / 2]`.
    pub c: BufferId<bf16>,
    pub output: Output,
    /// [`Output::E4m3`]'s scales, `[ceil(N / 128)][sfa_stride(M)]`; bf16: a one-element
    /// argument the kernel does not write.
    pub sfc: BufferId<f32>,
    /// Split-K's f32 partials `[split, M, N]` (the first launch's output), and the slices.
    pub partials: Option<(BufferId<f32>, u32)>,
    pub every_element: bool,
}

/// The e4m3 output's quantization of one row block (up to 128 f32 values of C), as the kernel
/// does it ([`Output::E4m3`]): its bytes and its scale.
pub fn quantize_block(values: &[f32]) -> (Vec<F8E4M3>, f32) {
    let a = values.iter().fold(0f32, |m, x| m.max(x.abs())).max(AMAX_FLOOR);
    let inv = E4M3_MAX / a;
    (values.iter().map(|&x| F8E4M3::from_f32(x * inv)).collect(), a / E4M3_MAX)
}

/// C (`[M][N]` f32) quantized as [`Output::E4m3`]: the bytes `[M][N]` and the scales
/// `[ceil(N / 128)][sfa_stride(M)]` (padding rows 0).
pub fn quantize_output(c: &[f32], m: u32, n: u32) -> (Vec<F8E4M3>, Vec<f32>) {
    let (mu, nu, mp) = (m as usize, n as usize, sfa_stride(m));
    let blocks = nu.div_ceil(SCALE_BLOCK as usize);
    let (mut bytes, mut scales) = (vec![F8E4M3::from_bits(0); mu * nu], vec![0f32; blocks * mp]);
    for i in 0..mu {
        for nb in 0..blocks {
            let cols = nb * SCALE_BLOCK as usize..((nb + 1) * SCALE_BLOCK as usize).min(nu);
            let (q, s) = quantize_block(&c[i * nu + cols.start..i * nu + cols.end]);
            bytes[i * nu + cols.start..i * nu + cols.end].copy_from_slice(&q);
            scales[nb * mp + i] = s;
        }
    }
    (bytes, scales)
}

/// The e4m3 bytes of C from its packed pairs (`[M][N / 2]` 16-bit elements, the lower column in
/// the low byte), `[M][N]`.
pub fn e4m3_of_pairs(pairs: &[bf16]) -> Vec<F8E4M3> {
    pairs.iter().flat_map(|p| p.to_bits().to_le_bytes()).map(F8E4M3::from_bits).collect()
}

const POISON: bf16 = bf16::from_bits(0xFFFF);

/// The blockwise kernel with the gallery's fragments and scales, storing `output`, at `size`.
pub fn setup_out(dev: &Device, size: Size, seed: u64, output: Output) -> Result<Problem, RuntimeError> {
    let (dims, grid) = gallery_dims(dev, size, Scaling::Blockwise)?;
    // The quick size's own shape: e4m3 C's rows are N bytes, which TMA wants in multiples of
    // 16 (208, not 200); ragged in M and N, one tile per cluster of six K blocks (the ring
    // wraps), so the longer epilogue stays within the simulator's quick budget.
    let dims = match size {
        Size::Quick => (200, 208, 768),
        _ => dims,
    };
    let q = gallery_inputs(size, dims, Scaling::Blockwise, seed);
    let kernel = kernel_out(Scaling::Blockwise, &tiles(Scaling::Blockwise), FRAGS, SCALES, output)?;
    problem_out(dev, q, grid, size != Size::Full, seed, kernel, output)
}

pub fn setup(dev: &Device, size: Size, seed: u64, scaling: Scaling) -> Result<Problem, RuntimeError> {
    let frags = match scaling {
        Scaling::Blockwise => FRAGS,
        Scaling::PerTensor => 1,
    };
    setup_issue(dev, size, seed, scaling, frags, gallery_scales(scaling), Issue::Together)
}

/// [`setup`] with `frags` fragments in flight ([`kernel_with_frags`]).
pub fn setup_with_frags(
    dev: &Device,
    size: Size,
    seed: u64,
    scaling: Scaling,
    frags: u32,
) -> Result<Problem, RuntimeError> {
    setup_issue(dev, size, seed, scaling, frags, Scales::Global, Issue::Together)
}

/// [`setup_with_frags`] with the scales read from `scales` and the consumers issuing their K
/// blocks in `issue`'s order ([`kernel_issue`]).
pub fn setup_issue(
    dev: &Device,
    size: Size,
    seed: u64,
    scaling: Scaling,
    frags: u32,
    scales: Scales,
    issue: Issue,
) -> Result<Problem, RuntimeError> {
    let (dims, grid) = gallery_dims(dev, size, scaling)?;
    let q = gallery_inputs(size, dims, scaling, seed);
    let kernel = kernel_issue(scaling, &tiles(scaling), frags, scales, Output::Bf16, issue)?;
    problem_with(dev, q, grid, size != Size::Full, seed, kernel)
}

/// The gallery's shape at `size` and the grid it runs on.
fn gallery_dims(dev: &Device, size: Size, scaling: Scaling) -> Result<((u32, u32, u32), u32), RuntimeError> {
    let t = tiles(scaling);
    let (bm, cm) = (t.block_m(), t.cluster);
    // Small: one cluster walks two tiles of two K blocks (the ring wraps). Quick: ragged in M
    // and N over two clusters, four K blocks a tile (the ring wraps). Full: 2048^3, persistent.
    let ((m, n, k), grid) = match size {
        Size::Small => ((2 * bm * cm, t.block_n, 256), cm),
        Size::Quick => ((bm * cm + 72, t.block_n + 72, 512), 2 * cm),
        Size::Full => ((2048, 2048, 2048), t.grid(2048, 2048, dev.sm_count()?)),
    };
    Ok(((m, n, k), grid))
}

/// The gallery's inputs: small and quick sizes (the simulator's, and the corrupted-bit check)
/// multiply exact inputs; the full size quantizes random ones and is held to the tolerance.
fn gallery_inputs(size: Size, (m, n, k): (u32, u32, u32), scaling: Scaling, seed: u64) -> Quantized {
    match size {
        Size::Full => Quantized::random(m, n, k, scaling, seed),
        _ => Quantized::exact(m, n, k, scaling, seed),
    }
}

/// The launch of `q`'s GEMM on `grid` CTAs (the gallery's kernel).
pub fn problem(dev: &Device, q: Quantized, grid: u32, every_element: bool, seed: u64) -> Result<Problem, RuntimeError> {
    let kernel = kernel(q.scaling, &tiles(q.scaling))?;
    problem_with(dev, q, grid, every_element, seed, kernel)
}

/// [`problem`] launching `kernel`: one of [`kernel_with_frags`]'s for `q.scaling` and the
/// gallery's tiles (another fragment count, or a mutant of one).
pub fn problem_with(
    dev: &Device,
    q: Quantized,
    grid: u32,
    every_element: bool,
    seed: u64,
    kernel: Kernel,
) -> Result<Problem, RuntimeError> {
    problem_out(dev, q, grid, every_element, seed, kernel, Output::Bf16)
}

/// [`problem_with`] for a kernel storing `output` ([`kernel_out`]'s). [`Output::E4m3`]'s C is
/// `M x N / 2` 16-bit elements (each a packed pair of e4m3 bytes; the map's box `[EPI, EPI]`
/// is 64 rows of 128 bytes, one warpgroup's tile) and its scales `sfc` an output too.
pub fn problem_out(
    dev: &Device,
    q: Quantized,
    grid: u32,
    every_element: bool,
    seed: u64,
    kernel: Kernel,
    output: Output,
) -> Result<Problem, RuntimeError> {
    let t = tiles(q.scaling);
    problem_tiles(dev, q, grid, every_element, seed, kernel, output, &t)
}

/// [`problem_out`] for a kernel built for `t` (the gallery's [`tiles`] but for its split-K; by
/// [`kernel_out`] of `t`, or a mutant of one: the workspace is sized by `t.split`, which the
/// launch cannot read off the kernel):
/// with `t.split > 1` the kernel's f32 partials (poisoned before it: an element a slice
/// leaves unwritten fails the check) and then [`gemm_splitk_reduce`](super::gemm_dsl::gemm_splitk_reduce)
/// into C, on the same stream after it.
#[allow(clippy::too_many_arguments)]
pub fn problem_tiles(
    dev: &Device,
    q: Quantized,
    grid: u32,
    every_element: bool,
    seed: u64,
    kernel: Kernel,
    output: Output,
    t: &Tiles,
) -> Result<Problem, RuntimeError> {
    let (m, n, k) = (q.m, q.n, q.k);
    if k % BLOCK_K != 0 {
        return Err(RuntimeError::Config(format!("gemm_fp8_dsl: K = {k} is not a multiple of {BLOCK_K}")));
    }
    if let Some(why) = split_refusal(q.scaling, t, output).or_else(|| split_problem(t, m, n, k)) {
        return Err(RuntimeError::BadLaunch { kernel: "gemm_fp8_dsl".into(), problem: format!("{m}x{n}x{k}: {why}") });
    }
    if output == Output::E4m3 && n % 16 != 0 {
        return Err(RuntimeError::Config(format!(
            "gemm_fp8_dsl: N = {n} is not a multiple of 16 (e4m3 C's rows of N bytes: TMA's 16-byte strides)"
        )));
    }
    let mut p = Problem::new(seed);
    let ga = p.input(dev, &q.a)?;
    let gb = p.input(dev, &q.b)?;
    let (m64, n64, k64) = (m as u64, n as u64, k as u64);
    // C's columns in the map's 16-bit elements.
    let c_cols = match output {
        Output::Bf16 => n64,
        Output::E4m3 => n64 / 2,
    };
    let gc = p.output(dev, m as usize * c_cols as usize, POISON)?;
    let sfc = match output {
        Output::Bf16 => p.input(dev, &[0f32])?,
        Output::E4m3 => p.output(dev, n.div_ceil(SCALE_BLOCK) as usize * sfa_stride(m), f32::NAN)?,
    };
    let sw = Swizzle::B128;
    let ma = p.tensor_map(dev, ga, &[k64, m64], &[BLOCK_K, t.block_m()], sw)?;
    let mb = p.tensor_map(dev, gb, &[k64, n64], &[BLOCK_K, t.block_n / t.cluster], sw)?;
    let mc = p.tensor_map(dev, gc, &[c_cols, m64], &[EPI, EPI], sw)?;
    let launch = phaser::LaunchConfig::linear(grid, THREADS);
    let mut partials = None;
    match q.scaling {
        Scaling::Blockwise => {
            let sfa = p.input(dev, &q.sfa)?;
            let sfb = p.input(dev, &q.sfb)?;
            let msfa = p.tensor_map(dev, sfa, &sfa_dims(&q), &[t.block_m(), 1], Swizzle::None)?;
            // The split-K workspace `[split, m, n]`: one element the kernel never touches without it.
            let ws = if t.split > 1 { p.output(dev, t.workspace_len(m, n), f32::NAN)? } else { p.input(dev, &[0f32])? };
            let args = [
                ma.into(),
                mb.into(),
                mc.into(),
                msfa.into(),
                sfa.into(),
                sfb.into(),
                sfc.into(),
                ws.into(),
                m.into(),
                n.into(),
                k.into(),
            ];
            match output {
                _ if t.split > 1 => {
                    partials = Some((ws, t.split));
                    p.launch(kernel, launch, args, [ws.into()]);
                    let reduce = t.reduce_launch(m, n, dev.sm_count()?, ReduceLaunch::default());
                    p.launch(t.reduce_kernel()?, reduce, [ws.into(), gc.into(), (m * n).into()], [gc.into()]);
                }
                Output::Bf16 => {
                    p.launch(kernel, launch, args, [gc.into()]);
                }
                Output::E4m3 => {
                    p.launch(kernel, launch, args, [gc.into(), sfc.into()]);
                }
            }
        }
        Scaling::PerTensor => {
            let scale = q.sfa[0] * q.sfb[0];
            let args = [ma.into(), mb.into(), mc.into(), scale.into(), m.into(), n.into(), k.into()];
            p.launch(kernel, launch, args, [gc.into()]);
        }
    }
    p.set_host(Host { q, c: gc, output, sfc, partials, every_element });
    Ok(p)
}

/// The f64 product of the dequantized inputs ([`Quantized::reference`]: value and magnitude
/// sum) at the positions the checks compare: every element in row-major order (small sizes),
/// or the corners and 4096 random positions. Computed once per problem
/// ([`Problem::expected`]): it is most of a check's time.
struct Reference {
    positions: Vec<(usize, usize)>,
    products: Vec<(f64, f64)>,
}

fn reference(p: &Problem) -> std::rc::Rc<Reference> {
    p.expected(|| {
        let h: &Host = p.host();
        let (m, n) = (h.q.m as usize, h.q.n as usize);
        let positions: Vec<(usize, usize)> = if h.every_element {
            (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
        } else {
            let mut v = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
            let r = phaser::problem::random_u32(2 * 4096, p.seed);
            v.extend(r.chunks(2).map(|c| (c[0] as usize % m, c[1] as usize % n)));
            v
        };
        let products = h.q.references(&positions);
        Reference { positions, products }
    })
}

/// Every element (small sizes) or the corners and 4096 random positions against the f64
/// product of the dequantized inputs: rounded to bf16 bit for bit for exact inputs, within
/// [`Quantized::tolerance`] for random ones.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    if h.output == Output::E4m3 {
        return check_e4m3(p, outputs);
    }
    // C is the last launch's output (split-K's reduction's).
    let got = outputs.get(outputs.launches.len() - 1, h.c);
    let n = h.q.n as usize;
    let shape = format!("{}x{}x{}", h.q.m, h.q.n, h.q.k);
    let reference = reference(p);
    let positions = &reference.positions;
    let mut worst = 0f64;
    let mut bad = Vec::new();
    for (&(i, j), &(want, magnitude)) in positions.iter().zip(&reference.products) {
        let c = got[i * n + j];
        let err = (c.to_f64() - want).abs();
        let tol = h.q.tolerance(want, magnitude);
        worst = worst.max(err / tol);
        let wrong = if h.q.exact { c.to_bits() != bf16::from_f64(want).to_bits() } else { err.is_nan() || err > tol };
        if wrong {
            bad.push((i, j, want));
        }
    }
    match bad.first() {
        None if h.q.exact => {
            Outcome::new(true, format!("{shape} (seed {}): {} elements exact", p.seed, positions.len()))
        }
        None => Outcome::new(
            true,
            format!(
                "{shape} (seed {}): {} elements within tolerance (worst {worst:.3} of it)",
                p.seed,
                positions.len()
            ),
        ),
        Some(&(i, j, want)) => Outcome::new(
            false,
            format!(
                "{shape} (seed {}): {} of {} outside tolerance; C[{i}][{j}] = {}, want {want}",
                p.seed,
                bad.len(),
                positions.len(),
                got[i * n + j]
            ),
        ),
    }
}

/// [`check`] of [`Output::E4m3`]: exact inputs (small sizes, every element) demand every byte
/// and every scale of [`quantize_output`] of the f64 product (exact in f32 there); random ones
/// (the corners and 4096 random positions) each byte times its scale within
/// [`Quantized::tolerance_e4m3`] of the f64 product.
fn check_e4m3(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let (m, n, mp) = (h.q.m as usize, h.q.n as usize, sfa_stride(h.q.m));
    let bytes = e4m3_of_pairs(outputs.get(0, h.c));
    let scales = outputs.get(0, h.sfc);
    let shape = format!("{}x{}x{} e4m3 out", h.q.m, h.q.n, h.q.k);
    if h.every_element {
        let products: Vec<f32> = reference(p).products.iter().map(|&(v, _)| v as f32).collect();
        let (want, want_scales) = quantize_output(&products, h.q.m, h.q.n);
        let blocks = n.div_ceil(SCALE_BLOCK as usize);
        let bad_scale = (0..blocks)
            .flat_map(|nb| (0..m).map(move |i| (nb, i)))
            .find(|&(nb, i)| scales[nb * mp + i].to_bits() != want_scales[nb * mp + i].to_bits());
        if let Some((nb, i)) = bad_scale {
            return Outcome::new(
                false,
                format!(
                    "{shape} (seed {}): the scale of row {i}, column block {nb} is {}, want {}",
                    p.seed,
                    scales[nb * mp + i],
                    want_scales[nb * mp + i]
                ),
            );
        }
        let bad = (0..m * n).filter(|&x| bytes[x].to_bits() != want[x].to_bits()).count();
        return match (0..m * n).find(|&x| bytes[x].to_bits() != want[x].to_bits()) {
            None => Outcome::new(
                true,
                format!("{shape} (seed {}): {} bytes and {} scales exact", p.seed, m * n, blocks * m),
            ),
            Some(x) => Outcome::new(
                false,
                format!(
                    "{shape} (seed {}): {bad} of {} bytes differ; C[{}][{}] = {:#04x}, want {:#04x}",
                    p.seed,
                    m * n,
                    x / n,
                    x % n,
                    bytes[x].to_bits(),
                    want[x].to_bits()
                ),
            ),
        };
    }
    let reference = reference(p);
    let positions = &reference.positions;
    let mut worst = 0f64;
    let mut bad = Vec::new();
    for (&(i, j), &(want, magnitude)) in positions.iter().zip(&reference.products) {
        let scale = scales[j / SCALE_BLOCK as usize * mp + i] as f64;
        let got = bytes[i * n + j].to_f32() as f64 * scale;
        let tol = h.q.tolerance_e4m3(want, magnitude, scale);
        let err = (got - want).abs();
        worst = worst.max(err / tol);
        if err.is_nan() || err > tol {
            bad.push((i, j, got, want));
        }
    }
    match bad.first() {
        None => Outcome::new(
            true,
            format!(
                "{shape} (seed {}): {} elements within tolerance (worst {worst:.3} of it)",
                p.seed,
                positions.len()
            ),
        ),
        Some(&(i, j, got, want)) => Outcome::new(
            false,
            format!(
                "{shape} (seed {}): {} of {} outside tolerance; C[{i}][{j}] = {got} (byte times scale), want {want}",
                p.seed,
                bad.len(),
                positions.len()
            ),
        ),
    }
}
