//! vllm-project/vllm#26026, "[BugFix][DP/EP] Fix CUTLASS MLA hang under load":
//! <https://github.com/vllm-project/vllm/pull/26026>
//!
//! The protocol bug: in the persistent tile loop, a compute warp with no K tiles for a tile
//! (`k_tile_count == 0`) returns early through `NamedBarrier(compute + load threads,
//! kNamedBarrierEpilogue).arrive()` and loops around to the next tile, where it arrives again.
//! The load warp meets the same barrier with `arrive_and_wait()`. When the load warp is late
//! (under load), the compute warp's two arrivals fill one round of the barrier by themselves;
//! the load warp's `arrive_and_wait` opens the next round, which no one else will join. The fix
//! is `arrive_and_wait()` on the early path too.
//!
//! The port: one compute warp, one load warp, named barrier 1 over their 64 threads, two
//! tiles with no K tiles; the load warp does its loads (a long computation) first.

use crate::common::{clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("vllm_26026_arrive_not_wait.rs");
const TILES: u32 = 2;

/// `WAIT = 0` is the bug: the compute warp's early path only arrives.
#[phaser::kernel(target = "sm_90a")]
fn epilogue_barrier(k_tiles: &[u32], out: &mut [u32], #[comptime] WAIT: u32) {
    T.require_block(64, 1, 1);
    let tid = T.thread_idx();
    let lane = T.lane_idx();
    for t in 0..TILES {
        if tid < 32 {
            // The compute warp.
            if k_tiles[t] == 0 {
                if WAIT == 1 {
                    T.ptx.bar.sync(1, 64);
                } else {
                    T.ptx.bar.arrive(1, 64); // EARLY-ARRIVE
                }
                continue;
            }
            out[t * 64 + lane] = k_tiles[t];
            T.ptx.bar.sync(1, 64);
        } else {
            // The load warp: its loads for the tile take a while, then the epilogue barrier.
            let mut h = lane + t;
            for i in 0..100 {
                h = h * 31 + i;
            }
            out[t * 64 + tid] = h;
            T.ptx.bar.sync(1, 64); // LOAD-SYNC
        }
    }
}

fn run(wait: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    let k_tiles = d.upload(&[0u32; TILES as usize]).unwrap();
    let out = d.upload(&vec![0u32; (TILES * 64) as usize]).unwrap();
    let k = epilogue_barrier::kernel_for(wait).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&k_tiles), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn an_arrive_on_the_early_path_leaves_the_load_warp_alone_in_the_next_round() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(0, s, i as u64);
        let f = SRC.finding_at(&rep, Category::Deadlock, "LOAD-SYNC");
        assert!(f.message.contains("waits at `bar.sync 1`: 32 of 64 threads arrived"), "{}", f.message);
        // The cause, at the buggy line: the compute warp's two arrivals filled round 0.
        let early = format!("(the second time at {}:{}:", SRC.file, SRC.line_of("EARLY-ARRIVE"));
        assert!(f.message.contains("thread 0 arrived twice in round 0 of `bar 1`"), "{}", f.message);
        assert!(f.message.contains(&early), "{}", f.message);
    }
}

#[test]
fn arrive_and_wait_on_the_early_path_keeps_the_rounds_paired() {
    // The load warp's values for both tiles; the compute warp wrote nothing (no K tiles).
    let load = |t: u32, lane: u32| (0..100).fold(lane + t, |h: u32, i| h.wrapping_mul(31).wrapping_add(i));
    let want: Vec<u32> =
        (0..TILES).flat_map(|t| (0..64).map(move |x| if x < 32 { 0 } else { load(t, x - 32) })).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}
