//! Every `T.*` op of the DSL's table in one kernel (sm_100a has them all): the expansion
//! templates compile, the IR builds, and ptxas accepts the PTX. `phaser-dsl`'s unit tests
//! check that this file names every op of the table.

use phaser::codegen::ptx_text;

#[phaser::device]
fn bump(x: u32, by: u32) -> u32 {
    x + by
}

#[phaser::device]
fn arrive_twice(bar: Barrier) {
    T.ptx.mbarrier.arrive(bar);
    T.ptx.mbarrier.arrive(bar);
}

#[phaser::kernel(target = "sm_100a")]
fn every_op(out: &mut [u32], fout: &mut [f32], src: &[f32], tmap: TensorMap<2>, n: u32, #[comptime] S: u32) {
    T.require_block(128, 1, 1);
    T.cluster_dims(2, 1, 1);
    T.max_registers(168);
    T.min_blocks_per_sm(1);
    let bars = T.alloc_barriers(S);
    let tile = T.alloc_shared::<f32>([256]);
    let dyn_tile = T.dynamic_shared::<f32>(0);
    let tid = T.thread_idx();
    let coords = T.thread_idx_y() + T.thread_idx_z() + T.block_idx() + T.block_idx_y() + T.block_idx_z();
    let dims = T.block_dim() + T.block_dim_y() + T.block_dim_z() + T.grid_dim() + T.grid_dim_y() + T.grid_dim_z();
    let ids = T.lane_idx() + T.warp_idx() + T.warpgroup_idx() + T.cluster_cta_rank() + T.cluster_size();
    let bar = bars.ptr_to([0]);
    let full = bars.ptr_to([S - 1]);
    if T.ptx.elect_sync() {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.mbarrier.init(full, 2);
        T.ptx.fence.mbarrier_init();
        T.ptx.fence.proxy_async("shared::cta");
        T.ptx.fence.proxy_async();
        T.ptx.fence.acq_rel("cluster");
    }
    T.cuda.cta_sync();
    T.ptx.barrier.cluster.arrive();
    T.ptx.barrier.cluster.wait();
    T.ptx.barrier.cluster.arrive_relaxed();
    T.ptx.barrier.cluster.wait();
    T.cuda.cluster_sync();
    let smem = T.shared_addr(tile);
    let elem = T.shared_elem_addr(tile, 4);
    let gaddr = T.global_elem_addr(src, tid);
    if tid == 0 {
        let st = T.ptx.mbarrier.arrive(bar);
        let pending = T.ptx.mbarrier.pending_count(st);
        T.ptx.mbarrier.try_wait_state(bar, st);
        let ready = T.ptx.mbarrier.test_wait_state(bar, st);
        T.ptx.mbarrier.arrive_count(full, 1);
        T.ptx.mbarrier.arrive_sem(full, "release", "cta");
        T.ptx.mbarrier.expect_tx(full, 64);
        T.ptx.mbarrier.complete_tx(full, 64);
        T.ptx.mbarrier.arrive.expect_tx(bar, 16384);
        T.ptx.mbarrier.arrive.expect_tx_sem(bar, 0, "relaxed", "cluster");
        T.ptx.cp_async.bulk.tensor.g2s(smem, tmap, [0, tid as i32], bar);
        T.ptx.cp_async.bulk.tensor.g2s_multicast(smem, tmap, [0, 0], bar, 3);
        T.ptx.cp_async.bulk.tensor.g2s_hint(smem, tmap, [0, 0], bar, 0);
        T.ptx.cp_async.bulk.tensor.s2g(tmap, [0, 0], smem);
        T.ptx.cp_async.bulk.prefetch.tensor(tmap, [0, 0]);
        T.ptx.cp_async.bulk.g2s(smem, gaddr, 256, bar);
        T.ptx.cp_async.bulk.s2g(gaddr, smem, 256);
        T.ptx.cp_async.bulk.commit_group();
        T.ptx.cp_async.bulk.wait_group(0);
        T.ptx.cp_async.bulk.wait_group_read(0);
        T.ptx.cp_async(elem, gaddr, 16);
        T.ptx.cp_async.commit_group();
        T.ptx.cp_async.wait_group(0);
        T.ptx.tcgen05.commit(bar);
        T.ptx.tcgen05.commit_multicast(bar, 3);
        T.ptx.mbarrier.try_wait(bar, 0);
        T.ptx.mbarrier.try_wait_sem(bar, 1, "acquire", "cluster");
        let once = T.ptx.mbarrier.try_wait_once(bar, 0);
        let once_hinted = T.ptx.mbarrier.try_wait_once(bar, 0, 1000);
        let done = T.ptx.mbarrier.test_wait(bar, 1);
        T.ptx.mbarrier.arrive_drop(full);
        T.ptx.mbarrier.arrive_drop_count(full, 1);
        T.ptx.mbarrier.arrive_remote(bar, 1);
        T.ptx.mbarrier.arrive_remote(bar, 1, 2);
        let remote = T.ptx.mapa(bar, 0);
        T.ptx.mbarrier.arrive_mapped(remote);
        T.ptx.mbarrier.arrive_mapped(remote, 1);
        let rv = T.ptx.ld.shared_cluster::<u32>(smem);
        T.ptx.st.shared_cluster(smem, rv);
        T.ptx.mbarrier.inval(full);
        let flags = T.select(once && once_hinted, 1, 0) + T.select(done || ready, 2, 0);
        out[0] = T.min(pending, flags) + T.max(coords, dims) + T.mad(ids, 2, 1) + bump(n, 1);
        let old = T.atomic_add(out, 1, 5);
        T.probe("every_op", [old, pending]);
        out[2] = T.ptx.activemask();
        let a = T.barrier_at_addr(T.shared_addr(tile));
        arrive_twice(a);
    }
    let v = T.ptx.ld.shared::<f32>(smem) + T.ptx.ld.global::<f32>(gaddr) + dyn_tile[tid];
    T.ptx.st.shared(smem, v);
    T.ptx.st.global(T.global_elem_addr(fout, tid), v);
    // Blackwell's tensor memory and MMA (one `.cta_group` per kernel: the default ::1).
    let tmem_slot = T.alloc_shared::<u32>([4]);
    T.ptx.tcgen05.alloc(tmem_slot, 64);
    T.ptx.tcgen05.relinquish_alloc_permit();
    T.cuda.cta_sync();
    let taddr = T.ptx.ld.shared::<u32>(T.shared_addr(tmem_slot));
    let sdesc = T.ptx.tcgen05.smem_desc(smem, 128, 64, "bf16");
    let kdesc = T.ptx.tcgen05.smem_desc(smem, 64, 128, "tf32", "mn", "64B");
    if tid == 0 {
        T.ptx.tcgen05.mma(taddr, sdesc, kdesc, tid == 0, "bf16", 128, 64);
        T.ptx.tcgen05.mma_ts(taddr, taddr, sdesc, tid != 0, "bf16", 128, 64);
        T.ptx.tcgen05.cp(taddr, sdesc, "128x256b");
        T.ptx.tcgen05.shift(taddr);
    }
    T.ptx.tcgen05.fence.after_thread_sync();
    let tv = T.ptx.tcgen05.ld::<f32>(taddr);
    T.ptx.tcgen05.wait.ld();
    T.ptx.tcgen05.st(taddr, tv, "16x32bx2");
    T.ptx.tcgen05.wait.st();
    T.ptx.tcgen05.fence.before_thread_sync();
    T.cuda.cta_sync();
    T.ptx.tcgen05.dealloc(taddr, 64);
    T.ptx.bar.sync(1, 128);
    T.ptx.bar.sync(0);
    T.ptx.bar.arrive(2, 64);
    T.ptx.setmaxnreg.inc(232);
    T.ptx.setmaxnreg.dec(40);
    T.ptx.cp_async.mbarrier.arrive(bar);
    T.ptx.cp_async.mbarrier.arrive_noinc(bar);
    let pipe = T.pipeline.new(S, 3);
    let pipe_t = T.pipeline.new_threads(2, 64);
    T.pipeline.init(pipe);
    T.pipeline.init(pipe_t);
    let prod = T.pipeline.producer_state(pipe);
    let cons = T.pipeline.consumer_state(pipe);
    T.pipeline.producer_acquire(pipe, prod);
    let filled = T.pipeline.producer_commit(pipe, prod, 1024);
    T.ptx.mbarrier.complete_tx(filled, 1024);
    T.pipeline.producer_arrive(pipe_t, prod);
    T.pipeline.consumer_wait(pipe, cons);
    out[T.pipeline.stage(cons)] = T.pipeline.phase(cons);
    T.pipeline.consumer_release(pipe, cons);
    T.pipeline.advance(cons);
    T.pipeline.advance(prod);
    T.ptx.mbarrier.arrive(T.pipeline.full(pipe, prod));
    T.ptx.mbarrier.arrive(T.pipeline.empty(pipe, prod));
    T.pipeline.producer_tail(pipe, prod);
    if n == 12345 {
        T.ptx.trap();
    }
}

