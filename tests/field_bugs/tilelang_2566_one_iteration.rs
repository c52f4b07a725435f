//! tile-ai/tilelang#2566, "Single-iteration warp-specialized pipelined loop deadlocks at
//! runtime on Hopper": <https://github.com/tile-ai/tilelang/issues/2566>
//!
//! The protocol bug: with one pipelined iteration, tilelang lowers the producer's copy as a
//! 1-D bulk copy and gives its `full` barrier (initialized with 1 arrival) a bare
//! `mbarrier.expect_tx` where the multi-iteration path emits `arrive.expect_tx`. The copy's
//! bytes complete the transaction count, but the one arrival the phase needs never comes, so
//! the consumer's wait on parity 0 blocks forever.

use crate::common::{barrier_of, clean, dev, STRATEGIES};
use phaser::runtime::sim::Category;
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("tilelang_2566_one_iteration.rs");
const TRIPS: u32 = 1;

/// Warp 0 produces (one elected thread registers the bytes and issues a bulk copy per
/// iteration), warp 1 consumes. `ARRIVE = 0` is the bug: `expect_tx` without the arrival.
#[phaser::kernel(target = "sm_90a")]
fn one_iteration_ws_loop(src: &[u32], out: &mut [u32], #[comptime] ARRIVE: u32) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(1);
    let tile = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    for k in 0..TRIPS {
        if tid < 32 {
            if tid == 0 {
                if ARRIVE == 1 {
                    T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 128);
                } else {
                    T.ptx.mbarrier.expect_tx(full.ptr_to([0]), 128); // EXPECT-WITHOUT-ARRIVE
                }
                T.ptx.cp_async.bulk.g2s(T.shared_addr(tile), T.global_elem_addr(src, k * 32), 128, full.ptr_to([0]));
            }
        } else {
            T.ptx.mbarrier.try_wait(full.ptr_to([0]), k % 2); // CONSUMER-WAIT
            out[k * 32 + tid - 32] = tile[tid - 32] + 1;
        }
    }
}

fn run(arrive: u32, s: phaser::runtime::sim::Strategy, seed: u64) -> (phaser::runtime::sim::SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let input: Vec<u32> = (0..32 * TRIPS).map(|i| i * 7 + 3).collect();
    let src = d.upload(&input).unwrap();
    let out = d.alloc::<u32>(32 * TRIPS as usize).unwrap();
    let k = one_iteration_ws_loop::kernel_for(arrive).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn expect_tx_without_the_arrival_hangs_the_consumer_and_names_the_missing_arrival() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(0, s, i as u64);
        let f = SRC.finding_at(&rep, Category::MissingArrival, "CONSUMER-WAIT");
        assert_eq!(barrier_of(f), "`full[0]`", "{}", rep.text());
        assert!(f.message.contains("no thread has ever arrived on it"), "{}", f.message);
        // The deadlock's history of the barrier points at the buggy line: bytes, no arrival.
        let d = SRC.finding_at(&rep, Category::Deadlock, "CONSUMER-WAIT");
        let expect = "thread 0 expect_tx +128 in phase 0 (tick ";
        let line = format!("at {}:{}:", SRC.file, SRC.line_of("EXPECT-WITHOUT-ARRIVE"));
        assert!(d.message.lines().any(|l| l.contains(expect) && l.contains(&line)), "{}", d.message);
    }
}

#[test]
fn arrive_expect_tx_completes_the_phase() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, (0..32 * TRIPS).map(|i| i * 7 + 4).collect::<Vec<u32>>());
    }
}
