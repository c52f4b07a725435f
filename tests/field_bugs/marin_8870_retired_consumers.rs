//! marin-community/marin#8870, "[grug] Ragged EP train step hangs silently on one rack":
//! <https://github.com/marin-community/marin/issues/8870> (a stall decoded inside QuACK's SM100
//! grouped GEMM).
//!
//! The protocol bug: the warps of a persistent warp-specialized GEMM each decode the tile
//! scheduler's grants. The MMA and epilogue warps decoded grant 4 as "no more work" and
//! retired; the TMA load warp decoded the same grant as a valid tile and kept loading, until it
//! waited on an A/B `empty` barrier that the retired MMA warp will never release.
//!
//! The port: a two-stage ring (`T.pipeline`), a load warp and an MMA warp, grants read from
//! global memory; each role decodes a grant with its own rule. The fix: one decode
//! (`is_work`), shared by every role.

use crate::common::{barrier_of, clean, dev, STRATEGIES};
use phaser::runtime::sim::{Category, SimReport, Strategy};
use phaser::{Arg, LaunchConfig};

const SRC: crate::common::Source = crate::this_file!("marin_8870_retired_consumers.rs");
const GRANTS: u32 = 6;
const K_BLOCKS: u32 = 3;
/// The scheduler's "no more work" grant.
const DONE: u32 = 0xFFFF_FFFF;

/// Whether a grant is a tile: the one decode every role must share.
#[phaser::device]
fn is_work(grant: u32, tiles: u32) -> bool {
    grant < tiles
}

/// `SAME_DECODE = 0` is the bug: the load warp decodes "not DONE" as work.
#[phaser::kernel(target = "sm_90a")]
fn grant_decode(grants: &[u32], out: &mut [u32], tiles: u32, #[comptime] SAME_DECODE: u32) {
    T.require_block(64, 1, 1);
    let pipe = T.pipeline.new(2, 1);
    let ring = T.alloc_shared::<u32>([64]);
    T.pipeline.init(pipe);
    let warp = T.warp_idx();
    let lane = T.lane_idx();
    if warp == 0 {
        // The TMA load warp.
        let st = T.pipeline.producer_state(pipe);
        for g in 0..GRANTS {
            let grant = grants[g];
            let work = if SAME_DECODE == 1 { is_work(grant, tiles) } else { grant != DONE };
            if !work {
                break;
            }
            for kb in 0..K_BLOCKS {
                T.pipeline.producer_acquire(pipe, st); // LOAD-ACQUIRE
                ring[T.pipeline.stage(st) * 32 + lane] = grant * 10 + kb;
                T.cuda.warp_sync();
                if lane == 0 {
                    T.pipeline.producer_arrive(pipe, st);
                }
                T.pipeline.advance(st);
            }
        }
        T.pipeline.producer_tail(pipe, st);
    } else {
        // The MMA warp (the epilogue warps decode as it does).
        let st = T.pipeline.consumer_state(pipe);
        for g in 0..GRANTS {
            let grant = grants[g];
            if !is_work(grant, tiles) {
                break;
            }
            let mut acc = 0;
            for _kb in 0..K_BLOCKS {
                T.pipeline.consumer_wait(pipe, st);
                acc += ring[T.pipeline.stage(st) * 32 + lane];
                T.pipeline.consumer_release(pipe, st);
                T.pipeline.advance(st);
            }
            out[grant * 32 + lane] = acc;
        }
    }
}

const TILES: u32 = 4;

fn run(same: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = dev(s, seed);
    // Grant 4 holds a value the MMA warp's decode calls "no more work" and the load warp's
    // does not (QuACK's decoded "valid batch-1" grant).
    let grants = d.upload(&[0u32, 1, 2, 3, TILES, DONE]).unwrap();
    let out = d.alloc::<u32>((TILES * 32) as usize).unwrap();
    let k = grant_decode::kernel_for(same).unwrap();
    let rep = d
        .simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&grants), Arg::buffer(&out), Arg::scalar(TILES)])
        .unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn the_load_warp_waits_on_empty_after_the_mma_warp_retired() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run(0, s, i as u64);
        let f = SRC.finding_at(&rep, Category::MissingArrival, "LOAD-ACQUIRE");
        assert_eq!(barrier_of(f), "`pipe_empty[0]`", "{}", rep.text());
        assert!(f.message.contains("can never get them (every thread is blocked or has exited)"), "{}", f.message);
        // Grant 4 (the one the roles decode differently), its third K block: the ring's two
        // stages were free, the third fill needs a release.
        assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [4, 2], "{f}");
    }
}

#[test]
fn one_decode_for_every_role_retires_them_together() {
    let want: Vec<u32> =
        (0..TILES).flat_map(|g| (0..32).map(move |_| (0..K_BLOCKS).map(|kb| g * 10 + kb).sum())).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, want, "{s:?}");
    }
}
