//! FlashAttention forward on Hopper, written only in the DSL:
//! `O = softmax(Q Kᵀ · scale [+ causal mask]) V` and the log-sum-exp of each row, bf16 in,
//! f32 accumulation, bf16 out. Q is `[batch · heads, seq_q, D]`, K and V `[batch · kv_heads,
//! seq_k, D]` (GQA: `heads / kv_heads` query heads share a KV head), O like Q, LSE
//! `[batch · heads, seq_q]` f32 (natural log).
//!
//! The structure (FlashAttention-3's, with its warpgroup ping-pong and intra-warpgroup overlap):
//! - 384 threads: warpgroup 0 produces, warpgroups 1 and 2 consume 64 query rows each (the
//!   CTA's `BM` = 128 rows); `setmaxnreg` moves registers from the producer (24) to the
//!   consumers (240).
//! - One elected thread of the producer loads the CTA's Q once (its own barrier), then K and V
//!   block by block through two `T.pipeline` rings (`BN` keys per block), 128-byte swizzled,
//!   as 64-column chunks (one TMA box and one wgmma operand each). TMA zero-fills rows past
//!   the sequence ends of each head (the maps are 3-D: head, row, column).
//! - Each consumer warpgroup issues block 0's `S = Q Kᵀ` (`mma_async`, K-major K) and waits
//!   for it; then, per KV block j: masks the ragged last block (`T.fragment.mask_cols`) and the
//!   diagonal block (`T.fragment.mask_causal`) and runs the online softmax with exp2 and the
//!   scale folded into one fma (`T.fragment.row_max`, `of_row`) while block j - 1's `O += P V`
//!   runs; waits for that P V, releases its V stage and packs this block's P
//!   (`T.fragment.to_a`); issues block j + 1's S, rescales O and issues block j's P V (P in
//!   registers as the A operand, `mma_async_rs`, V MN-major as its map says), and waits for S only
//!   (`wait_group(1)`) before releasing its K stage. FlashAttention-3's intra-warpgroup
//!   overlap: the tensor cores have the next GEMMs while the softmax runs. Every wait is
//!   unconditional (the loop is rotated, not guarded by `j > 0`): a wait ptxas cannot follow
//!   makes it serialize every wgmma (C7515), which the ptxas test refuses.
//! - Ping-pong (`PINGPONG`): the two consumer warpgroups take turns issuing their GEMMs through
//!   named barriers 3 and 4 (`bar.sync` on its own, `bar.arrive` on the other's, 256 threads),
//!   so one warpgroup's softmax runs under the other's GEMMs.
//! - Causal blocks past the diagonal are never loaded or computed.
//! - Epilogue: O divided by the row sums (reduced across the row's 4 threads once), the LSE
//!   stored by one thread per row, O rounded to bf16 into the warpgroup's own Q slab
//!   (`stmatrix`) and written by TMA stores (clipped at the sequence end).

use half::bf16;
use phaser::problem::{random_u32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, RuntimeError, Swizzle};
use phaser::Kernel;

/// Consumer warpgroups (the producer is one more).
pub const CONSUMERS: u32 = 2;
/// Threads of the block: one producer and `CONSUMERS` consumer warpgroups.
pub const THREADS: u32 = 128 * (1 + CONSUMERS);
/// Query rows per CTA: 64 per consumer warpgroup (one m64 wgmma slab).
pub const BM: u32 = 64 * CONSUMERS;
/// Columns of a chunk: one 128-byte swizzle row of bf16, one TMA box, one wgmma operand.
pub const CHUNK: u32 = 64;
/// Registers per thread at entry (one block per SM) and after `setmaxnreg`.
const ENTRY_REGS: u32 = 65536 / THREADS / 8 * 8;
const PRODUCER_REGS: u32 = 24;
const CONSUMER_REGS: u32 = (65536 - 128 * PRODUCER_REGS) / (128 * CONSUMERS) / 8 * 8;

/// Tile `t` of the walk: its query head, first query row, KV head (GQA) and KV blocks.
#[phaser::device]
fn tile_of(
    mut at: Registers<u32, 1>,
    t: u32,
    q_tiles_per_head: u32,
    kv_blocks: u32,
    heads: u32,
    kv_group: u32,
    causal: u32,
    bm: u32,
    bn: u32,
) {
    let bh = t / q_tiles_per_head;
    let mut m_tile = t % q_tiles_per_head;
    if causal > 0 {
        m_tile = q_tiles_per_head - 1 - m_tile;
    }
    let m0 = m_tile * bm;
    at[0] = bh;
    at[1] = m0;
    at[2] = (bh / heads) * (heads / kv_group) + (bh % heads) / kv_group;
    at[3] = kv_blocks;
    if causal > 0 {
        // Blocks past the diagonal of the tile's last row are fully masked: skipped.
        at[3] = kv_blocks.min((m0 + bm + bn - 1) / bn);
    }
}

