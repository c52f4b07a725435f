//! Protocol bugs the simulator's checker names precisely, each as a `#[phaser::kernel]` with
//! the bug and a correct twin (a `#[comptime]` switch): the bug is reported with its category
//! at its Rust line (under every scheduling strategy), the twin runs clean with the right
//! output.

use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};

const FILE: &str = "tests/sim_findings.rs";
const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

/// The line of this file holding `marker` (in a comment).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_findings.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap();
    // A marker on a line of its own names the statement below it.
    (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
}

fn dev(s: Strategy, seed: u64) -> Device {
    Device::sim(SimConfig::default().with_strategy(s).with_seed(seed))
}

/// The first finding of category `c`, which must be at the line marked `marker`.
fn finding_at<'a>(rep: &'a SimReport, c: Category, marker: &str) -> &'a Finding {
    let f = rep.findings.iter().find(|f| f.category == c).unwrap_or_else(|| panic!("no {c} finding:\n{}", rep.text()));
    let loc = f.loc.unwrap_or_else(|| panic!("{c} finding without a location:\n{}", rep.text()));
    assert_eq!((loc.file, loc.line), (FILE, line_of(marker)), "{c} at the wrong line:\n{}", rep.text());
    f
}

fn clean(rep: &SimReport) {
    assert!(rep.findings.is_empty(), "the correct twin has findings:\n{}", rep.text());
}

// ---------------------------------------------------------------------------------------
// A read of shared memory nothing wrote: a consumer waits on parity 1 of a fresh barrier
// (which passes at once) and reads a stage the producer has not filled yet.

#[phaser::kernel(target = "sm_90a")]
fn fresh_parity_consumer(out: &mut [u32], #[comptime] PARITY: u32) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 32);
    }
    T.cuda.cta_sync();
    if tid < 32 {
        // The producer warp takes a while before it fills the stage.
        let mut h = tid;
        for i in 0..200 {
            h = h * 31 + i;
        }
        out[64 + tid] = h;
        stage[tid] = tid * 3;
        T.ptx.mbarrier.arrive(full.ptr_to([0]));
    } else {
        T.ptx.mbarrier.try_wait(full.ptr_to([0]), PARITY); // WAIT-FULL
        out[tid - 32] = stage[tid - 32]; // READ-STAGE
    }
}

#[test]
fn a_read_of_shared_memory_nothing_wrote_names_the_wait_that_let_it_through() {
    let k = fresh_parity_consumer::kernel_for(1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(96).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
        let f = finding_at(&rep, Category::UninitializedSharedRead, "READ-STAGE");
        assert_eq!(f.barrier.as_ref().map(|b| b.to_string()), Some("`full[0]`".into()), "{}", rep.text());
        let wait = format!("{FILE}:{}:", line_of("WAIT-FULL"));
        assert!(f.message.contains(&wait), "the wait is named: {}", f.message);
        assert!(f.message.contains("`stage["), "the array is named: {}", f.message);
        assert!(f.message.contains("fresh barrier"), "why the wait passed: {}", f.message);
    }
}

#[test]
fn the_consumer_waiting_on_parity_0_reads_what_was_written() {
    let k = fresh_parity_consumer::kernel_for(0).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(96).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
        clean(&rep);
        assert_eq!(d.download(&out).unwrap()[..32], (0..32).map(|t| t * 3).collect::<Vec<u32>>()[..]);
    }
}

// ---------------------------------------------------------------------------------------
// A remote arrive into a CTA of the cluster that has exited (no final cluster barrier).

#[phaser::kernel(target = "sm_90a")]
fn late_remote_release(out: &mut [u32], #[comptime] FINAL_SYNC: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    let rank = T.cluster_cta_rank();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cluster_sync();
    if rank == 1 && tid == 0 {
        let mut h = 1;
        for i in 0..300 {
            h = h * 7 + i;
        }
        out[0] = h;
        T.ptx.mbarrier.arrive_remote(bar.ptr_to([0]), 0); // REMOTE-ARRIVE
    }
    if FINAL_SYNC == 1 {
        T.cuda.cluster_sync();
    }
    if FINAL_SYNC == 2 {
        // CUTLASS's persistent tail: a relaxed arrive orders the remote arrive before nothing.
        T.ptx.barrier.cluster.arrive_relaxed();
        T.ptx.barrier.cluster.wait();
    }
}

