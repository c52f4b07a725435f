//! Findings that name the cause of a deadlock or a race rather than its symptom,
//! each as a kernel with the bug and a correct twin (a `#[comptime]` switch): the cause is
//! reported with its category at its Rust line under every scheduling strategy, the twin runs
//! clean. The mutation suite (`examples/src/mutate/`) checks the same causes on the gallery.

use phaser::codegen::builder::{Barrier, KernelBuilder, PipelineState};
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, Kernel, LaunchConfig, Target};

const FILE: &str = "tests/sim_causes.rs";
const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

/// The line of this file holding `marker` (in a comment).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_causes.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of") && !l.contains("finding_at"));
    let i = i.unwrap_or_else(|| panic!("no marker {marker}"));
    // A marker on a line of its own names the statement below it.
    (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
}

/// Simulate `k` on `threads` threads (one CTA) with a `u32` output of 256 elements.
fn run(k: &Kernel, threads: u32, s: Strategy, seed: u64) -> SimReport {
    let d = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let out = d.alloc::<u32>(256).unwrap();
    d.simulate(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&out)]).unwrap()
}

/// The first finding of category `c`, which must be at the line marked `marker`.
fn finding_at<'a>(rep: &'a SimReport, c: Category, marker: &str) -> &'a Finding {
    let f = rep.findings.iter().find(|f| f.category == c).unwrap_or_else(|| panic!("no {c} finding:\n{}", rep.text()));
    let loc = f.loc.unwrap_or_else(|| panic!("{c} finding without a location:\n{}", rep.text()));
    assert_eq!((loc.file, loc.line), (FILE, line_of(marker)), "{c} at the wrong line:\n{}", rep.text());
    f
}

/// `bug` reports `c` at `marker` under every strategy (seeds 0-2); `twin` is clean.
fn check(bug: &Kernel, twin: &Kernel, threads: u32, c: Category, marker: &str) -> Vec<String> {
    let mut messages = Vec::new();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let rep = run(bug, threads, s, i as u64);
        messages.push(finding_at(&rep, c, marker).message.clone());
        let rep = run(twin, threads, s, i as u64);
        assert!(rep.findings.is_empty(), "the correct twin has findings:\n{}", rep.text());
    }
    messages
}

// ---------------------------------------------------------------------------------------
// A two-warp pipeline over two stages: warp 0 stores a stage and arrives on `full` (32
// arrivals), warp 1 waits, reads and arrives on `empty`. `BUG` picks the bug.

const NONE: u32 = 0;
const DROP_RELEASE: u32 = 1;
const PRODUCER_PARITY_0: u32 = 2;
const CONSUMER_PARITY_1: u32 = 3;
const NO_FLIP: u32 = 4;
const TWICE: u32 = 5;

#[phaser::kernel(target = "sm_90a")]
fn ring(out: &mut [u32], #[comptime] BUG: u32) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(2);
    let empty = T.alloc_barriers(2);
    let stage = T.alloc_shared::<u32>([64]);
    let tid = T.thread_idx();
    let lane = tid % 32;
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 32);
        T.ptx.mbarrier.init(full.ptr_to([1]), 32);
        T.ptx.mbarrier.init(empty.ptr_to([0]), 32);
        T.ptx.mbarrier.init(empty.ptr_to([1]), 32);
    }
    T.cuda.cta_sync();
    if tid < 32 {
        let mut phase = 1;
        if BUG == 2 {
            phase = 0;
        }
        for i in 0..6 {
            let s = i % 2;
            T.ptx.mbarrier.try_wait(empty.ptr_to([s]), phase); // PRODUCER-WAIT
            stage[s * 32 + lane] = i * 100 + lane;
            T.ptx.mbarrier.arrive(full.ptr_to([s])); // PRODUCER-ARRIVE
            if BUG == 5 {
                T.ptx.mbarrier.arrive(full.ptr_to([s])); // SECOND-ARRIVE
            }
            if s == 1 {
                phase ^= 1;
            }
        }
    } else {
        let mut phase = 0;
        if BUG == 3 {
            phase = 1;
        }
        for i in 0..6 {
            let s = i % 2;
            T.ptx.mbarrier.try_wait(full.ptr_to([s]), phase); // CONSUMER-WAIT
            out[i * 32 + lane] = stage[s * 32 + lane]; // CONSUMER-READ
            if BUG != 1 {
                T.ptx.mbarrier.arrive(empty.ptr_to([s]));
            }
            if s == 1 && BUG != 4 {
                phase ^= 1;
            }
        }
    }
}

