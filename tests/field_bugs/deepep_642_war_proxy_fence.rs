//! deepseek-ai/DeepEP#642, "Add fence.proxy.async.shared::cta between mbarrier wait and TMA
//! load": <https://github.com/deepseek-ai/DeepEP/pull/642> (the race of DeepEP#621).
//!
//! The protocol bug: in the low-latency combine's receive loop, the consumer warps read a
//! stage with ordinary loads (the generic proxy), an elected lane arrives on the stage's
//! `empty` barrier, and the TMA warp, after waiting on `empty`, refills the stage with a TMA
//! load (the async proxy). The mbarrier orders the threads, not the proxies: without
//! `fence.proxy.async.shared::cta` after the reads, the refill may land before the loads read
//! (seen on NVL72 as wrong combine results). The fix puts the fence before the arrive.
//!
//! Caught only with `SimConfig::proxy_war_check` (off by default): the default check orders
//! the proxies only for generic writes read by the async proxy (FlashKDA#24's direction); this
//! is generic reads followed by an async write of the same bytes, which pipelines commonly
//! leave unfenced (CUTLASS does), so reporting it by default is the maintainers' call
//! (README.md).

use crate::common::{clean, STRATEGIES};
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::Device;
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("deepep_642_war_proxy_fence.rs");
const ITERS: u32 = 4;
const STAGES: u32 = 2;

/// `FENCE = 0` is the bug: the consumers release the stage with no proxy fence after reading.
#[phaser::kernel(target = "sm_90a")]
fn combine_recv(src: &[u32], out: &mut [u32], #[comptime] FENCE: u32) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(STAGES);
    let empty = T.alloc_barriers(STAGES);
    let ring = T.alloc_shared::<u32>([STAGES * 32]);
    let tid = T.thread_idx();
    let lane = T.lane_idx();
    if tid == 0 {
        for s in 0..STAGES {
            T.ptx.mbarrier.init(full.ptr_to([s]), 1);
            T.ptx.mbarrier.init(empty.ptr_to([s]), 1);
        }
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid < 32 {
        // The TMA warp.
        if tid == 0 {
            for i in 0..ITERS {
                let s = i % STAGES;
                T.ptx.mbarrier.try_wait(empty.ptr_to([s]), i / STAGES % 2 ^ 1);
                T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([s]), 128);
                let dst = T.shared_elem_addr(ring, s * 32);
                // TMA-REFILL
                T.ptx.cp_async.bulk.g2s(dst, T.global_elem_addr(src, i * 32), 128, full.ptr_to([s]));
            }
        }
    } else {
        // The decode warp: ordinary loads of the stage, then the release.
        let mut acc = 0;
        for i in 0..ITERS {
            let s = i % STAGES;
            T.ptx.mbarrier.try_wait(full.ptr_to([s]), i / STAGES % 2);
            acc += ring[s * 32 + lane] * (i + 1);
            if FENCE == 1 {
                T.ptx.fence.proxy_async("shared::cta");
            }
            T.cuda.warp_sync();
            if lane == 0 {
                T.ptx.mbarrier.arrive(empty.ptr_to([s]));
            }
        }
        out[lane] = acc;
    }
}

fn run(fence: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed).with_proxy_war_check(true));
    let input: Vec<u32> = (0..ITERS * 32).map(|i| i * 3 + 1).collect();
    let src = d.upload(&input).unwrap();
    let out = d.alloc::<u32>(32).unwrap();
    let k = combine_recv::kernel_for(fence).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn a_refill_of_bytes_read_without_a_proxy_fence_is_reported_at_the_copy() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(0, s, i as u64);
        let f = SRC.finding_at(&rep, Category::ProxyFence, "TMA-REFILL");
        assert!(f.message.contains("writes `ring["), "the stage is named: {}", f.message);
        assert!(
            f.message.contains("read with ordinary loads") && f.message.contains("Fix: `fence.proxy.async"),
            "{}",
            f.message
        );
        // The first refill of a stage that was read: iteration STAGES.
        assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [STAGES as u64], "{f}");
    }
}

#[test]
fn the_fence_before_the_release_keeps_the_refill_after_the_reads() {
    let want: Vec<u32> = (0..32).map(|l| (0..ITERS).map(|i| ((i * 32 + l) * 3 + 1) * (i + 1)).sum()).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}
