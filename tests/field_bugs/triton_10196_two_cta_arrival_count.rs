//! triton-lang/triton#10196, "[MULTICTA] Fix multicast pattern for tcgen05_mma_scaled":
//! <https://github.com/triton-lang/triton/pull/10196>
//!
//! The protocol bug: the helper that computes how many arrivals an MMA's completion barrier
//! gets (`tcgen05_mma_barrier_count(smems, multicast)`) did not know the MMA runs in 2-CTA mode
//! (`two_ctas`). In a CTA pair only the leader issues the `tcgen05.mma ... cta_group::2` and
//! its one `tcgen05.commit ... multicast::cluster` arrives once on each CTA's barrier; a count
//! computed as if each CTA committed its own MMA waits for an arrival that never comes, and the
//! producers that wait for their stage to be free hang.
//!
//! The port: a CTA pair, one stage; each CTA's producer warp fills its half and arrives on the
//! leader's `full`; the leader's MMA thread consumes both halves (DSMEM reads stand in for the
//! MMA's operand reads) and commits to `empty` of both CTAs. `empty`'s count is the bug.
//! sm_100a: the simulator runs it; ptxas checks it with `-arch=sm_100a` (no GPU here).

use crate::common::{barrier_of, clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("triton_10196_two_cta_arrival_count.rs");
const ITERS: u32 = 3;

/// `EMPTY_COUNT` arrivals per phase of `empty`: 1 is right (one multicast commit of the pair's
/// leader), 2 is the count without `two_ctas`.
#[phaser::kernel(target = "sm_100a")]
fn pair_commit(out: &mut [u32], #[comptime] EMPTY_COUNT: u32) {
    T.require_block(64, 1, 1);
    T.cluster_dims(2, 1, 1);
    let full = T.alloc_barriers(1);
    let empty = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    let lane = T.lane_idx();
    let rank = T.cluster_cta_rank();
    if tid == 0 {
        // The leader's `full` takes one arrival from each CTA's producer.
        T.ptx.mbarrier.init(full.ptr_to([0]), 2);
        T.ptx.mbarrier.init(empty.ptr_to([0]), EMPTY_COUNT); // EMPTY-INIT
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cluster_sync();
    if tid < 32 {
        // Each CTA's producer warp: its half of the stage, then an arrival on the leader's `full`.
        let mut phase = 1;
        for i in 0..ITERS {
            T.ptx.mbarrier.try_wait(empty.ptr_to([0]), phase); // PRODUCER-WAIT
            phase ^= 1;
            stage[lane] = i * 1000 + rank * 100 + lane;
            T.cuda.warp_sync();
            if lane == 0 {
                if rank == 0 {
                    T.ptx.mbarrier.arrive_sem(full.ptr_to([0]), "release", "cluster");
                } else {
                    T.ptx.mbarrier.arrive_remote(full.ptr_to([0]), 0);
                }
            }
        }
    } else {
        if rank == 0 && tid == 32 {
            // The pair's MMA thread: both halves of the stage, one commit for the pair that
            // arrives on `empty` in both CTAs.
            let peer = T.ptx.mapa_shared(stage, 1);
            for i in 0..ITERS {
                T.ptx.mbarrier.try_wait_sem(full.ptr_to([0]), i % 2, "acquire", "cluster");
                let mut sum = 0;
                for j in 0..32 {
                    sum += stage[j] + peer[j];
                }
                out[i] = sum;
                T.ptx.tcgen05.commit_multicast(empty.ptr_to([0]), 3, "cta_group::2");
            }
        }
    }
    T.cuda.cluster_sync();
}

fn run(count: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let out = d.alloc::<u32>(ITERS as usize).unwrap();
    let k = pair_commit::kernel_for(count).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(2, 64), &[Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn a_one_cta_arrival_count_on_a_pair_commit_hangs_the_producers() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(2, s, i as u64);
        let f = SRC.finding_at(&rep, Category::MissingArrival, "PRODUCER-WAIT");
        assert_eq!(barrier_of(f), "`empty[0]`", "{}", rep.text());
        // The second fill's wait: phase 0 got the pair's one commit and waits for a second.
        assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [1], "{f}");
        assert!(f.message.contains("lacks 1 of its 2 arrivals"), "{}", f.message);
        // Both CTAs' producers hang, each on its own `empty`.
        let ctas: Vec<[u32; 3]> = rep
            .findings
            .iter()
            .filter(|g| g.category == Category::MissingArrival && g.loc == f.loc)
            .map(|g| g.cta)
            .collect();
        assert_eq!(ctas, [[0, 0, 0], [1, 0, 0]], "{}", rep.text());
    }
}

#[test]
fn the_two_cta_count_frees_the_stage_once_per_pair_commit() {
    let want: Vec<u32> = (0..ITERS).map(|i| (0..32).map(|l| 2 * (i * 1000 + l) + 100).sum()).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}

#[test]
fn both_kernels_assemble_for_sm_100a_with_the_pair_commit() {
    use phaser::codegen::{ptx_text::has, ptxas};
    for count in [1, 2] {
        let ptx = pair_commit::ptx_for(count).unwrap();
        assert!(has(&ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.*multicast::cluster.*"), "{ptx}");
        ptxas::assemble(&ptxas::require(), &ptx, "sm_100a").unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    }
}
