//! Kernels (and their CPU references) of the new ops, shared by the simulator tests
//! (`sim_warp_ops`, `sim_memory_ops`, `sim_debug_ops`) and the GPU test (`gpu_ops`), so the
//! simulator and the GPU run the same kernels against the same references.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};

// ---- from sim_warp_ops.rs ----

pub fn inputs(seed: u64, n: usize) -> Vec<u32> {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(0..1000)).collect()
}

#[phaser::kernel(target = "sm_90a")]
pub fn collectives(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let v = inp[lane];
    out[lane] = T.ptx.shfl.sync.bfly(v, 5);
    out[32 + lane] = T.ptx.shfl.sync.down(v, 3, 8);
    out[64 + lane] = T.ptx.shfl.sync.up(v, 2, 16);
    out[96 + lane] = T.ptx.shfl.sync.idx(v, 7, 8);
    out[128 + lane] = T.ptx.vote.sync.ballot(v % 3 == 0);
    let all = T.select(T.ptx.vote.sync.all(v < 990), 1, 0);
    let any = T.select(T.ptx.vote.sync.any(v > 900), 2, 0);
    let uni = T.select(T.ptx.vote.sync.uni(v % 2 == 0), 4, 0);
    out[160 + lane] = all + any + uni;
    out[192 + lane] = T.ptx.redux.sync.add(v);
    out[224 + lane] = T.ptx.redux.sync.min(v);
    out[256 + lane] = T.ptx.redux.sync.max(v);
    out[288 + lane] = T.ptx.redux.sync.and(v) ^ T.ptx.redux.sync.or(v) ^ T.ptx.redux.sync.xor(v);
    out[320 + lane] = T.ptx.match_sync.any(v % 4);
    out[352 + lane] = T.ptx.match_sync.all(v / 1000);
    out[384 + lane] = T.ptx.redux.sync.min((v as i32) - 500) as u32;
}

/// The CUDA definitions, written independently of the simulator's PTX formulas.
pub fn expected(v: &[u32]) -> Vec<u32> {
    let seg = |l: usize, w: usize| (l / w) * w;
    let mut out = vec![0u32; 416];
    let ballot = (0..32).filter(|&l| v[l].is_multiple_of(3)).fold(0u32, |m, l| m | 1 << l);
    let flags = (v.iter().all(|&x| x < 990) as u32)
        + 2 * (v.iter().any(|&x| x > 900) as u32)
        + 4 * (v.iter().all(|&x| x % 2 == 0) || v.iter().all(|&x| x % 2 == 1)) as u32;
    let sum = v.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    let and = v.iter().fold(u32::MAX, |a, &x| a & x);
    let or = v.iter().fold(0, |a, &x| a | x);
    let xor = v.iter().fold(0, |a, &x| a ^ x);
    for l in 0..32 {
        out[l] = v[l ^ 5];
        // __shfl_down_sync(v, 3, 8): lanes past their 8-lane segment's end keep their own.
        out[32 + l] = if l % 8 + 3 < 8 { v[l + 3] } else { v[l] };
        // __shfl_up_sync(v, 2, 16): lanes before their segment's start keep their own.
        out[64 + l] = if l % 16 >= 2 { v[l - 2] } else { v[l] };
        out[96 + l] = v[seg(l, 8) + 7];
        out[128 + l] = ballot;
        out[160 + l] = flags;
        out[192 + l] = sum;
        out[224 + l] = *v.iter().min().unwrap();
        out[256 + l] = *v.iter().max().unwrap();
        out[288 + l] = and ^ or ^ xor;
        out[320 + l] = (0..32).filter(|&o| v[o] % 4 == v[l] % 4).fold(0u32, |m, o| m | 1 << o);
        out[352 + l] = u32::MAX;
        out[384 + l] = v.iter().map(|&x| x as i32 - 500).min().unwrap() as u32;
    }
    out
}

/// Each half of the warp reduces its own 16 values with its own member mask (two rounds).
#[phaser::kernel(target = "sm_90a")]
pub fn half_warp_sums(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let mask = T.select(lane < 16, 0x0000ffff, 0xffff0000);
    let mut s = inp[lane];
    for step in 0..4 {
        s += T.ptx.shfl.sync.bfly(s, 8 >> step, 16, mask);
    }
    out[lane] = s;
}

/// Lanes 24-31 exit; the rest reduce: `redux` counts only the non-exited lanes of its mask
/// (PTX), so this is defined.
#[phaser::kernel(target = "sm_90a")]
pub fn sum_after_exit(inp: &[u32], out: &mut [u32]) {
    let t = T.thread_idx();
    if T.lane_idx() >= 24 {
        return;
    }
    out[t] = T.ptx.redux.sync.add(inp[t]);
}

/// Lanes 0-15 shuffle with mask 0x0000ffff but read lane 20 (outside the mask): undefined.
#[phaser::kernel(target = "sm_90a")]
pub fn reads_outside_the_mask(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    if lane < 16 {
        out[lane] = T.ptx.shfl.sync.idx(inp[lane], 20, 32, 0x0000ffff);
    }
}

/// Lane 3 runs a vote whose mask leaves it out.
#[phaser::kernel(target = "sm_90a")]
pub fn outside_its_own_mask(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let mask = T.select(lane == 3, 0xfffffff0, 0xffffffff);
    out[lane] = T.ptx.vote.sync.ballot(inp[lane] > 0, mask);
}

