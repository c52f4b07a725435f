//! `bar.sync`/`bar.arrive` (named barriers, `T.cuda.cta_sync()`) in the simulator: the rules
//! PTX states and the GPU does not check are findings at the Rust line (`Category::NamedBarrier`):
//! a `bar` executed by part of a warp (it is `.aligned`), threads of one round giving different
//! counts, counts that are no multiple of 32 or exceed the CTA; a count never reached is a
//! deadlock naming the id, the count, the arrivals and the waiters' lines. Correct uses (a warp
//! reconverging before the barrier, named barriers over some warps) give no finding.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig, Target};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

fn simulate(k: &phaser::Kernel, threads: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let out = dev.upload(&vec![0u32; threads as usize]).unwrap();
    let rep = dev.simulate(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&out)]).unwrap();
    (rep, dev.download(&out).unwrap())
}

/// The finding of `category` in every strategy's report, at one of `lines` of this file.
fn finding_at(k: &phaser::Kernel, threads: u32, category: Category, lines: &[u32]) -> String {
    let mut message = String::new();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = simulate(k, threads, s, i as u64);
        let f = rep
            .findings
            .iter()
            .find(|f| f.category == category)
            .unwrap_or_else(|| panic!("{s:?}: no {category:?} finding:\n{}", rep.text()));
        let loc = f.loc.unwrap_or_else(|| panic!("{s:?}: no line: {}", f.message));
        let here = loc.file.ends_with("sim_named_barriers.rs") && lines.contains(&loc.line);
        assert!(here, "{s:?}: at {loc:?}, not {lines:?}: {}", f.message);
        message = f.message.clone();
    }
    message
}

/// `cta_sync()` under `if lane == 0` (line A), and the whole CTA's `cta_sync()` after it
/// (line B): lanes 1-31 of warp 0 meet lane 0's barrier from another instruction. Returns the
/// kernel and line A.
fn elected_cta_sync() -> (phaser::Kernel, u32) {
    let mut k = KernelBuilder::new("elected_cta_sync", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let lane = k.lane_idx();
    let first = k.eq(lane, Value::u32(0));
    let line = line!() + 1;
    k.if_then(first, |k| k.cta_sync());
    k.cta_sync();
    k.st_global(out, tid, Value::u32(1));
    (k.finish().unwrap(), line)
}

#[test]
fn a_cta_sync_by_one_lane_of_a_warp_is_a_finding_at_its_line() {
    let (k, line) = elected_cta_sync();
    // Lanes 1-31 reach the other `cta_sync` while lane 0 waits at its own, or the barrier
    // completes with lane 0 alone: either way the message names the lanes and `.aligned`.
    // Whichever piece of warp 0 comes second is reported, naming the other's line.
    let msg = finding_at(&k, 64, Category::NamedBarrier, &[line, line + 1]);
    assert!(msg.contains(".aligned") && (msg.contains("lane(s) 0 ") || msg.contains("lane(s) 1-31 ")), "{msg}");
    assert!(
        msg.contains(&format!("sim_named_barriers.rs:{line}:")) || msg.contains(&format!(":{}:", line + 1)),
        "{msg}"
    );
}

/// The same with `elect_sync()` choosing the lane, and a named barrier over two warps.
#[test]
fn a_named_barrier_under_elect_sync_is_a_finding() {
    let mut k = KernelBuilder::new("elected_bar", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let leader = k.elect_sync();
    let line = line!() + 1;
    k.if_then(leader, |k| k.bar_sync(Value::u32(1), Some(Value::u32(64))));
    k.bar_sync(Value::u32(1), Some(Value::u32(64)));
    k.st_global(out, tid, Value::u32(1));
    let k = k.finish().unwrap();
    let msg = finding_at(&k, 64, Category::NamedBarrier, &[line, line + 1]);
    assert!(msg.contains(".aligned"), "{msg}");
}

/// A warp that diverges and reconverges before the barrier is correct: no finding, and the
/// store before the barrier is seen after it.
#[test]
fn a_warp_reconverging_before_cta_sync_is_no_finding() {
    let mut k = KernelBuilder::new("reconverge", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let smem = k.alloc_shared("flag", Type::U32, 1);
    let tid = k.thread_idx(Dim::X);
    let lane = k.lane_idx();
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| k.st_shared(smem, Value::u32(0), Value::u32(7)));
    let odd = k.and(lane, Value::u32(1));
    let odd = k.ne(odd, Value::u32(0));
    k.if_then(odd, |k| {
        let _ = k.add(lane, Value::u32(1));
    });
    k.cta_sync();
    let v = k.ld_shared(smem, Value::u32(0));
    k.st_global(out, tid, v);
    let k = k.finish().unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        for seed in 0..3 {
            let (rep, out) = simulate(&k, 96, s, seed * 3 + i as u64);
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            assert_eq!(out, vec![7; 96]);
        }
    }
}

/// Warps 0-1 meet at `bar.sync 1, 64` while warps 2-3 meet at `bar.sync 2, 64`: correct.
#[test]
fn named_barriers_over_some_warps_are_no_finding() {
    let mut k = KernelBuilder::new("two_named", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let warp = k.warp_idx();
    let half = k.shr(warp, Value::u32(1));
    let id = k.add(half, Value::u32(1));
    k.bar_sync(id, Some(Value::u32(64)));
    k.st_global(out, tid, id);
    let k = k.finish().unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = simulate(&k, 128, s, i as u64);
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        assert_eq!(out, (0..128).map(|t| t / 64 + 1).collect::<Vec<u32>>());
    }
}

/// Warp 0 arrives at `bar.sync 1` with a count of 64 and warp 1 with 96 (a count computed at
/// run time, so no build check sees it); warp 2 does not take part. Either order is one round.
#[test]
fn threads_of_one_round_disagreeing_on_the_count_is_a_finding() {
    let mut k = KernelBuilder::new("counts_differ", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let warp = k.warp_idx();
    let extra = k.mul(warp, Value::u32(32));
    let count = k.add(extra, Value::u32(64));
    let two = k.lt(warp, Value::u32(2));
    let line = line!() + 1;
    k.if_then(two, |k| k.bar_sync(Value::u32(1), Some(count)));
    k.st_global(out, tid, Value::u32(1));
    let k = k.finish().unwrap();
    let msg = finding_at(&k, 96, Category::NamedBarrier, &[line]);
    assert!(msg.contains("count of") && msg.contains("same count"), "{msg}");
}

/// Run-time counts that can never complete: 48 (not whole warps) and 256 in a CTA of 64.
#[test]
fn a_run_time_count_of_part_of_a_warp_or_past_the_cta_is_a_finding() {
    for (count, needle) in [(48u32, "multiple of 32"), (0, "multiple of 32"), (256, "never complete")] {
        let mut k = KernelBuilder::new("bad_count", Target::Sm90a);
        let out = k.param_global("out", Type::U32, true);
        let n = k.param("n", Type::U32);
        let tid = k.thread_idx(Dim::X);
        let line = line!() + 1;
        k.bar_arrive(Value::u32(3), n);
        k.st_global(out, tid, Value::u32(1));
        let k = k.finish().unwrap();
        let dev = Device::sim(SimConfig::default());
        let buf = dev.alloc::<u32>(64).unwrap();
        let rep = dev.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&buf), Arg::scalar(count)]).unwrap();
        let f = rep.findings.iter().find(|f| f.category == Category::NamedBarrier).expect(&rep.text());
        assert!(f.message.contains(needle), "{count}: {}", f.message);
        assert_eq!(f.loc.map(|l| l.line), Some(line), "{}", f.message);
    }
}