#[test]
fn a_remote_arrive_into_an_exited_cta_is_reported() {
    let k = late_remote_release::kernel_for(0).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap();
        let f = finding_at(&rep, Category::ExitedCtaAccess, "REMOTE-ARRIVE");
        assert_eq!(f.cta, [1, 0, 0], "reported in the arriving CTA:\n{}", rep.text());
        assert!(f.message.contains("CTA rank 0"), "{}", f.message);
    }
}

#[test]
fn a_relaxed_final_cluster_arrive_quotes_the_rule_and_the_fix() {
    let k = late_remote_release::kernel_for(2).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap();
        let f = finding_at(&rep, Category::ExitedCtaAccess, "REMOTE-ARRIVE");
        assert_eq!(f.cta, [1, 0, 0], "reported in the arriving CTA:\n{}", rep.text());
        assert!(f.message.contains("`barrier.cluster.arrive.relaxed`, which orders no memory access"), "{}", f.message);
        assert!(f.message.contains("no memory ordering and visibility guarantees"), "the rule: {}", f.message);
        assert!(f.message.contains("Fix: a release arrive"), "the fix: {}", f.message);
    }
}

#[test]
fn a_final_cluster_sync_keeps_the_target_cta_alive() {
    let k = late_remote_release::kernel_for(1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(1).unwrap();
        clean(&d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap());
    }
}

// ---------------------------------------------------------------------------------------
// A DSMEM store into another CTA of the cluster before any cluster barrier: that CTA may not
// be running yet (compute-sanitizer racecheck: "located in a block that might not have entered
// yet"). The simulator starts a cluster's CTAs together, so only the order can show it.

#[phaser::kernel(target = "sm_90a")]
fn early_dsmem_store(out: &mut [u32], #[comptime] FIRST_SYNC: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 1, 1);
    let slot = T.alloc_shared::<u32>([1]);
    let tid = T.thread_idx();
    let rank = T.cluster_cta_rank();
    let leader = T.ptx.mapa_shared(slot, 0);
    if FIRST_SYNC == 1 {
        T.cuda.cluster_sync();
    }
    if rank == 1 && tid == 0 {
        leader[0] = 41 + rank; // DSMEM-STORE
    }
    T.cuda.cluster_sync();
    if rank == 0 && tid == 0 {
        out[0] = slot[0];
    }
    T.cuda.cluster_sync();
}

#[test]
fn a_dsmem_store_before_the_first_cluster_barrier_is_reported() {
    let k = early_dsmem_store::kernel_for(0).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap();
        let f = finding_at(&rep, Category::UnstartedCtaAccess, "DSMEM-STORE");
        assert_eq!(f.cta, [1, 0, 0], "reported in the storing CTA:\n{}", rep.text());
        assert!(f.message.contains("CTA rank 0's shared memory") && f.message.contains("started"), "{}", f.message);
    }
}

#[test]
fn a_first_cluster_barrier_orders_dsmem_after_the_start() {
    let k = early_dsmem_store::kernel_for(1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(1).unwrap();
        clean(&d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap());
        assert_eq!(d.download(&out).unwrap(), [42]);
    }
}

// ---------------------------------------------------------------------------------------
// Byte counts: an `arrive.expect_tx` registering fewer bytes than the bulk copy delivers
// completes the phase before every byte landed; more bytes than delivered never completes.

#[phaser::kernel(target = "sm_90a")]
fn bulk_tile(src: &[u32], out: &mut [u32], #[comptime] EXPECT: u32) {
    T.require_block(32, 1, 1);
    let full = T.alloc_barriers(1);
    let tile = T.alloc_shared::<u32>([256]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), EXPECT); // EXPECT-TX
                                                                   // BULK-COPY
        T.ptx.cp_async.bulk.g2s(T.shared_addr(tile), T.global_elem_addr(src, 0), 1024, full.ptr_to([0]));
    }
    T.ptx.mbarrier.try_wait(full.ptr_to([0]), 0);
    for i in 0..8 {
        out[i * 32 + tid] = tile[i * 32 + tid];
    }
}

