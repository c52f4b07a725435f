//! Tensor-parallel GEMM with its all-gather fused (issue 24 §3): `R` ranks (devices), each
//! owning an M-slice of A (`M / R` rows); every rank computes `C = A_full * B` with its own B.
//!
//! - [`allgather_push`]: a rank pushes its A slice into a peer's gathered A (`a_full`, a peer
//!   mapping; 8-byte vector stores), one CTA per m-block, then raises that peer's flag of the
//!   m-block at `.sys` scope with the launch's epoch (`T.flag.signal`: a release). Flags are
//!   never reset: each
//!   launch signals a larger epoch, so a flag left from the last launch never satisfies this
//!   one's wait. One launch per destination peer.
//! - [`gemm_allgather_dsl`]: `gemm_dsl`'s warp-specialized persistent GEMM (one CTA per
//!   cluster, K-major B, no split-K), whose producer, before the first TMA load of an m-block
//!   it does not own, waits for that m-block's flag (acquire, `.sys`), then
//!   `fence.proxy.async.global` (TMA is the async proxy: the peer's generic stores must be
//!   made visible to it), then loads. Its own m-blocks need no wait, and the walk starts with
//!   them, so compute starts at once while the peers' pushes land.
//!
//! Both kernels run in one `launch_group` per step (all ranks' GEMMs and pushes in flight
//! together); the GEMM's grid leaves SMs free for the pushes. The host side (several devices,
//! the launch group, the CPU reference): `examples/src/gemm/tp.rs`.

use super::gemm_dsl::{BLOCK_K, CONSUMERS, CONSUMER_REGS, ENTRY_REGS, EPI, PRODUCER_REGS, THREADS};

/// Threads of a push CTA.
pub const PUSH_THREADS: u32 = 256;

/// Push m-block `block_idx` of this rank's A slice (`src`: its `rows x k` elements, rows
/// `BM` at a time) into rows `own_lo + block_idx * BM..` of a peer's gathered A, then raise
/// the peer's flag of that m-block to `epoch`.
#[phaser::kernel(target = "sm_90a")]
pub fn allgather_push(
    src: &[bf16],
    dst: &mut [bf16],
    flags: &mut [u32],
    k: u32,
    own_lo: u32,
    epoch: u32,
    #[comptime] BM: u32,
) {
    T.require_block(PUSH_THREADS, 1, 1);
    let block = T.block_idx();
    let from = block * BM * k;
    let to = own_lo * k + from;
    // Four elements (8 bytes) per access: `k` is a multiple of 8, so every offset is aligned.
    for e in (T.thread_idx() * 4..BM * k).step_by(PUSH_THREADS * 4) {
        let v = T.ld.v4(src, from + e);
        T.st.v4(dst, to + e, v[0], v[1], v[2], v[3]); // marker: the push's store
    }
    // Every thread's stores before thread 0's release (the release publishes the CTA's).
    T.cuda.cta_sync();
    if T.thread_idx() == 0 {
        T.flag.signal(flags, own_lo / BM + block, epoch, "sys"); // marker: the push's signal
    }
}