/// The two halves shuffle at different instructions with the full mask: neither round ever
/// completes.
#[phaser::kernel(target = "sm_90a")]
pub fn halves_never_meet(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    if lane < 16 {
        out[lane] = T.ptx.shfl.sync.bfly(inp[lane], 1);
    } else {
        out[lane] = T.ptx.shfl.sync.bfly(inp[lane], 2);
    }
}

/// 8x8 matrices of 16-bit elements through `ldmatrix` (plain and `.trans`) and back through
/// `stmatrix`: element (r, c) of matrix i is `i * 64 + r * 8 + c`, row r of matrix i at
/// halves[(i * 8 + r) * 8 ..] (lane `8i + r` gives its address).
#[phaser::kernel(target = "sm_90a")]
pub fn matrices(inp: &[u32], out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let lane = T.lane_idx();
    let m = T.alloc_shared::<u32>([128]);
    let back = T.alloc_shared::<u32>([128]);
    for k in 0..4 {
        m[lane * 4 + k] = inp[lane * 4 + k];
    }
    T.cuda.warp_sync();
    let row = T.shared_elem_addr(m, lane * 4);
    let a = T.ptx.ldmatrix.x4(row);
    let t = T.ptx.ldmatrix.x4(row, "trans");
    let one = T.ptx.ldmatrix.x1(row);
    // (Vector elements are separate registers: their indices are literals.)
    out[lane] = a[0];
    out[32 + lane] = a[1];
    out[64 + lane] = a[2];
    out[96 + lane] = a[3];
    out[128 + lane] = t[0];
    out[160 + lane] = t[1];
    out[192 + lane] = t[2];
    out[224 + lane] = t[3];
    out[256 + lane] = one[0];
    // Store the transposed fragments transposed again: the original matrices.
    let brow = T.shared_elem_addr(back, lane * 4);
    T.ptx.stmatrix.x4(brow, t[0], t[1], t[2], t[3], "trans");
    T.cuda.warp_sync();
    for k in 0..4 {
        out[288 + lane * 4 + k] = back[lane * 4 + k];
    }
}

/// Lane 0 leaves before the warp's `ldmatrix`: PTX leaves that undefined (every lane of the
/// warp takes part), and lane 0's address is needed.
#[phaser::kernel(target = "sm_90a")]
pub fn ldmatrix_after_exit(inp: &[u32], out: &mut [u32]) {
    let lane = T.lane_idx();
    let m = T.alloc_shared::<u32>([128]);
    if lane == 0 {
        return;
    }
    let a = T.ptx.ldmatrix.x1(T.shared_elem_addr(m, lane * 4));
    out[lane] = a[0];
}

/// Each warpgroup writes its slots, syncs on its own named barrier (`bar.sync 8 + w, 128`)
/// and reads a neighbour's slot within the warpgroup; without the sync the reads race.
#[phaser::kernel(target = "sm_90a")]
pub fn warpgroup_exchange(inp: &[u32], out: &mut [u32], #[comptime] SYNC: u32) {
    T.require_block(256, 1, 1);
    let t = T.thread_idx();
    let slots = T.alloc_shared::<u32>([256]);
    slots[t] = inp[t] * 3;
    if SYNC == 1 {
        T.cuda.warpgroup_sync();
    }
    let wg = t / 128;
    let neighbour = wg * 128 + (t + 37) % 128;
    out[t] = slots[neighbour];
}

// ---- from sim_memory_ops.rs ----

#[phaser::kernel(target = "sm_90a")]
pub fn vectors(src: &[u32], out: &mut [u32]) {
    T.require_block(64, 1, 1);
    let t = T.thread_idx();
    let sh = T.alloc_shared::<u32>([256]);
    let v = T.ld.v4(src, 4 * t);
    // Reversed into shared memory, read back as pairs by the neighbour thread.
    T.st.v4(sh, 4 * t, v[3], v[2], v[1], v[0]);
    T.cuda.cta_sync();
    let n = (t + 1) % 64;
    let p = T.ld.v2(sh, 4 * n);
    let q = T.ld.v2(sh, 4 * n + 2);
    T.st.v2(out, 4 * t, p[0], p[1]);
    T.st.v2(out, 4 * t + 2, q[0] + T.ld.nc(src, 0), q[1]);
    let w = T.ld.nc_v4(src, 4 * n);
    out[256 + t] = w[0] ^ w[1] ^ w[2] ^ w[3];
}

/// A vector access at an index that is not a multiple of its width faults on the GPU.
#[phaser::kernel(target = "sm_90a")]
pub fn misaligned_vector(src: &[u32], out: &mut [u32], at: u32) {
    let v = T.ld.v4(src, at);
    out[0] = v[0];
}