/// `bar.sync 1, 96` reached by two of three warps: a deadlock naming the barrier, its count,
/// the arrivals and the waiting line.
#[test]
fn a_named_barrier_count_never_reached_is_a_deadlock_naming_id_count_and_arrivals() {
    let mut k = KernelBuilder::new("short", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let warp = k.warp_idx();
    let two = k.lt(warp, Value::u32(2));
    let line = line!() + 1;
    k.if_then(two, |k| k.bar_sync(Value::u32(1), Some(Value::u32(96))));
    k.st_global(out, tid, Value::u32(1));
    let k = k.finish().unwrap();
    let (rep, _) = simulate(&k, 96, Strategy::RoundRobin, 0);
    let f = rep.findings.iter().find(|f| f.category == Category::Deadlock).unwrap_or_else(|| panic!("{}", rep.text()));
    let text = rep.text();
    assert!(text.contains("`bar.sync 1`: 64 of 96 threads arrived"), "{text}");
    assert!(text.contains(&format!("sim_named_barriers.rs:{line}")), "{text}");
    assert!(f.message.contains("deadlock") || !f.message.is_empty());
}

/// Lane 0 of each warp waits at `cta_sync()` while lanes 1-31 wait on an mbarrier nobody
/// arrives on: besides the deadlock, the partial warp at the barrier is named at its line.
#[test]
fn a_partial_warp_at_a_barrier_in_a_deadlock_is_named() {
    let mut k = KernelBuilder::new("partial_stuck", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let bars = k.alloc_barriers("bars", 1);
    let bar = k.barrier_at(bars, Value::u32(0));
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(bar, Value::u32(1));
        k.fence_mbarrier_init();
    });
    k.cta_sync();
    let lane = k.lane_idx();
    let lane0 = k.eq(lane, Value::u32(0));
    let line = line!() + 1;
    k.if_else(lane0, |k| k.cta_sync(), |k| k.mbarrier_wait(bar, Value::u32(0)));
    k.st_global(out, tid, Value::u32(1));
    let k = k.finish().unwrap();
    let (rep, _) = simulate(&k, 64, Strategy::RoundRobin, 0);
    assert!(rep.has(Category::Deadlock), "{}", rep.text());
    let f =
        rep.findings.iter().find(|f| f.category == Category::NamedBarrier).unwrap_or_else(|| panic!("{}", rep.text()));
    assert_eq!(f.loc.map(|l| l.line), Some(line), "{}", rep.text());
    assert!(f.message.contains("lane(s) 1-31") && f.message.contains(".aligned"), "{}", f.message);
}
