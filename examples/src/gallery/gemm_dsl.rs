//! The warp-specialized, persistent Hopper bf16 GEMM of `examples/src/gemm.rs`, written only
//! in the DSL: `C (M x N, bf16) = A (M x K, row-major) * B (N x K, K-major; or K x N,
//! N-major)`, f32 accumulation.
//!
//! The structure is the builder version's, statement for statement:
//! - 384 threads: warpgroup 0 produces, warpgroups 1 and 2 consume; `setmaxnreg` moves
//!   registers from the producer (40) to the consumers (232). `CONSUMER_WGS = 1`: 256
//!   threads, one consumer warpgroup (256 registers), a 64-row tile for decode shapes
//!   (M <= 64: no zero-filled half, and more B stages in the same shared memory).
//!   `CONSUMER_WGS = 3`: 512 threads, a 192-row tile (M = 2112 is 11 of them, 16.5 of 128),
//!   128 registers at entry and 152 per consumer; N at most 192 (`Tiles::register_problem`).
//! - One elected thread of the producer walks the CTA's tiles and, per 64-wide K block,
//!   acquires a stage of an S-stage `T.pipeline` (no hand-kept parity), registers the stage's
//!   bytes and issues the TMA loads of A (`BM x 64`) and B (`BN x 64`), 128-byte swizzled.
//! - Each consumer warpgroup owns `WG_M` rows (one m64 slab per 64): per K block it waits for
//!   the stage, issues 4 k16 steps of `T.ptx.wgmma.mma_async` per slab (the descriptors come
//!   from the typed tiles; N from the accumulator), commits, waits until the previous K block's
//!   wgmmas retired (`wait_group(1)`) and releases that stage (one arrive per warpgroup).
//! - Epilogue per warpgroup: the accumulator is rounded to bf16 pairs and written with
//!   `stmatrix` into one of two 64 x 64 swizzled staging tiles, which a TMA store writes to C
//!   (clipped at the edges); a tile is reused once the store issued two sub-tiles earlier read it.
//! - Persistent CTAs walk the tiles in grouped order (`GROUP_M` cluster-tile rows at a time).
//! - `CLUSTER = 2`: two CTAs of vertically adjacent tiles form a cluster; each loads its A tile
//!   and half of the shared B tile, multicast into both; consumers release both CTAs' stages.
//! - `B_MN = 1` (N-major B, stored K x N, without a cluster): B comes through the second map
//!   `b_kn`, a stage's B is one 64 x BN tile (BN / 64 column blocks, one box each) and the
//!   wgmmas read it MN-major (transposed B). The kernel takes both B maps; the host passes, for
//!   the one not read, any map of its box.
//! - Ragged shapes: TMA zero-fills loads past the edges and clips stores; K and N must be
//!   multiples of 8 (16-byte row strides), refused by the tensor maps (`Device::tensor_map`).
//! - `SPLIT > 1` (split-K, for shapes whose tiles leave SMs idle): the walk's work unit is a
//!   tile's slice of K (`split_unit`); each slice's f32 accumulator goes from the D fragment
//!   straight to the workspace `ws` (`[SPLIT, m, n]`), and `gemm_splitk_reduce`, launched
//!   after it, sums the slices in slice order into C. Without split-K `ws` is never touched.
//!   `FIXUP = 1`: the last slice waits on flags and sums in the kernel. `FIXUP = 2`: every
//!   slice stores and signals, all slices of a tile wait for all its flags, and each sums
//!   1/SPLIT of the tile into C (one launch, one wave: no slice reduces alone).
//! - `BN = 32` (`gemm::NARROW_BLOCK_N`, decode shapes: twice the CTAs of BN = 64 on N without
//!   split-K): narrower than a staging tile, so C goes from the registers to global memory.
//!   One sub-tile per warpgroup (BN = 64 with one slab) is the odd-count rule's: the first
//!   sub-tile of a tile waits for every store before it reuses the staging tile.
//!
//! The host side uses only the public `phaser` API (and `half`): `examples/user-crate` compiles
//! this file unchanged. The builder GEMM (`examples/src/gemm.rs`) is interchangeable with this
//! kernel: on the GPU the two agree bit for bit (`examples/tests/gpu_gemm.rs`).

use half::bf16;
use phaser::problem::{random_u32, BufferId, Example, LaunchArg, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, RuntimeError, Swizzle};
use phaser::Kernel;

/// Consumer warpgroups of the default configuration (the producer is one more); the kernel
/// takes its own count as `#[comptime] CONSUMER_WGS` (1: a 64-row tile for decode shapes; 3:
/// a 192-row tile).
pub const CONSUMERS: u32 = 2;
/// Threads of the default configuration's block: one producer and `CONSUMERS` consumer
/// warpgroups ([`threads`]).
pub const THREADS: u32 = threads(CONSUMERS);
/// Registers per thread at entry of the default configuration ([`entry_regs`]) and its
/// consumers' after `setmaxnreg` ([`consumer_regs`]).
pub const ENTRY_REGS: u32 = entry_regs(CONSUMERS);
pub const PRODUCER_REGS: u32 = 40;
pub const CONSUMER_REGS: u32 = consumer_regs(CONSUMERS);
/// The same with one consumer warpgroup (256 threads: the 64-row tile of decode shapes).
pub const ENTRY_REGS_1WG: u32 = entry_regs(1);
pub const CONSUMER_REGS_1WG: u32 = consumer_regs(1);
/// The same with three consumer warpgroups (512 threads: the 192-row tile, 128 registers at
/// entry, 152 per consumer thread).
pub const ENTRY_REGS_3WG: u32 = entry_regs(3);
pub const CONSUMER_REGS_3WG: u32 = consumer_regs(3);

/// Threads of the block with `consumers` consumer warpgroups and one producer.
pub const fn threads(consumers: u32) -> u32 {
    128 * (1 + consumers)
}

/// Registers per thread at entry (`.maxnreg`), at one block per SM: the register file's
/// share, at most 255 per thread (rounded down to the 8 `setmaxnreg` counts in).
pub const fn entry_regs(consumers: u32) -> u32 {
    let share = 65536 / threads(consumers) / 8 * 8;
    if share > 248 {
        248
    } else {
        share
    }
}

/// Registers per consumer thread after `setmaxnreg`: what the producer gives up (it keeps
/// [`PRODUCER_REGS`]), at most `setmaxnreg`'s 256.
pub const fn consumer_regs(consumers: u32) -> u32 {
    let share = (65536 - 128 * PRODUCER_REGS) / (128 * consumers) / 8 * 8;
    if share > 256 {
        256
    } else {
        share
    }
}
/// Registers a consumer thread needs besides its accumulator (addresses, the walk's and the
/// pipeline's state, the epilogue's packed pairs; [`Tiles::register_problem`]). Measured with
/// ptxas at three consumer warpgroups (128 registers a thread): 192 x 192 tiles (96
/// accumulator registers) assemble with no spills, 192 x 256 (128) need 154 (ptxas C7602).
pub const NON_ACCUMULATOR_REGS: u32 = 32;
/// Rows and columns of an epilogue staging tile (one TMA store box).
pub const EPI: u32 = 64;

/// Where tile `t` of the persistent walk starts: `origin[0]` = its first row, `origin[1]` its
/// first column. Triton's grouped ordering: `group_m` cluster-tile rows at a time, down the
/// rows first, so the CTAs running together share A rows and B columns in L2; the CTA of
/// rank `rank` in its cluster takes row `rank` of the cluster's rows.
#[phaser::device]
pub fn tile_origin(
    mut origin: Registers<u32, 1>,
    t: u32,
    tiles_n: u32,
    cluster_rows: u32,
    rank: u32,
    group_m: u32,
    cluster: u32,
    bm: u32,
    bn: u32,
) {
    let width = tiles_n * group_m;
    let group = t / width;
    let first_row = group * group_m;
    let rows = (cluster_rows - first_row).min(group_m);
    let in_group = t % width;
    let cluster_row = first_row + in_group % rows;
    origin[0] = (cluster_row * cluster + rank) * bm;
    origin[1] = in_group / rows * bn;
}

/// Split-K's work unit `t` of `tiles * split` (slice-major, so the CTAs running together
/// walk one slice's tiles in the grouped order): `unit[0]` its tile, `unit[1]..unit[2]` its
/// contiguous range of K blocks (each slice `k_blocks / split`, the last also the remainder),
/// `unit[3]` its slice.
#[phaser::device]
pub fn split_unit(mut unit: Registers<u32, 1>, t: u32, tiles: u32, k_blocks: u32, split: u32) {
    let slice = t / tiles;
    let per_slice = k_blocks / split;
    unit[0] = t % tiles;
    unit[1] = slice * per_slice;
    unit[2] = if slice == split - 1 { k_blocks } else { slice * per_slice + per_slice };
    unit[3] = slice;
}