#[phaser::kernel(target = "sm_90a")]
pub fn attention_dsl(
    #[tma(box = [1, 64, CHUNK], swizzle = "128B")] q: TensorMap<bf16, 3>,
    #[tma(box = [1, BN, CHUNK], swizzle = "128B")] k: TensorMap<bf16, 3>,
    #[tma(box = [1, BN, CHUNK], swizzle = "128B", major = "mn")] v: TensorMap<bf16, 3>,
    #[tma(box = [1, 64, CHUNK], swizzle = "128B")] o: TensorMap<bf16, 3>,
    lse: &mut [f32],
    seq_q: u32,
    seq_k: u32,
    heads: u32,
    kv_group: u32,
    tiles: u32,
    scale_log2: f32,
    #[comptime] D: u32,
    #[comptime] BN: u32,
    #[comptime] STAGES: u32,
    #[comptime] CAUSAL: u32,
    #[comptime] PINGPONG: u32,
) {
    T.require_block(THREADS, 1, 1);
    T.max_registers(ENTRY_REGS);
    let chunks = D / CHUNK;
    // Q (and, after the last S, the warpgroup's O staging): chunk c of warpgroup w's rows.
    let q_tiles = T.alloc_shared::<bf16>([D / CHUNK, CONSUMERS, 64, CHUNK], "128B");
    let k_ring = T.alloc_shared::<bf16>([STAGES, D / CHUNK, BN, CHUNK], "128B");
    // A V stage is one [BN, D] matrix (its D / CHUNK column blocks are one TMA box each), so
    // P V is one N = D wgmma per k-step.
    let v_ring = T.alloc_shared::<bf16>([STAGES, BN, D], "128B");
    let bars = T.alloc_barriers(2);
    let q_full = bars.ptr_to([0]);
    // The Q slabs are free again (each consumer warpgroup's leader, once its O store has read
    // its slab): the next tile's Q may be loaded.
    let q_empty = bars.ptr_to([1]);
    // One release per consumer warpgroup (its leader, after `wgmma.wait_group`).
    let k_pipe = T.pipeline.new_threads(STAGES, CONSUMERS);
    let v_pipe = T.pipeline.new_threads(STAGES, CONSUMERS);
    if T.thread_idx() == 0 {
        T.ptx.mbarrier.init(q_full, 1);
        T.ptx.mbarrier.init(q_empty, CONSUMERS);
    }
    T.pipeline.init(k_pipe);
    T.pipeline.init(v_pipe);

    // Tiles of 128 query rows of one head, `tiles` in all, walked by every CTA from its own
    // index with the grid's stride: one tile per CTA when the grid has `tiles` CTAs, a
    // persistent walk when it has one CTA per SM (the next tile's K and V loads then run
    // under this tile's epilogue). Consecutive tiles share a head (its K and V stay in L2);
    // causal tiles are walked from the longest (the last rows of a head) to the shortest.
    let q_tiles_per_head = (seq_q + BM - 1) / BM;
    let kv_blocks = (seq_k + BN - 1) / BN;

    let wg = T.warpgroup_idx();
    if wg == 0 {
        T.ptx.setmaxnreg.dec(PRODUCER_REGS);
        if T.warp_idx() == 0 {
            if T.ptx.elect_sync() {
                let kst = T.pipeline.producer_state(k_pipe);
                let vst = T.pipeline.producer_state(v_pipe);
                let mut at = T.registers::<u32>([4]);
                let mut t = T.block_idx();
                let mut walked = 0;
                while t < tiles {
                    tile_of(at, t, q_tiles_per_head, kv_blocks, heads, kv_group, CAUSAL, BM, BN);
                    let bh = at[0];
                    let m0 = at[1];
                    let kv_head = at[2];
                    let n_blocks = at[3];
                    if walked > 0 {
                        // The previous tile's O stores have read the Q slabs.
                        T.ptx.mbarrier.try_wait(q_empty, (walked - 1) & 1);
                    }
                    T.ptx.mbarrier.arrive.expect_tx(q_full, q_tiles.bytes());
                    #[unroll]
                    for c in 0..chunks {
                        #[unroll]
                        for w in 0..CONSUMERS {
                            T.tma.load(q_tiles[c][w], q, [bh, m0 + 64 * w, CHUNK * c], q_full);
                        }
                    }
                    for j in 0..n_blocks {
                        let n0 = j * BN;
                        T.pipeline.producer_acquire(k_pipe, kst);
                        let k_full = T.pipeline.producer_commit(k_pipe, kst, k_ring[0].bytes());
                        let ks = T.pipeline.stage(kst);
                        #[unroll]
                        for c in 0..chunks {
                            T.tma.load(k_ring[ks][c], k, [kv_head, n0, CHUNK * c], k_full);
                        }
                        T.pipeline.advance(kst);
                        T.pipeline.producer_acquire(v_pipe, vst);
                        let v_full = T.pipeline.producer_commit(v_pipe, vst, v_ring[0].bytes());
                        let vs = T.pipeline.stage(vst);
                        T.tma.load(v_ring[vs], v, [kv_head, n0, 0], v_full);
                        T.pipeline.advance(vst);
                    }
                    t += T.grid_dim();
                    walked += 1;
                }
                T.pipeline.producer_tail(k_pipe, kst);
                T.pipeline.producer_tail(v_pipe, vst);
            }
        }
    } else {
        T.ptx.setmaxnreg.inc(CONSUMER_REGS);
        let cw = wg - 1;
        let tid = T.thread_idx() & 127;
        let leader = tid == 0;
        let neg_inf = f32::from_bits(0xff800000u32);
        // S (this block's scores), O (one 64-column accumulator per chunk of D), P as the
        // A fragments of the k-steps of P V; per row half: running max, sum, and this
        // block's scaled max and rescale factor.
        let mut s = T.registers::<f32>([BN / 2]);
        let mut acc_o = T.registers::<f32>([D / 2]);
        let mut p = T.registers::<u32>([BN / 16, 4]);
        let mut row_max = T.registers::<f32>([2]);
        let mut row_sum = T.registers::<f32>([2]);
        let mut neg_max_scaled = T.registers::<f32>([2]);
        let mut rescale = T.registers::<f32>([2]);
        let kst = T.pipeline.consumer_state(k_pipe);
        let vst = T.pipeline.consumer_state(v_pipe);
        // Ping-pong (FlashAttention-3): the warpgroups take turns issuing their GEMMs, so one's
        // softmax runs under the other's GEMMs. Named barrier 3 + w is warpgroup w's turn: it
        // waits there (128 threads) for the other's arrival (128 more) before issuing. The
        // second warpgroup gives the first its first turn.
        let my_turn = 3 + cw;
        let their_turn = 4 - cw;
        if PINGPONG > 0 {
            if cw == 1 {
                T.ptx.bar.arrive(their_turn, 256);
            }
        }
        let mut at = T.registers::<u32>([4]);
        let mut t = T.block_idx();
        let mut walked = 0;
        while t < tiles {
            tile_of(at, t, q_tiles_per_head, kv_blocks, heads, kv_group, CAUSAL, BM, BN);
            let bh = at[0];
            let row0 = at[1] + 64 * cw;
            let n_blocks = at[3];
            // A fresh softmax and O per tile.
            #[unroll]
            for h in 0..2 {
                row_max[h] = neg_inf;
                row_sum[h] = 0.0;
            }
            #[unroll]
            for i in 0..D / 2 {
                acc_o[i] = 0.0;
            }
            T.ptx.mbarrier.try_wait(q_full, walked & 1);
            // Intra-warpgroup overlap (FlashAttention-3), with the loop rotated so that every wait is
            // unconditional: block j's softmax runs while block j - 1's O += P V is in flight, and
            // block j + 1's S = Q Kᵀ is issued with block j's P V. ptxas serializes every wgmma of
            // the kernel (C7515, one `wait_group 0` after each) when a wait depends on a branch it
            // cannot follow, e.g. `if j > 0 { wait_group(0) }`: the waits here never do.
            // Block 0's S.
            T.pipeline.consumer_wait(k_pipe, kst);
            if PINGPONG > 0 {
                T.ptx.bar.sync(my_turn, 256);
            }
            let ks = T.pipeline.stage(kst);
            T.ptx.wgmma.fence();
            #[unroll]
            for c in 0..chunks {
                #[unroll]
                for kk in 0..CHUNK / 16 {
                    T.ptx.wgmma.mma_async(s, q_tiles[c][cw], k_ring[ks][c], kk, c > 0 || kk > 0);
                }
            }
            T.ptx.wgmma.commit_group();
            if PINGPONG > 0 {
                T.ptx.bar.arrive(their_turn, 256);
            }
            T.ptx.wgmma.wait_group(0);
            if leader {
                T.pipeline.consumer_release(k_pipe, kst);
            }
            T.pipeline.advance(kst);
            for j in 0..n_blocks {
                let n0 = j * BN;
                // S of block j has retired; P V of block j - 1 may still run.
                if n0 + BN > seq_k {
                    T.fragment.mask_cols(s, seq_k - n0);
                }
                if CAUSAL > 0 {
                    if n0 + BN > row0 + 1 {
                        T.fragment.mask_causal(s, row0 as i32 - n0 as i32);
                    }
                }
                // Online softmax: the new row max, the factor O and the sum are rescaled by,
                // P = 2^(S·scale - max·scale) (the scale folded into one fma).
                #[unroll]
                for h in 0..2 {
                    let mx = T.fragment.row_max(s, h).max(row_max[h]);
                    // A row with nothing unmasked yet keeps max -inf: subtract 0, not -inf.
                    let max_scaled = if mx == neg_inf { 0.0 } else { mx * scale_log2 };
                    rescale[h] = (row_max[h] * scale_log2 - max_scaled).exp2();
                    neg_max_scaled[h] = -max_scaled;
                    row_max[h] = mx;
                }
                #[unroll]
                for i in 0..BN / 2 {
                    s[i] =
                        s[i].mul_add(scale_log2, T.fragment.of_row(s, i, neg_max_scaled[0], neg_max_scaled[1])).exp2();
                }
                #[unroll]
                for h in 0..2 {
                    row_sum[h] = row_sum[h] * rescale[h] + T.fragment.row_sum(s, h, "thread");
                }
                // P V of block j - 1 retired (nothing runs before block 0's): P may be overwritten
                // and O rescaled, and its V stage is free.
                T.ptx.wgmma.wait_group(0);
                if j > 0 {
                    if leader {
                        T.pipeline.consumer_release(v_pipe, vst);
                    }
                    T.pipeline.advance(vst);
                }
                #[unroll]
                for kk in 0..BN / 16 {
                    T.fragment.to_a(p[kk], s, kk);
                }
                let more = j + 1 < n_blocks;
                if more {
                    T.pipeline.consumer_wait(k_pipe, kst);
                }
                if PINGPONG > 0 {
                    T.ptx.bar.sync(my_turn, 256);
                }
                if more {
                    let ks_next = T.pipeline.stage(kst);
                    T.ptx.wgmma.fence();
                    #[unroll]
                    for c in 0..chunks {
                        #[unroll]
                        for kk in 0..CHUNK / 16 {
                            T.ptx.wgmma.mma_async(s, q_tiles[c][cw], k_ring[ks_next][c], kk, c > 0 || kk > 0);
                        }
                    }
                    T.ptx.wgmma.commit_group();
                }
                // O (through block j - 1) rescaled to block j's max, then += P V of block j.
                #[unroll]
                for i in 0..D / 2 {
                    acc_o[i] = acc_o[i] * T.fragment.of_row(acc_o, i, rescale[0], rescale[1]);
                }
                T.pipeline.consumer_wait(v_pipe, vst);
                let vs = T.pipeline.stage(vst);
                T.ptx.wgmma.fence();
                #[unroll]
                for kk in 0..BN / 16 {
                    T.ptx.wgmma.mma_async_rs(acc_o, p[kk], v_ring[vs], kk, true);
                }
                T.ptx.wgmma.commit_group();
                if PINGPONG > 0 {
                    // This turn's GEMMs are issued: the other warpgroup's turn.
                    T.ptx.bar.arrive(their_turn, 256);
                }
                // S of block j + 1 retires (groups retire in order); P V of block j may still run.
                T.ptx.wgmma.wait_group(1);
                if more {
                    if leader {
                        T.pipeline.consumer_release(k_pipe, kst);
                    }
                    T.pipeline.advance(kst);
                }
            }
            // The last block's P V.
            T.ptx.wgmma.wait_group(0);
            if leader {
                T.pipeline.consumer_release(v_pipe, vst);
            }
            T.pipeline.advance(vst);
            // Epilogue: O / sum, the LSE, and O through the warpgroup's Q slab to global memory.
            #[unroll]
            for h in 0..2 {
                row_sum[h] = T.fragment.quad_sum(row_sum[h]);
                rescale[h] = row_sum[h].recip();
            }
            #[unroll]
            for i in 0..D / 2 {
                acc_o[i] = acc_o[i] * T.fragment.of_row(acc_o, i, rescale[0], rescale[1]);
            }
            let lane = tid & 31;
            if (lane & 3) == 0 {
                #[unroll]
                for h in 0..2 {
                    // Register 2 h lies in row half h.
                    let row = row0 + T.fragment.row(s, 2 * h);
                    if row < seq_q {
                        lse[bh * seq_q + row] = (row_max[h] * scale_log2 + row_sum[h].log2()) * 0.6931472;
                        // ln 2: the LSE is natural
                    }
                }
            }
            // stmatrix.x4 row addresses: threads 8i..8i+7 give matrix i's rows (rows 0-7, rows
            // 8-15, then both 8 columns on), one 16-row band per warp.
            let st_row = (tid >> 5) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
            let st_col = (lane >> 4) * 8;
            let bar_id = cw + 1;
            // Every S wgmma that read the Q slab has retired (wait_group(0) above).
            T.ptx.bar.sync(bar_id, 128);
            #[unroll]
            for c in 0..chunks {
                #[unroll]
                for qq in 0..CHUNK / 16 {
                    // Registers of columns 16 qq.. of chunk c (the accumulator's columns 64 c..).
                    let g = c * (CHUNK / 8) + qq * 2;
                    T.ptx.stmatrix.x4(
                        T.tile_addr(q_tiles[c][cw], [st_row, qq * 16 + st_col]),
                        T.pack.bf16x2(acc_o[4 * g], acc_o[4 * g + 1]),
                        T.pack.bf16x2(acc_o[4 * g + 2], acc_o[4 * g + 3]),
                        T.pack.bf16x2(acc_o[4 * g + 4], acc_o[4 * g + 5]),
                        T.pack.bf16x2(acc_o[4 * g + 6], acc_o[4 * g + 7]),
                    );
                }
            }
            // Generic-proxy writes before the async-proxy (TMA) reads.
            T.ptx.fence.proxy_async("shared::cta");
            T.ptx.bar.sync(bar_id, 128);
            if leader {
                #[unroll]
                for c in 0..chunks {
                    T.tma.store(o, [bh, row0, CHUNK * c], q_tiles[c][cw]);
                }
                T.ptx.cp_async.bulk.commit_group();
                T.ptx.cp_async.bulk.wait_group(0);
                T.ptx.mbarrier.arrive(q_empty);
            }
            t += T.grid_dim();
            walked += 1;
        }
        if PINGPONG > 0 {
            // The second warpgroup's last arrival gives the first a turn it does not take:
            // consume it, so no named barrier is left half arrived.
            if cw == 0 {
                T.ptx.bar.sync(my_turn, 256);
            }
        }
    }
}