/// Typed tiles and register arrays (tiles live in the dynamic window, which `every_op`'s raw
/// `T.dynamic_shared` view would alias, so they get their own kernel).
#[phaser::kernel(target = "sm_90a")]
fn tile_ops(#[tma(box = [64, 64], swizzle = "128B")] tmap: TensorMap<bf16, 2>, out: &mut [u32]) {
    T.require_block(128, 1, 1);
    let tile = T.alloc_shared::<bf16>([64, 64], "128B");
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let mut regs = T.registers::<u32>([4]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.mbarrier.arrive.expect_tx(bar, tile.bytes());
        T.tma.load(tile, tmap, [0, 0], bar);
        T.ptx.mbarrier.try_wait(bar, 0);
        T.tma.store(tmap, [64, 0], tile);
    }
    #[unroll]
    for i in 0..4 {
        regs[i] = T.tile_addr(tile, [t % 64, i]);
    }
    out[t] = regs[0] + regs[3];
}

#[test]
fn tile_ops_build_and_assemble() {
    let ptx = tile_ops::ptx().unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for inst in ["cp.async.bulk.tensor.2d.shared::cluster.global.*", "cp.async.bulk.tensor.2d.global.shared::cta.*"] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing:\n{ptx}");
    }
    assert!(ptx_text::has_directive(&ptx, ".extern .shared .align 1024 *"), "{ptx}");
}

