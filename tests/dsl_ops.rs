//! Every `T.*` op of the DSL's table in one kernel (sm_100a has them all): the expansion
//! templates compile, the IR builds, and ptxas accepts the PTX. `phaser-dsl`'s unit tests
//! check that this file names every op of the table.

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
    for needle in [
        "cp.async.bulk.tensor.2d.shared::cluster.global",
        "cp.async.bulk.tensor.2d.global.shared::cta",
        ".extern .shared .align 1024",
    ] {
        assert!(ptx.contains(needle), "{needle} missing:\n{ptx}");
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
    assert!(max_block_only::ptx().unwrap().contains(".maxntid 256, 1, 1"));
}

#[test]
fn every_op_builds_and_assembles() {
    let ptx = every_op::ptx_for(2).unwrap_or_else(|e| panic!("{e}"));
    let ptxas = phaser::codegen::ptxas::require();
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_100a") {
        panic!("ptxas:\n{msg}\n{ptx}");
    }
    for needle in [
        "tcgen05.commit",
        "setmaxnreg.inc",
        "cp.async.bulk.tensor.2d",
        "mapa",
        "elect.sync",
        "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.alloc.cta_group::1",
    ] {
        assert!(ptx.contains(needle), "{needle} missing");
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
    assert!(active_lanes::ptx().unwrap().contains("activemask.b32"));
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