/// Work unit `t` of the walk of `tiles_n * cluster_rows` cluster tiles in `split` K slices:
/// `unit[0]` its cluster tile, `unit[1]..unit[2]` its K blocks, `unit[3]` its slice
/// ([`split_unit`]; `split` 1: tile `t`, every K block, slice 0), and the tile's first row and
/// column in `origin` ([`tile_origin`]). Every role of every split-K GEMM walks this way
/// (`gemm_dsl`, `gemm_fp8_dsl`).
#[phaser::device]
pub fn work_unit(
    mut unit: Registers<u32, 1>,
    mut origin: Registers<u32, 1>,
    t: u32,
    tiles_n: u32,
    cluster_rows: u32,
    rank: u32,
    group_m: u32,
    cluster: u32,
    bm: u32,
    bn: u32,
    k_blocks: u32,
    split: u32,
) {
    if split > 1 {
        split_unit(unit, t, tiles_n * cluster_rows, k_blocks, split);
    } else {
        unit[0] = t;
        unit[1] = 0;
        unit[2] = k_blocks;
        unit[3] = 0;
    }
    tile_origin(origin, unit[0], tiles_n, cluster_rows, rank, group_m, cluster, bm, bn);
}

/// Split-K: one pair of a slice's f32 partials (columns `col`, `col + 1` of `row`, adjacent
/// registers of the D fragment) into the workspace slice starting at `base` (`[m, n]`),
/// nothing past the edges (N is even: a pair is whole or absent). Every split-K GEMM's
/// partial store (`gemm_dsl`, `gemm_fp8_dsl`).
#[phaser::device]
pub fn store_partial_pair(ws: &mut [f32], base: u32, row: u32, col: u32, m: u32, n: u32, lo: f32, hi: f32) {
    if row < m && col < n {
        T.st.v2(ws, base + row * n + col, lo, hi);
    }
}

/// Split-K: the sum of the first `slices` slices' partial pairs at element `at` (of each
/// slice's `mn`) into `pair[0]`, `pair[1]`, added in slice order whatever the schedule: every
/// reduction (`gemm_splitk_reduce`, the in-kernel ones) sums this way, so they agree bit for bit.
#[phaser::device]
pub fn sum_partial_pairs(mut pair: Registers<f32, 1>, ws: &[f32], at: u32, mn: u32, slices: u32) {
    let first = T.ld.v2(ws, at);
    pair[0] = first[0];
    pair[1] = first[1];
    for s in 1..slices {
        let v = T.ld.v2(ws, s * mn + at);
        pair[0] += v[0];
        pair[1] += v[1];
    }
}