/// Every op of `atom`/`red` on global and shared memory, by every thread of several CTAs.
/// Global atomics of CTAs running in the same epoch are applied at its end, in order.
#[phaser::kernel(target = "sm_90a")]
pub fn atomics(g: &mut [u32], out: &mut [u32]) {
    T.require_block(64, 1, 1);
    let t = T.thread_idx();
    let id = T.block_idx() * 64 + t;
    let sh = T.alloc_shared::<u32>([8]);
    if t < 8 {
        sh[t] = T.select(t == 1 || t == 3, 0xffffffff, 0);
    }
    T.cuda.cta_sync();
    let key = (id * 37 + 11) % 1000;
    T.atomic.add(g, 0, 1);
    T.atomic.max(g, 1, key, "relaxed", "gpu");
    T.atomic.min(g, 2, key, "acq_rel", "gpu");
    T.atomic.or(g, 3, 1 << (id % 32));
    T.atomic.xor(g, 4, id);
    T.red.add(g, 5, id);
    T.red.max(g, 6, key, "release", "gpu");
    T.atomic.and(sh, 3, !(1 << (t % 32)), "relaxed", "cta");
    T.atomic.add(sh, 0, t, "relaxed", "cta");
    T.red.min(sh, 1, key + 5, "relaxed", "cta");
    // A lock-free increment: retry the compare-and-swap until it wins.
    let mut done = false;
    while !done {
        let seen = g[7];
        done = T.atomic.cas(g, 7, seen, seen + 1) == seen;
    }
    // Each thread swaps its id into one slot; what comes back plus what is left is everyone.
    out[id] = T.atomic.exch(g, 8, id + 1);
    T.cuda.cta_sync();
    if t == 0 {
        out[1024 + T.block_idx() * 4] = sh[0];
        out[1024 + T.block_idx() * 4 + 1] = sh[1];
        out[1024 + T.block_idx() * 4 + 3] = sh[3];
    }
}

#[phaser::kernel(target = "sm_90a")]
pub fn pairs(src: &[f32], out: &mut [u32], back: &mut [f32]) {
    let t = T.thread_idx();
    let b = T.pack.bf16x2(src[2 * t], src[2 * t + 1]);
    let h = T.pack.f16x2(src[2 * t], src[2 * t + 1]);
    out[2 * t] = b;
    out[2 * t + 1] = h;
    let ub = T.unpack.bf16x2(b);
    let uh = T.unpack.f16x2(h);
    back[4 * t] = ub[0];
    back[4 * t + 1] = ub[1];
    back[4 * t + 2] = uh[0];
    back[4 * t + 3] = uh[1];
}

/// Two CTAs of a cluster exchange data through distributed shared memory: each writes its
/// own array, reads its peer's (`ld.shared::cluster`), then adds into the peer's with a
/// cluster-scope atomic and writes into it (`st.shared::cluster`).
#[phaser::kernel(target = "sm_90a")]
pub fn dsmem_exchange(out: &mut [u32]) {
    T.require_block(64, 1, 1);
    T.cluster_dims(2, 1, 1);
    let rank = T.cluster_cta_rank();
    let t = T.thread_idx();
    let mine = T.alloc_shared::<u32>([64]);
    let counters = T.alloc_shared::<u32>([2]);
    mine[t] = rank * 1000 + t;
    if t < 2 {
        counters[t] = 0;
    }
    T.cuda.cluster_sync();
    let peer = T.ptx.mapa_shared(mine, 1 - rank);
    let peer_counters = T.ptx.mapa_shared(counters, 1 - rank);
    out[rank * 64 + t] = peer[t];
    T.cuda.cluster_sync();
    T.atomic.add(peer_counters, 0, t + 1, "relaxed", "cluster");
    peer[t] = t * 2 + rank;
    T.cuda.cluster_sync();
    out[128 + rank * 64 + t] = mine[t];
    if t == 0 {
        out[256 + rank] = counters[0];
    }
}

/// Rank 0 copies 64 bytes of its shared memory into rank 1's with one bulk copy
/// (`cp.async.bulk.shared::cluster.shared::cta`), after registering them on rank 1's barrier
/// with a remote `arrive.expect_tx`; rank 1 waits on its barrier and reads. `FENCE` = 0
/// drops the proxy fence between the generic writes of the source and the copy's read.
#[phaser::kernel(target = "sm_90a")]
pub fn cta_to_cta_copy(out: &mut [u32], #[comptime] FENCE: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 1, 1);
    let rank = T.cluster_cta_rank();
    let t = T.thread_idx();
    let outbox = T.alloc_shared::<u32>([16]);
    let inbox = T.alloc_shared::<u32>([16]);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    if t == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
    }
    if t < 16 {
        outbox[t] = rank * 100 + t * 3;
    }
    if FENCE == 1 {
        T.ptx.fence.proxy_async("shared::cta");
    }
    T.cuda.cluster_sync();
    if rank == 0 {
        if t == 0 {
            let peer_inbox = T.ptx.mapa_shared(inbox, 1);
            let rbar = T.ptx.mapa(bar, 1);
            T.ptx.mbarrier.arrive.expect_tx_remote(rbar, 64);
            T.ptx.cp_async.bulk.s2cluster(T.cluster_elem_addr(peer_inbox, 0), T.shared_addr(outbox), 64, rbar);
        }
    } else {
        T.ptx.mbarrier.try_wait(bar, 0);
        if t < 16 {
            out[t] = inbox[t];
        }
    }
    T.cuda.cluster_sync();
}