/// Hopper's wgmma family (sm_90a: `every_op` targets sm_100a, which has none), with the typed
/// multicast load and the thread-counted cluster pipeline that feed it
/// (`tests/dsl_wgmma.rs` checks what each form computes).
#[phaser::kernel(target = "sm_90a")]
fn wgmma_ops(
    #[tma(box = [64, 64], swizzle = "128B")] tmap: TensorMap<bf16, 2>,
    #[tma(box = [32, 64], swizzle = "128B")] half_rows: TensorMap<bf16, 2>,
    out: &mut [f32],
) {
    T.require_block(128, 1, 1);
    T.cluster_dims(2, 1, 1);
    let pipe = T.pipeline.new_cluster_threads(1, 1, 2, "cta");
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([2, 32, 64], "128B");
    T.pipeline.init(pipe);
    let t = T.thread_idx();
    let rank = T.cluster_cta_rank();
    let st = T.pipeline.producer_state(pipe);
    if t == 0 {
        T.pipeline.producer_acquire(pipe, st);
        let full = T.pipeline.producer_commit(pipe, st, a.bytes() + b.bytes());
        T.tma.load(a, tmap, [0, 0], full);
        T.tma.load_multicast(b[rank], half_rows, [rank * 32, 0], full, 3);
    }
    let cs = T.pipeline.consumer_state(pipe);
    T.pipeline.consumer_wait(pipe, cs);
    let mut acc = T.registers::<f32>([32]);
    let mut frag = T.registers::<u32>([4]);
    T.ptx.wgmma.fence();
    T.ptx.wgmma.mma_async(acc, a, b, 0, false);
    T.ptx.wgmma.mma_async(acc, a, b, 1, true, "k", "k", "ab");
    T.ptx.wgmma.mma_async_rs(acc, frag, b, 2, true, "k", "b");
    T.ptx.wgmma.commit_group();
    T.ptx.wgmma.wait_group(0);
    // The accumulator by (row, col): coordinates, row reductions, masks, P as an A fragment.
    T.fragment.mask_cols(acc, 40);
    T.fragment.mask_causal(acc, 5i32);
    let rmax = T.fragment.row_max(acc, 1) + T.fragment.row_sum(acc, 0, "thread");
    let quad = T.fragment.quad_max(rmax) + T.fragment.quad_sum(rmax);
    acc[3] = acc[3] * T.fragment.of_row(acc, 3, quad, rmax);
    T.fragment.to_a(frag, acc, 3, "f16");
    out[T.fragment.row(acc, 3) * 64 + T.fragment.col(acc, 3)] = acc[3] + frag[0] as f32;
    if t == 0 {
        T.pipeline.consumer_release(pipe, cs);
    }
    T.pipeline.advance(st);
    if t == 0 {
        T.pipeline.producer_tail(pipe, st);
    }
    out[t] = acc[0] + acc[31];
}

#[test]
fn wgmma_ops_build_and_assemble() {
    let ptx = wgmma_ops::ptx().unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for inst in [
        "wgmma.fence.sync.aligned",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
        "wgmma.commit_group.sync.aligned",
        "wgmma.wait_group.sync.aligned 0",
        "cp.async.bulk.tensor.*.multicast::cluster*",
        "mapa.shared::cluster.*",
    ] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing:\n{ptx}");
    }
}

/// `.maxntid` cannot sit beside `.reqntid`, so it gets its own kernel.
#[phaser::kernel(target = "sm_90a")]
fn max_block_only(out: &mut [u32]) {
    T.max_block(256, 1, 1);
    out[T.thread_idx()] = 1;
}

#[test]
fn max_block_is_maxntid() {
    assert!(ptx_text::has_directive(&max_block_only::ptx().unwrap(), ".maxntid 256, 1, 1"));
}

#[test]
fn every_op_builds_and_assembles() {
    let ptx = every_op::ptx_for(2).unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_100a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for inst in [
        "tcgen05.commit.*",
        "setmaxnreg.inc.*",
        "cp.async.bulk.tensor.2d.*",
        "mapa.*",
        "elect.sync",
        "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.alloc.cta_group::1.*",
    ] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing");
    }
}

/// `T.ptx.activemask()`: the lanes executing it together. A converged warp of 32 has all
/// bits, a partial warp its lanes, and inside a branch only the lanes that took it.
#[phaser::kernel(target = "sm_80")]
fn active_lanes(out: &mut [u32]) {
    let tid = T.thread_idx();
    out[tid] = T.ptx.activemask();
    if tid % 2 == 0 {
        out[tid + 64] = T.ptx.activemask();
    }
}

