//! `cp.async.mbarrier.arrive[.noinc]` in the simulator: the arrival fires only once every
//! prior `cp.async` of the thread landed; without `.noinc` it is net-zero for the phase
//! (the pending count was raised at issue), with `.noinc` it is one of the expected
//! arrivals; a thread that waited on the phase may read the copied bytes.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig, Target};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];
const WORDS: u32 = 16;

/// Thread 0 copies `inp[0..16]` into shared memory with four 16-byte `cp.async`s and
/// executes `cp.async.mbarrier.arrive[.noinc]` (plus a plain arrive when `plain_arrive`) on
/// a barrier of `count`; threads 32-47 (another warp) wait on parity 0 (unless `!wait`) and
/// copy one word each to `out`.
fn kernel(noinc: bool, count: u32, plain_arrive: bool, wait: bool) -> phaser::Kernel {
    let mut k = KernelBuilder::new("cp_async_arrive", Target::Sm90a);
    let inp = k.param_global("inp", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(64, 1, 1);
    let smem = k.alloc_shared_aligned("data", Type::U32, WORDS, 16);
    let bars = k.alloc_barriers("bar", 1);
    let bar = k.barrier_at(bars, Value::u32(0));
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(count)));
    k.cta_sync();
    let base = k.shared_base_addr(smem);
    k.if_then(is0, |k| {
        for c in 0..WORDS / 4 {
            let dst = k.add(base, Value::u32(c * 16));
            let src = k.global_elem_addr(inp, Value::u32(c * 4));
            k.cp_async(dst, src, 16);
        }
        k.cp_async_mbarrier_arrive(bar, noinc);
        if plain_arrive {
            k.mbarrier_arrive(bar);
        }
    });
    let j = k.sub(tid, Value::u32(32));
    let reader = k.lt(j, Value::u32(WORDS));
    k.if_then(reader, |k| {
        if wait {
            k.mbarrier_wait(bar, Value::u32(0));
        }
        let x = k.ld_shared(smem, j);
        k.st_global(out, j, x);
    });
    k.finish().unwrap()
}

fn simulate(k: &phaser::Kernel, s: Strategy, seed: u64) -> (SimReport, Vec<u32>, Vec<u32>) {
    let dev = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let x = phaser_examples::gallery::random_u32(WORDS as usize, seed + 11);
    let inp = dev.upload(&x).unwrap();
    let out = dev.upload(&vec![0xDEAD_BEEFu32; WORDS as usize]).unwrap();
    let rep = dev.simulate(k, LaunchConfig::linear(1, 64), &[Arg::buffer(&inp), Arg::buffer(&out)]).unwrap();
    (rep, x, dev.download(&out).unwrap())
}

#[test]
fn noinc_arrival_counts_and_publishes_the_copies() {
    let k = kernel(true, 1, false, true);
    for s in STRATEGIES {
        for seed in 0..4 {
            let (rep, x, out) = simulate(&k, s, seed);
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            assert_eq!(out, x, "{s:?} seed {seed}: readers saw the copies only after they landed");
        }
    }
}

#[test]
fn without_noinc_the_triggered_arrival_is_net_zero() {
    // Count 1 and only the cp.async arrive: the phase never completes.
    let k = kernel(false, 1, false, true);
    for s in STRATEGIES {
        let (rep, _, _) = simulate(&k, s, 1);
        // The deadlock, and its cause: the phase lacks the arrival no thread will make.
        assert_eq!(rep.categories(), [Category::Deadlock, Category::MissingArrival], "{s:?}:\n{}", rep.text());
        assert!(rep.text().contains("cp.async.mbarrier.arrive issued by thread 0 arrived x1"), "{}", rep.text());
    }
    // With the thread's own arrival the phase completes, and only after the copies landed.
    let k = kernel(false, 1, true, true);
    for s in STRATEGIES {
        for seed in 0..4 {
            let (rep, x, out) = simulate(&k, s, seed);
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            assert_eq!(out, x, "{s:?} seed {seed}");
        }
    }
}

#[test]
fn a_noinc_arrival_short_of_the_count_deadlocks() {
    let k = kernel(true, 2, false, true);
    let (rep, _, _) = simulate(&k, Strategy::RoundRobin, 0);
    assert_eq!(rep.categories(), [Category::Deadlock, Category::MissingArrival], "{}", rep.text());
    assert!(rep.text().contains("pending 1 of 2 arrivals"), "{}", rep.text());
    assert!(rep.text().contains("lacks 1 of its 2 arrivals"), "{}", rep.text());
}

#[test]
fn reading_without_waiting_on_the_barrier_is_a_race_with_the_copy() {
    // A reader that comes before the copy lands reads in-flight bytes (async-read-race); one
    // that runs before the copy is even issued has its read overwritten (async-write-race).
    let k = kernel(true, 1, false, false);
    for s in STRATEGIES {
        for seed in 0..3 {
            let (rep, _, _) = simulate(&k, s, seed);
            let c = rep.categories();
            assert!(
                c.contains(&Category::AsyncReadRace) || c.contains(&Category::AsyncWriteRace),
                "{s:?} seed {seed}:\n{}",
                rep.text()
            );
        }
    }
}