/// Rank 0 multicasts one bulk copy of global memory into both CTAs; each registers the bytes
/// on its own barrier. Rank 1 also waits for one predicated remote arrival from rank 0 (lane
/// 5 only) on a second barrier; with `PRED` = 0 no lane's predicate holds.
#[phaser::kernel(target = "sm_90a")]
pub fn multicast(src: &[u32], out: &mut [u32], #[comptime] PRED: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 1, 1);
    let rank = T.cluster_cta_rank();
    let t = T.thread_idx();
    let buf = T.alloc_shared::<u32>([32]);
    let bars = T.alloc_barriers(2);
    let full = bars.ptr_to([0]);
    let ping = bars.ptr_to([1]);
    if t == 0 {
        T.ptx.mbarrier.init(full, 1);
        T.ptx.mbarrier.init(ping, 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cluster_sync();
    if t == 0 {
        T.ptx.mbarrier.arrive.expect_tx(full, 128);
        if rank == 0 {
            T.ptx.cp_async.bulk.g2s_multicast(T.shared_addr(buf), T.global_elem_addr(src, 0), 128, full, 3);
        }
    }
    if rank == 0 {
        T.ptx.mbarrier.arrive_remote_pred(ping, 1, PRED == 1 && t == 5);
    } else {
        T.ptx.mbarrier.try_wait(ping, 0);
    }
    T.ptx.mbarrier.try_wait(full, 0);
    out[rank * 32 + t] = buf[t];
    T.cuda.cluster_sync();
}

// ---- from sim_debug_ops.rs ----

/// The lesson's experiment 1: `num_threads` threads arrive, then wait for the phase; thread 0
/// initializes the barrier. Experiment 2's producer data printed with `%.1f`.
#[phaser::kernel(target = "sm_90a")]
pub fn lesson_arrive_wait(num_threads: u32) {
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.cute.initialize_barrier(bar, num_threads);
        T.printf("[exp 1] mbarrier initialized, expected threads = %d\n", [num_threads]);
    }
    T.cuda.cta_sync();
    if tid < num_threads {
        let result = tid * tid;
        T.printf("  thread %d: computed (result=%d), arriving\n", [tid, result]);
        T.cute.arrive_barrier(bar);
    }
    if tid < num_threads {
        T.cute.wait_barrier(bar, 0);
        T.printf("  thread %d: wait passed (%5.1f)\n", [tid, tid as f32 * 1.5]);
    }
}

/// The lesson's experiment 3: one barrier reused for 4 phases; thread 0 probes the phase with
/// `test_wait.parity` after each round.
#[phaser::kernel(target = "sm_90a")]
pub fn lesson_phase_flip() {
    T.require_block(32, 1, 1);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.cute.initialize_barrier(bar, 32);
    }
    T.cuda.cta_sync();
    let mut phase = 0u32;
    for round in 0..4 {
        T.cute.arrive_barrier(bar);
        T.cute.wait_barrier(bar, phase);
        if tid == 0 {
            let hw = T.select(T.ptx.mbarrier.test_wait(bar, 0), 1, 0);
            T.printf("  round %d done: phase %d -> %d (probed parity %u)\n", [round, phase, 1 - phase, hw]);
        }
        phase ^= 1;
    }
}

/// What the lesson prints for 4 threads, in the order a converged warp prints it.
pub fn lesson_arrive_wait_text() -> String {
    let mut s = String::from("[exp 1] mbarrier initialized, expected threads = 4\n");
    for t in 0..4 {
        s += &format!("  thread {t}: computed (result={}), arriving\n", t * t);
    }
    for t in 0..4 {
        s += &format!("  thread {t}: wait passed ({:5.1})\n", t as f32 * 1.5);
    }
    s
}

pub fn lesson_phase_flip_text() -> String {
    (0..4)
        .map(|r| format!("  round {r} done: phase {} -> {} (probed parity {})\n", r % 2, 1 - r % 2, 1 - r % 2))
        .collect()
}

/// Inline PTX is not simulated: the launch stops at it with a finding naming its line.
#[phaser::kernel(target = "sm_90a")]
pub fn with_inline_ptx(out: &mut [u32]) {
    let x = T.thread_idx();
    let mut y = 0u32;
    T.asm("add.u32 {1}, {0}, 41;", [x], [y]);
    out[x] = y;
}

/// Clocks never run backwards for a thread, and count the work between two reads.
#[phaser::kernel(target = "sm_90a")]
pub fn clocks(out: &mut [u64]) {
    let t = T.thread_idx();
    let c0 = T.clock64();
    let g0 = T.globaltimer();
    let mut x = t;
    for i in 0..50 {
        x = x * 3 + i;
    }
    let c1 = T.clock64();
    let g1 = T.globaltimer();
    out[2 * t] = c1 - c0;
    out[2 * t + 1] = (g1 - g0) + (x as u64 & 0);
}

/// Every thread polls a barrier with a backoff; only one of its two arrivals ever comes
/// (`ARRIVALS` = 1) or both do (`ARRIVALS` = 2). `BACKOFF` = 0 polls without `nanosleep`.
#[phaser::kernel(target = "sm_90a")]
pub fn backoff_poll(out: &mut [u32], #[comptime] ARRIVALS: u32, #[comptime] BACKOFF: u32) {
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 2);
    }
    T.cuda.cta_sync();
    if t < ARRIVALS {
        T.ptx.mbarrier.arrive(bar);
    }
    while !T.ptx.mbarrier.test_wait(bar, 0) {
        if BACKOFF == 1 {
            T.nanosleep(64);
        }
    }
    out[t] = 1;
}

#[phaser::kernel(target = "sm_90a")]
pub fn pdl_producer(data: &mut [u32]) {
    T.ptx.griddepcontrol.launch_dependents();
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    data[i] = i * 7 + 1;
}