#[phaser::kernel(target = "sm_90a")]
pub fn gemm_dsl(
    #[tma(box = [A_ROWS + A_ROWS / 64 * (CONSUMER_WGS * WG_M - 64), BLOCK_K], swizzle = "128B", dims = [m, k])]
    a: TensorMap<bf16, 2>,
    #[tma(box = [BN / CLUSTER, BLOCK_K], swizzle = "128B", dims = [n, k])] b: TensorMap<bf16, 2>,
    #[tma(box = [BLOCK_K, EPI], swizzle = "128B", dims = [k, n], major = "mn")] b_kn: TensorMap<bf16, 2>,
    #[tma(box = [EPI, EPI], swizzle = "128B", dims = [m, n])] c: TensorMap<bf16, 2>,
    m: u32,
    n: u32,
    k: u32,
    ws: &mut [f32],
    flags: &mut [u32],
    c_out: &mut [bf16],
    #[comptime] BN: u32,
    #[comptime] WG_M: u32,
    #[comptime] STAGES: u32,
    #[comptime] CLUSTER: u32,
    #[comptime] GROUP_M: u32,
    #[comptime] SPLIT: u32,
    #[comptime] B_MN: u32,
    #[comptime] FIXUP: u32,
    #[comptime] CONSUMER_WGS: u32,
    #[comptime] A_ROWS: u32,
) {
    T.require_block(128 * (1 + CONSUMER_WGS), 1, 1);
    if CONSUMER_WGS == 1 {
        T.max_registers(ENTRY_REGS_1WG);
    } else if CONSUMER_WGS == 3 {
        T.max_registers(ENTRY_REGS_3WG);
    } else {
        T.max_registers(ENTRY_REGS);
    }
    if CLUSTER > 1 {
        T.cluster_dims(CLUSTER, 1, 1);
    }
    let bm = CONSUMER_WGS * WG_M;
    // m64 slabs per consumer warpgroup: each is one wgmma per k-step and one accumulator.
    let slabs = WG_M / 64;
    // Full/empty barriers per stage: one producer thread fills; one thread per consumer
    // warpgroup releases, in every CTA its producer multicasts into. A release follows
    // `wgmma.wait_group`, so the stage's reads are done: CUTLASS's CTA-scope hand-back.
    let pipe = T.pipeline.new_cluster_threads(STAGES, CONSUMER_WGS, CLUSTER, "cta");
    // A stage: the A tile as one 64-row slab per m64 wgmma, the B tile as one slice per CTA
    // of the cluster (what that CTA loads and multicasts); each is, as a whole, one TMA box.
    // `A_ROWS` 64: A's box is the whole stage (`bm` rows, its 64-row slabs). Below 64 (a
    // 64-row tile, M at most A_ROWS: `Tiles::a_box_rows`) it is the slab's first A_ROWS
    // rows, so TMA fills no row past M with zeros on every K block; the slab is `64 / A_ROWS`
    // chunks of A_ROWS rows, the others zero-filled once (below).
    let a_ring = T.alloc_shared::<bf16>([STAGES, bm / A_ROWS, A_ROWS, BLOCK_K], "128B");
    // N-major B (`B_MN = 1`, no cluster: the host refuses one): each stage is one 64 x BN
    // tile of `BN / 64` column blocks, one `b_kn` box each (`b_ring[s][0]`).
    let b_rows = if B_MN == 1 { BLOCK_K } else { BN / CLUSTER };
    let b_cols = if B_MN == 1 { BN } else { BLOCK_K };
    let b_ring = T.alloc_shared::<bf16>([STAGES, CLUSTER, b_rows, b_cols], "128B");
    let stage_bytes = a.box_bytes() + b_ring[0].bytes();
    T.pipeline.init(pipe);

    // The walk every role repeats: persistent, one cluster per step, over `SPLIT` work units
    // (K slices) per cluster tile.
    let tiles_n = (n + BN - 1) / BN;
    let cluster_rows = (m + bm * CLUSTER - 1) / (bm * CLUSTER);
    let tiles = tiles_n * cluster_rows;
    let total = tiles * SPLIT;
    let first = T.block_idx() / CLUSTER;
    let step = T.grid_dim() / CLUSTER;
    let rank = if CLUSTER > 1 { T.cluster_cta_rank() } else { 0 };
    let k_blocks = (k + BLOCK_K - 1) / BLOCK_K;
    if SPLIT > 1 {
        // A slice without a K block would wait for a stage no producer fills (a hang): the
        // host refuses such a launch (`Tiles::shape_problem`); a launch that skips it traps.
        if k_blocks < SPLIT {
            T.ptx.trap();
        }
        // Slices that reduce shares wait for each other: a cluster with two work units would
        // wait on the one it has not started (a hang; `Tiles::wave_problem`).
        if FIXUP == 2 {
            if total > step {
                T.ptx.trap();
            }
        }
    }
    let mut origin = T.registers::<u32>([2]);
    let mut unit = T.registers::<u32>([4]);

    let wg = T.warpgroup_idx();
    if wg == 0 {
        T.ptx.setmaxnreg.dec(PRODUCER_REGS);
        // One elected thread of warp 0 issues every TMA load.
        if T.warp_idx() == 0 {
            if T.ptx.elect_sync() {
                let st = T.pipeline.producer_state(pipe);
                // K blocks issued so far: the first `STAGES` fill each stage once.
                let mut fills = 0;
                let mut t = first;
                while t < total {
                    work_unit(unit, origin, t, tiles_n, cluster_rows, rank, GROUP_M, CLUSTER, bm, BN, k_blocks, SPLIT);
                    let kb0 = unit[1];
                    let kb1 = unit[2];
                    let m0 = origin[0];
                    let n0 = origin[1];
                    for kb in kb0..kb1 {
                        let k0 = kb * BLOCK_K;
                        T.pipeline.producer_acquire(pipe, st);
                        // A stage's first fill with `A_ROWS < 64` also zero-fills the slab's
                        // other chunks, once: boxes at row 64, past M (`Tiles::shape_problem`),
                        // which TMA fills with zeros, so the wgmma reads no uninitialized row.
                        let mut zero_bytes = 0;
                        if A_ROWS < 64 {
                            if fills < STAGES {
                                zero_bytes = (64 / A_ROWS - 1) * a.box_bytes();
                            }
                        }
                        // Every byte that lands in this CTA's stage: A, and all of B (the
                        // peer's multicast slice included).
                        let full = T.pipeline.producer_commit(pipe, st, stage_bytes + zero_bytes);
                        let s = T.pipeline.stage(st);
                        if A_ROWS < 64 {
                            T.tma.load(a_ring[s][0], a, [m = m0, k = k0], full);
                            if fills < STAGES {
                                #[unroll]
                                for r in 1..64 / A_ROWS {
                                    T.tma.load(a_ring[s][r], a, [m = 64, k = 0], full);
                                }
                            }
                        } else {
                            T.tma.load(a_ring[s], a, [m = m0, k = k0], full);
                        }
                        fills += 1;
                        if CLUSTER > 1 {
                            let slice = BN / CLUSTER;
                            let mask = (1 << CLUSTER) - 1;
                            T.tma.load_multicast(b_ring[s][rank], b, [n = n0 + rank * slice, k = k0], full, mask);
                        } else if B_MN == 1 {
                            T.tma.load(b_ring[s][0], b_kn, [k = k0, n = n0], full);
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
        if CONSUMER_WGS == 1 {
            T.ptx.setmaxnreg.inc(CONSUMER_REGS_1WG);
        } else if CONSUMER_WGS == 3 {
            T.ptx.setmaxnreg.inc(CONSUMER_REGS_3WG);
        } else {
            T.ptx.setmaxnreg.inc(CONSUMER_REGS);
        }
        let cw = wg - 1;
        let tid = T.thread_idx() & 127;
        let leader = tid == 0;
        // Named barrier of this warpgroup's epilogue (0 is the CTA barrier).
        let bar_id = cw + 1;
        let slab0 = cw * slabs;
        // This thread's row address of the 8x8 matrices `stmatrix.x4` writes: threads 8i..8i+7
        // give matrix i's rows (rows 0-7, rows 8-15, then both 8 columns on), one 16-row band
        // per warp.
        let lane = tid & 31;
        let st_row = (tid >> 5) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        let st_col = (lane >> 4) * 8;
        let mut acc = T.registers::<f32>([slabs, BN / 2]);
        // An in-kernel reduction's sum of one pair of columns over the slices.
        let mut pair = T.registers::<f32>([2]);
        let read = T.pipeline.consumer_state(pipe);
        let release = T.pipeline.consumer_state(pipe);
        let mut t = first;
        while t < total {
            work_unit(unit, origin, t, tiles_n, cluster_rows, rank, GROUP_M, CLUSTER, bm, BN, k_blocks, SPLIT);
            let tile = unit[0];
            let kb0 = unit[1];
            let kb1 = unit[2];
            let m0 = origin[0];
            let n0 = origin[1];
            // K block 0 of the slice overwrites the accumulators (scale-d = false on its first
            // k-step).
            T.pipeline.consumer_wait(pipe, read);
            let s = T.pipeline.stage(read);
            T.ptx.wgmma.fence();
            #[unroll]
            for kk in 0..BLOCK_K / 16 {
                #[unroll]
                for j in 0..slabs {
                    // `A_ROWS < 64`: the stage's chunks are the one slab.
                    if A_ROWS < 64 {
                        if B_MN == 1 {
                            T.ptx.wgmma.mma_async(acc[j], a_ring[s], b_ring[s][0], kk, kk > 0, "mn");
                        } else {
                            T.ptx.wgmma.mma_async(acc[j], a_ring[s], b_ring[s], kk, kk > 0, "k");
                        }
                    } else if B_MN == 1 {
                        T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s][0], kk, kk > 0, "mn");
                    } else {
                        T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s], kk, kk > 0, "k");
                    }
                }
            }
            T.ptx.wgmma.commit_group();
            T.pipeline.advance(read);
            for _kb in kb0 + 1..kb1 {
                T.pipeline.consumer_wait(pipe, read);
                let s = T.pipeline.stage(read);
                T.ptx.wgmma.fence();
                #[unroll]
                for kk in 0..BLOCK_K / 16 {
                    #[unroll]
                    for j in 0..slabs {
                        if A_ROWS < 64 {
                            if B_MN == 1 {
                                T.ptx.wgmma.mma_async(acc[j], a_ring[s], b_ring[s][0], kk, true, "mn");
                            } else {
                                T.ptx.wgmma.mma_async(acc[j], a_ring[s], b_ring[s], kk, true, "k");
                            }
                        } else if B_MN == 1 {
                            T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s][0], kk, true, "mn");
                        } else {
                            T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s], kk, true, "k");
                        }
                    }
                }
                T.ptx.wgmma.commit_group();
                // The previous K block's wgmmas have retired: its stage can be refilled.
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

            if SPLIT > 1 {
                let slice = unit[3];
                // This slice's f32 partial sums, from the D fragment straight into its slice of
                // the workspace `[SPLIT, m, n]` (`store_partial_pair`, clipped at the edges):
                // every slice's but, with the fix-up, the last one's, which sums into C.
                if FIXUP != 1 || slice < SPLIT - 1 {
                    let base = slice * m * n;
                    #[unroll]
                    for j in 0..slabs {
                        let row0 = m0 + cw * WG_M + 64 * j;
                        #[unroll]
                        for p in 0..BN / 4 {
                            let row = row0 + T.fragment.row(acc[j], 2 * p);
                            let col = n0 + T.fragment.col(acc[j], 2 * p);
                            store_partial_pair(ws, base, row, col, m, n, acc[j][2 * p], acc[j][2 * p + 1]);
                        }
                    }
                }
                // `FIXUP = 0`: `gemm_splitk_reduce` sums the slices, in a second launch.
                if FIXUP == 1 {
                    // In-kernel fix-up: every slice but the last signals this warpgroup's flag
                    // of (slice, tile) after its partials; the last slice waits for them (units
                    // of smaller index, so every CTA reaches them first: no cycle), sums
                    // `ws[0] + .. + ws[SPLIT-2] + acc` in slice order (the reduction kernel's
                    // order: bit-identical to it) into C, and resets the flags to 0 for the
                    // next launch (a graph replay).
                    // One flag per (slice, CTA tile, warpgroup): a cluster's CTAs share
                    // the cluster tile `tile` and differ in `rank`.
                    let own = (tile * CLUSTER + rank) * CONSUMER_WGS + cw;
                    let per_slice = tiles * CLUSTER * CONSUMER_WGS;
                    if slice < SPLIT - 1 {
                        // Every thread's partials before the leader's release.
                        T.ptx.bar.sync(bar_id, 128);
                        if leader {
                            T.flag.signal(flags, slice * per_slice + own, 1);
                        }
                    } else {
                        for s in 0..SPLIT - 1 {
                            T.flag.wait(flags, s * per_slice + own, 1);
                        }
                        #[unroll]
                        for j in 0..slabs {
                            let row0 = m0 + cw * WG_M + 64 * j;
                            #[unroll]
                            for p in 0..BN / 4 {
                                let row = row0 + T.fragment.row(acc[j], 2 * p);
                                let col = n0 + T.fragment.col(acc[j], 2 * p);
                                if row < m && col < n {
                                    let at = row * n + col;
                                    sum_partial_pairs(pair, ws, at, m * n, SPLIT - 1);
                                    c_out[at] = (pair[0] + acc[j][2 * p]) as bf16;
                                    c_out[at + 1] = (pair[1] + acc[j][2 * p + 1]) as bf16;
                                }
                            }
                        }
                        // Every thread has waited before the flags go back to 0.
                        T.ptx.bar.sync(bar_id, 128);
                        if leader {
                            for s in 0..SPLIT - 1 {
                                flags[s * per_slice + own] = 0;
                            }
                        }
                    }
                } else if FIXUP == 2 {
                    // Every slice reduces a share: each slice signals its flag after its
                    // partials; all slices of the tile wait for all its flags, then each sums
                    // `ws[0] + .. + ws[SPLIT-1]` (slice order: the reduction kernel's, bit for
                    // bit) over its 1/SPLIT of the warpgroup's valid rows x columns into C. No
                    // slice reduces alone, and there is no second launch. The waits need every
                    // slice of the tile resident at once: the kernel traps on more work units
                    // than clusters (above) and the host refuses more units than SMs
                    // (`Tiles::wave_problem`).
                    // One group of SPLIT flags per (CTA tile, warpgroup), in two banks
                    // (`[2, groups, SPLIT]`): a launch signals one bank and clears the other,
                    // which the launch before signalled and whose waits all ended with it, so
                    // no flag is cleared while a slice may still wait on it and relaunches
                    // (graph replays) need no host reset. The bank alternates per launch: a
                    // set flag of bank 0 says the launch before used bank 0.
                    let group = (tile * CLUSTER + rank) * CONSUMER_WGS + cw;
                    let bank_len = tiles * CLUSTER * CONSUMER_WGS * SPLIT;
                    let own = group * SPLIT + slice;
                    let bank = if flags[own] == 1 { 1 } else { 0 };
                    let mine = bank * bank_len + group * SPLIT;
                    // Every thread's partials (and its read of the bank) before the leader's
                    // release.
                    T.ptx.bar.sync(bar_id, 128);
                    if leader {
                        T.flag.signal(flags, mine + slice, 1);
                        flags[(1 - bank) * bank_len + own] = 0;
                    }
                    for s in 0..SPLIT {
                        T.flag.wait(flags, mine + s, 1);
                    }
                    // This slice's share: pairs of columns of the valid rows, numbered row by
                    // row, `[slice * pairs / SPLIT, (slice + 1) * pairs / SPLIT)`, so even one
                    // row (M = 1) spreads over every slice.
                    let row0 = m0 + cw * WG_M;
                    if row0 < m {
                        let row_pairs = (n - n0).min(BN) / 2;
                        let pairs = (m - row0).min(WG_M) * row_pairs;
                        let end = (slice + 1) * pairs / SPLIT;
                        let mut i = slice * pairs / SPLIT + tid;
                        while i < end {
                            let at = (row0 + i / row_pairs) * n + n0 + 2 * (i % row_pairs);
                            sum_partial_pairs(pair, ws, at, m * n, SPLIT);
                            c_out[at] = pair[0] as bf16;
                            c_out[at + 1] = pair[1] as bf16;
                            i += 128;
                        }
                    }
                }
            } else if BN < EPI {
                // A tile narrower than a staging tile (`NARROW_BLOCK_N`, decode shapes): C from
                // the D fragment straight to global memory, a pair of adjacent columns per
                // register pair, clipped at the edges (N is even: a pair is whole or absent).
                // C is small where these tiles are chosen (M <= 64 rows).
                #[unroll]
                for j in 0..slabs {
                    let row0 = m0 + cw * WG_M + 64 * j;
                    #[unroll]
                    for p in 0..BN / 4 {
                        let row = row0 + T.fragment.row(acc[j], 2 * p);
                        let col = n0 + T.fragment.col(acc[j], 2 * p);
                        if row < m && col < n {
                            let at = row * n + col;
                            c_out[at] = acc[j][2 * p] as bf16;
                            c_out[at + 1] = acc[j][2 * p + 1] as bf16;
                        }
                    }
                }
            } else {
                // Two staging tiles per consumer warpgroup, after the stages (allocated where
                // the epilogue that uses them is: split-K, which bypasses them, has none).
                let c_tiles = T.alloc_shared::<bf16>([CONSUMER_WGS, 2, EPI, EPI], "128B");
                // Epilogue: 64 x 64 sub-tiles through the two staging tiles, alternately.
                #[unroll]
                for j in 0..slabs {
                    #[unroll]
                    for sub in 0..BN / EPI {
                        let staging = c_tiles[cw][(j * (BN / EPI) + sub) % 2];
                        // The store issued from this tile two sub-tiles ago must have read it.
                        // With an odd number of sub-tiles per tile (BN = 192), the previous
                        // tile's last store, the latest, used this tile: wait for every store
                        // (issued before this tile's mainloop, so long done).
                        if leader {
                            if j == 0 && sub == 0 && (slabs * (BN / EPI)) % 2 == 1 {
                                T.ptx.cp_async.bulk.wait_group_read(0);
                            } else {
                                T.ptx.cp_async.bulk.wait_group_read(1);
                            }
                        }
                        T.ptx.bar.sync(bar_id, 128);
                        #[unroll]
                        for q in 0..EPI / 16 {
                            // Registers 4g..4g+7 hold columns 8g..8g+15 of the thread's rows
                            // (PTX ISA: wgmma D fragment), in stmatrix's matrix order.
                            let g = (sub * EPI + q * 16) / 8;
                            T.ptx.stmatrix.x4(
                                T.tile_addr(staging, [st_row, q * 16 + st_col]),
                                T.pack.bf16x2(acc[j][4 * g], acc[j][4 * g + 1]),
                                T.pack.bf16x2(acc[j][4 * g + 2], acc[j][4 * g + 3]),
                                T.pack.bf16x2(acc[j][4 * g + 4], acc[j][4 * g + 5]),
                                T.pack.bf16x2(acc[j][4 * g + 6], acc[j][4 * g + 7]),
                            );
                        }
                        // Generic-proxy writes before the async-proxy (TMA) read.
                        T.ptx.fence.proxy_async("shared::cta");
                        T.ptx.bar.sync(bar_id, 128);
                        if leader {
                            T.tma.store(c, [m = m0 + cw * WG_M + 64 * j, n = n0 + sub * EPI], staging);
                            T.ptx.cp_async.bulk.commit_group();
                        }
                    }
                }
            }
            t += step;
        }
        // Stores still reading the staging tiles must finish before the CTA exits.
        if leader {
            T.ptx.cp_async.bulk.wait_group(0);
        }
    }
    if SPLIT > 1 && FIXUP == 0 {
        // Where `gemm_splitk_reduce` is launched as this grid's programmatic dependent
        // (`ReduceLaunch::Programmatic`, not the default) it may start once every CTA here got
        // this far, its walk done; its `griddepcontrol.wait` still waits for this grid's
        // completion and memory before it reads a partial. A plain launch (the default: run
        // 24 measured the programmatic one slower, triggered here and at the start) makes
        // this a no-op.
        T.ptx.griddepcontrol.launch_dependents();
    }
}

