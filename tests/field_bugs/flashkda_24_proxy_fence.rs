//! MoonshotAI/FlashKDA#24, "Missing proxy fences around TMA accesses (smem→TMA store,
//! mbarrier init)": <https://github.com/MoonshotAI/FlashKDA/issues/24>
//!
//! The protocol bug (its class 1): every thread zeroes or converts the state buffer in shared
//! memory with ordinary stores (the generic proxy), a `__syncthreads()` follows, and one thread
//! issues the TMA store that reads the buffer through the async proxy. A CTA barrier orders
//! execution but does not bridge the proxies: each writing thread must execute
//! `fence.proxy.async.shared::cta` after its last write, before the barrier. (With an empty
//! sequence the main loop, which carried the fence, never runs.)

use crate::common::{clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("flashkda_24_proxy_fence.rs");

/// `FENCE = 0` is the bug: the zeroed state goes to the TMA store without the proxy fence.
#[phaser::kernel(target = "sm_90a")]
fn state_store(out: &mut [u32], t_tiles: u32, #[comptime] FENCE: u32) {
    T.require_block(64, 1, 1);
    let state = T.alloc_shared::<u32>([64]);
    let tid = T.thread_idx();
    state[tid] = 0;
    for t in 0..t_tiles {
        state[tid] = state[tid] + t + tid;
        T.ptx.fence.proxy_async("shared::cta");
    }
    if FENCE == 1 {
        T.ptx.fence.proxy_async("shared::cta");
    }
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.cp_async.bulk.s2g(T.global_elem_addr(out, 0), T.shared_addr(state), 256); // TMA-STORE
        T.ptx.cp_async.bulk.commit_group();
        T.ptx.cp_async.bulk.wait_group(0);
    }
}

fn run(fence: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let out = d.upload(&[7u32; 64]).unwrap();
    let k = state_store::kernel_for(fence).unwrap();
    // An empty sequence: no tile, so the loop's fence never runs.
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out), Arg::scalar(0u32)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn generic_writes_read_by_a_tma_store_without_the_proxy_fence_are_reported() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(0, s, i as u64);
        let f = SRC.finding_at(&rep, Category::ProxyFence, "TMA-STORE");
        assert!(f.message.contains("`state["), "the buffer is named: {}", f.message);
    }
}

#[test]
fn the_fence_after_the_last_write_makes_the_zeroed_state_visible_to_the_store() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, vec![0u32; 64], "{s:?}");
    }
}