#[test]
fn activemask_names_the_lanes_executing_together_in_the_simulator() {
    use phaser::runtime::sim::{SimConfig, Strategy};
    let k = active_lanes::kernel().unwrap();
    assert!(ptx_text::has(&active_lanes::ptx().unwrap(), "activemask.b32 %r*"));
    for strategy in [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial] {
        let dev = phaser::Device::sim(SimConfig::default().with_strategy(strategy).with_seed(7));
        let out = dev.upload(&[0u32; 128]).unwrap();
        let rep = dev.simulate(&k, phaser::LaunchConfig::linear(1, 40), &[phaser::Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{strategy:?}:\n{}", rep.text());
        let out = dev.download(&out).unwrap();
        // Warp 0 has 32 lanes, warp 1 the 8 threads 32..40.
        let lanes = |t: usize| if t < 32 { u32::MAX } else { 0xff };
        let even = |t: usize| if t < 32 { 0x5555_5555 } else { 0x55 };
        for t in 0..40 {
            assert_eq!(out[t], lanes(t), "{strategy:?}: thread {t}");
            let want = if t % 2 == 0 { even(t) } else { 0 };
            assert_eq!(out[t + 64], want, "{strategy:?}: thread {t} in the branch");
        }
    }
}

/// The later ops (warp collectives, vector and atomic memory, 16-bit pairs, matrices,
/// distributed shared memory, clocks, `printf`, programmatic dependent launch, inline PTX,
/// CuTe's names, cluster pipelines) in one kernel that ptxas must accept.
#[phaser::kernel(target = "sm_100a")]
fn later_ops(out: &mut [u32], fout: &mut [f32], src: &[f32], wide: &mut [u64]) {
    T.require_block(128, 1, 1);
    T.cluster_dims(2, 1, 1);
    let tid = T.thread_idx();
    let lane = T.lane_idx();
    let x = tid * 3;
    // Warp collectives.
    T.cuda.warp_sync();
    T.cuda.warp_sync(T.ptx.activemask());
    T.cuda.warpgroup_sync();
    T.cuda.warpgroup_sync(2);
    let a = T.ptx.shfl.sync.bfly(x, 16);
    let b = T.ptx.shfl.sync.down(x, 1, 16);
    let c = T.ptx.shfl.sync.up(x, 2, 32, 0xffffffff);
    let f = T.ptx.shfl.sync.idx(src[tid], 0);
    let all = T.ptx.vote.sync.all(x > 3);
    let any = T.ptx.vote.sync.any(x > 3, 0xffffffff);
    let uni = T.ptx.vote.sync.uni(lane < 16);
    let ballot = T.ptx.vote.sync.ballot(lane % 2 == 0);
    let sum = T.ptx.redux.sync.add(x);
    let lo = T.ptx.redux.sync.min(x as i32);
    let hi = T.ptx.redux.sync.max(x);
    let bits = T.ptx.redux.sync.and(x) + T.ptx.redux.sync.or(x) + T.ptx.redux.sync.xor(x, 0xffffffff);
    let same = T.ptx.match_sync.any(x) + T.ptx.match_sync.all(x as u64);
    out[tid] = a + b + c + ballot + sum + hi + bits + same + T.select(all || any || uni, 1, 0) + lo as u32;
    // Vector loads and stores, the read-only cache.
    let tile = T.alloc_shared::<f32>([512]);
    let v2 = T.ld.v2(src, 2 * tid);
    let v4 = T.ld.v4(tile, 4 * tid);
    let n1 = T.ld.nc(src, tid);
    let n4 = T.ld.nc_v4(src, 4 * tid);
    T.st.v2(fout, 2 * tid, v2[0], v2[1] + f);
    T.st.v4(tile, 4 * tid, v4[0], n4[1], n4[2], n1);
    // Atomics and reductions on global, shared and another CTA's shared memory.
    let counts = T.alloc_shared::<u32>([128]);
    let old = T.atomic.add(out, 0, 1);
    T.atomic.add(out, 1, 2, "acq_rel", "gpu");
    T.atomic.min(counts, lane, old, "relaxed", "cta");
    T.atomic.max(out, 2, old, "release");
    T.atomic.and(out, 3, 0xff);
    T.atomic.or(counts, 4, 1);
    T.atomic.xor(out, 5, old, "acquire", "sys");
    let prev = T.atomic.exch(counts, lane, tid);
    let seen = T.atomic.cas(out, 6, prev, tid, "acq_rel", "cluster");
    T.red.add(wide, 0, seen as u64);
    T.red.min(counts, 7, 3, "release", "cta");
    T.red.max(out, 8, 9, "relaxed");
    // Strong loads and stores, a flag signalled and waited for.
    let flag = T.ld.ordered(out, 9, "acquire", "sys");
    T.st.ordered(out, 10, flag + 1, "release", "cluster");
    T.st.ordered(out, 11, 2);
    T.flag.signal(out, 12, flag + 1, "sys");
    T.flag.wait(out, 12, flag + 1);
    // Distributed shared memory.
    let peer = T.ptx.mapa_shared(counts, 1);
    T.atomic.add(peer, lane, 1, "relaxed", "cluster");
    peer[lane] = peer[lane + 1] + 1;
    let peer_elem = T.cluster_elem_addr(peer, 4);
    let peer_base = T.ptx.mapa_addr(T.shared_addr(counts), 0);
    // 16-bit pairs.
    let bf = T.pack.bf16x2(1.5, src[tid]);
    let hf = T.pack.f16x2(src[tid], 2.0);
    let ub = T.unpack.bf16x2(bf);
    let uh = T.unpack.f16x2(hf);
    fout[tid] = ub[0] + ub[1] + uh[0] + uh[1];
    // Matrix fragments.
    let halves = T.alloc_shared::<u32>([512]);
    let row = T.shared_elem_addr(halves, lane * 4);
    let m1 = T.ptx.ldmatrix.x1(row);
    let m2 = T.ptx.ldmatrix.x2(row, "trans");
    let m4 = T.ptx.ldmatrix.x4(row, "rows");
    T.ptx.stmatrix.x1(row, m1[0]);
    T.ptx.stmatrix.x2(row, m2[0], m2[1], "trans");
    T.ptx.stmatrix.x4(row, m4[0], m4[1], m4[2], m4[3]);
    // Clocks, backoff, printf, programmatic dependent launch.
    let t0 = T.clock64();
    T.nanosleep(100);
    wide[tid] = T.clock64() - t0 + T.globaltimer();
    T.printf("tid %u sum %u f %f\n", [tid, sum, src[tid]]);
    T.printf("no arguments\n", []);
    T.ptx.griddepcontrol.wait();
    T.ptx.griddepcontrol.launch_dependents();
    // Inline PTX.
    let mut y = 0u32;
    T.asm("add.u32 {1}, {0}, 7;", [x], [y]);
    T.asm("{{ .reg .pred p; setp.eq.u32 p, {0}, 0; selp.u32 {1}, 1, 2, p; }}", [x], [y], "none");
    out[tid + 128] = y + peer_elem + peer_base;
    // CuTe's names, remote arrivals and bulk copies between CTAs.
    let bars = T.alloc_barriers(2);
    let bar = bars.ptr_to([0]);
    if tid == 0 {
        T.cute.initialize_barrier(bar, 1);
    }
    T.cute.arrive_barrier(bar);
    T.cute.set_barrier_transaction_bytes(bar, 16);
    T.cute.wait_barrier(bar, 0);
    T.ptx.mbarrier.arrive_remote_pred(bar, 1, lane == 0);
    let rbar = T.ptx.mapa(bar, 1);
    T.ptx.mbarrier.arrive.expect_tx_remote(rbar, 64);
    T.ptx.cp_async.bulk.s2cluster(peer_elem, T.shared_addr(counts), 64, rbar);
    T.ptx.cp_async.bulk.g2s_multicast(T.shared_addr(tile), T.global_elem_addr(src, 0), 256, bar, 3);
    // Cluster pipelines, tokens, advance(n).
    let pipe = T.pipeline.new_cluster(2, 1, 2);
    let pipe_cta = T.pipeline.new_cluster(2, 1, 2, "cta");
    T.pipeline.init(pipe);
    T.pipeline.init(pipe_cta);
    let st = T.pipeline.producer_state(pipe);
    let token = T.pipeline.producer_try_acquire(pipe, st);
    T.pipeline.producer_acquire_with_token(pipe, st, token);
    let cst = T.pipeline.consumer_state(pipe_cta);
    let ready = T.pipeline.consumer_try_wait(pipe_cta, cst);
    T.pipeline.consumer_wait_with_token(pipe_cta, cst, ready);
    T.pipeline.advance(st, 2);
    // CUTLASS's 2-D multicast release (the 2 x 1 cluster's row and column) and PipelineAsync's
    // two producer arrivals.
    let multicast = T.pipeline.new_multicast(2, 1, 2, 1, "cta");
    let two_producers = T.pipeline.new_async(2, 2, 1);
    T.pipeline.init(multicast);
    T.pipeline.init(two_producers);
    let mst = T.pipeline.consumer_state(multicast);
    T.pipeline.consumer_release(multicast, mst);
    let ast = T.pipeline.producer_state(two_producers);
    T.pipeline.producer_arrive(two_producers, ast);
}

#[test]
fn later_ops_build_and_assemble() {
    let ptx = later_ops::ptx().unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_100a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for inst in [
        "shfl.sync.bfly.b32",
        "vote.sync.ballot.b32",
        "redux.sync.min.s32",
        "match.all.sync.b64",
        "ld.global.nc.v4.f32",
        "atom.acq_rel.cluster.global.cas.b32",
        "red.release.cta.shared.min.u32",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16",
        "call.uni (retval0), vprintf, _",
        "griddepcontrol.wait",
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes*",
    ] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing:\n{ptx}");
    }
    // The inline PTX's scope, with the comment saying whose it is.
    assert!(ptx.lines().any(|l| l.trim() == "{ // inline PTX"), "{ptx}");
}

/// `%cluster_ctaid.{x,y,z}`, an independent copy of a pipeline state, and `advance` by a
/// run-time count, in a 4x2 grid of 2x2 clusters.
#[phaser::kernel(target = "sm_90a")]
fn cluster_coords_and_states(out: &mut [u32], n: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 2, 1);
    let pipe = T.pipeline.new(3, 1);
    let st = T.pipeline.producer_state(pipe);
    let copy = T.pipeline.clone_state(st);
    T.pipeline.advance(copy, n);
    if T.thread_idx() == 0 {
        let b = (T.block_idx() + T.block_idx_y() * T.grid_dim()) * 4;
        out[b] = T.cluster_ctaid() + 10 * T.cluster_ctaid_y() + 100 * T.cluster_ctaid_z();
        out[b + 1] = T.pipeline.stage(st);
        out[b + 2] = T.pipeline.phase(st);
        out[b + 3] = T.pipeline.stage(copy) + 10 * (T.pipeline.phase(copy) ^ T.pipeline.phase(st));
    }
}