/// Split-K's second launch: C = the sum of the `SPLIT` f32 partials `ws[s][i]` (`i` of the
/// `mn` elements of C), added in slice order whatever the schedule (the result does not depend
/// on which slice finished first), rounded once to bf16. A grid-stride loop over pairs of
/// elements (`mn` is even: N is a multiple of 8), one `ld.v2` per slice.
#[phaser::kernel(target = "sm_90a")]
pub fn gemm_splitk_reduce(ws: &[f32], c: &mut [bf16], mn: u32, #[comptime] SPLIT: u32) {
    T.require_block(REDUCE_THREADS, 1, 1);
    // Launched as the GEMM's programmatic dependent (`ReduceLaunch::Programmatic`), this grid
    // may start before the GEMM ends: wait for its completion and memory before the first
    // read of `ws` (launched plainly, the default, the wait returns at once).
    T.ptx.griddepcontrol.wait();
    if mn % 2 == 1 {
        // The last pair would read past the workspace.
        T.ptx.trap();
    }
    let stride = 2 * T.grid_dim() * REDUCE_THREADS;
    let mut i = 2 * (T.block_idx() * REDUCE_THREADS + T.thread_idx());
    let mut pair = T.registers::<f32>([2]);
    while i < mn {
        sum_partial_pairs(pair, ws, i, mn, SPLIT);
        c[i] = pair[0] as bf16;
        c[i + 1] = pair[1] as bf16;
        i += stride;
    }
}

/// Threads per block of [`gemm_splitk_reduce`].
pub const REDUCE_THREADS: u32 = 256;

/// K per pipeline stage (one 128-byte swizzled row of bf16): the builder GEMM's too.
pub const BLOCK_K: u32 = 64;