fn run_bulk_tile(expect: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let k = bulk_tile::kernel_for(expect).unwrap();
    let d = dev(s, seed);
    let src = d.upload(&(0..256).map(|i| i * 5 + 1).collect::<Vec<u32>>()).unwrap();
    let out = d.alloc::<u32>(256).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn an_under_counted_expect_tx_completes_the_phase_early_and_names_both_lines() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run_bulk_tile(1024 - 64, s, i as u64);
        let f = finding_at(&rep, Category::EarlyPhaseCompletion, "EXPECT-TX");
        let copy = format!("{FILE}:{}:", line_of("BULK-COPY"));
        assert!(f.message.contains(&copy), "the copy's line is named: {}", f.message);
        assert!(f.message.contains("960 bytes"), "the registered count: {}", f.message);
        assert!(f.message.contains("bulk copy") && !f.message.contains("TMA"), "not called TMA: {}", f.message);
        assert_eq!(f.phase, Some(0), "{}", rep.text());
    }
}

#[test]
fn an_over_counted_expect_tx_is_a_tx_imbalance_beside_the_deadlock() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run_bulk_tile(1024 + 16, s, i as u64);
        assert!(rep.has(Category::Deadlock), "{}", rep.text());
        let f = finding_at(&rep, Category::TxImbalance, "EXPECT-TX");
        let copy = format!("{FILE}:{}:", line_of("BULK-COPY"));
        assert!(f.message.contains("1040 bytes") && f.message.contains(&copy), "both sides: {}", f.message);
        assert!(f.message.contains("1024 were delivered"), "{}", f.message);
    }
}

// A copy issued after a plain arrive whose phase completed with no bytes, where the copying
// thread's arrival is *not* the phase's last: thread 0 arrives first, thread 32 completes the
// phase, and thread 0 then issues the copy. The phase completed before the copy was requested
// whichever arrived last, so it is the same bug as when thread 0 arrives last. The check before
// run 7 of bench/exhaustive.md asked whether the copying thread's arrival was the last one
// (`Barrier::last`'s newest entry): measured on this kernel it reported nothing (the copy then
// shows only as a race with the reads of the tile).

#[phaser::kernel(target = "sm_90a")]
fn copy_after_an_earlier_bare_arrival(src: &[u32], out: &mut [u32], #[comptime] REGISTER: u32) {
    T.require_block(64, 1, 1);
    let bars = T.alloc_barriers(3);
    let tile = T.alloc_shared::<u32>([256]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bars.ptr_to([0]), 2);
        T.ptx.mbarrier.init(bars.ptr_to([1]), 1);
        T.ptx.mbarrier.init(bars.ptr_to([2]), 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    if tid == 0 {
        if REGISTER == 1 {
            T.ptx.mbarrier.arrive.expect_tx(bars.ptr_to([0]), 1024);
        } else {
            T.ptx.mbarrier.arrive(bars.ptr_to([0])); // FIRST-ARRIVAL
        }
        // Thread 32 arrives only after thread 0 did, and thread 0 copies only after that.
        T.ptx.mbarrier.arrive(bars.ptr_to([1]));
        T.ptx.mbarrier.try_wait(bars.ptr_to([2]), 0);
        T.ptx.cp_async.bulk.g2s(T.shared_addr(tile), T.global_elem_addr(src, 0), 1024, bars.ptr_to([0])); // LATE-COPY
    }
    if tid == 32 {
        T.ptx.mbarrier.try_wait(bars.ptr_to([1]), 0);
        T.ptx.mbarrier.arrive(bars.ptr_to([0]));
        T.ptx.mbarrier.arrive(bars.ptr_to([2]));
    }
    T.ptx.mbarrier.try_wait(bars.ptr_to([0]), 0);
    for i in 0..4 {
        out[i * 64 + tid] = tile[i * 64 + tid];
    }
}

fn run_late_copy(register: u32, s: Strategy, seed: u64) -> (SimReport, Vec<u32>) {
    let k = copy_after_an_earlier_bare_arrival::kernel_for(register).unwrap();
    let d = dev(s, seed);
    let src = d.upload(&(0..256).map(|i| i * 3 + 2).collect::<Vec<u32>>()).unwrap();
    let out = d.alloc::<u32>(256).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
    (rep, d.download(&out).unwrap())
}

#[test]
fn a_copy_after_a_bare_arrival_that_was_not_the_phases_last_is_reported() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, _) = run_late_copy(0, s, i as u64);
        let f = finding_at(&rep, Category::EarlyPhaseCompletion, "LATE-COPY");
        let arrival = format!("{FILE}:{}:", line_of("FIRST-ARRIVAL"));
        assert!(f.message.contains(&arrival), "the arrival's line is named: {}", f.message);
        assert!(f.message.contains("thread 0 arrived") && f.message.contains("phase 0"), "{}", f.message);
        assert_eq!(f.phase, Some(0), "{}", rep.text());
        // Its twin registers the bytes with that arrival: clean, the tile copied.
        let (rep, out) = run_late_copy(1, s, i as u64);
        clean(&rep);
        assert_eq!(out, (0..256).map(|i| i * 3 + 2).collect::<Vec<u32>>());
    }
}