/// An attention problem: `batch · heads` query heads of `seq_q` rows, `batch · kv_heads` KV
/// heads of `seq_k` rows, head dimension `d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionShape {
    pub batch: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub seq_q: u32,
    pub seq_k: u32,
    pub d: u32,
    pub causal: bool,
    /// The consumer warpgroups take turns issuing their GEMMs (FlashAttention-3's ping-pong).
    pub pingpong: bool,
    /// One CTA per SM walking the tiles (a persistent grid); otherwise one CTA per tile. A
    /// launch choice: the kernel is the same.
    pub persistent: bool,
    /// Keys per KV block, where not the default ([`Self::config`]): [`narrow_block_n`] or
    /// [`wide_block_n`], or any multiple of 16 up to 256 that fits.
    pub block_n: Option<u32>,
}

/// Keys per KV block that fit every head dimension with causal masking: 128 (64 at d256).
pub fn narrow_block_n(d: u32) -> u32 {
    if d <= 128 {
        128
    } else {
        64
    }
}

/// FlashAttention-3's keys per KV block for non-causal attention (its `tile_size_fwd_sm90`):
/// more keys per block spread each block's fixed work (the row maxima's shuffles, O's rescale,
/// the waits and turns) over more tensor-core work, within the consumers' 240 registers (S is
/// `BN / 2` per thread, P `BN / 4`, O `D / 2`) and the shared memory of Q and two K and V stages.
pub fn wide_block_n(d: u32) -> u32 {
    match d {
        64 => 192,
        128 => 176,
        _ => 80,
    }
}