#[test]
fn a_dropped_release_is_a_missing_arrival() {
    let msgs = check(
        &ring::kernel_for(DROP_RELEASE).unwrap(),
        &ring::kernel_for(NONE).unwrap(),
        64,
        Category::MissingArrival,
        "PRODUCER-WAIT",
    );
    assert!(msgs.iter().all(|m| m.contains("lacks 32 of its 32 arrivals")), "{msgs:?}");
}

#[test]
fn a_producer_starting_on_parity_0_is_a_wrong_parity_not_just_a_deadlock() {
    let msgs = check(
        &ring::kernel_for(PRODUCER_PARITY_0).unwrap(),
        &ring::kernel_for(NONE).unwrap(),
        64,
        Category::WrongParity,
        "PRODUCER-WAIT",
    );
    assert!(msgs.iter().all(|m| m.contains("no side goes first")), "{msgs:?}");
}

#[test]
fn a_consumer_starting_on_parity_1_is_a_wrong_parity() {
    // Its first wait passes at once (the phase before phase 0) and it reads an unfilled
    // stage, or it waits for phase 1 after phase 0 completed unobserved: either way the
    // finding names the parity.
    let bug = ring::kernel_for(CONSUMER_PARITY_1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let rep = run(&bug, 64, s, i as u64);
        let f = rep.findings.iter().find(|f| f.category == Category::WrongParity);
        let f = f.unwrap_or_else(|| panic!("no wrong-parity:\n{}", rep.text()));
        let line = f.loc.unwrap().line;
        assert!([line_of("CONSUMER-WAIT"), line_of("CONSUMER-READ")].contains(&line), "{}", rep.text());
        assert!(f.message.contains("parity 1"), "{}", f.message);
    }
}

#[test]
fn a_missing_flip_is_a_stale_parity_whether_the_wait_passes_or_blocks() {
    let msgs = check(
        &ring::kernel_for(NO_FLIP).unwrap(),
        &ring::kernel_for(NONE).unwrap(),
        64,
        Category::StaleParity,
        "CONSUMER-WAIT",
    );
    assert!(msgs.iter().all(|m| m.contains("parity 0")), "{msgs:?}");
    assert!(msgs.iter().all(|m| !m.contains("  ")), "no runs of spaces: {msgs:?}");
}

#[test]
fn a_duplicated_arrive_is_an_arrival_overflow() {
    // The consumer finds `full` two phases past the last one it observed, neither observed.
    let bug = ring::kernel_for(TWICE).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let rep = run(&bug, 64, s, i as u64);
        let f = finding_at(&rep, Category::ArrivalOverflow, "CONSUMER-WAIT");
        assert!(f.message.contains("no thread observed them"), "{}", f.message);
    }
}

// ---------------------------------------------------------------------------------------
// 32 threads publish, arrive on a barrier expecting `COUNT`, wait on parity 0 and read.

#[phaser::kernel(target = "sm_90a")]
fn gather(out: &mut [u32], #[comptime] COUNT: u32) {
    T.require_block(32, 1, 1);
    let bar = T.alloc_barriers(1);
    let data = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), COUNT);
    }
    T.cuda.cta_sync();
    data[tid] = tid + 1;
    T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0); // GATHER-WAIT
    out[tid] = data[(tid + 1) % 32];
}

#[test]
fn a_count_below_the_arrivals_is_an_arrival_overflow_at_the_wait() {
    // The 32nd arrival counts toward phase 1; its thread's wait returns on phase 0.
    let msgs = check(
        &gather::kernel_for(31).unwrap(),
        &gather::kernel_for(32).unwrap(),
        32,
        Category::ArrivalOverflow,
        "GATHER-WAIT",
    );
    assert!(msgs.iter().all(|m| m.contains("counted toward phase 1")), "{msgs:?}");
}

// ---------------------------------------------------------------------------------------
// Thread 0 fills a tile with a bulk copy completing on `full`; the tile goes out through a
// bulk store. `BUG` picks the bug.

const BARE_ARRIVE: u32 = 1;
const NO_COPY: u32 = 2;
const NO_STORE_WAIT: u32 = 3;
const STORE_UNWRITTEN: u32 = 4;