#[test]
fn the_exact_byte_count_is_clean() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let (rep, out) = run_bulk_tile(1024, s, i as u64);
        clean(&rep);
        assert_eq!(out, (0..256).map(|i| i * 5 + 1).collect::<Vec<u32>>());
    }
}

// ---------------------------------------------------------------------------------------
// Clusters interleave: a CTA waits for a flag another CTA sets. Sequential clusters would
// spin forever; a flag nobody sets is an infinite loop, reported without the step limit.

#[phaser::kernel(target = "sm_90a")]
fn flag_handoff(flag: &mut [u32], out: &mut [u32], #[comptime] SETTER: u32) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    if tid == 0 {
        if T.block_idx() == 0 {
            while T.ptx.ld.global::<u32>(T.global_elem_addr(flag, 0)) == 0 {} // SPIN
            out[0] = 1;
        } else if SETTER == 1 {
            out[1] = 2;
            flag[0] = 1;
        }
    }
}

#[test]
fn a_cta_waiting_for_another_ctas_flag_finishes() {
    let k = flag_handoff::kernel_for(1).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (flag, out) = (d.alloc::<u32>(1).unwrap(), d.alloc::<u32>(2).unwrap());
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&flag), Arg::buffer(&out)]).unwrap();
        clean(&rep);
        assert_eq!(d.download(&out).unwrap(), [1, 2]);
    }
}

#[test]
fn a_flag_nobody_sets_is_an_infinite_loop_found_quickly() {
    let k = flag_handoff::kernel_for(0).unwrap();
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let (flag, out) = (d.alloc::<u32>(1).unwrap(), d.alloc::<u32>(2).unwrap());
        let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&flag), Arg::buffer(&out)]).unwrap();
        finding_at(&rep, Category::InfiniteLoop, "SPIN");
        assert!(rep.stats.thread_instructions < 1_000_000, "{} thread-instructions", rep.stats.thread_instructions);
    }
}

// ---------------------------------------------------------------------------------------
// Findings that name the real cause.

/// `arrive_count(bar, ARRIVALS)` on a count-1 barrier: 2 arrivals overflow the phase they
/// happen in (phase 0), though they complete it.
#[phaser::kernel(target = "sm_90a")]
fn over_arrival(out: &mut [u32], #[comptime] ARRIVALS: u32) {
    T.require_block(32, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.mbarrier.arrive_count(bar.ptr_to([0]), ARRIVALS); // OVER-ARRIVE
    }
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
    out[tid] = tid;
}

#[test]
fn over_arrival_names_the_phase_it_happened_in() {
    let d = dev(Strategy::Random, 1);
    let out = d.alloc::<u32>(32).unwrap();
    let rep = d.simulate(&over_arrival::kernel_for(2).unwrap(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]);
    let rep = rep.unwrap();
    let f = finding_at(&rep, Category::ArrivalOverflow, "OVER-ARRIVE");
    assert_eq!(f.phase, Some(0), "{}", rep.text());
    clean(
        &d.simulate(&over_arrival::kernel_for(1).unwrap(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap(),
    );
}

/// An arrival count computed at run time.
#[phaser::kernel(target = "sm_90a")]
fn runtime_count(out: &mut [u32], count: u32) {
    T.require_block(32, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), count); // INIT-COUNT
    }
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    }
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
    out[tid] = tid;
}

