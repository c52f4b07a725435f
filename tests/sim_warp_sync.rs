//! `bar.warp.sync` in the simulator: lanes of the mask converge (also from different
//! instructions after divergence), the barrier orders their shared-memory accesses, and PTX's
//! undefined cases (an exited lane in the mask, the executing lane outside it) and warps that
//! can never converge are reported.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig, Target};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

/// Simulate `k` with `threads` threads and an output of `n` u32s (poisoned); returns the
/// report and the output.
fn simulate(k: &phaser::Kernel, threads: u32, n: usize, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let out = dev.upload(&vec![0xDEAD_BEEFu32; n]).unwrap();
    let rep = dev.simulate(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&out)]).unwrap();
    (rep, dev.download(&out).unwrap())
}

/// Each lane writes `smem[lane] = lane * 7 + 1`, then (optionally) `bar.warp.sync`, then
/// reads its neighbour's slot `smem[(lane + 1) % 32]` into `out[lane]`.
fn neighbour_exchange(sync: bool) -> phaser::Kernel {
    let mut k = KernelBuilder::new(if sync { "exchange_synced" } else { "exchange_unsynced" }, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let smem = k.alloc_shared("slots", Type::U32, 32);
    let lane = k.lane_idx();
    let v = k.mad(lane, Value::u32(7), Value::u32(1));
    k.st_shared(smem, lane, v);
    if sync {
        k.warp_sync();
    }
    let next = k.add(lane, Value::u32(1));
    let next = k.and(next, Value::u32(31));
    let x = k.ld_shared(smem, next);
    k.st_global(out, lane, x);
    k.finish().unwrap()
}

fn expected_exchange() -> Vec<u32> {
    (0..32u32).map(|l| ((l + 1) % 32) * 7 + 1).collect()
}

#[test]
fn warp_sync_orders_lane_writes_before_other_lanes_reads() {
    let k = neighbour_exchange(true);
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        for seed in 0..4 {
            let (rep, out) = simulate(&k, 32, 32, s, seed * 3 + i as u64);
            assert!(rep.findings.is_empty(), "{s:?} seed {seed}:\n{}", rep.text());
            assert_eq!(out, expected_exchange(), "{s:?} seed {seed}");
        }
    }
}

#[test]
fn without_warp_sync_the_exchange_is_a_shared_race() {
    let k = neighbour_exchange(false);
    for s in STRATEGIES {
        let (rep, _) = simulate(&k, 32, 32, s, 7);
        assert!(rep.categories().contains(&Category::SharedRace), "{s:?}:\n{}", rep.text());
    }
}

/// Lanes 0-15 write and then sync in one branch; lanes 16-31 sync in the other branch (a
/// different `bar.warp.sync` instruction with the same mask) and then read what lane
/// `lane - 16` wrote. The lanes stay diverged until the syncs meet.
#[test]
fn diverged_lanes_meet_at_different_warp_sync_instructions() {
    let mut k = KernelBuilder::new("diverged_sync", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let smem = k.alloc_shared("slots", Type::U32, 16);
    let lane = k.lane_idx();
    let low = k.lt(lane, Value::u32(16));
    k.if_else(
        low,
        |k| {
            let v = k.mul(lane, Value::u32(3));
            k.st_shared(smem, lane, v);
            k.warp_sync();
        },
        |k| {
            k.warp_sync();
            let j = k.sub(lane, Value::u32(16));
            let x = k.ld_shared(smem, j);
            k.st_global(out, j, x);
        },
    );
    let k = k.finish().unwrap();
    let want: Vec<u32> = (0..16).map(|l| l * 3).collect();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        for seed in 0..4 {
            let (rep, out) = simulate(&k, 32, 16, s, seed * 3 + i as u64);
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            assert_eq!(out, want, "{s:?} seed {seed}");
        }
    }
}