#[phaser::kernel(target = "sm_90a")]
pub fn pdl_consumer(data: &[u32], out: &mut [u32]) {
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    // Everything before the wait may overlap the producer; what it wrote is read after.
    let scale = i + 1;
    T.ptx.griddepcontrol.wait();
    out[i] = data[i] * scale;
}

/// A ring of 2 stages between a producer warp and a consumer warp with CUTLASS's try/token
/// acquires: one non-blocking try, then a wait only when the token says so.
#[phaser::kernel(target = "sm_90a")]
pub fn token_pipeline(out: &mut [u32], n: u32) {
    T.require_block(64, 1, 1);
    let pipe = T.pipeline.new(2, 1);
    let ring = T.alloc_shared::<u32>([64]);
    T.pipeline.init(pipe);
    let warp = T.warp_idx();
    let lane = T.lane_idx();
    if warp == 0 {
        let st = T.pipeline.producer_state(pipe);
        for i in 0..n {
            let empty = T.pipeline.producer_try_acquire(pipe, st);
            T.pipeline.producer_acquire_with_token(pipe, st, empty);
            ring[T.pipeline.stage(st) * 32 + lane] = i * 100 + lane;
            T.cuda.warp_sync();
            if lane == 0 {
                T.pipeline.producer_arrive(pipe, st);
            }
            T.pipeline.advance(st);
        }
    } else {
        let st = T.pipeline.consumer_state(pipe);
        for i in 0..n {
            let full = T.pipeline.consumer_try_wait(pipe, st);
            T.pipeline.consumer_wait_with_token(pipe, st, full);
            out[i * 32 + lane] = ring[T.pipeline.stage(st) * 32 + lane];
            T.pipeline.consumer_release(pipe, st);
            T.pipeline.advance(st);
        }
    }
}

// ---- scenarios: one kernel launched on a device and checked against its reference ----------
//
// The GPU test runs each on the H200; `sim_ops_scenarios` runs each in the simulator, so the
// scenarios themselves are known to be right before a GPU sees them.

use phaser::{Arg, Device, LaunchConfig};

type Check = Result<(), String>;

fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Check {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None if got.len() == want.len() => Ok(()),
        None => Err(format!("{what}: {} values, {} expected", got.len(), want.len())),
        Some(i) => Err(format!("{what}: element {i} is {:?}, expected {:?}", got[i], want[i])),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Launch `k` over `threads` threads of one block with an input and a poisoned output.
fn in_out(d: &Device, k: &phaser::Kernel, threads: u32, inp: &[u32], n: usize) -> Result<Vec<u32>, String> {
    let i = d.upload(inp).map_err(err)?;
    let out = d.upload(&vec![0xDEAD_BEEFu32; n]).map_err(err)?;
    d.launch(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&i), Arg::buffer(&out)]).map_err(err)?;
    d.download(&out).map_err(err)
}

pub fn scenario_collectives(d: &Device) -> Check {
    let k = collectives::kernel().map_err(err)?;
    for seed in 0..4 {
        let v = inputs(seed, 32);
        same(&format!("collectives, seed {seed}"), &in_out(d, &k, 32, &v, 416)?, &expected(&v))?;
    }
    let v = inputs(100, 32);
    let (lo, hi): (u32, u32) = (v[..16].iter().sum(), v[16..].iter().sum());
    let want: Vec<u32> = (0..32).map(|l| if l < 16 { lo } else { hi }).collect();
    same("half-warp sums", &in_out(d, &half_warp_sums::kernel().map_err(err)?, 32, &v, 32)?, &want)?;
    let v = inputs(9, 40);
    let out = in_out(d, &sum_after_exit::kernel().map_err(err)?, 40, &v, 40)?;
    let (w0, w1): (u32, u32) = (v[..24].iter().sum(), v[32..].iter().sum());
    same("sum of the non-exited lanes", &out[..24], &[w0; 24])?;
    same("sum of a partial warp", &out[32..], &[w1; 8])
}

/// Packed pairs of the four 8x8 matrices: u32 `j` of row (i, r) holds elements (2j, 2j + 1),
/// element (r, c) of matrix i being `i * 64 + r * 8 + c`.
pub fn matrix_input() -> Vec<u32> {
    let elem = |i: u32, r: u32, c: u32| i * 64 + r * 8 + c;
    (0..128u32)
        .map(|w| (w / 32, (w / 4) % 8, (w % 4) * 2))
        .map(|(i, r, c)| elem(i, r, c) | elem(i, r, c + 1) << 16)
        .collect()
}

/// What `matrices` writes: the x4 fragments, the transposed ones, x1, the matrices restored.
pub fn matrix_expected() -> Vec<u32> {
    let elem = |i: u32, r: u32, c: u32| i * 64 + r * 8 + c;
    let mut want = vec![0u32; 416];
    for i in 0..4u32 {
        for t in 0..32u32 {
            let (r, c) = (t / 4, 2 * (t % 4));
            want[(i * 32 + t) as usize] = elem(i, r, c) | elem(i, r, c + 1) << 16;
            want[(128 + i * 32 + t) as usize] = elem(i, c, r) | elem(i, c + 1, r) << 16;
        }
    }
    want.copy_within(0..32, 256);
    want[288..416].copy_from_slice(&matrix_input());
    want
}