/// The kernel's `#[comptime]` configuration: N of the CTA tile (and of every wgmma), rows per
/// consumer warpgroup (64 or 128: one or two m64 slabs), pipeline stages, CTAs per cluster
/// along M (1, or 2 with B multicast), the raster's group height in cluster-tile rows, and
/// split-K's slices of K (1: none; more: f32 partials into a workspace, then
/// [`gemm_splitk_reduce`]), and whether B is N-major (stored `K x N`, read through `b_kn`;
/// without a cluster) or K-major (`N x K`, through `b`), how split-K's slices are summed, and
/// the consumer warpgroups (the tile is `consumers * wg_m` rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiles {
    pub block_n: u32,
    pub wg_m: u32,
    pub stages: u32,
    pub cluster: u32,
    pub group_m: u32,
    pub split: u32,
    pub b_n_major: bool,
    /// How split-K's slices reach C (`#[comptime] FIXUP`); ignored without split-K.
    pub reduce: Reduce,
    /// Consumer warpgroups, 1, 2 or 3 (`#[comptime] CONSUMER_WGS`; 1: 256 threads, a 64-row
    /// tile for decode shapes, with [`CONSUMER_REGS_1WG`] registers per consumer thread; 3: 512
    /// threads, a 192-row tile, 128 registers a thread at entry: [`Tiles::register_problem`]).
    pub consumers: u32,
    /// Rows of A's TMA box (`#[comptime] A_ROWS`): `None`, the tile's; `Some(r)` (r in
    /// [`A_BOX_ROWS`], a 64-row tile, M at most r: [`Tiles::shape_problem`]), the slab's first r
    /// rows, so that no K block's A box has rows past M for TMA to fill with zeros (run 26: the
    /// 64 x 64 tile took twice as long at M = 1 as at M = 64).
    pub a_box_rows: Option<u32>,
}

/// The A box heights below the tile's a 64-row tile takes ([`Tiles::a_box_rows`]): whole
/// 128-byte swizzle atoms (8 rows) that divide the slab.
pub const A_BOX_ROWS: [u32; 3] = [8, 16, 32];

/// How the DSL GEMM's split-K slices are summed into C (`#[comptime] FIXUP` 0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// Every slice stores its f32 partials; a second launch, [`gemm_splitk_reduce`], sums them.
    SecondLaunch,
    /// In-kernel fix-up: the last slice's CTA waits on flags and sums the partials into C.
    LastSlice,
    /// Every slice stores its partials and signals; all slices of a tile wait for all its flags
    /// and each sums 1/split of the tile into C (one launch, in one wave: [`Tiles::wave_problem`]).
    EverySlice,
}

impl Reduce {
    /// The kernel's `#[comptime] FIXUP` value.
    pub fn fixup_code(self) -> u32 {
        match self {
            Reduce::SecondLaunch => 0,
            Reduce::LastSlice => 1,
            Reduce::EverySlice => 2,
        }
    }
}