#[phaser::kernel(target = "sm_90a")]
fn bulk_tile(src: &[u32], out: &mut [u32], #[comptime] BUG: u32) {
    T.require_block(32, 1, 1);
    let full = T.alloc_barriers(1);
    let tile = T.alloc_shared::<u32>([64]);
    let staging = T.alloc_shared::<u32>([64]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid == 0 {
        if BUG == 1 {
            T.ptx.mbarrier.arrive(full.ptr_to([0]));
        } else {
            T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 256); // BULK-EXPECT
        }
        if BUG != 2 {
            // BULK-COPY
            T.ptx.cp_async.bulk.g2s(T.shared_addr(tile), T.global_elem_addr(src, 0), 256, full.ptr_to([0]));
        }
    }
    T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
    if BUG != 4 {
        staging[tid] = tile[tid] + 1;
        staging[tid + 32] = tile[tid + 32] + 1;
    }
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.cp_async.bulk.s2g(T.global_elem_addr(out, 0), T.shared_addr(staging), 256); // BULK-STORE
        T.ptx.cp_async.bulk.commit_group();
        if BUG != 3 {
            T.ptx.cp_async.bulk.wait_group(0);
        }
    }
}

fn run_tile(k: &Kernel, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let d = Device::sim(SimConfig::default().with_strategy(s).with_seed(seed));
    let src = d.upload(&(0..64u32).map(|i| i * 7).collect::<Vec<_>>()).unwrap();
    let out = d.alloc::<u32>(64).unwrap();
    let rep = d.simulate(k, LaunchConfig::linear(1, 32), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

fn check_tile(bug: u32, c: Category, marker: &str) -> Vec<String> {
    let (bug, twin) = (bulk_tile::kernel_for(bug).unwrap(), bulk_tile::kernel_for(NONE).unwrap());
    let mut messages = Vec::new();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run_tile(&bug, s, i as u64);
        messages.push(finding_at(&rep, c, marker).message.clone());
        let (rep, out) = run_tile(&twin, s, i as u64);
        assert!(rep.findings.is_empty(), "the correct twin has findings:\n{}", rep.text());
        assert_eq!(out, (0..64u32).map(|i| i * 7 + 1).collect::<Vec<_>>());
    }
    messages
}

#[test]
fn a_plain_arrive_before_a_copy_completes_the_phase_early() {
    let msgs = check_tile(BARE_ARRIVE, Category::EarlyPhaseCompletion, "BULK-COPY");
    assert!(msgs.iter().all(|m| m.contains("no bytes registered") && m.contains("arrive.expect_tx")), "{msgs:?}");
}

#[test]
fn registered_bytes_no_copy_delivers_are_a_tx_imbalance() {
    let msgs = check_tile(NO_COPY, Category::TxImbalance, "BULK-EXPECT");
    assert!(msgs.iter().all(|m| m.contains("registered 256 bytes") && m.contains("no copy delivered")), "{msgs:?}");
}

#[test]
fn a_store_still_reading_when_the_cta_exits_is_reported() {
    let msgs = check_tile(NO_STORE_WAIT, Category::ExitedCtaAccess, "BULK-STORE");
    assert!(msgs.iter().all(|m| m.contains("after all its threads exited")), "{msgs:?}");
}

#[test]
fn a_store_of_unwritten_shared_memory_is_an_uninitialized_read() {
    let msgs = check_tile(STORE_UNWRITTEN, Category::UninitializedSharedRead, "BULK-STORE");
    assert!(msgs.iter().all(|m| m.contains("`staging") && m.contains("no thread and no async copy")), "{msgs:?}");
}

// ---------------------------------------------------------------------------------------
// A `test_wait` polled in a loop is a wait: a missing flip in a polling consumer is a stale
// parity too (a one-off `test_wait` probe is not checked).

fn polled_ring(flip: bool) -> Kernel {
    let mut k = KernelBuilder::new("polled_ring", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(64, 1, 1);
    let full = k.alloc_barriers("full", 2);
    let empty = k.alloc_barriers("empty", 2);
    let buf = k.alloc_shared("stage", Type::U32, 64);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        for s in 0..2 {
            let f = k.barrier_at(full, Value::u32(s));
            k.mbarrier_init(f, Value::u32(32));
            let e = k.barrier_at(empty, Value::u32(s));
            k.mbarrier_init(e, Value::u32(32));
        }
    });
    k.cta_sync();
    let lane = k.and(tid, Value::u32(31));
    let producer = k.lt(tid, Value::u32(32));
    let poll = |k: &mut KernelBuilder, bar: Barrier, parity: Value| {
        k.loop_(|k| {
            let done = k.mbarrier_test_wait(bar, parity); // POLL-WAIT
            k.if_then(done, |k| k.break_());
        });
    };
    k.if_else(
        producer,
        |k| {
            let st = PipelineState::new(k, 2, 1);
            k.for_range(Value::u32(0), Value::u32(6), |k, i| {
                let e = k.barrier_at(empty, st.index());
                poll(k, e, st.phase());
                let base = k.mul(st.index(), Value::u32(32));
                let j = k.add(base, lane);
                k.st_shared(buf, j, i);
                let f = k.barrier_at(full, st.index());
                k.mbarrier_arrive(f);
                st.advance(k);
            });
        },
        |k| {
            let st = PipelineState::new(k, 2, 0);
            k.for_range(Value::u32(0), Value::u32(6), |k, i| {
                let f = k.barrier_at(full, st.index());
                poll(k, f, st.phase());
                let base = k.mul(st.index(), Value::u32(32));
                let j = k.add(base, lane);
                let v = k.ld_shared(buf, j);
                let e = k.barrier_at(empty, st.index());
                k.mbarrier_arrive(e);
                let o = k.mad(i, Value::u32(32), lane);
                k.st_global(out, o, v);
                if flip {
                    st.advance(k);
                } else {
                    // The index moves on, the phase does not.
                    let next = k.add(st.index(), Value::u32(1));
                    let next = k.and(next, Value::u32(1));
                    k.assign(st.index().as_reg().unwrap(), next);
                }
            });
        },
    );
    k.finish().unwrap()
}