#[test]
fn cluster_ctaid_clone_state_and_a_run_time_advance_in_the_simulator() {
    use phaser::runtime::sim::{SimConfig, Strategy};
    let k = cluster_coords_and_states::kernel().unwrap();
    let ptx = cluster_coords_and_states::ptx().unwrap();
    for inst in ["mov.u32 %r*, %cluster_ctaid.x", "mov.u32 %r*, %cluster_ctaid.y", "div.u64 %rd*, %rd*, 3"] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing:\n{ptx}");
    }
    if let Err(msg) = phaser::codegen::ptxas::assemble(&phaser::codegen::ptxas::require(), &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    // `n` stages on from stage 0: stage n % 3, the parity flipped once per wrap (n / 3 wraps).
    for n in [0u32, 1, 4, 7, 8] {
        let dev = phaser::Device::sim(SimConfig::default().with_strategy(Strategy::Random).with_seed(n as u64));
        let out = dev.upload(&[u32::MAX; 32]).unwrap();
        let launch = phaser::LaunchConfig { grid: [4, 2, 1], ..phaser::LaunchConfig::linear(1, 32) };
        let rep = dev.simulate(&k, launch, &[phaser::Arg::buffer(&out), phaser::Arg::scalar(n)]).unwrap();
        assert!(rep.findings.is_empty(), "n = {n}:\n{}", rep.text());
        let out = dev.download(&out).unwrap();
        for (b, cta) in out.chunks(4).enumerate() {
            let (bx, by) = (b as u32 % 4, b as u32 / 4);
            assert_eq!(cta[0], bx % 2 + 10 * (by % 2), "n = {n}: CTA ({bx}, {by})'s %cluster_ctaid");
            assert_eq!(cta[1], 0, "n = {n}: the original state stays at stage 0");
            assert_eq!(cta[3], n % 3 + 10 * ((n / 3) % 2), "n = {n}: the copy's stage and parity flip");
        }
    }
}