impl AttentionShape {
    /// Why the kernel does not take this shape, if it does not.
    pub fn problem(&self) -> Option<String> {
        if ![64, 128, 256].contains(&self.d) {
            return Some(format!("head dimension {}: the kernel takes 64, 128 or 256", self.d));
        }
        if self.kv_heads == 0 || !self.heads.is_multiple_of(self.kv_heads) {
            return Some(format!("{} query heads do not share {} KV heads evenly", self.heads, self.kv_heads));
        }
        if self.seq_q == 0 || self.seq_k == 0 || self.batch == 0 {
            return Some("empty sequences or batch".into());
        }
        if let Some(bn) = self.block_n {
            // S is a 64 x BN wgmma accumulator and P V takes BN in k-steps of 16.
            if !(16..=256).contains(&bn) || !bn.is_multiple_of(16) {
                return Some(format!("{bn} keys per KV block: a multiple of 16 in 16..=256"));
            }
        }
        None
    }
    /// Keys per KV block and ring stages (registers: S is `BN / 2` per thread and O `D / 2`;
    /// shared memory: Q, K and V rings within 227 KiB). By default non-causal attention at
    /// d128 and d256 takes FlashAttention-3's wider blocks (run 17 of bench/attention.md: +1.5%
    /// at d128 8k-16k, +7-9% at d256); causal attention and d64 the narrow ones (the wider
    /// were no faster there).
    pub fn config(&self) -> (u32, u32) {
        let default = if !self.causal && self.d >= 128 { wide_block_n(self.d) } else { narrow_block_n(self.d) };
        (self.block_n.unwrap_or(default), 2)
    }
    /// The kernel's tensor maps, Q, K, V and O in its parameter order: each one's global
    /// dimensions (innermost first: head dimension, rows, heads) and box, which the kernel's
    /// `#[tma(box = ..)]` declarations hold to. The gallery's launch and the benchmark's graph both
    /// build their maps from this.
    pub fn maps(&self) -> [([u64; 3], [u32; 3]); 4] {
        let (bn, _) = self.config();
        let d = self.d as u64;
        let bh = (self.batch * self.heads) as u64;
        let bkv = (self.batch * self.kv_heads) as u64;
        let q_rows = ([d, self.seq_q as u64, bh], [CHUNK, 64, 1]);
        let kv_rows = ([d, self.seq_k as u64, bkv], [CHUNK, bn, 1]);
        [q_rows, kv_rows, kv_rows, q_rows]
    }
    /// Tiles: one per 128 query rows of each query head.
    pub fn tiles(&self) -> u32 {
        self.seq_q.div_ceil(BM) * self.batch * self.heads
    }
    /// CTAs on a device of `sms` SMs: one per tile, or one per SM when persistent.
    pub fn grid(&self, sms: u32) -> u32 {
        if self.persistent {
            self.tiles().min(sms)
        } else {
            self.tiles()
        }
    }
    /// Floating-point operations of the forward pass (4 · B · H · Sq · Sk · D, halved when causal).
    pub fn flops(&self) -> f64 {
        let f = 4.0 * (self.batch * self.heads) as f64 * self.seq_q as f64 * self.seq_k as f64 * self.d as f64;
        if self.causal {
            f / 2.0
        } else {
            f
        }
    }
}

