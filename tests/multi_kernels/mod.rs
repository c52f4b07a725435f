//! The kernels of the cross-device flag protocol (issue 24 §4), shared by the simulator's
//! tests (`tests/multi_device.rs`, which name their lines) and the GPU's (`tests/gpu_multi.rs`).
#![allow(dead_code)] // each test binary uses some of them

mod host;
pub use host::*;

pub const N: u32 = 32;

/// `out[tid] = tid * 3 + 1`.
#[phaser::kernel(target = "sm_90a")]
pub fn fill(out: &mut [u32]) {
    let tid = T.thread_idx();
    out[tid] = tid * 3 + 1;
}

/// Writes the tile into the consumer's buffer (a peer mapping), then raises the consumer's
/// flag: `SIGNAL` 1, a release at system scope (correct); 0, never (the producer forgets);
/// 2, a relaxed store where a release was needed; 3, a release at `.gpu` scope, which does
/// not reach a kernel on another device.
#[phaser::kernel(target = "sm_90a")]
pub fn produce(tile: &mut [u32], flag: &mut [u32], #[comptime] SIGNAL: u32) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    tile[tid] = tid * 3 + 1; // marker: the producer's tile
    T.cuda.cta_sync();
    if tid == 0 {
        if SIGNAL == 1 {
            T.flag.signal(flag, 0, 1, "sys");
        }
        if SIGNAL == 2 {
            T.st.ordered(flag, 0, 1, "relaxed", "sys");
        }
        if SIGNAL == 3 {
            T.flag.signal(flag, 0, 1, "gpu");
        }
    }
}

/// Waits until its flag is raised (an acquire at system scope), then copies the tile out.
#[phaser::kernel(target = "sm_90a")]
pub fn consume(tile: &[u32], flag: &[u32], out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    // marker: the consumer's wait
    T.flag.wait(flag, 0, 1, "sys");
    T.cuda.cta_sync();
    out[tid] = tile[tid]; // marker: the consumer's read
}

/// The tile the producer writes.
pub fn want() -> Vec<u32> {
    (0..N).map(|i| i * 3 + 1).collect()
}

/// Waits for its flag, then reads the tile through TMA (the async proxy) and copies it out.
/// `ORDER` 1: the wait, then `fence.proxy.async.global` (the producer's generic stores made
/// visible to the async proxy), then the TMA load (correct); 0: the TMA load issued before the
/// wait, which orders nothing before it; 2: the wait, then the TMA load with no proxy fence (the
/// acquire orders the generic proxy only).
#[phaser::kernel(target = "sm_90a")]
pub fn consume_tma(#[tma(box = [1, N])] tile: TensorMap<u32, 2>, flag: &[u32], out: &mut [u32], #[comptime] ORDER: u32) {
    T.require_block(32, 1, 1);
    let staged = T.alloc_shared::<u32>([1, N]);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
        if ORDER == 0 {
            T.ptx.mbarrier.arrive.expect_tx(bar, staged.bytes());
            T.tma.load(staged, tile, [0, 0], bar); // marker: the early TMA load
            T.flag.wait(flag, 0, 1, "sys");
        }
        if ORDER == 1 {
            T.flag.wait(flag, 0, 1, "sys");
            T.ptx.fence.proxy_async("global");
            T.ptx.mbarrier.arrive.expect_tx(bar, staged.bytes());
            T.tma.load(staged, tile, [0, 0], bar);
        }
        if ORDER == 2 {
            T.flag.wait(flag, 0, 1, "sys");
            T.ptx.mbarrier.arrive.expect_tx(bar, staged.bytes());
            T.tma.load(staged, tile, [0, 0], bar); // marker: the unfenced TMA load
        }
    }
    T.cuda.cta_sync();
    T.ptx.mbarrier.try_wait(bar, 0);
    out[tid] = staged[0][tid];
}

/// Bytes of the tile (`N` words), a multiple of 16 as bulk copies need.
pub const TILE_BYTES: u32 = N * 4;

/// Bulk-copies the tile (`tile`: a peer's buffer through its mapping, or a buffer of this
/// device) into shared memory and writes it out. `ORDER` 1: thread 0 waits for the flag
/// (acquire, system scope), then `fence.proxy.async.global` (the generic proxy's acquire
/// made visible to the async proxy), then copies (correct); 0: the copy is issued before
/// the wait (the bug: the copy may read the tile before it was written); 2: waits, then copies
/// with no proxy fence (the bug: the acquire orders the generic proxy only).
#[phaser::kernel(target = "sm_90a")]
pub fn bulk_consume(tile: &[u32], flag: &[u32], out: &mut [u32], #[comptime] ORDER: u32) {
    T.require_block(32, 1, 1);
    let full = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid == 0 {
        if ORDER == 1 {
            T.flag.wait(flag, 0, 1, "sys");
            T.ptx.fence.proxy_async("global");
        }
        if ORDER == 2 {
            T.flag.wait(flag, 0, 1, "sys");
        }
        T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), TILE_BYTES);
        // marker: the bulk copy
        T.ptx.cp_async.bulk.g2s(T.shared_addr(stage), T.global_elem_addr(tile, 0), TILE_BYTES, full.ptr_to([0]));
        if ORDER == 0 {
            T.flag.wait(flag, 0, 1, "sys");
        }
    }
    T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
    out[tid] = stage[tid];
}

/// Two CTAs of one launch on one device: CTA 1 writes the tile and signals the flag (a
/// release at `.gpu` scope); CTA 0 waits for it, fences the async proxy and bulk-copies the
/// tile to `out`.
#[phaser::kernel(target = "sm_90a")]
pub fn bulk_handoff(tile: &mut [u32], flag: &mut [u32], out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let full = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if T.block_idx() == 1 {
        tile[tid] = tid * 3 + 1;
        T.cuda.cta_sync();
        if tid == 0 {
            T.flag.signal(flag, 0, 1);
        }
    } else {
        if tid == 0 {
            T.ptx.mbarrier.init(full.ptr_to([0]), 1);
            T.ptx.fence.mbarrier_init();
        }
        T.cuda.cta_sync();
        if tid == 0 {
            T.flag.wait(flag, 0, 1);
            T.ptx.fence.proxy_async("global");
            T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), TILE_BYTES);
            T.ptx.cp_async.bulk.g2s(T.shared_addr(stage), T.global_elem_addr(tile, 0), TILE_BYTES, full.ptr_to([0]));
        }
        T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
        out[tid] = stage[tid];
    }
}

/// Writes the tile (this device's buffer, or a peer's through its mapping), then raises
/// `flag[1]` (system scope). `WAIT` 1: first waits for `flag[0]` (what [`produce`] raises
/// after writing the same tile: the two writes ordered), 0: does not (write-after-write).
#[phaser::kernel(target = "sm_90a")]
pub fn overwrite(tile: &mut [u32], flag: &mut [u32], #[comptime] WAIT: u32) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    if WAIT == 1 {
        T.flag.wait(flag, 0, 1, "sys");
    }
    tile[tid] = tid + 7; // marker: the second writer's tile
    T.cuda.cta_sync();
    if tid == 0 {
        T.flag.signal(flag, 1, 1, "sys");
    }
}
