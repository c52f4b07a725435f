//! tile-ai/tilelang#3087, "Fix wait parity for explicit mbarriers in pipelined loops":
//! <https://github.com/tile-ai/tilelang/pull/3087>
//!
//! The protocol bug: a synchronous `T.gemm(mbar=...)` inside `T.Pipelined` waited on its
//! explicit mbarrier with the ring's parity, `(k / num_stages) % 2`. That barrier is one slot
//! whose phase completes once per iteration, so its parity is `k % 2`: from the second
//! iteration on, the wait asks for a phase that already completed, returns at once, and the
//! next copies overwrite a stage the still-running MMA reads (silent wrong results at
//! `num_stages >= 3`).
//!
//! The port: warp 1 stands in for the tensor core (it reads the stage it is handed and arrives
//! on `mma_done` when done), warp 0 is the issuing thread (it fills stage `k % STAGES`, hands
//! it over on `issued[stage]`, waits on `mma_done`).

use crate::common::{barrier_of, clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("tilelang_3087_explicit_parity.rs");
const STAGES: u32 = 3;
const ITERS: u32 = 6;

/// `RING_PARITY = 1` is the bug: the explicit barrier waited on with the ring's parity.
#[phaser::kernel(target = "sm_90a")]
fn explicit_mbarrier_in_pipeline(out: &mut [u32], #[comptime] RING_PARITY: u32) {
    T.require_block(64, 1, 1);
    let issued = T.alloc_barriers(STAGES);
    let mma_done = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([STAGES * 32]);
    let tid = T.thread_idx();
    let lane = T.lane_idx();
    if tid == 0 {
        for s in 0..STAGES {
            T.ptx.mbarrier.init(issued.ptr_to([s]), 32);
        }
        T.ptx.mbarrier.init(mma_done.ptr_to([0]), 32);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid < 32 {
        // The issuing warp: the copy into the stage, the MMA's issue, the MMA's wait.
        for k in 0..ITERS {
            let s = k % STAGES;
            stage[s * 32 + lane] = k * 100 + lane; // COPY
            T.ptx.mbarrier.arrive(issued.ptr_to([s]));
            let parity = if RING_PARITY == 1 { k / STAGES % 2 } else { k % 2 };
            T.ptx.mbarrier.try_wait(mma_done.ptr_to([0]), parity); // MMA-WAIT
        }
    } else {
        // The tensor core: reads the stage it was handed, then arrives on `mma_done`.
        for k in 0..ITERS {
            let s = k % STAGES;
            T.ptx.mbarrier.try_wait(issued.ptr_to([s]), k / STAGES % 2);
            out[k * 32 + lane] = stage[s * 32 + lane] * 2;
            T.ptx.mbarrier.arrive(mma_done.ptr_to([0]));
        }
    }
}

fn run(ring_parity: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let out = d.alloc::<u32>((ITERS * 32) as usize).unwrap();
    let k = explicit_mbarrier_in_pipeline::kernel_for(ring_parity).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn the_ring_parity_on_a_one_slot_barrier_is_a_stale_parity_at_the_wait() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(1, s, i as u64);
        let f = SRC.finding_at(&rep, Category::StaleParity, "MMA-WAIT");
        assert_eq!(barrier_of(f), "`mma_done[0]`", "{}", rep.text());
        assert!(f.message.contains("waited on parity 0") && f.message.contains("already consumed"), "{}", f.message);
        // The second iteration: (1 / STAGES) % 2 = 0, a phase the first iteration consumed.
        assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [1], "{f}");
    }
}

#[test]
fn the_iteration_parity_waits_for_each_mma() {
    let want: Vec<u32> = (0..ITERS).flat_map(|k| (0..32).map(move |l| (k * 100 + l) * 2)).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(0, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}