/// The kernel for `shape` (built once per configuration and cached).
pub fn kernel(shape: &AttentionShape) -> phaser::codegen::Result<Kernel> {
    if let Some(p) = shape.problem() {
        let mut k = phaser::codegen::builder::KernelBuilder::new("attention_dsl", phaser::Target::Sm90a);
        k.error(format!("attention shape {shape:?}: {p}"));
        return k.finish();
    }
    let (bn, stages) = shape.config();
    attention_dsl::kernel_for(shape.d, bn, stages, shape.causal as u32, shape.pingpong as u32)
}

/// The softmax scale 1/sqrt(D), as the kernel takes it: times log2(e).
pub fn scale_log2(d: u32) -> f32 {
    (std::f64::consts::LOG2_E / (d as f64).sqrt()) as f32
}

/// Device buffers and maps of one attention problem.
pub struct AttentionBuffers {
    pub o: BufferId<bf16>,
    pub lse: BufferId<f32>,
}

/// Upload Q, K, V and add one launch of the kernel to `p`, writing fresh O and LSE buffers.
pub fn add_launch(
    p: &mut Problem,
    dev: &Device,
    shape: &AttentionShape,
    (q, k, v): (BufferId<bf16>, BufferId<bf16>, BufferId<bf16>),
) -> Result<AttentionBuffers, RuntimeError> {
    let s = shape;
    let d = s.d as u64;
    let bh = (s.batch * s.heads) as u64;
    let o = p.output(dev, (bh * s.seq_q as u64 * d) as usize, bf16::from_bits(0x7fc1))?;
    let lse = p.output(dev, (bh * s.seq_q as u64) as usize, f32::NAN)?;
    let sw = Swizzle::B128;
    let [(qd, qb), (kd, kb), (vd, vb), (od, ob)] = s.maps();
    let mq = p.tensor_map(dev, q, &qd, &qb, sw)?;
    let mk = p.tensor_map(dev, k, &kd, &kb, sw)?;
    let mv = p.tensor_map(dev, v, &vd, &vb, sw)?;
    let mo = p.tensor_map(dev, o, &od, &ob, sw)?;
    let launch = phaser::LaunchConfig::linear(s.grid(dev.sm_count()?), THREADS);
    let args = [
        mq.into(),
        mk.into(),
        mv.into(),
        mo.into(),
        lse.into(),
        s.seq_q.into(),
        s.seq_k.into(),
        s.heads.into(),
        (s.heads / s.kv_heads).into(),
        s.tiles().into(),
        scale_log2(s.d).into(),
    ];
    p.launch(kernel(s)?, launch, args, [o.into(), lse.into()]);
    Ok(AttentionBuffers { o, lse })
}