#[test]
fn a_runtime_init_count_of_zero_is_its_own_finding_at_the_init() {
    let d = dev(Strategy::RoundRobin, 1);
    let out = d.alloc::<u32>(32).unwrap();
    let k = runtime_count::kernel().unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out), Arg::scalar(0u32)]).unwrap();
    let f = finding_at(&rep, Category::InvalidInitCount, "INIT-COUNT");
    assert!(f.message.contains("arrival count 0"), "{}", f.message);
    clean(&d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out), Arg::scalar(1u32)]).unwrap());
}

/// Threads below `ARRIVING` meet at `bar.sync 1` expecting 32: in both CTAs of the cluster.
#[phaser::kernel(target = "sm_90a")]
fn short_named_barrier(out: &mut [u32], #[comptime] ARRIVING: u32) {
    T.require_block(32, 1, 1);
    T.cluster_dims(2, 1, 1);
    let tid = T.thread_idx();
    if tid < ARRIVING {
        T.ptx.bar.sync(1, 32); // BAR-SYNC
    }
    out[T.block_idx() * 32 + tid] = tid;
}

#[test]
fn deadlocked_waiters_are_grouped_per_cta() {
    let d = dev(Strategy::Random, 3);
    let out = d.alloc::<u32>(64).unwrap();
    let k = short_named_barrier::kernel_for(16).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(2, 32), &[Arg::buffer(&out)]).unwrap();
    let ctas: Vec<[u32; 3]> = rep.findings.iter().filter(|f| f.category == Category::Deadlock).map(|f| f.cta).collect();
    assert_eq!(ctas.len(), 2, "one finding per CTA:\n{}", rep.text());
    assert!(ctas.contains(&[0, 0, 0]) && ctas.contains(&[1, 0, 0]), "{}", rep.text());
    for f in rep.findings.iter().filter(|f| f.category == Category::Deadlock) {
        assert!(f.message.contains("16 threads (0-15)"), "{}", f.message);
    }
    clean(
        &d.simulate(&short_named_barrier::kernel_for(32).unwrap(), LaunchConfig::linear(2, 32), &[Arg::buffer(&out)])
            .unwrap(),
    );
}

/// Warp 1 arrives on a barrier that warp 0 initializes only after a while.
#[phaser::kernel(target = "sm_90a")]
fn early_use(out: &mut [u32], #[comptime] SYNCED: u32) {
    T.require_block(64, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        let mut h = 3;
        for i in 0..100 {
            h = h * 5 + i;
        }
        out[1] = h;
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1); // LATE-INIT
        T.ptx.fence.mbarrier_init();
    }
    if SYNCED == 1 {
        T.cuda.cta_sync();
    }
    if tid == 32 {
        T.ptx.mbarrier.arrive(bar.ptr_to([0])); // EARLY-ARRIVE
        out[0] = 7;
    }
}

#[test]
fn a_barrier_used_before_a_later_init_says_so() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(2).unwrap();
        let rep = d.simulate(&early_use::kernel_for(0).unwrap(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]);
        let rep = rep.unwrap();
        let f = finding_at(&rep, Category::Uninitialized, "EARLY-ARRIVE");
        let init = format!("{FILE}:{}:", line_of("LATE-INIT"));
        assert!(f.message.contains("not initialized at this point"), "{}", f.message);
        assert!(!f.message.contains("never"), "{}", f.message);
        assert!(f.message.contains("initialized later") && f.message.contains(&init), "{}", f.message);
        let rep = d.simulate(&early_use::kernel_for(1).unwrap(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]);
        clean(&rep.unwrap());
    }
}