pub fn scenario_matrices(d: &Device) -> Check {
    let out = in_out(d, &matrices::kernel().map_err(err)?, 32, &matrix_input(), 416)?;
    same("ldmatrix/stmatrix", &out, &matrix_expected())
}

pub fn scenario_warpgroups(d: &Device) -> Check {
    let v = inputs(4, 256);
    let out = in_out(d, &warpgroup_exchange::kernel_for(1).map_err(err)?, 256, &v, 256)?;
    let want: Vec<u32> = (0..256).map(|t| v[(t / 128) * 128 + (t + 37) % 128] * 3).collect();
    same("warpgroup exchange", &out, &want)
}

pub fn vector_input() -> Vec<u32> {
    (0..256u32).map(|i| i.wrapping_mul(2654435761)).collect()
}

pub fn vector_expected(src: &[u32]) -> Vec<u32> {
    let mut want = vec![0u32; 320];
    for t in 0..64usize {
        let n = (t + 1) % 64;
        let rev = [src[4 * n + 3], src[4 * n + 2], src[4 * n + 1], src[4 * n]];
        want[4 * t..4 * t + 4].copy_from_slice(&[rev[0], rev[1], rev[2].wrapping_add(src[0]), rev[3]]);
        want[256 + t] = src[4 * n] ^ src[4 * n + 1] ^ src[4 * n + 2] ^ src[4 * n + 3];
    }
    want
}

pub fn scenario_vectors(d: &Device) -> Check {
    let src = vector_input();
    same(
        "vector loads and stores",
        &in_out(d, &vectors::kernel().map_err(err)?, 64, &src, 320)?,
        &vector_expected(&src),
    )
}

/// The final global counters, the exchanged values and the shared results of `atomics` over
/// `ctas` CTAs, checked.
pub fn atomics_check(ctas: u32, g: &[u32], out: &[u32]) -> Check {
    let n = (ctas * 64) as usize;
    let keys: Vec<u32> = (0..n as u32).map(|id| (id * 37 + 11) % 1000).collect();
    let want = [
        n as u32,
        *keys.iter().max().unwrap(),
        *keys.iter().min().unwrap(),
        u32::MAX,
        (0..n as u32).fold(0, |a, x| a ^ x),
        (0..n as u32).sum::<u32>(),
        *keys.iter().max().unwrap(),
        n as u32,
    ];
    same("atom add/max/min/or/xor, red add/max, cas increments", &g[..8], &want)?;
    let mut seen: Vec<u32> = out[..n].to_vec();
    seen.push(g[8]);
    seen.sort();
    same("exch hands every value on once", &seen, &(0..=n as u32).collect::<Vec<_>>())?;
    for c in 0..ctas as usize {
        let cta_keys = &keys[c * 64..(c + 1) * 64];
        let got = [out[1024 + c * 4], out[1024 + c * 4 + 1], out[1024 + c * 4 + 3]];
        same(
            &format!("shared atomics of CTA {c}"),
            &got,
            &[(0..64).sum::<u32>(), cta_keys.iter().min().unwrap() + 5, 0],
        )?;
    }
    Ok(())
}

pub fn scenario_atomics(d: &Device) -> Check {
    let ctas = 4;
    let mut init = vec![0u32; 16];
    init[2] = u32::MAX;
    let g = d.upload(&init).map_err(err)?;
    let out = d.upload(&vec![0u32; 1024 + 16]).map_err(err)?;
    let k = atomics::kernel().map_err(err)?;
    d.launch(&k, LaunchConfig::linear(ctas, 64), &[Arg::buffer(&g), Arg::buffer(&out)]).map_err(err)?;
    atomics_check(ctas, &d.download(&g).map_err(err)?, &d.download(&out).map_err(err)?)
}

pub fn pair_input() -> Vec<f32> {
    let mut src: Vec<f32> = (0..62).map(|i| (i as f32 - 31.0) * 1.0078125 + 1.0 / (i as f32 + 3.0)).collect();
    src.extend([f32::NAN, 1.0e-40]);
    src
}

/// The packed pairs (the GPU's `cvt.rn`: round to nearest even, canonical NaN) and their
/// exact unpacking.
pub fn pairs_check(src: &[f32], out: &[u32], back: &[f32]) -> Check {
    use half::{bf16, f16};
    let b16 = |x: f32| if x.is_nan() { 0x7fff } else { bf16::from_f32(x).to_bits() as u32 };
    let h16 = |x: f32| if x.is_nan() { 0x7fff } else { f16::from_f32(x).to_bits() as u32 };
    let wide_b = |bits: u32| bf16::from_bits(bits as u16).to_f32();
    let wide_h = |bits: u32| f16::from_bits(bits as u16).to_f32();
    let same_f = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for t in 0..32 {
        let (lo, hi) = (src[2 * t], src[2 * t + 1]);
        same(
            &format!("packed pairs of thread {t}"),
            &out[2 * t..2 * t + 2],
            &[b16(lo) | b16(hi) << 16, h16(lo) | h16(hi) << 16],
        )?;
        let want = [wide_b(b16(lo)), wide_b(b16(hi)), wide_h(h16(lo)), wide_h(h16(hi))];
        if !(0..4).all(|i| same_f(back[4 * t + i], want[i])) {
            return Err(format!("unpacked pairs of thread {t}: {:?}, expected {want:?}", &back[4 * t..4 * t + 4]));
        }
    }
    Ok(())
}