/// Random bf16 elements in [-1, 1).
pub fn random_bf16(n: usize, seed: u64) -> Vec<bf16> {
    phaser::problem::random_f32(n, seed).into_iter().map(bf16::from_f32).collect()
}

/// The f64 reference of query row `i` of query head `bh`: O's row and the LSE.
pub fn reference_row(s: &AttentionShape, q: &[bf16], k: &[bf16], v: &[bf16], bh: usize, i: usize) -> (Vec<f64>, f64) {
    let d = s.d as usize;
    let (heads, group) = (s.heads as usize, (s.heads / s.kv_heads) as usize);
    let kvh = (bh / heads) * s.kv_heads as usize + (bh % heads) / group;
    let scale = 1.0 / (d as f64).sqrt();
    let qrow = &q[(bh * s.seq_q as usize + i) * d..][..d];
    let keys = if s.causal { (i + 1).min(s.seq_k as usize) } else { s.seq_k as usize };
    let at = |j: usize| (kvh * s.seq_k as usize + j) * d;
    let scores: Vec<f64> = (0..keys)
        .map(|j| scale * qrow.iter().zip(&k[at(j)..][..d]).map(|(a, b)| a.to_f64() * b.to_f64()).sum::<f64>())
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
    let sum: f64 = w.iter().sum();
    let mut out = vec![0.0; d];
    for (j, wj) in w.iter().enumerate() {
        for (o, x) in out.iter_mut().zip(&v[at(j)..][..d]) {
            *o += wj * x.to_f64();
        }
    }
    out.iter_mut().for_each(|o| *o /= sum);
    (out, max + sum.ln())
}