impl Tiles {
    /// The gallery's configurations: the default (128 x 256 tiles, 4 stages, 2-CTA clusters
    /// with B multicast) and the cluster-free one with 256 x 128 tiles (two m64 slabs per
    /// warpgroup).
    pub fn gallery(cluster: bool) -> Tiles {
        let default = Tiles {
            block_n: 256,
            wg_m: 64,
            stages: 4,
            cluster: 2,
            group_m: 8,
            split: 1,
            b_n_major: false,
            reduce: Reduce::SecondLaunch,
            consumers: CONSUMERS,
            a_box_rows: None,
        };
        if cluster {
            default
        } else {
            Tiles { block_n: 128, wg_m: 128, cluster: 1, ..default }
        }
    }
    /// Rows of the CTA tile.
    pub fn block_m(&self) -> u32 {
        self.consumers * self.wg_m
    }
    /// Rows of A's TMA box ([`Tiles::a_box_rows`]; the tile's by default).
    pub fn a_rows(&self) -> u32 {
        self.a_box_rows.unwrap_or(self.block_m())
    }
    /// The kernel for this configuration (built once per configuration and cached); 0 slices
    /// of K is a build error that says so.
    pub fn kernel(&self) -> phaser::codegen::Result<Kernel> {
        if self.split == 0 {
            return refused("gemm_dsl", "split-K into 0 slices: at least 1 (1: no split)".into());
        }
        if let Some(why) = self.layout_problem() {
            return refused("gemm_dsl", why);
        }
        if ![1, 2, 3].contains(&self.consumers) {
            return refused("gemm_dsl", format!("{} consumer warpgroups: 1, 2 or 3", self.consumers));
        }
        if let Some(why) = self.register_problem() {
            return refused("gemm_dsl", why);
        }
        if let Some(why) = self.a_box_problem() {
            return refused("gemm_dsl", why);
        }
        let b_mn = self.b_n_major as u32;
        // Without split-K there is nothing to fix up: the one kernel of that configuration.
        let fixup = if self.split > 1 { self.reduce.fixup_code() } else { 0 };
        gemm_dsl::kernel_for(
            self.block_n,
            self.wg_m,
            self.stages,
            self.cluster,
            self.group_m,
            self.split,
            b_mn,
            fixup,
            self.consumers,
            // The kernel's `A_ROWS`: the box's rows below 64, else 64 (the tile's box).
            self.a_box_rows.unwrap_or(64),
        )
    }
    /// Why this configuration's A box ([`Tiles::a_box_rows`]) is not one the kernel takes.
    pub fn a_box_problem(&self) -> Option<String> {
        let r = self.a_box_rows?;
        if !A_BOX_ROWS.contains(&r) {
            return Some(format!("an A box of {r} rows: one of {A_BOX_ROWS:?} (or the tile's)"));
        }
        (self.block_m() != 64)
            .then(|| format!("an A box of {r} rows in a {}-row tile: only a 64-row tile's", self.block_m()))
    }
    /// Whether the kernel reduces split-K's slices itself (one launch, no [`gemm_splitk_reduce`]).
    pub fn reduces_in_kernel(&self) -> bool {
        self.reduce != Reduce::SecondLaunch && self.split > 1
    }
    /// The reduction split-K actually runs: [`Reduce::SecondLaunch`] without split-K too
    /// (nothing to reduce: the kernel writes C through its epilogue).
    pub fn split_reduce(&self) -> Option<Reduce> {
        (self.split > 1).then_some(self.reduce)
    }
    /// Elements of the in-kernel reductions' flags (1 when the kernel has none, which never
    /// touches it); they must be 0 before the first launch. The fix-up
    /// ([`Reduce::LastSlice`]): one per slice but the last, CTA tile and consumer warpgroup,
    /// left 0 by every launch. [`Reduce::EverySlice`]: two banks of one per slice, CTA tile and
    /// consumer warpgroup; a launch sets one bank and clears the other, so the buffer serves
    /// any number of launches in stream order.
    pub fn flags_len(&self, m: u32, n: u32) -> usize {
        let rows = m.div_ceil(self.block_m() * self.cluster) as usize * self.cluster as usize;
        let groups = rows * n.div_ceil(self.block_n) as usize * self.consumers as usize;
        match self.split_reduce() {
            None | Some(Reduce::SecondLaunch) => 1,
            Some(Reduce::LastSlice) => (self.split as usize - 1) * groups,
            Some(Reduce::EverySlice) => 2 * self.split as usize * groups,
        }
    }
    /// Work units (a cluster tile's K slice) of an `m x n` C.
    pub fn units(&self, m: u32, n: u32) -> u64 {
        let rows = m.div_ceil(self.block_m() * self.cluster) as u64;
        rows * n.div_ceil(self.block_n) as u64 * self.split.max(1) as u64
    }
    /// Why this configuration cannot run an `m x n` C on `sms` SMs, if it cannot: with
    /// [`Reduce::EverySlice`] every slice of a tile waits for all the others, so every work
    /// unit must have its own cluster, resident at once: at most one unit per cluster of
    /// `sms` SMs (one CTA per SM; a grid over more would hang, and the kernel traps on a
    /// launch with fewer clusters than units). Other kernels holding SMs only delay it.
    pub fn wave_problem(&self, m: u32, n: u32, sms: u32) -> Option<String> {
        let units = self.units(m, n);
        let clusters = (sms / self.cluster).max(1) as u64;
        (self.split_reduce() == Some(Reduce::EverySlice) && units > clusters).then(|| {
            format!(
                "split-K into {} slices reduced by every slice: {units} work units of a {m} x {n} C must all be resident                  at once (each waits for its tile's other slices), but {sms} SMs hold {clusters} {}; use fewer slices                  or wider tiles",
                self.split,
                if self.cluster > 1 { "clusters" } else { "CTAs" }
            )
        })
    }
    /// Why this configuration cannot load its tiles, if it cannot: the A tile (`block_m` rows)
    /// is one TMA box, and an N-major B tile is one `64 x BN` tile of 64-column boxes, and a
    /// cluster's multicast would need each CTA's share of those column blocks as a tile of its
    /// own, which the DSL has no view for.
    pub fn layout_problem(&self) -> Option<String> {
        let box_rows = phaser::codegen::arch::limits::TMA_MAX_BOX_DIM;
        if self.block_m() > box_rows {
            return Some(format!(
                "{} consumer warpgroups of {} rows: a {}-row A tile, one TMA box of at most {box_rows} rows",
                self.consumers,
                self.wg_m,
                self.block_m()
            ));
        }
        (self.b_n_major && self.cluster > 1).then(|| {
            format!(
                "N-major B with a {}-CTA cluster: the multicast needs a column-block view of the 64 x {} B tile, \
                 which the DSL has not; use cluster 1",
                self.cluster, self.block_n
            )
        })
    }
    /// The f32 accumulator registers of a consumer thread: `wg_m / 64` m64 slabs of
    /// `block_n / 2` each.
    pub fn accumulator_regs(&self) -> u32 {
        self.wg_m / 64 * self.block_n / 2
    }
    /// Why the consumers' registers cannot hold this configuration's accumulators, if they
    /// cannot: ptxas allocates the kernel within the entry cap ([`entry_regs`], `.maxnreg`),
    /// not the consumers' larger `setmaxnreg` count (at three warpgroups it refuses 192 x 256
    /// naming 128 registers, not 152), and needs [`NON_ACCUMULATOR_REGS`] besides the
    /// accumulator.
    pub fn register_problem(&self) -> Option<String> {
        let (acc, cap) = (self.accumulator_regs(), entry_regs(self.consumers));
        (acc + NON_ACCUMULATOR_REGS > cap).then(|| {
            format!(
                "{} x {} tiles with {} consumer warpgroups: {acc} accumulator registers per consumer thread + \
                 {NON_ACCUMULATOR_REGS} for the rest, over the {cap} that ptxas allocates a thread of a {}-thread \
                 block; use narrower tiles or fewer consumer warpgroups",
                self.block_m(),
                self.block_n,
                self.consumers,
                threads(self.consumers)
            )
        })
    }
    /// Split-K's reduction kernel (for `split` > 1).
    pub fn reduce_kernel(&self) -> phaser::codegen::Result<Kernel> {
        if self.split < 2 {
            return refused("gemm_splitk_reduce", format!("split-K into {} slice(s): nothing to reduce", self.split));
        }
        if self.reduce != Reduce::SecondLaunch {
            return refused(
                "gemm_splitk_reduce",
                format!("split-K into {} slices reduced in the kernel ({:?})", self.split, self.reduce),
            );
        }
        gemm_splitk_reduce::kernel_for(self.split)
    }
    /// Why this configuration cannot run an `m x n x k` GEMM, if it cannot: every slice needs
    /// at least one K block, and the kernel indexes in u32 the workspace's `split * m * n`
    /// elements and, where it stores C through `c_out` without split-K (a tile narrower than
    /// the epilogue's, [`Tiles::stores_c_from_registers`]), C's `m * n`.
    pub fn shape_problem(&self, m: u32, n: u32, k: u32) -> Option<String> {
        if let Some(r) = self.a_box_rows.filter(|&r| m > r) {
            // The box brings A's first r rows only; the kernel zero-fills the slab's others.
            return Some(format!("M = {m} with an A box of {r} rows: M at most {r}"));
        }
        self.split_problem_blocks(m, n, k, BLOCK_K).or_else(|| {
            let elements = m as u64 * n as u64;
            (self.stores_c_from_registers() && elements > u32::MAX as u64).then(|| {
                format!(
                    "a {m} x {n} C stored from the registers of {}-column tiles: {elements} elements, over the 2^32 \
                     a u32 index reaches",
                    self.block_n
                )
            })
        })
    }
    /// Whether the kernel stores C from the D fragment through `c_out` rather than through its
    /// staging tiles and a TMA store: tiles narrower than a staging tile (`BN < EPI`).
    pub fn stores_c_from_registers(&self) -> bool {
        self.block_n < EPI
    }
    /// The split-K part of [`Tiles::shape_problem`], of a GEMM whose stages take `block_k` of K
    /// (the FP8 GEMM's 128).
    pub fn split_problem_blocks(&self, m: u32, n: u32, k: u32, block_k: u32) -> Option<String> {
        let k_blocks = k.div_ceil(block_k);
        if self.split == 0 {
            return Some("split-K into 0 slices: at least 1 (1: no split)".into());
        }
        if self.split > k_blocks {
            return Some(format!(
                "split-K into {} slices, but K = {k} is {k_blocks} block(s) of {block_k}: at most one slice per K block",
                self.split
            ));
        }
        let elements = self.workspace_len(m, n) as u64;
        if self.split > 1 && elements > u32::MAX as u64 {
            return Some(format!(
                "split-K into {} slices of a {m} x {n} C: a workspace of {elements} f32s, over the 2^32 a u32 index reaches",
                self.split
            ));
        }
        None
    }
    /// Elements of the f32 workspace `[split, m, n]` (1 without split-K: the kernel takes the
    /// argument but never touches it).
    pub fn workspace_len(&self, m: u32, n: u32) -> usize {
        if self.split > 1 {
            self.split as usize * m as usize * n as usize
        } else {
            1
        }
    }
    /// The persistent grid for an `m x n` C on `sms` SMs: one CTA per SM (whole clusters), at
    /// most one per work unit (a tile's K slice).
    pub fn grid(&self, m: u32, n: u32, sms: u32) -> u32 {
        let units = self.units(m, n);
        let clusters = units.min((sms / self.cluster).max(1) as u64) as u32;
        clusters.max(1) * self.cluster
    }
    /// The reduction's grid for an `m x n` C: enough blocks for two elements per thread, at
    /// most 8 per SM (the rest loop).
    pub fn reduce_grid(&self, m: u32, n: u32, sms: u32) -> u32 {
        let blocks = (m as u64 * n as u64).div_ceil(2 * REDUCE_THREADS as u64);
        blocks.clamp(1, 8 * sms.max(1) as u64) as u32
    }
    /// The reduction's launch for an `m x n` C after the GEMM's: [`Self::reduce_grid`],
    /// launched `how` ([`ReduceLaunch`]).
    pub fn reduce_launch(&self, m: u32, n: u32, sms: u32, how: ReduceLaunch) -> phaser::LaunchConfig {
        let lc = phaser::LaunchConfig::linear(self.reduce_grid(m, n, sms), REDUCE_THREADS);
        match how {
            ReduceLaunch::Programmatic => lc.with_programmatic_dependent_launch(),
            ReduceLaunch::Plain => lc,
        }
    }
}

/// How split-K's second launch, [`gemm_splitk_reduce`], follows the GEMM on its stream.
/// `Plain` (the default): after the GEMM ends. `Programmatic`: a programmatic dependent
/// launch, which the GEMM releases when its walk is done (`griddepcontrol.launch_dependents`),
/// so the reduction's launch overlaps the GEMM's tail; its `griddepcontrol.wait` returns when
/// the GEMM's memory is complete. Measured slower on an H100 (run 24, bench/gemm.md: 4-12% at
/// M = 16 and 64, 1-5% faster at M = 1, triggered at the GEMM's start or at its end alike),
/// so it is the one to compare (`bench_gemm --reduce-launch programmatic`), not the
/// default. The simulator runs launches in order, but checks the programmatic one's accesses
/// before its `griddepcontrol.wait` against what the GEMM touched (`early-dependent-access`;
/// `gemm::dsl::launch_with`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReduceLaunch {
    Programmatic,
    #[default]
    Plain,
}