/// `C (m x n) = A_full (m x k) * B (n x k, K-major)`, A_full gathered from the ranks: rows
/// `own_lo..own_hi` are this rank's, every other m-block is read after its flag in `gather`
/// reached `epoch`. `m`, `own_lo` and `own_hi` are multiples of the CTA tile's rows.
#[phaser::kernel(target = "sm_90a")]
pub fn gemm_allgather_dsl(
    #[tma(box = [CONSUMERS * WG_M, BLOCK_K], swizzle = "128B", dims = [m, k])] a: TensorMap<bf16, 2>,
    #[tma(box = [BN, BLOCK_K], swizzle = "128B", dims = [n, k])] b: TensorMap<bf16, 2>,
    #[tma(box = [EPI, EPI], swizzle = "128B", dims = [m, n])] c: TensorMap<bf16, 2>,
    m: u32,
    n: u32,
    k: u32,
    gather: &[u32],
    epoch: u32,
    own_lo: u32,
    own_hi: u32,
    #[comptime] BN: u32,
    #[comptime] WG_M: u32,
    #[comptime] STAGES: u32,
) {
    T.require_block(THREADS, 1, 1);
    T.max_registers(ENTRY_REGS);
    let bm = CONSUMERS * WG_M;
    let slabs = WG_M / 64;
    let pipe = T.pipeline.new_cluster_threads(STAGES, CONSUMERS, 1, "cta");
    let a_ring = T.alloc_shared::<bf16>([STAGES, bm / 64, 64, BLOCK_K], "128B");
    let b_ring = T.alloc_shared::<bf16>([STAGES, 1, BN, BLOCK_K], "128B");
    let stage_bytes = a_ring[0].bytes() + b_ring[0].bytes();
    T.pipeline.init(pipe);

    // The walk: tile t is m-block (own first + t / tiles_n) mod m_blocks, so the CTAs start
    // on this rank's own rows and reach the peers' last.
    let tiles_n = (n + BN - 1) / BN;
    let m_blocks = m / bm;
    let tiles = tiles_n * m_blocks;
    let own_first = own_lo / bm;
    let first = T.block_idx();
    let step = T.grid_dim();
    let k_blocks = (k + BLOCK_K - 1) / BLOCK_K;

    let wg = T.warpgroup_idx();
    if wg == 0 {
        T.ptx.setmaxnreg.dec(PRODUCER_REGS);
        if T.warp_idx() == 0 {
            if T.ptx.elect_sync() {
                let st = T.pipeline.producer_state(pipe);
                let mut t = first;
                while t < tiles {
                    let mb = (own_first + t / tiles_n) % m_blocks;
                    let m0 = mb * bm;
                    let n0 = t % tiles_n * BN;
                    if m0 < own_lo || m0 >= own_hi {
                        // A peer's m-block: its push landed (acquire at `.sys`), then made
                        // visible to the async proxy that TMA reads through.
                        T.flag.wait(gather, mb, epoch, "sys"); // marker: the gather wait
                        T.ptx.fence.proxy_async("global");
                    }
                    for kb in 0..k_blocks {
                        let k0 = kb * BLOCK_K;
                        T.pipeline.producer_acquire(pipe, st);
                        let full = T.pipeline.producer_commit(pipe, st, stage_bytes);
                        let s = T.pipeline.stage(st);
                        T.tma.load(a_ring[s], a, [m = m0, k = k0], full); // marker: the A load
                        T.tma.load(b_ring[s][0], b, [n = n0, k = k0], full);
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
        let c_tiles = T.alloc_shared::<bf16>([CONSUMERS, 2, EPI, EPI], "128B");
        let mut t = first;
        while t < tiles {
            let mb = (own_first + t / tiles_n) % m_blocks;
            let m0 = mb * bm;
            let n0 = t % tiles_n * BN;
            T.pipeline.consumer_wait(pipe, read);
            let s = T.pipeline.stage(read);
            T.ptx.wgmma.fence();
            #[unroll]
            for kk in 0..BLOCK_K / 16 {
                #[unroll]
                for j in 0..slabs {
                    T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s], kk, kk > 0, "k");
                }
            }
            T.ptx.wgmma.commit_group();
            T.pipeline.advance(read);
            for _kb in 1..k_blocks {
                T.pipeline.consumer_wait(pipe, read);
                let s = T.pipeline.stage(read);
                T.ptx.wgmma.fence();
                #[unroll]
                for kk in 0..BLOCK_K / 16 {
                    #[unroll]
                    for j in 0..slabs {
                        T.ptx.wgmma.mma_async(acc[j], a_ring[s][slab0 + j], b_ring[s], kk, true, "k");
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
            // Epilogue: `gemm_dsl`'s, 64 x 64 sub-tiles through two staging tiles.
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

/// The gallery's example (two ranks on one device): `gemm/tp.rs`.
pub fn examples() -> Vec<phaser::problem::Example> {
    crate::gemm::tp::gallery::examples()
}
