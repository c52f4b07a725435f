//! tile-ai/tilelang#2613, "Un-pipelined warp-specialized GEMM sharing one shared operand
//! between both warp groups silently races on Hopper — missing loop-back `__syncthreads()`":
//! <https://github.com/tile-ai/tilelang/issues/2613>
//!
//! The protocol bug: with `num_stages=0`, every thread copies the K tile of A into one
//! `A_shared`, a barrier orders the copy before the reads (tilelang inserts it), and both
//! warp groups read `A_shared` (`with T.ws(0)` / `with T.ws(1)`). Nothing orders the reads of
//! iteration k before iteration k+1's copy into the same buffer: a warp group's
//! `warpgroup_wait<0>` orders only its own reads. The loop-back barrier is missing.
//!
//! The port: one warp per role instead of a warp group (the protocol is the same), plain
//! shared loads instead of WGMMA's reads.

use crate::common::{clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("tilelang_2613_loop_back_barrier.rs");
const K_TILES: u32 = 2;

/// `LOOP_BACK = 0` is the bug: no barrier between the reads and the next copy.
#[phaser::kernel(target = "sm_90a")]
fn shared_operand_two_roles(a: &[u32], out: &mut [u32], #[comptime] LOOP_BACK: u32) {
    T.require_block(64, 1, 1);
    let a_shared = T.alloc_shared::<u32>([64]);
    let tid = T.thread_idx();
    let lane = T.lane_idx();
    let mut acc = 0;
    for kt in 0..K_TILES {
        a_shared[tid] = a[kt * 64 + tid]; // COPY
        T.cuda.cta_sync();
        // ws(0) reads the low half of every row pair, ws(1) the high half: each reads what the
        // other role's threads copied.
        if tid < 32 {
            acc += a_shared[63 - lane]; // READ
        } else {
            acc += a_shared[31 - lane] * 3;
        }
        if LOOP_BACK == 1 {
            T.cuda.cta_sync();
        }
    }
    out[tid] = acc;
}

fn run(loop_back: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let input: Vec<u32> = (0..64 * K_TILES).map(|i| i * 5 + 1).collect();
    let a = d.upload(&input).unwrap();
    let out = d.alloc::<u32>(64).unwrap();
    let k = shared_operand_two_roles::kernel_for(loop_back).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&a), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn the_next_copy_races_the_other_roles_reads() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(0, s, i as u64);
        let f = SRC.finding_at(&rep, Category::SharedRace, "COPY");
        assert!(f.message.contains("writes `a_shared["), "the buffer is named: {}", f.message);
        assert!(f.message.contains("conflicting with a read by thread"), "{}", f.message);
        // The copy of the second K tile, the one the missing loop-back barrier should order.
        assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [1], "{f}");
    }
}

#[test]
fn the_loop_back_barrier_orders_the_reads_before_the_next_copy() {
    let a = |kt: u32, i: u32| (kt * 64 + i) * 5 + 1;
    let want: Vec<u32> = (0..64)
        .map(|t: u32| (0..K_TILES).map(|kt| if t < 32 { a(kt, 63 - t) } else { a(kt, 31 - (t - 32)) * 3 }).sum())
        .collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}