#[test]
fn a_partial_last_warp_syncs_with_the_full_mask() {
    // 48 threads: warp 1 has lanes 0-15 only; `__syncwarp()` must not wait for lanes that
    // do not exist.
    let mut k = KernelBuilder::new("partial_warp", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(48, 1, 1);
    k.warp_sync();
    let tid = k.thread_idx(Dim::X);
    k.st_global(out, tid, tid);
    let k = k.finish().unwrap();
    let (rep, out) = simulate(&k, 48, 48, Strategy::Random, 1);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(out, (0..48).collect::<Vec<u32>>());
}

#[test]
fn an_exited_lane_in_the_mask_is_reported_either_way_round() {
    // Lane 5 exits before the others arrive (it runs first: lowest pc) ...
    let mut k = KernelBuilder::new("exit_first", Target::Sm90a);
    let _out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let lane = k.lane_idx();
    let is5 = k.eq(lane, Value::u32(5));
    k.if_then(is5, |k| k.ret());
    k.warp_sync();
    let first = k.finish().unwrap();
    // ... or while they wait (the waiting branch comes first in program order).
    let mut k = KernelBuilder::new("exit_while_waiting", Target::Sm90a);
    let _out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let lane = k.lane_idx();
    let not5 = k.ne(lane, Value::u32(5));
    k.if_else(not5, |k| k.warp_sync(), |k| k.ret());
    let waiting = k.finish().unwrap();
    for (k, needle) in
        [(&first, "lane(s) 5 of the mask have exited"), (&waiting, "lane(s) 5 exited while lane(s) 0-4, 6-31 wait")]
    {
        for s in STRATEGIES {
            let (rep, _) = simulate(k, 32, 1, s, 2);
            assert_eq!(rep.categories(), [Category::WarpSync], "{}: {s:?}:\n{}", k.name(), rep.text());
            if s == Strategy::RoundRobin {
                assert!(rep.text().contains(needle), "{}:\n{}", k.name(), rep.text());
            }
        }
    }
}

#[test]
fn a_lane_outside_its_own_mask_is_reported() {
    let mut k = KernelBuilder::new("not_in_mask", Target::Sm90a);
    let _out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let lane = k.lane_idx();
    let is0 = k.eq(lane, Value::u32(0));
    k.if_then(is0, |k| k.warp_sync_mask(0x0000_0002));
    let k = k.finish().unwrap();
    let (rep, _) = simulate(&k, 32, 1, Strategy::RoundRobin, 0);
    assert_eq!(rep.categories(), [Category::WarpSync], "{}", rep.text());
    assert!(rep.text().contains("whose mask does not include it"), "{}", rep.text());
}

#[test]
fn a_warp_that_cannot_converge_is_a_deadlock_naming_the_missing_lanes() {
    // Lanes 0-15 wait on an mbarrier that lanes 16-31 arrive on only after the warp sync,
    // which needs lanes 0-15: nobody can move.
    let mut k = KernelBuilder::new("warp_sync_deadlock", Target::Sm90a);
    let _out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let bar = k.barrier_at(bars, Value::u32(0));
    let lane = k.lane_idx();
    let is0 = k.eq(lane, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(16)));
    k.cta_sync();
    let low = k.lt(lane, Value::u32(16));
    k.if_else(
        low,
        |k| {
            k.mbarrier_wait(bar, Value::u32(0));
            k.warp_sync();
        },
        |k| {
            k.warp_sync();
            k.mbarrier_arrive(bar);
        },
    );
    let k = k.finish().unwrap();
    for s in STRATEGIES {
        let (rep, _) = simulate(&k, 32, 1, s, 4);
        assert_eq!(rep.categories(), [Category::Deadlock], "{s:?}:\n{}", rep.text());
        let text = rep.text();
        assert!(
            text.contains("waits at `bar.warp.sync 0xffffffff`: lane(s) 16-31 arrived, lane(s) 0-15 have not")
                && text.contains("lane 0 waits on an mbarrier"),
            "{s:?}:\n{text}"
        );
    }
}

/// `elect.sync` picks exactly one leader per warp even when independent thread scheduling
/// lets the warp's lanes reach it in several groups (regression: each group used to elect its
/// own leader, so a warp-specialized producer ran twice). Each warp loops a few times so the
/// same `elect.sync` is met again before every lane of the previous round has executed it.
#[test]
fn elect_sync_picks_one_leader_per_warp_whatever_the_lane_groups() {
    const WARPS: u32 = 4;
    const ROUNDS: u32 = 3;
    let mut k = KernelBuilder::new("elect_one_leader", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(32 * WARPS, 1, 1);
    let warp = k.warp_idx();
    k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, round| {
        let leader = k.elect_sync();
        k.if_then(leader, |k| {
            let slot = k.mad(round, Value::u32(WARPS), warp);
            k.atomic_add_global(out, slot, Value::u32(1));
        });
    });
    let k = k.finish().unwrap();
    for s in STRATEGIES {
        for seed in 0..24 {
            let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
            let out = dev.upload(&vec![0u32; (WARPS * ROUNDS) as usize]).unwrap();
            let rep = dev.simulate(&k, LaunchConfig::linear(1, 32 * WARPS), &[Arg::buffer(&out)]).unwrap();
            assert!(rep.findings.is_empty(), "{}", rep.text());
            let got = dev.download(&out).unwrap();
            assert!(got.iter().all(|&n| n == 1), "{s:?} seed {seed}: leaders per (round, warp) {got:?}");
        }
    }
}

/// CUTLASS's pipeline test producer: warp 0 elects its issuing lane once
/// (`lane_predicate = elect_one_sync()`), and `producer_acquire` arrives on `full` only from
/// `is_leader = thread % 128 == 0`. On the GPU the elected lane is lane 0, the leader; a
/// simulator that elected another lane left `full` without its arrival (a deadlock the GPU
/// never has).
#[phaser::kernel(target = "sm_90a")]
fn elected_producer_with_leader(src: &[u32], out: &mut [u32]) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(1);
    let empty = T.alloc_barriers(1);
    let tile = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.mbarrier.init(empty.ptr_to([0]), 32);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid < 32 {
        let lane_predicate = T.ptx.elect_sync();
        let is_leader = tid % 128 == 0;
        if lane_predicate {
            let mut phase = 0;
            for it in 0..4 {
                T.ptx.mbarrier.try_wait(empty.ptr_to([0]), phase ^ 1);
                if is_leader {
                    T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 128);
                }
                T.ptx.cp_async.bulk.g2s(T.shared_addr(tile), T.global_elem_addr(src, it * 32), 128, full.ptr_to([0]));
                phase ^= 1;
            }
        }
    } else {
        let lane = tid - 32;
        let mut phase = 0;
        for it in 0..4 {
            T.ptx.mbarrier.try_wait(full.ptr_to([0]), phase);
            out[it * 32 + lane] = tile[lane];
            T.ptx.mbarrier.arrive(empty.ptr_to([0]));
            phase ^= 1;
        }
    }
}

#[test]
fn elect_sync_elects_the_same_lowest_lane_every_time_under_every_scheduler() {
    let k = elected_producer_with_leader::kernel().unwrap();
    let input: Vec<u32> = (0..128).map(|i| i * 3 + 1).collect();
    for s in STRATEGIES {
        for seed in 0..8 {
            let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
            let src = dev.upload(&input).unwrap();
            let out = dev.alloc::<u32>(128).unwrap();
            let rep = dev.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
            assert!(rep.findings.is_empty(), "{s:?} seed {seed}:\n{}", rep.text());
            assert_eq!(dev.download(&out).unwrap(), input, "{s:?} seed {seed}");
        }
    }
}