pub fn scenario_pairs(d: &Device) -> Check {
    let src = pair_input();
    let a = d.upload(&src).map_err(err)?;
    let out = d.upload(&[0u32; 64]).map_err(err)?;
    let back = d.upload(&[0f32; 128]).map_err(err)?;
    let k = pairs::kernel().map_err(err)?;
    d.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&a), Arg::buffer(&out), Arg::buffer(&back)])
        .map_err(err)?;
    pairs_check(&src, &d.download(&out).map_err(err)?, &d.download(&back).map_err(err)?)
}

pub fn dsmem_expected() -> Vec<u32> {
    let mut want = vec![0u32; 258];
    for rank in 0..2u32 {
        for t in 0..64u32 {
            want[(rank * 64 + t) as usize] = (1 - rank) * 1000 + t;
            want[(128 + rank * 64 + t) as usize] = t * 2 + (1 - rank);
        }
        want[256 + rank as usize] = (1..=64).sum();
    }
    want
}

pub fn scenario_dsmem(d: &Device) -> Check {
    let out = d.upload(&[0u32; 258]).map_err(err)?;
    d.launch(&dsmem_exchange::kernel().map_err(err)?, LaunchConfig::linear(2, 64), &[Arg::buffer(&out)])
        .map_err(err)?;
    same("DSMEM exchange", &d.download(&out).map_err(err)?, &dsmem_expected())?;
    let out = d.upload(&[0u32; 16]).map_err(err)?;
    d.launch(&cta_to_cta_copy::kernel_for(1).map_err(err)?, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)])
        .map_err(err)?;
    same("CTA-to-CTA bulk copy", &d.download(&out).map_err(err)?, &(0..16).map(|t| t * 3).collect::<Vec<u32>>())?;
    let src: Vec<u32> = (0..32u32).map(|i| i * 11 + 1).collect();
    let a = d.upload(&src).map_err(err)?;
    let out = d.upload(&[0u32; 64]).map_err(err)?;
    d.launch(
        &multicast::kernel_for(1).map_err(err)?,
        LaunchConfig::linear(2, 32),
        &[Arg::buffer(&a), Arg::buffer(&out)],
    )
    .map_err(err)?;
    let out = d.download(&out).map_err(err)?;
    same("bulk multicast into rank 0", &out[..32], &src)?;
    same("bulk multicast into rank 1", &out[32..], &src)
}

pub fn scenario_pdl(d: &Device) -> Check {
    let mut data = d.upload(&[0u32; 256]).map_err(err)?;
    let mut out = d.upload(&[0u32; 256]).map_err(err)?;
    pdl_producer::launch(d, LaunchConfig::linear(2, 128), &mut data).map_err(err)?;
    pdl_consumer::launch(d, LaunchConfig::linear(2, 128).with_programmatic_dependent_launch(), &data, &mut out)
        .map_err(err)?;
    let want: Vec<u32> = (0..256u32).map(|i| (i * 7 + 1) * (i + 1)).collect();
    same("dependent launch", &d.download(&out).map_err(err)?, &want)
}

pub fn scenario_token_pipeline(d: &Device) -> Check {
    let n = 9u32;
    let out = d.upload(&vec![0u32; (n * 32) as usize]).map_err(err)?;
    let k = token_pipeline::kernel().map_err(err)?;
    d.launch(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out), Arg::scalar(n)]).map_err(err)?;
    let want: Vec<u32> = (0..n).flat_map(|i| (0..32).map(move |l| i * 100 + l)).collect();
    same("try/token pipeline", &d.download(&out).map_err(err)?, &want)
}

pub fn scenario_clocks(d: &Device) -> Check {
    let out = d.upload(&[u64::MAX; 64]).map_err(err)?;
    d.launch(&clocks::kernel().map_err(err)?, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).map_err(err)?;
    // `clock64` counts cycles: the loop between the reads takes some. `%globaltimer` ticks
    // coarsely (the H200 showed 0 ns across this loop): it must not run backwards (a negative
    // delta wraps to a huge u64), nothing more.
    let bad = d.download(&out).map_err(err)?.into_iter().enumerate().find(|&(i, v)| {
        let least = if i % 2 == 0 { 1 } else { 0 };
        !(least..1 << 32).contains(&v)
    });
    match bad {
        None => Ok(()),
        Some((i, v)) if i % 2 == 0 => Err(format!("clock64 delta {i} is {v}: the cycle counter must advance")),
        Some((i, v)) => Err(format!("globaltimer delta {i} is {v}: the timer ran backwards")),
    }
}

/// Every scenario, by name.
/// A scenario: launch on a device, check against the reference.
pub type Scenario = fn(&Device) -> Check;

pub fn scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        ("collectives", scenario_collectives),
        ("matrices", scenario_matrices),
        ("warpgroups", scenario_warpgroups),
        ("vectors", scenario_vectors),
        ("atomics", scenario_atomics),
        ("pairs", scenario_pairs),
        ("dsmem", scenario_dsmem),
        ("pdl", scenario_pdl),
        ("token_pipeline", scenario_token_pipeline),
        ("cluster_pipeline", scenario_cluster_pipeline),
        ("clocks", scenario_clocks),
    ]
}