/// A one-stage ring refilled by bulk copies; the consumer warp releases the stage (arrives on
/// `empty`) before (`EARLY = 1`) or after reading it.
#[phaser::kernel(target = "sm_90a")]
fn ring(src: &[u32], out: &mut [u32], #[comptime] EARLY: u32) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(1);
    let empty = T.alloc_barriers(1);
    let stage = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.mbarrier.init(empty.ptr_to([0]), 32);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    let mut phase = 0;
    for it in 0..3 {
        if tid == 0 {
            T.ptx.mbarrier.try_wait(empty.ptr_to([0]), phase ^ 1);
            T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 128);
            // REFILL
            T.ptx.cp_async.bulk.g2s(T.shared_addr(stage), T.global_elem_addr(src, it * 32), 128, full.ptr_to([0]));
        }
        if tid >= 32 {
            T.ptx.mbarrier.try_wait(full.ptr_to([0]), phase);
            if EARLY == 1 {
                T.ptx.mbarrier.arrive(empty.ptr_to([0])); // EARLY-RELEASE
            }
            out[it * 32 + tid - 32] = stage[tid - 32];
            if EARLY == 0 {
                T.ptx.mbarrier.arrive(empty.ptr_to([0]));
            }
        }
        phase ^= 1;
    }
}

#[test]
fn a_consumer_releasing_before_reading_gets_that_hint() {
    let d = dev(Strategy::RoundRobin, 0);
    let src = d.upload(&(0..96).collect::<Vec<u32>>()).unwrap();
    let out = d.alloc::<u32>(96).unwrap();
    let k = ring::kernel_for(1).unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap();
    let f = finding_at(&rep, Category::AsyncWriteRace, "REFILL");
    let release = format!("{FILE}:{}:", line_of("EARLY-RELEASE"));
    assert!(
        f.message.contains("released the stage before reading it") && f.message.contains(&release),
        "{}",
        f.message
    );
    assert_eq!(f.loops.first().map(|l| l.counter), Some(1), "the second iteration refills early:\n{}", rep.text());
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let src = d.upload(&(0..96).collect::<Vec<u32>>()).unwrap();
        let out = d.alloc::<u32>(96).unwrap();
        let k = ring::kernel_for(0).unwrap();
        clean(&d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&src), Arg::buffer(&out)]).unwrap());
        assert_eq!(d.download(&out).unwrap(), (0..96).collect::<Vec<u32>>());
    }
}

/// Thread 0 arrives on `empty[i]` for `i` in `0..STAGES`, of a 4-barrier array.
#[phaser::kernel(target = "sm_90a")]
fn release_all(out: &mut [u32], #[comptime] STAGES: u32) {
    T.require_block(32, 1, 1);
    let empty = T.alloc_barriers(4);
    let data = T.alloc_shared::<u32>([32]);
    let tid = T.thread_idx();
    if tid == 0 {
        for i in 0..4 {
            T.ptx.mbarrier.init(empty.ptr_to([i]), 1);
        }
    }
    T.cuda.cta_sync();
    data[tid] = tid;
    if tid == 0 {
        for i in 0..STAGES {
            T.ptx.mbarrier.arrive(empty.ptr_to([i])); // ARRIVE-STAGE
        }
    }
    out[tid] = data[tid];
}

#[test]
fn an_out_of_range_barrier_index_names_the_array_and_the_iteration() {
    let d = dev(Strategy::RoundRobin, 0);
    let out = d.alloc::<u32>(32).unwrap();
    let rep = d.simulate(&release_all::kernel_for(5).unwrap(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]);
    let rep = rep.unwrap();
    let f = finding_at(&rep, Category::OutOfBounds, "ARRIVE-STAGE");
    assert!(f.message.contains("`empty[4]`") && f.message.contains("past the end of `empty`"), "{}", f.message);
    assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [4], "{}", rep.text());
    assert!(rep.text().contains("loop counter 4"), "{}", rep.text());
    clean(
        &d.simulate(&release_all::kernel_for(4).unwrap(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap(),
    );
}

/// Thread 0 initializes `bars[s]` for `s` in `0..2` (2 arrivals each); one arrival on `bars[1]`
/// leaves its phase incomplete at the end of the kernel.
#[phaser::kernel(target = "sm_90a")]
fn incomplete_after_init_loop(out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let bars = T.alloc_barriers(2);
    let tid = T.thread_idx();
    if tid == 0 {
        for s in 0..2 {
            T.ptx.mbarrier.init(bars.ptr_to([s]), 2); // INIT-IN-LOOP
        }
    }
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.mbarrier.arrive(bars.ptr_to([1]));
    }
    out[tid] = tid;
}