/// O's tolerance against the f64 reference: `ATOL + RTOL |ref|` (P is rounded to bf16 for
/// P V, O to bf16 at the end: each about 2^-9 relative; ex2.approx adds 2 ulp of f32).
pub const O_ATOL: f64 = 4e-3;
pub const O_RTOL: f64 = 1.0 / 128.0;
/// The LSE's tolerance: `LSE_TOL (1 + |ref|)`.
pub const LSE_TOL: f64 = 1e-4;

/// Compare O and the LSE of the rows `rows` (query head, row) with the f64 reference: the
/// number of elements outside the tolerance and the largest error of each.
pub fn compare(
    s: &AttentionShape,
    (q, k, v): (&[bf16], &[bf16], &[bf16]),
    (o, lse): (&[bf16], &[f32]),
    rows: impl Iterator<Item = (usize, usize)>,
) -> (usize, f64, f64) {
    let d = s.d as usize;
    let (mut bad, mut worst_o, mut worst_lse) = (0, 0.0f64, 0.0f64);
    for (bh, i) in rows {
        let (want, want_lse) = reference_row(s, q, k, v, bh, i);
        let at = bh * s.seq_q as usize + i;
        for (c, w) in want.iter().enumerate() {
            let got = o[at * d + c].to_f64();
            let err = (got - w).abs();
            worst_o = worst_o.max(err);
            // NaN (a poisoned element never written) is outside every tolerance.
            let within = err <= O_ATOL + O_RTOL * w.abs();
            if !within {
                bad += 1;
            }
        }
        let err = (lse[at] as f64 - want_lse).abs();
        worst_lse = worst_lse.max(err);
        let within = err <= LSE_TOL * (1.0 + want_lse.abs());
        if !within {
            bad += 1;
        }
    }
    (bad, worst_o, worst_lse)
}

/// What the check needs.
pub struct Host {
    pub shape: AttentionShape,
    pub q: Vec<bf16>,
    pub k: Vec<bf16>,
    pub v: Vec<bf16>,
    pub runs: [AttentionBuffers; 2],
}