/// A kernel build error naming `name` and `why`.
fn refused(name: &str, why: String) -> phaser::codegen::Result<Kernel> {
    let mut k = phaser::codegen::builder::KernelBuilder::new(name, phaser::Target::Sm90a);
    k.error(why);
    k.finish()
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "gemm_dsl",
            about: "the Hopper bf16 GEMM written in the DSL: TMA producer warp, T.pipeline stages, two wgmma \
                    consumer warpgroups, stmatrix + TMA-store epilogue, persistent grouped raster, 2-CTA cluster \
                    with B multicast",
            kernels: |_| Ok(vec![Tiles::gallery(true).kernel()?]),
            setup: |dev, size, seed| setup(dev, size, seed, Tiles::gallery(true)),
            check,
        },
        Example {
            name: "gemm_dsl_1cta",
            about: "the DSL GEMM without a cluster: 256 x 128 tiles, two m64 wgmma slabs per consumer warpgroup",
            kernels: |_| Ok(vec![Tiles::gallery(false).kernel()?]),
            setup: |dev, size, seed| setup(dev, size, seed, Tiles::gallery(false)),
            check,
        },
        Example {
            name: "gemm_dsl_splitk",
            about: "the DSL GEMM with split-K: 3 slices of K per 128 x 128 tile, f32 partials stored from the \
                    wgmma fragments into a workspace, then a second launch sums them in slice order into bf16 C",
            kernels: |_| Ok(vec![splitk_tiles().kernel()?, splitk_tiles().reduce_kernel()?]),
            setup: |dev, size, seed| setup(dev, size, seed, splitk_tiles()),
            check,
        },
        Example {
            name: "gemm_dsl_splitk_fixup",
            about: "the DSL GEMM with split-K reduced in the kernel: 3 slices of K per 128 x 128 tile; every slice \
                    but the last stores its f32 partials and signals a flag, the last waits for them, sums in \
                    slice order and writes C (one launch; the flags are left 0)",
            kernels: |_| Ok(vec![fixup_tiles().kernel()?]),
            setup: |dev, size, seed| setup(dev, size, seed, fixup_tiles()),
            check,
        },
        Example {
            name: "gemm_dsl_splitk_every",
            about: "the DSL GEMM for decode shapes: 64 x 128 tiles (one consumer warpgroup, 256 threads), 3 slices \
                    of K; every slice stores its f32 partials and signals a flag, all slices of a tile wait for \
                    all its flags and each sums its third of the tile in slice order into C (one launch, one \
                    wave; launched twice, on both banks of the flags)",
            kernels: |_| Ok(vec![every_slice_tiles().kernel()?]),
            setup: |dev, size, seed| setup(dev, size, seed, every_slice_tiles()),
            check,
        },
    ]
}

/// The decode example's configuration: 64 x 128 tiles (one consumer warpgroup), K in 3 slices,
/// reduced by every slice.
fn every_slice_tiles() -> Tiles {
    Tiles { consumers: 1, reduce: Reduce::EverySlice, ..splitk_tiles() }
}

/// The in-kernel fix-up example's configuration: the split-K example's, reduced in the kernel.
fn fixup_tiles() -> Tiles {
    Tiles { reduce: Reduce::LastSlice, ..splitk_tiles() }
}

/// The split-K example's configuration: 128 x 128 tiles without a cluster, K in 3 slices
/// (uneven at the small size: 4 K blocks; one each at the quick size: 3).
fn splitk_tiles() -> Tiles {
    Tiles { block_n: 128, wg_m: 64, cluster: 1, split: 3, ..Tiles::gallery(true) }
}

/// What the check needs: the shape (`m x n x k`), the inputs and C.
pub struct Host {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a: Vec<bf16>,
    pub b: Vec<bf16>,
    pub c: BufferId<bf16>,
    /// With split-K: the workspace of f32 partials (the first launch's output) and the
    /// configuration that sliced K.
    pub partials: Option<(BufferId<f32>, Tiles)>,
    /// With an in-kernel reduction: its flags, as the first launch left them (the fix-up: 0;
    /// every slice's: bank 0 set, bank 1 clear).
    pub flags: Option<BufferId<u32>>,
    /// Check every element (small sizes), or the corners and 4096 random positions.
    pub every_element: bool,
}

/// C before the launch: NaN, which no product of the inputs is.
const POISON: bf16 = bf16::from_bits(0xFFFF);

/// Random elements of {-1, 0, 1}: every partial sum is a small integer, exact in f32 whatever
/// the order, so C is the exact product rounded once to bf16, on the GPU and in the simulator.
fn ternary(n: usize, seed: u64) -> Vec<bf16> {
    random_u32(n, seed).into_iter().map(|x| bf16::from_f32((x % 3) as f32 - 1.0)).collect()
}

pub fn setup(dev: &Device, size: Size, seed: u64, tiles: Tiles) -> Result<Problem, RuntimeError> {
    let (bm, cm) = (tiles.block_m(), tiles.cluster);
    // Small: one CTA (cluster) walks two tiles of four K blocks, so the stage ring wraps and
    // the epilogue's staging tiles are reused. Quick: ragged in every dimension (a partial
    // cluster row, a partial tile column, a partial K block) over two CTAs (clusters). Full: a
    // real GEMM (2048^3), persistent over the GPU. K and N are multiples of 8 (the tensor
    // maps' 16-byte row strides).
    // A reduction by every slice runs in one wave: a CTA (cluster) per work unit, at decode
    // shapes past the small one (quick: M = 33, one tile row, within the quick budget of a
    // spinning wait; full: 64 x 4096 x 4096, whose units fit on the GPU).
    let every_slice = tiles.split_reduce() == Some(Reduce::EverySlice);
    let (shape, grid) = match size {
        Size::Small => ((2 * bm * cm, tiles.block_n, 256), cm),
        Size::Quick if every_slice => ((33, 200, 136), cm),
        Size::Quick => ((bm * cm + 72, 200, 136), 2 * cm),
        Size::Full if every_slice => ((64, 4096, 4096), tiles.grid(64, 4096, dev.sm_count()?)),
        Size::Full => ((2048, 2048, 2048), tiles.grid(2048, 2048, dev.sm_count()?)),
    };
    let grid = if every_slice && size != Size::Full { tiles.units(shape.0, shape.1) as u32 * cm } else { grid };
    setup_tiles(dev, tiles, shape, grid, seed, size != Size::Full)
}

/// The GEMM of configuration `tiles` over an `m x n x k` problem on `grid` CTAs, with ternary
/// inputs from `seed`, checking every element or (`every_element` false) a sample: the
/// gallery's sizes, and the small instances the exhaustive exploration takes
/// (`examples/tests/sim_explore_gemm.rs`).
pub fn setup_tiles(
    dev: &Device,
    tiles: Tiles,
    (m, n, k): (u32, u32, u32),
    grid: u32,
    seed: u64,
    every_element: bool,
) -> Result<Problem, RuntimeError> {
    let cm = tiles.cluster;
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let a = ternary(mu * ku, seed);
    let b = ternary(nu * ku, seed ^ 0x5bd1_e995);
    let mut p = Problem::new(seed);
    let ga = p.input(dev, &a)?;
    let gb = p.input(dev, &b)?;
    let gc = p.output(dev, mu * nu, POISON)?;
    let (m64, n64, k64) = (m as u64, n as u64, k as u64);
    let sw = Swizzle::B128;
    let ma = p.tensor_map(dev, ga, &[k64, m64], &[BLOCK_K, tiles.a_rows()], sw)?;
    let mb = p.tensor_map(dev, gb, &[k64, n64], &[BLOCK_K, tiles.block_n / cm], sw)?;
    // The N-major B's map, which this K-major B's kernel takes and never reads: any map of
    // its box will do.
    let mb_kn = p.tensor_map(dev, gb, &[k64, n64], &[EPI, BLOCK_K], sw)?;
    let mc = p.tensor_map(dev, gc, &[n64, m64], &[EPI, EPI], sw)?;
    // The dynamic shared memory is the kernel's own declaration.
    let launch = phaser::LaunchConfig::linear(grid, threads(tiles.consumers));
    let why = tiles.shape_problem(m, n, k).or_else(|| tiles.wave_problem(m, n, grid));
    if let Some(why) = why {
        return Err(RuntimeError::BadLaunch { kernel: "gemm_dsl".into(), problem: format!("{m}x{n}x{k}: {why}") });
    }
    // The GEMM's arguments: the maps, the shape, the workspace, the flags and C as a buffer.
    let gemm_args = |ws: BufferId<f32>, flags: BufferId<u32>, c_out: BufferId<bf16>| -> [LaunchArg; 10] {
        [
            ma.into(),
            mb.into(),
            mb_kn.into(),
            mc.into(),
            m.into(),
            n.into(),
            k.into(),
            ws.into(),
            flags.into(),
            c_out.into(),
        ]
    };
    let mut fixup_flags = None;
    let partials = if tiles.reduces_in_kernel() {
        // One launch: the partials (of every slice but the last for the fix-up; poisoned, as
        // below), the flags (0 before the launch), and C written directly.
        let ws = p.output(dev, tiles.workspace_len(m, n), f32::NAN)?;
        let flags = p.output(dev, tiles.flags_len(m, n), 0u32)?;
        let args = gemm_args(ws, flags, gc);
        p.launch(tiles.kernel()?, launch, args, [ws.into(), flags.into(), gc.into()]);
        if tiles.split_reduce() == Some(Reduce::EverySlice) {
            // Launched again on the flags the first launch left (not an output of this one, so
            // not reset): it signals the other bank and clears the first. C is poisoned again
            // and checked; the partials are the first launch's (checked there).
            let args = gemm_args(ws, flags, gc);
            p.launch(tiles.kernel()?, launch, args, [gc.into()]);
        }
        fixup_flags = Some(flags);
        Some((ws, tiles))
    } else if tiles.split > 1 {
        // The partials (poisoned: a slice's element left unwritten fails the check), then the
        // reduction into C, on the same stream after it.
        let ws = p.output(dev, tiles.workspace_len(m, n), f32::NAN)?;
        let (flags, c_out) = (p.input(dev, &[0u32])?, p.input(dev, &[POISON])?);
        let args = gemm_args(ws, flags, c_out);
        p.launch(tiles.kernel()?, launch, args, [ws.into()]);
        let reduce = tiles.reduce_launch(m, n, dev.sm_count()?, ReduceLaunch::default());
        p.launch(tiles.reduce_kernel()?, reduce, [ws.into(), gc.into(), (m * n).into()], [gc.into()]);
        Some((ws, tiles))
    } else {
        // The kernel never touches its workspace or flags without split-K, nor `c_out` but
        // in a tile narrower than the epilogue's (`BN < EPI`: C from the registers, so C itself).
        let ws = p.input(dev, &[0.0f32])?;
        let flags = p.input(dev, &[0u32])?;
        let c_out = if tiles.stores_c_from_registers() { gc } else { p.input(dev, &[POISON])? };
        let args = gemm_args(ws, flags, c_out);
        p.launch(tiles.kernel()?, launch, args, [gc.into()]);
        None
    };
    p.set_host(Host { m, n, k, a, b, c: gc, partials, flags: fixup_flags, every_element });
    Ok(p)
}