#[test]
fn a_finding_reported_after_its_loop_ended_names_the_iteration_of_its_event() {
    let d = dev(Strategy::RoundRobin, 0);
    let out = d.alloc::<u32>(32).unwrap();
    let k = incomplete_after_init_loop::kernel().unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
    let f = finding_at(&rep, Category::IncompletePhase, "INIT-IN-LOOP");
    assert_eq!(f.barrier.as_ref().map(|b| b.to_string()), Some("`bars[1]`".into()), "{}", rep.text());
    // The init of `bars[1]` ran with `s == 1`; the loop had ended (`s == 2`) when it was reported.
    assert_eq!(f.loops.iter().map(|l| l.counter).collect::<Vec<_>>(), [1], "{}", rep.text());
    assert!(rep.text().contains("loop counter 1 of the loop"), "{}", rep.text());
}

/// Like `fresh_parity_consumer`, with the stage a 2-D tile in the dynamic window.
#[phaser::kernel(target = "sm_90a")]
fn fresh_parity_tile_consumer(out: &mut [u32]) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(1);
    let ring = T.alloc_shared::<u32>([2, 32]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 32);
    }
    T.cuda.cta_sync();
    if tid < 32 {
        let mut h = tid;
        for i in 0..200 {
            h = h * 31 + i;
        }
        out[64 + tid] = h;
        ring[1][tid] = tid * 3;
        T.ptx.mbarrier.arrive(full.ptr_to([0]));
    } else {
        T.ptx.mbarrier.try_wait(full.ptr_to([0]), 1);
        out[tid - 32] = ring[1][tid - 32]; // READ-TILE
    }
}

#[test]
fn a_finding_in_a_tile_of_the_dynamic_window_names_the_tile() {
    let d = dev(Strategy::RoundRobin, 0);
    let out = d.alloc::<u32>(96).unwrap();
    let k = fresh_parity_tile_consumer::kernel().unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    let f = finding_at(&rep, Category::UninitializedSharedRead, "READ-TILE");
    // Element 32 of `ring` (row 1, column 0) is the first the consumer of thread 32 reads.
    assert!(f.message.contains("reads `ring[32]` (4 bytes)"), "the tile is named: {}", f.message);
    assert!(!rep.text().contains("dynamic_smem"), "{}", rep.text());
}

/// One thread arrives once and waits twice on parity 0: the second wait returns at once on the
/// phase the first one consumed.
#[phaser::kernel(target = "sm_90a")]
fn wait_twice_on_one_phase(out: &mut [u32]) {
    T.require_block(32, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0); // SECOND-WAIT
    }
    out[tid] = tid;
}

#[test]
fn a_wait_on_a_consumed_phase_is_a_stale_parity_in_one_sentence() {
    let d = dev(Strategy::RoundRobin, 0);
    let out = d.alloc::<u32>(32).unwrap();
    let k = wait_twice_on_one_phase::kernel().unwrap();
    let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
    let f = finding_at(&rep, Category::StaleParity, "SECOND-WAIT");
    assert!(f.message.contains("the wait returned at once, observing phase 0, which this thread had"), "{}", f.message);
    assert!(!f.message.contains("  "), "no runs of spaces: {}", f.message);
}

/// CUTLASS's warp-specialized producer: per iteration it acquires a stage (`empty` wait, then
/// `arrive.expect_tx` on `full`) and completes its bytes; the consumer waits on `full` and
/// releases `empty`. With `TAIL`, the producer ends with one more `producer_acquire` whose bytes
/// no one completes and whose phase no one waits for (CUTLASS's `producer_tail`).
#[phaser::kernel(target = "sm_90a")]
fn producer_tail(out: &mut [u32], #[comptime] TAIL: u32) {
    T.require_block(64, 1, 1);
    let full = T.alloc_barriers(1);
    let empty = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(full.ptr_to([0]), 1);
        T.ptx.mbarrier.init(empty.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        let mut phase = 0;
        for _ in 0..2 {
            T.ptx.mbarrier.try_wait(empty.ptr_to([0]), phase ^ 1);
            T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 16);
            T.ptx.mbarrier.complete_tx(full.ptr_to([0]), 16);
            phase ^= 1;
        }
        if TAIL == 1 {
            T.ptx.mbarrier.try_wait(empty.ptr_to([0]), phase ^ 1);
            T.ptx.mbarrier.arrive.expect_tx(full.ptr_to([0]), 16); // TAIL-ACQUIRE
        }
    } else if tid == 32 {
        let mut phase = 0;
        for _ in 0..2 {
            T.ptx.mbarrier.try_wait(full.ptr_to([0]), phase);
            T.ptx.mbarrier.arrive(empty.ptr_to([0]));
            phase ^= 1;
        }
    }
    out[tid] = tid;
}