/// The gallery's shapes: `Small` one CTA whose K/V rings wrap; `Quick` ragged on both sides
/// and GQA (two query heads on one KV head), within the simulator's quick budget; `Full` a
/// GPU-sized problem.
pub fn shape(size: Size, d: u32, causal: bool) -> AttentionShape {
    let base = AttentionShape {
        batch: 1,
        heads: 1,
        kv_heads: 1,
        seq_q: BM,
        seq_k: 384,
        d,
        causal,
        pingpong: true,
        // The walk is static: causal tiles differ in length, and one CTA per tile lets the
        // hardware balance them (bench/attention.md, run 16).
        persistent: !causal,
        block_n: None,
    };
    match size {
        Size::Small => base,
        Size::Quick => AttentionShape { batch: 1, heads: 2, kv_heads: 1, seq_q: 100, seq_k: 168, ..base },
        Size::Full => AttentionShape { batch: 4, heads: 16, kv_heads: 4, seq_q: 2048, seq_k: 2048, ..base },
    }
}

pub fn setup(dev: &Device, size: Size, seed: u64, d: u32, causal: bool) -> Result<Problem, RuntimeError> {
    let s = shape(size, d, causal);
    let dd = d as usize;
    let q = random_bf16((s.batch * s.heads * s.seq_q) as usize * dd, seed);
    let k = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * dd, seed ^ 0x9e37_79b9);
    let v = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * dd, seed ^ 0x85eb_ca6b);
    let mut p = Problem::new(seed);
    let inputs = (p.input(dev, &q)?, p.input(dev, &k)?, p.input(dev, &v)?);
    // Two launches on the same inputs: the forward is deterministic (no atomics, a fixed
    // reduction order), so they agree bit for bit, and each is within tolerance of the f64
    // reference.
    let first = add_launch(&mut p, dev, &s, inputs)?;
    let second = add_launch(&mut p, dev, &s, inputs)?;
    p.set_host(Host { shape: s, q, k, v, runs: [first, second] });
    Ok(p)
}

/// Every row (small sizes) or 256 random rows (the full size) within tolerance of the f64
/// reference; the two launches equal bit for bit.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let s = &h.shape;
    let (o, lse) = (outputs.get(0, h.runs[0].o), outputs.get(0, h.runs[0].lse));
    let (o2, lse2) = (outputs.get(1, h.runs[1].o), outputs.get(1, h.runs[1].lse));
    let rows: Vec<(usize, usize)> = if s.seq_q as u64 * (s.batch * s.heads) as u64 <= 4096 {
        (0..(s.batch * s.heads) as usize).flat_map(|bh| (0..s.seq_q as usize).map(move |i| (bh, i))).collect()
    } else {
        let r = random_u32(512, p.seed);
        r.chunks(2).map(|c| ((c[0] % (s.batch * s.heads)) as usize, (c[1] % s.seq_q) as usize)).collect()
    };
    let n = rows.len();
    let (bad, worst_o, worst_lse) = compare(s, (&h.q, &h.k, &h.v), (o, lse), rows.into_iter());
    let differ = o.iter().zip(o2).filter(|(a, b)| a.to_bits() != b.to_bits()).count()
        + lse.iter().zip(lse2).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    let passed = bad == 0 && differ == 0;
    let approx =
        "ex2.approx and lg2.approx (the simulator: the correctly rounded value; the GPU: within the ISA's bound), \
                  and the tensor cores' f32 accumulation order on fractional products";
    Outcome::new(
        passed,
        format!(
            "{s:?}: {n} rows vs the f64 reference: {bad} elements outside tolerance (worst |ΔO| {worst_o:.2e}, \
             |ΔLSE| {worst_lse:.2e}); the two launches differ in {differ} elements (seed {})",
            p.seed
        ),
    )
    .approximate(approx)
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "attention_dsl",
            about: "FlashAttention forward in the DSL, head dim 64: TMA producer warp, K and V T.pipeline rings, two \
                    wgmma consumer warpgroups, online softmax with exp2, P in registers (T.fragment.to_a, \
                    mma_async_rs), ragged and GQA shapes, LSE, TMA-store epilogue",
            kernels: |_| Ok(vec![kernel(&shape(Size::Small, 64, false))?]),
            setup: |dev, size, seed| setup(dev, size, seed, 64, false),
            check,
        },
        Example {
            name: "attention_dsl_causal",
            about: "the DSL attention with a causal mask, head dim 128: blocks past the diagonal skipped, the \
                    diagonal block masked by T.fragment.mask_causal",
            kernels: |_| Ok(vec![kernel(&shape(Size::Small, 128, true))?]),
            setup: |dev, size, seed| setup(dev, size, seed, 128, true),
            check,
        },
    ]
}
