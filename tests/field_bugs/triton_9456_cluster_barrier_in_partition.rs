//! triton-lang/triton#9456, "[BACKEND] Make cluster barriers be executed by all the threads":
//! <https://github.com/triton-lang/triton/pull/9456>
//!
//! The protocol bug: `barrier.cluster` has no thread mask (unlike `bar.sync`): every thread of
//! every CTA of the cluster must arrive. Emitted inside one warp-specialized partition (a
//! cross-CTA reduction of the consumer partition), it waits for the other partition's threads,
//! which are themselves waiting for the consumer (here on an `empty` barrier the consumer
//! releases only after the cluster barrier): a deadlock. The fix runs the cluster barrier in
//! code every thread executes.
//!
//! The port: 2 CTAs per cluster, warp 0 produces into a one-stage ring, warp 1 consumes and
//! exchanges a partial sum with the peer CTA through DSMEM around a cluster barrier.

use crate::common::{barrier_of, clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("triton_9456_cluster_barrier_in_partition.rs");
const ITERS: u32 = 2;

/// `IN_PARTITION = 1` is the bug: the consumer partition runs the cluster barrier alone.
#[phaser::kernel(target = "sm_90a")]
fn cluster_barrier_partition(out: &mut [u32], #[comptime] IN_PARTITION: u32) {
    T.require_block(64, 1, 1);
    T.cluster_dims(2, 1, 1);
    let pipe = T.pipeline.new(1, 1);
    let ring = T.alloc_shared::<u32>([32]);
    let partial = T.alloc_shared::<u32>([32]);
    T.pipeline.init(pipe);
    T.cuda.cluster_sync();
    let warp = T.warp_idx();
    let lane = T.lane_idx();
    let rank = T.cluster_cta_rank();
    let peer = T.ptx.mapa_shared(partial, 1 - rank);
    let mut acc = 0;
    if warp == 0 {
        let st = T.pipeline.producer_state(pipe);
        for i in 0..ITERS {
            T.pipeline.producer_acquire(pipe, st); // PRODUCER-ACQUIRE
            ring[lane] = i * 10 + rank * 100 + lane;
            T.cuda.warp_sync();
            if lane == 0 {
                T.pipeline.producer_arrive(pipe, st);
            }
            T.pipeline.advance(st);
        }
        T.pipeline.producer_tail(pipe, st);
    } else {
        let st = T.pipeline.consumer_state(pipe);
        for _i in 0..ITERS {
            T.pipeline.consumer_wait(pipe, st);
            acc += ring[lane];
            if IN_PARTITION == 1 {
                // A cross-CTA step of the consumer partition: wait until the peer can take it.
                T.cuda.cluster_sync(); // PARTITION-CLUSTER-SYNC
            }
            T.pipeline.consumer_release(pipe, st);
            T.pipeline.advance(st);
        }
        peer[lane] = acc;
    }
    // Every thread of both CTAs: the DSMEM stores are visible after this, and no CTA exits
    // while its peer still writes into it.
    T.cuda.cluster_sync();
    if warp == 1 {
        out[rank * 32 + lane] = acc + partial[lane];
    }
    T.cuda.cluster_sync();
}

fn run(in_partition: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let out = d.alloc::<u32>(64).unwrap();
    let k = cluster_barrier_partition::kernel_for(in_partition).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(2, 64), &[Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn a_cluster_barrier_in_one_partition_waits_for_the_other_partition_forever() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(1, s, i as u64);
        let f = SRC.finding_at(&rep, Category::Deadlock, "PARTITION-CLUSTER-SYNC");
        // Only the consumer warps of the two CTAs arrived; the producers wait for their release.
        assert!(f.message.contains("blocked at `barrier.cluster.wait`: 64 of 128 threads arrived"), "{}", f.message);
        let p = SRC.finding_at(&rep, Category::Deadlock, "PRODUCER-ACQUIRE");
        assert_eq!(barrier_of(p), "`pipe_empty[0]`", "{p}");
    }
}

#[test]
fn the_cluster_barrier_outside_the_partitions_completes() {
    let sum = |rank: u32, lane: u32| (0..ITERS).map(|i| i * 10 + rank * 100 + lane).sum::<u32>();
    let want: Vec<u32> = (0..2).flat_map(|r| (0..32).map(move |l| sum(r, l) + sum(1 - r, l))).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(0, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}