#[test]
fn a_barrier_left_mid_phase_with_no_waiter_is_a_warning_not_a_failed_check() {
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(64).unwrap();
        let rep =
            d.simulate(&producer_tail::kernel_for(1).unwrap(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]);
        let rep = rep.unwrap();
        assert!(!rep.has_errors(), "the GPU runs CUTLASS's producer tail correctly:\n{}", rep.text());
        let f = finding_at(&rep, Category::TxImbalance, "TAIL-ACQUIRE");
        assert_eq!(f.severity, phaser::runtime::sim::Severity::Warning, "{}", rep.text());
        assert_eq!(f.barrier.as_ref().map(|b| b.to_string()), Some("`full[0]`".into()), "{}", rep.text());
        assert!(f.message.contains("no thread waiting for this phase"), "why it is harmless: {}", f.message);
        assert!(rep.text().starts_with("simulator") && rep.text().contains("0 error(s)"), "{}", rep.text());
        clean(
            &d.simulate(&producer_tail::kernel_for(0).unwrap(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)])
                .unwrap(),
        );
    }
}

/// A warp-specialized register split (CUTLASS's `warpgroup_reg_dealloc<40>` /
/// `warpgroup_reg_alloc<232>`): 3 warpgroups launched with 168 registers per thread. With
/// `DEC`, the producer warpgroup gives registers back first, so the two consumer warpgroups'
/// 232 fit (4 x 40 + 8 x 232 = 12 x 168); without it they over-subscribe the pool, and the
/// consumer warps that find no room wait at `setmaxnreg.inc` forever (tilelang #2406).
#[phaser::kernel(target = "sm_90a")]
fn register_split(out: &mut [u32], #[comptime] DEC: u32) {
    T.require_block(384, 1, 1);
    T.max_registers(168);
    let wg = T.warpgroup_idx();
    if wg == 0 {
        if DEC == 1 {
            T.ptx.setmaxnreg.dec(40);
        }
    } else {
        T.ptx.setmaxnreg.inc(232); // CONSUMER-INC
    }
    T.cuda.cta_sync();
    out[T.thread_idx()] = wg;
}

#[test]
fn a_register_split_that_over_subscribes_the_pool_hangs_at_its_setmaxnreg() {
    let line = line_of("CONSUMER-INC");
    for (i, s) in STRATEGIES.into_iter().enumerate() {
        let d = dev(s, i as u64);
        let out = d.alloc::<u32>(384).unwrap();
        let launch = LaunchConfig::linear(1, 384);
        let rep = d.simulate(&register_split::kernel_for(0).unwrap(), launch, &[Arg::buffer(&out)]).unwrap();
        let f = rep.findings.iter().find(|f| f.category == Category::Deadlock && f.loc.map(|l| l.line) == Some(line));
        let f = f.unwrap_or_else(|| panic!("no deadlock at the setmaxnreg.inc:\n{}", rep.text()));
        assert!(f.message.contains("waits at `setmaxnreg.inc` for 232 registers per thread"), "{}", f.message);
        assert!(f.message.contains("over-subscribe"), "{}", f.message);
        clean(&d.simulate(&register_split::kernel_for(1).unwrap(), launch, &[Arg::buffer(&out)]).unwrap());
        let want: Vec<u32> = (0..384).map(|t| t / 128).collect();
        assert_eq!(d.download(&out).unwrap(), want, "{s:?}");
    }
}