/// A and B (K-major) in f32, converted once for the reference's dot products.
struct Operands {
    k: usize,
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Operands {
    fn of(h: &Host) -> Operands {
        let f32s = |x: &[bf16]| x.iter().map(|v| v.to_f32()).collect();
        Operands { k: h.k as usize, a: f32s(&h.a), b: f32s(&h.b) }
    }

    /// The sum of `A[i][kk] * B[j][kk]` over `range` (exact: the inputs are ternary).
    fn dot(&self, i: usize, j: usize, range: std::ops::Range<usize>) -> f32 {
        let (a, b) = (&self.a[i * self.k..], &self.b[j * self.k..]);
        range.map(|kk| a[kk] * b[kk]).sum()
    }
}

/// The columns of K that slice `s` of `split` sums: its K blocks `k_blocks / split` from
/// `s * (k_blocks / split)`, the last slice also the remainder (the kernel's `split_unit`),
/// clipped at K.
fn slice_columns(k: u32, split: u32, s: u32) -> std::ops::Range<usize> {
    let k_blocks = k.div_ceil(BLOCK_K);
    let per = k_blocks / split;
    let end = if s == split - 1 { k_blocks } else { (s + 1) * per };
    (s * per * BLOCK_K) as usize..(end * BLOCK_K).min(k) as usize
}

/// Every element (small sizes) or the corners, edges and 4096 random positions (the full
/// size) equal the exact product bit for bit.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    // C is the last launch's output (the reduction's, with split-K); every slice's reduction
    // runs twice (on both banks of its flags), and each launch's C is checked.
    let last = outputs.launches.len() - 1;
    let every_slice = h.partials.is_some_and(|(_, t)| t.split_reduce() == Some(Reduce::EverySlice));
    if every_slice && last > 0 {
        let first = check_c(p, outputs.get(0, h.c), "launch 1 of 2: ");
        if !first.passed {
            return first;
        }
    }
    let (m, n) = (h.m as usize, h.n as usize);
    let shape = format!("{}x{}x{}", h.m, h.n, h.k);
    let expected = expected(p);
    // With split-K, each slice's partial at the same positions is exact too: the slicing of K,
    // not only the total, is what the kernel computed.
    if let Some((ws, tiles)) = h.partials {
        let partials = outputs.get(0, ws);
        for (s, want) in expected.partials.iter().enumerate() {
            let at = |i: usize, j: usize| s * m * n + i * n + j;
            // By value: a slice of zero products is +0 on the GPU, -0 in Rust's `sum` (NaN,
            // the poison, equals nothing).
            let wrong = expected.positions.iter().zip(want).find(|&(&(i, j), &w)| partials[at(i, j)] != w);
            if let Some((&(i, j), w)) = wrong {
                return Outcome::new(
                    false,
                    format!(
                        "{shape} (seed {}): slice {s} of {} (K columns {:?}): partial[{i}][{j}] = {}, want {w}",
                        p.seed,
                        tiles.split,
                        slice_columns(h.k, tiles.split, s as u32),
                        partials[at(i, j)],
                    ),
                );
            }
        }
    }
    if let Some(flags) = h.flags {
        // The fix-up leaves every flag 0; every slice's reduction, after its first launch,
        // bank 0 set (1) and bank 1 clear.
        let bank_len = outputs.get(0, flags).len() / 2;
        let want = |i: usize| u32::from(every_slice && i < bank_len);
        let left: Vec<(usize, u32)> =
            outputs.get(0, flags).iter().copied().enumerate().filter(|&(i, f)| f != want(i)).take(4).collect();
        if !left.is_empty() {
            return Outcome::new(
                false,
                format!("{shape} (seed {}): flags left wrong (index, value): {left:?}", p.seed),
            );
        }
    }
    check_c(p, outputs.get(last, h.c), "")
}

/// What [`check`] compares, computed once per problem ([`Problem::expected`]; the reference
/// products are most of a check's time, and the suite reruns a check per corrupted output):
/// the positions (every element at small sizes, else the corners and 4096 random ones), the
/// exact C there, and with split-K each stored slice's exact partial there (the fix-up's last
/// slice sums straight into C: only the others are in the workspace).
struct Expected {
    positions: Vec<(usize, usize)>,
    c: Vec<bf16>,
    partials: Vec<Vec<f32>>,
}

fn expected(p: &Problem) -> std::rc::Rc<Expected> {
    p.expected(|| {
        let h: &Host = p.host();
        let (m, n) = (h.m as usize, h.n as usize);
        let positions: Vec<(usize, usize)> = if h.every_element {
            (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
        } else {
            let mut v = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
            let r = random_u32(2 * 4096, p.seed);
            v.extend(r.chunks(2).map(|c| (c[0] as usize % m, c[1] as usize % n)));
            v
        };
        let ops = Operands::of(h);
        // The exact product of row `i` of A and row `j` of B, rounded to bf16.
        let c = positions.iter().map(|&(i, j)| bf16::from_f32(ops.dot(i, j, 0..ops.k))).collect();
        let stored = match h.partials {
            None => 0,
            Some((_, t)) if t.split_reduce() == Some(Reduce::LastSlice) => t.split - 1,
            Some((_, t)) => t.split,
        };
        let split = h.partials.map_or(1, |(_, t)| t.split);
        let partials = (0..stored)
            .map(|s| {
                let cols = slice_columns(h.k, split, s);
                positions.iter().map(|&(i, j)| ops.dot(i, j, cols.clone())).collect()
            })
            .collect();
        Expected { positions, c, partials }
    })
}

/// C (`got`) equals the exact product bit for bit at [`positions`]; `what` prefixes the report.
fn check_c(p: &Problem, got: &[bf16], what: &str) -> Outcome {
    let h: &Host = p.host();
    let n = h.n as usize;
    let shape = format!("{what}{}x{}x{}", h.m, h.n, h.k);
    let expected = expected(p);
    let positions = &expected.positions;
    let bad: Vec<(usize, usize, bf16)> = positions
        .iter()
        .zip(&expected.c)
        .filter(|&(&(i, j), want)| got[i * n + j].to_bits() != want.to_bits())
        .map(|(&(i, j), &want)| (i, j, want))
        .collect();
    match bad.first() {
        None => Outcome::new(true, format!("{shape} (seed {}): {} elements exact", p.seed, positions.len())),
        Some(&(i, j, want)) => Outcome::new(
            false,
            format!(
                "{shape} (seed {}): {} of {} wrong; C[{i}][{j}] = {}, want {want}",
                p.seed,
                bad.len(),
                positions.len(),
                got[i * n + j],
            ),
        ),
    }
}