/// CTA rank 0 registers `BYTES` on its `full` barrier; CTA rank 1 completes 16 of them on it
/// remotely (`mapa` + `mbarrier.complete_tx.shared::cluster`), and rank 0 waits for the phase.
#[phaser::kernel(target = "sm_90a")]
fn remote_complete_tx(out: &mut [u32], #[comptime] BYTES: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 1, 1);
    let full = T.alloc_barriers(1);
    let tid = T.thread_idx();
    let rank = T.cluster_cta_rank();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cluster_sync();
    if tid == 0 && rank == 0 {
        T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), BYTES);
    }
    if tid == 0 && rank == 1 {
        let peer = T.ptx.mapa(full.ptr_to([0]), 0);
        T.ptx.mbarrier.complete_tx_remote(peer, 16);
    }
    if rank == 0 {
        T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
        out[tid] = tid + 1;
    }
    T.cuda.cluster_sync();
}

#[test]
fn complete_tx_on_a_remote_ctas_barrier_completes_its_phase() {
    use phaser::runtime::sim::{Category, SimConfig, Strategy};
    let ptx = remote_complete_tx::ptx_for(16).unwrap();
    assert!(ptx_text::has(&ptx, "mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%r*], 16"), "{ptx}");
    if let Err(msg) = phaser::codegen::ptxas::assemble(&phaser::codegen::ptxas::require(), &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for strategy in [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial] {
        let dev = phaser::Device::sim(SimConfig::default().with_strategy(strategy).with_seed(3));
        let out = dev.upload(&[0u32; 32]).unwrap();
        let k = remote_complete_tx::kernel_for(16).unwrap();
        let rep = dev.simulate(&k, phaser::LaunchConfig::linear(2, 32), &[phaser::Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{strategy:?}:\n{}", rep.text());
        assert_eq!(dev.download(&out).unwrap(), (1..=32).collect::<Vec<u32>>());
        // 32 bytes registered, 16 completed: rank 0 waits forever, and the count is named.
        let k = remote_complete_tx::kernel_for(32).unwrap();
        let rep = dev.simulate(&k, phaser::LaunchConfig::linear(2, 32), &[phaser::Arg::buffer(&out)]).unwrap();
        assert!(rep.has(Category::Deadlock) && rep.has(Category::TxImbalance), "{strategy:?}:\n{}", rep.text());
    }
}

/// The float math ops, as `T.*` calls and as Rust's methods, and bitcasts.
#[phaser::kernel(target = "sm_90a")]
fn float_math(x: &[f32], y: &[f64], fout: &mut [f32], dout: &mut [f64], bits: &mut [u32]) {
    let i = T.thread_idx();
    let a = x[i];
    let d = y[i];
    let n = 16 * i;
    fout[n] = a.exp2();
    fout[n + 1] = T.ex2(a);
    fout[n + 2] = a.log2() + T.lg2(a);
    fout[n + 3] = a.recip() + T.rcp_approx(a);
    fout[n + 4] = T.rsqrt(a) + T.sqrt_approx(a);
    fout[n + 5] = a.sqrt();
    fout[n + 6] = a.mul_add(2.0, 0.5);
    fout[n + 7] = a.max(1.0) + a.min(-1.0);
    fout[n + 8] = a.maximum(0.0) + T.min_nan(a, 3.0);
    fout[n + 9] = a.abs() + (-a).copysign(a);
    fout[n + 10] = f32::from_bits(a.to_bits() ^ 0x8000_0000);
    fout[n + 11] = T.cvt::<f32>(d, "rz") + T.cvt::<f32>(d, "rm") + T.cvt::<f32>(d, "rp");
    fout[n + 12] = T.rcp(a) + T.sqrt(a) + T.max_nan(a, 1.0) + T.copysign(a, -1.0) + T.abs(a);
    fout[n + 13] = T.bitcast::<f32>(T.to_bits(a) & 0x7fff_ffff);
    bits[n] = a.to_bits();
    bits[n + 1] = T.cvt::<i32>(a, "rn") as u32;
    bits[n + 2] = T.cvt::<u32>(a, "rp");
    bits[n + 3] = T.ex2.f16x2(T.pack.f16x2(a, -a));
    bits[n + 4] = T.ex2.bf16x2(T.pack.bf16x2(a, a * 0.5));
    dout[i] = d.recip() + d.sqrt() + d.mul_add(d, 1.0) + d.copysign(-1.0) + T.fma(d, 2.0, d);
}

#[test]
fn float_math_builds_assembles_and_runs_as_the_evaluator_says() {
    use phaser::codegen::eval;
    use phaser::codegen::ir::MathFn;
    let ptx = float_math::ptx().unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for inst in [
        "ex2.approx.ftz.f32",
        "lg2.approx.ftz.f32",
        "rcp.rn.f32",
        "rcp.approx.ftz.f32",
        "rsqrt.approx.ftz.f32",
        "sqrt.approx.ftz.f32",
        "sqrt.rn.f32",
        "fma.rn.f32",
        "max.f32",
        "min.f32",
        "max.NaN.f32",
        "min.NaN.f32",
        "abs.f32",
        "copysign.f32",
        "mov.b32",
        "cvt.rz.f32.f64",
        "cvt.rm.f32.f64",
        "cvt.rp.f32.f64",
        "cvt.rni.s32.f32",
        "cvt.rpi.u32.f32",
        "rcp.rn.f64",
        "sqrt.rn.f64",
        "fma.rn.f64",
        "copysign.f64",
        "ex2.approx.f16x2",
        "ex2.approx.ftz.bf16x2",
    ] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing:\n{ptx}");
    }
    let k = float_math::kernel().unwrap();
    let dev = phaser::Device::sim(phaser::runtime::sim::SimConfig::default());
    let xs: Vec<f32> = (0..32).map(|i| (i as f32 - 10.5) * 0.75).collect();
    let ys: Vec<f64> = (0..32).map(|i| (i as f64 + 0.1) / 3.0).collect();
    let (xb, yb) = (dev.upload(&xs).unwrap(), dev.upload(&ys).unwrap());
    let fo = dev.upload(&vec![0f32; 32 * 16]).unwrap();
    let dob = dev.upload(&vec![0f64; 32]).unwrap();
    let bo = dev.upload(&vec![0u32; 32 * 16]).unwrap();
    use phaser::Arg;
    let args = [Arg::buffer(&xb), Arg::buffer(&yb), Arg::buffer(&fo), Arg::buffer(&dob), Arg::buffer(&bo)];
    let rep = dev.simulate(&k, phaser::LaunchConfig::linear(1, 32), &args).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    let (f, b) = (dev.download(&fo).unwrap(), dev.download(&bo).unwrap());
    let model = |fun: MathFn, x: f32| f32::from_bits(eval::math_fn(fun, eval_f32()).unwrap()(x.to_bits() as u64) as u32);
    use phaser::codegen::ir::Type;
    fn eval_f32() -> Type {
        Type::F32
    }
    for (i, &a) in xs.iter().enumerate() {
        let n = 16 * i;
        let same = |got: f32, want: f32, what: &str| {
            assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{what}({a}): {got} != {want}");
        };
        same(f[n], model(MathFn::Ex2Approx, a), "exp2");
        same(f[n + 1], f[n], "T.ex2");
        same(f[n + 5], a.sqrt(), "sqrt");
        same(f[n + 6], a.mul_add(2.0, 0.5), "mul_add");
        same(f[n + 7], a.max(1.0) + a.min(-1.0), "max + min");
        same(f[n + 9], a.abs() + (-a).copysign(a), "abs + copysign");
        same(f[n + 10], -a, "from_bits(to_bits ^ sign)");
        same(f[n + 13], a.abs(), "bitcast(to_bits & !sign)");
        assert_eq!(b[n], a.to_bits(), "to_bits({a})");
        assert_eq!(b[n + 1], a.round_ties_even() as i32 as u32, "cvt.rni({a})");
        assert_eq!(b[n + 2], a.ceil() as u32, "cvt.rpi.u32({a})");
        // The packed forms: each half is the model's (differential), and within the PTX
        // ISA's bound of the exact 2^x of the half input.
        for (half, pair, got) in [(Type::F16, (a, -a), b[n + 3]), (Type::BF16, (a, a * 0.5), b[n + 4])] {
            let to_half = |v: f32| eval::cvt(v.to_bits() as u64, Type::F32, half);
            let packed = to_half(pair.0) | to_half(pair.1) << 16;
            let want = eval::math_half2_fn(MathFn::Ex2Approx, half).unwrap()(packed) as u32;
            assert_eq!(got, want, "ex2 {half}x2 of ({}, {}): {got:#010x} != {want:#010x}", pair.0, pair.1);
            let bound = eval::half_approx_bound(MathFn::Ex2Approx, half).unwrap();
            for lane in 0..2 {
                let (x, g) = ((packed >> (16 * lane)) as u16, (got >> (16 * lane)) as u16);
                assert!(bound.admits(x, g), "ex2 {half} lane {lane} of {a}: {g:#06x}");
            }
        }
    }
}

/// `T.pack.e4m3x2(lo, hi)` and `T.pack.e5m2x2(lo, hi)`: two f32s to a packed FP8 pair (a
/// `u16`, `lo` in the low byte: the lower address of an FP8 buffer once stored).
#[phaser::kernel(target = "sm_90a")]
fn fp8_pairs(x: &[f32], e4: &mut [u16], e5: &mut [u16]) {
    let i = T.thread_idx();
    e4[i] = T.pack.e4m3x2(x[2 * i], x[2 * i + 1]);
    e5[i] = T.pack.e5m2x2(x[2 * i], x[2 * i + 1]);
}

/// The simulator's packed FP8 pairs of `xs` (two per thread) against the host's `float8`
/// conversion, byte by byte.
fn fp8_pairs_match_float8(xs: &[f32]) -> Result<(), String> {
    let threads = xs.len() / 2;
    let k = fp8_pairs::kernel().unwrap();
    let dev = phaser::Device::sim(phaser::runtime::sim::SimConfig::default());
    let x = dev.upload(xs).unwrap();
    let (e4, e5) = (dev.upload(&vec![0u16; threads]).unwrap(), dev.upload(&vec![0u16; threads]).unwrap());
    let args = [phaser::Arg::buffer(&x), phaser::Arg::buffer(&e4), phaser::Arg::buffer(&e5)];
    let rep = dev.simulate(&k, phaser::LaunchConfig::linear(1, threads as u32), &args).unwrap();
    if !rep.findings.is_empty() {
        return Err(rep.text());
    }
    let (e4, e5) = (dev.download(&e4).unwrap(), dev.download(&e5).unwrap());
    for i in 0..threads {
        let (lo, hi) = (xs[2 * i], xs[2 * i + 1]);
        // float8's byte, but a NaN is 0x7F (the H200's canonical NaN, whatever its sign).
        let e4m3 = |x: f32| if x.is_nan() { 0x7F } else { phaser::F8E4M3::from_f32(x).to_bits() as u16 };
        let e5m2 = |x: f32| if x.is_nan() { 0x7F } else { phaser::F8E5M2::from_f32(x).to_bits() as u16 };
        let want4 = e4m3(lo) | e4m3(hi) << 8;
        let want5 = e5m2(lo) | e5m2(hi) << 8;
        let (lb, hb) = (lo.to_bits(), hi.to_bits());
        if e4[i] != want4 {
            return Err(format!("e4m3x2 of ({lo}, {hi}) = ({lb:#010x}, {hb:#010x}): {:#06x}, float8 {want4:#06x}", e4[i]));
        }
        if e5[i] != want5 {
            return Err(format!("e5m2x2 of ({lo}, {hi}) = ({lb:#010x}, {hb:#010x}): {:#06x}, float8 {want5:#06x}", e5[i]));
        }
    }
    Ok(())
}

#[test]
fn fp8_pairs_assemble_and_convert_as_float8_in_the_simulator_at_the_edges() {
    let ptx = fp8_pairs::ptx().unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for inst in ["cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32"] {
        assert!(ptx_text::has(&ptx, inst), "{inst} missing:\n{ptx}");
    }
    // Ties (e4m3: 1.0625 between 1 and 1.125; 0.5 * 2^-9 between 0 and the smallest
    // subnormal), the saturation points (464 and 61440 tie to the largest finite values,
    // above them saturate), infinities, NaNs of both signs, zeros, f32 subnormals.
    let edges = [
        1.0625f32, 1.1875, -1.0625, 2f32.powi(-10), 3.0 * 2f32.powi(-10), 448.0, 464.0, 465.0, 57344.0, 61440.0,
        61441.0, 1e30, f32::MAX, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN,
        f32::from_bits(0x7FA0_0000), 0.0, -0.0, f32::MIN_POSITIVE / 4.0, -1e-40, 0.3, -2.75e-3, 1000.0, -7e4,
    ];
    fp8_pairs_match_float8(&edges).unwrap();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
    /// Any f32 bit patterns: the simulator's `T.pack.{e4m3x2,e5m2x2}` is `float8`'s.
    #[test]
    fn fp8_pairs_of_any_f32_bits_convert_as_float8_in_the_simulator(
        bits in proptest::collection::vec(proptest::prelude::any::<u32>(), 128)
    ) {
        let xs: Vec<f32> = bits.into_iter().map(f32::from_bits).collect();
        fp8_pairs_match_float8(&xs).map_err(proptest::test_runner::TestCaseError::fail)?;
    }
}