#[test]
fn a_polled_test_wait_on_a_stale_parity_is_reported() {
    let msgs = check(&polled_ring(false), &polled_ring(true), 64, Category::StaleParity, "POLL-WAIT");
    assert!(msgs.iter().all(|m| m.contains("phase ^= 1")), "{msgs:?}");
    assert!(msgs.iter().all(|m| !m.contains("  ")), "no runs of spaces: {msgs:?}");
}

// ---------------------------------------------------------------------------------------
// A consumer that gates nothing falls two phases behind: thread 32 consumes every phase of
// `full` and releases `empty`, which the producer waits on; thread 64 also reads `full` but
// releases nothing, so after its first phase the producer runs ahead of it. Its next wait, on
// parity 1, finds the barrier in phase 3 (parity 1 again) and waits for a phase that never
// comes (the 2-CTA-cluster CUTLASS case, in one CTA).

#[phaser::kernel(target = "sm_90a")]
fn consumer_two_phases_behind(out: &mut [u32]) {
    T.require_block(96, 1, 1);
    let full = T.alloc_barriers(1);
    let empty = T.alloc_barriers(1);
    let go = T.alloc_barriers(1);
    let done = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.mbarrier.init(empty.ptr_to([0]), 1);
        T.ptx.mbarrier.init(go.ptr_to([0]), 1);
        T.ptx.mbarrier.init(done.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        for i in 0..3 {
            T.ptx.mbarrier.try_wait(empty.ptr_to([0]), (i & 1) ^ 1);
            if i == 1 {
                T.ptx.mbarrier.try_wait(go.ptr_to([0]), 0);
            }
            T.ptx.mbarrier.arrive(full.ptr_to([0]));
        }
    } else if tid == 32 {
        for i in 0..3 {
            T.ptx.mbarrier.try_wait(full.ptr_to([0]), i & 1);
            T.ptx.mbarrier.arrive(empty.ptr_to([0]));
        }
        T.ptx.mbarrier.arrive(done.ptr_to([0]));
    } else if tid == 64 {
        T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
        T.ptx.mbarrier.arrive(go.ptr_to([0]));
        T.ptx.mbarrier.try_wait(done.ptr_to([0]), 0);
        T.ptx.mbarrier.try_wait(full.ptr_to([0]), 1); // STALE-WAIT
    }
    out[tid] = tid;
}

#[test]
fn a_consumer_two_phases_behind_is_reported_as_a_stale_wait_not_only_a_deadlock() {
    let k = consumer_two_phases_behind::kernel().unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let rep = run(&k, 96, s, i as u64);
        let f = finding_at(&rep, Category::Deadlock, "STALE-WAIT");
        assert_eq!(f.thread, Some(64), "{}", rep.text());
        assert!(f.message.contains("the wait is 2 phases stale"), "{}", f.message);
        assert!(f.message.contains("parity 1 was meant for phase 1"), "{}", f.message);
        assert!(f.message.contains("completed phases 1-2 since without this thread"), "{}", f.message);
        assert!(f.message.contains("now names phase 3"), "{}", f.message);
    }
}