/// Warp 0 fills `data`, then raises a shared flag with an atomic; warp 1 polls the flag with
/// an atomic and then reads `data`. `ORDERED` = 1: release/acquire atomics (the hand-off is
/// synchronized); 0: relaxed ones (the reads race with the writes).
#[phaser::kernel(target = "sm_90a")]
pub fn flag_handoff(out: &mut [u32], #[comptime] ORDERED: u32) {
    T.require_block(64, 1, 1);
    let data = T.alloc_shared::<u32>([32]);
    let flag = T.alloc_shared::<u32>([1]);
    let t = T.thread_idx();
    let lane = T.lane_idx();
    if t == 0 {
        flag[0] = 0;
    }
    T.cuda.cta_sync();
    if t < 32 {
        data[lane] = lane * 5 + 3;
        T.cuda.warp_sync();
        if lane == 0 {
            if ORDERED == 1 {
                T.atomic.exch(flag, 0, 1, "release", "cta");
            } else {
                T.atomic.exch(flag, 0, 1, "relaxed", "cta");
            }
        }
    } else {
        let mut seen = 0u32;
        while seen == 0 {
            if ORDERED == 1 {
                seen = T.atomic.or(flag, 0, 0, "acquire", "cta");
            } else {
                seen = T.atomic.or(flag, 0, 0, "relaxed", "cta");
            }
        }
        out[lane] = data[lane];
    }
}

/// A cluster pipeline in the DSL (`T.pipeline.new_cluster`): each of the 2 CTAs' producers
/// multicasts its half (8 rows) of every 16 x 32 tile into both CTAs, registering the whole
/// tile's bytes on its own `full` barrier; each CTA's consumer warp copies the tile out and
/// releases the stage to both CTAs.
#[phaser::kernel(target = "sm_90a")]
pub fn dsl_cluster_pipeline(x: TensorMap<2>, y: &mut [f32], tiles: u32) {
    T.require_block(64, 1, 1);
    T.cluster_dims(2, 1, 1);
    let pipe = T.pipeline.new_cluster(2, 1, 2);
    let ring = T.alloc_shared::<f32>([1024]);
    T.pipeline.init(pipe);
    let rank = T.cluster_cta_rank();
    let warp = T.warp_idx();
    let lane = T.lane_idx();
    if warp == 0 {
        if T.ptx.elect_sync() {
            let st = T.pipeline.producer_state(pipe);
            for t in 0..tiles {
                T.pipeline.producer_acquire(pipe, st);
                let full = T.pipeline.producer_commit(pipe, st, 2048);
                let dst = T.shared_elem_addr(ring, T.pipeline.stage(st) * 512 + rank * 256);
                T.ptx.cp_async.bulk.tensor.g2s_multicast(dst, x, [0, (t * 2 + rank) * 8], full, 3);
                T.pipeline.advance(st);
            }
            T.pipeline.producer_tail(pipe, st);
        }
    } else {
        let st = T.pipeline.consumer_state(pipe);
        for t in 0..tiles {
            T.pipeline.consumer_wait(pipe, st);
            for i in 0..16 {
                y[(rank * tiles + t) * 512 + i * 32 + lane] = ring[T.pipeline.stage(st) * 512 + i * 32 + lane];
            }
            T.pipeline.consumer_release(pipe, st);
            T.pipeline.advance(st);
        }
    }
}

pub fn scenario_cluster_pipeline(d: &Device) -> Check {
    let tiles = 5u32;
    let src: Vec<f32> = (0..tiles * 512).map(|i| i as f32 * 0.5 - 7.0).collect();
    let xb = d.upload(&src).map_err(err)?;
    let tm = d.tensor_map(&xb, &[32, (tiles * 16) as u64], &[32, 8], phaser::Swizzle::None).map_err(err)?;
    let y = d.upload(&vec![f32::NAN; (2 * tiles * 512) as usize]).map_err(err)?;
    let k = dsl_cluster_pipeline::kernel().map_err(err)?;
    d.launch(&k, LaunchConfig::linear(2, 64), &[Arg::TensorMap(&tm), Arg::buffer(&y), Arg::scalar(tiles)])
        .map_err(err)?;
    let got: Vec<u32> = d.download(&y).map_err(err)?.iter().map(|v| v.to_bits()).collect();
    let want: Vec<u32> = src.iter().chain(&src).map(|v| v.to_bits()).collect();
    same("every CTA received every tile", &got, &want)
}

/// `T.pipeline.advance(st, n)` from a fresh 3-stage consumer state: stage and phase after n.
#[phaser::kernel(target = "sm_90a")]
pub fn advance_n(out: &mut [u32]) {
    let pipe = T.pipeline.new(3, 1);
    let st = T.pipeline.consumer_state(pipe);
    out[0] = T.pipeline.stage(st) * 10 + T.pipeline.phase(st);
    T.pipeline.advance(st, 2);
    out[1] = T.pipeline.stage(st) * 10 + T.pipeline.phase(st);
    T.pipeline.advance(st, 2);
    out[2] = T.pipeline.stage(st) * 10 + T.pipeline.phase(st);
    T.pipeline.advance(st, 5);
    out[3] = T.pipeline.stage(st) * 10 + T.pipeline.phase(st);
    T.pipeline.advance(st);
    out[4] = T.pipeline.stage(st) * 10 + T.pipeline.phase(st);
}
