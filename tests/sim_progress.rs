//! The simulator tells a slow kernel from a stuck one without a step budget, and addresses
//! every buffer in its own range (smallest reproductions of bugs found with bad inputs).

use phaser::runtime::sim::{Category, SimConfig, Strategy};
use phaser::{Arg, Device, LaunchConfig};

const FILE: &str = "tests/sim_progress.rs";

fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_progress.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap();
    // A marker on a line of its own names the statement below it.
    (if lines[i].trim_start().starts_with("//") { i + 2 } else { i + 1 }) as u32
}

/// Every thread but 0 polls `test_wait` until thread 0, after a long loop, arrives.
#[phaser::kernel(target = "sm_90a")]
fn pollers_and_a_slow_arriver(out: &mut [u32], iters: u32) {
    T.require_block(1024, 1, 1);
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        let mut h = 1;
        for i in 0..iters {
            h = h * 33 + i;
        }
        out[1024] = h;
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    } else {
        while !T.ptx.mbarrier.test_wait(bar.ptr_to([0]), 0) {}
    }
    out[tid] = tid;
}

/// Regression: 1023 pollers outlasting 2M futile polls (about 20K per scheduler round here)
/// were reported as a livelock while thread 0 was still making progress.
#[test]
fn pollers_waiting_for_a_thread_still_computing_are_not_a_livelock() {
    let k = pollers_and_a_slow_arriver::kernel().unwrap();
    let dev = Device::sim(SimConfig::default().with_strategy(Strategy::RoundRobin));
    let out = dev.alloc::<u32>(1025).unwrap();
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 1024), &[Arg::buffer(&out), Arg::scalar(4000u32)]).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    // Each failed poll is 3 thread-instructions: far more than 2M polls ran.
    assert!(rep.stats.thread_instructions > 6_000_000, "{}", rep.stats.thread_instructions);
    assert_eq!(dev.download(&out).unwrap()[..1024], (0..1024).collect::<Vec<u32>>()[..]);
}

/// Thread 0 loops forever (its condition never changes); the others wait at `bar.sync`.
#[phaser::kernel(target = "sm_90a")]
fn one_thread_spins(out: &mut [u32], stop: u32) {
    T.require_block(64, 1, 1);
    let tid = T.thread_idx();
    if tid == 0 {
        let mut x = 1;
        // SPIN-FOREVER
        while x != stop {
            x = x * 1;
        }
    }
    T.cuda.cta_sync();
    out[tid] = tid;
}

/// Regression: a one-thread infinite loop ran to `max_steps` (2e9 thread-instructions, about
/// two minutes) before anything was reported.
#[test]
fn a_one_thread_infinite_loop_is_reported_at_once() {
    let k = one_thread_spins::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let out = dev.alloc::<u32>(64).unwrap();
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out), Arg::scalar(0u32)]).unwrap();
    let f = rep.findings.iter().find(|f| f.category == Category::InfiniteLoop).expect("an infinite loop");
    let loc = f.loc.expect("a line");
    // The report names a line of the loop (where the repeat was seen: its head or its body).
    let head = line_of("SPIN-FOREVER");
    assert!(loc.file == FILE && (head..=head + 1).contains(&loc.line), "{}", rep.text());
    assert_eq!(f.thread, Some(0), "{}", rep.text());
    assert!(
        rep.stats.thread_instructions < 1_000_000,
        "found after {} thread-instructions",
        rep.stats.thread_instructions
    );
    assert!(rep.has(Category::Deadlock), "the threads at bar.sync wait behind it:\n{}", rep.text());
    // The same loop that ends is fine.
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out), Arg::scalar(1u32)]).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
}

#[phaser::kernel(target = "sm_90a")]
fn store_at(a: &mut [u32], b: &mut [u32], idx: u32) {
    T.require_block(1, 1, 1);
    a[idx] = 7; // STORE-FAR
    b[1] = 1;
}

/// Regression: buffers were 4 GiB apart, so an index 4 GiB past the end of `a` wrote `b[0]`.
#[test]
fn an_index_far_past_a_buffer_is_out_of_bounds_not_the_next_buffer() {
    let k = store_at::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let a = dev.alloc::<u32>(16).unwrap();
    let b = dev.alloc::<u32>(16).unwrap();
    let rep =
        dev.simulate(&k, LaunchConfig::linear(1, 1), &[Arg::buffer(&a), Arg::buffer(&b), Arg::scalar(1u32 << 30)]);
    let rep = rep.unwrap();
    let f =
        rep.findings.iter().find(|f| f.category == Category::OutOfBounds).unwrap_or_else(|| panic!("{}", rep.text()));
    assert_eq!(f.loc.map(|l| (l.file, l.line)), Some((FILE, line_of("STORE-FAR"))), "{}", rep.text());
    assert!(f.message.contains("past the end"), "{}", f.message);
    assert_eq!(dev.download(&b).unwrap(), vec![0; 16], "the next buffer is untouched");
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 1), &[Arg::buffer(&a), Arg::buffer(&b), Arg::scalar(15u32)]);
    assert!(rep.unwrap().findings.is_empty());
    assert_eq!(dev.download(&a).unwrap()[15], 7);
}

/// Thread 0 counts forever: `x` changes every iteration, but nothing reads it (no branch, no
/// store), so the loop's observable state repeats. Thread 1 counts to `stop` and stores it:
/// there the counter is observable and the loop is long, not stuck.
#[phaser::kernel(target = "sm_90a")]
fn counters(out: &mut [u32], forever: u32, stop: u32) {
    T.require_block(32, 1, 1);
    let tid = T.thread_idx();
    if tid == 0 {
        let mut x = 0;
        // COUNT-FOREVER
        while forever != 0 {
            x += 1;
        }
    }
    if tid == 1 {
        let mut y = 0;
        while y != stop {
            y += 1;
        }
        out[1] = y;
    }
}

/// Regression: `x += 1` forever ran to `max_steps` (38 s) before anything was reported.
#[test]
fn a_counter_nothing_reads_does_not_hide_an_infinite_loop() {
    let k = counters::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let out = dev.alloc::<u32>(32).unwrap();
    let started = std::time::Instant::now();
    let args = [Arg::buffer(&out), Arg::scalar(1u32), Arg::scalar(0u32)];
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 32), &args).unwrap();
    let f = rep.findings.iter().find(|f| f.category == Category::InfiniteLoop).expect("an infinite loop");
    assert_eq!(f.thread, Some(0), "{}", rep.text());
    let head = line_of("COUNT-FOREVER");
    let loc = f.loc.expect("a line");
    assert!(loc.file == FILE && (head..=head + 1).contains(&loc.line), "{}", rep.text());
    assert!(rep.stats.thread_instructions < 1_000_000, "found after {}", rep.stats.thread_instructions);
    // Generous for a loaded machine: it took milliseconds here.
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    // A counter that is stored is observable: 300,000 iterations finish, no finding.
    let args = [Arg::buffer(&out), Arg::scalar(0u32), Arg::scalar(300_000u32)];
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 32), &args).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(dev.download(&out).unwrap()[1], 300_000);
}

/// Thread 0 spins on a flag no thread will set, counting its polls; the other 1023 exit.
#[phaser::kernel(target = "sm_90a")]
fn lone_spinner(flag: &mut [u32]) {
    T.require_block(1024, 1, 1);
    if T.thread_idx() == 0 {
        let mut polls = 0;
        // SPIN-ALONE
        while flag[0] == 0 {
            polls += 1;
        }
    }
}

/// Regression: one spinning thread among 1023 exited ones took 29-40 s (to `max_steps`).
#[test]
fn one_spinning_thread_among_exited_ones_is_reported_in_seconds() {
    let k = lone_spinner::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let flag = dev.alloc::<u32>(1).unwrap();
    let started = std::time::Instant::now();
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 1024), &[Arg::buffer(&flag)]).unwrap();
    let f = rep.findings.iter().find(|f| f.category == Category::InfiniteLoop).expect("an infinite loop");
    assert_eq!(f.thread, Some(0), "{}", rep.text());
    let head = line_of("SPIN-ALONE");
    assert!(f.loc.is_some_and(|l| l.file == FILE && (head..=head + 1).contains(&l.line)), "{}", rep.text());
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

/// Every thread adds to a global counter forever (`forever != 0`): the counter changes, but
/// no thread reads it, so each warp's observable state repeats and its writes reach nothing
/// any thread reads. With `forever == 0` the loop does not run.
#[phaser::kernel(target = "sm_90a")]
fn atomics_forever(counter: &mut [u32], forever: u32) {
    T.require_block(64, 1, 1);
    // ATOMICS-FOREVER
    while forever != 0 {
        T.atomic.add(counter, 0, 1);
    }
}

/// Regression: a loop of global atomics ran to `max_steps` (210-224 s) where an empty loop
/// was found at once; each atomic was an effect that restarted the watch. One CTA (atomics
/// run at once) and four (atomics wait for the grid epoch's end, `grid.rs`).
#[test]
fn a_loop_of_global_atomics_is_reported_in_seconds() {
    let k = atomics_forever::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    for ctas in [1, 4] {
        let counter = dev.alloc::<u32>(1).unwrap();
        let rep = dev.simulate(&k, LaunchConfig::linear(ctas, 64), &[Arg::buffer(&counter), Arg::scalar(1u32)]);
        let rep = rep.unwrap();
        let loops: Vec<_> = rep.findings.iter().filter(|f| f.category == Category::InfiniteLoop).collect();
        assert!(!loops.is_empty(), "{ctas} CTAs:\n{}", rep.text());
        let head = line_of("ATOMICS-FOREVER");
        for f in &loops {
            assert!(f.loc.is_some_and(|l| l.file == FILE && (head..=head + 1).contains(&l.line)), "{}", rep.text());
        }
        // `max_steps` is 2e9 thread-instructions; the repetition is seen after a few thousand
        // iterations of each warp.
        assert!(rep.stats.thread_instructions < 20_000_000, "{ctas} CTAs: {}", rep.stats.thread_instructions);
        let rep = dev.simulate(&k, LaunchConfig::linear(ctas, 64), &[Arg::buffer(&counter), Arg::scalar(0u32)]);
        assert!(rep.unwrap().findings.is_empty());
    }
}

/// CTA 1 computes for `iters` iterations, then sets `flag`; CTA 0's thread 0 spins on `flag`,
/// counting its polls with a global atomic. The spinner's state repeats (the count is never
/// read back) but the computing thread's does not: a legal spin, not a livelock.
#[phaser::kernel(target = "sm_90a")]
fn spin_with_atomics(flag: &mut [u32], polls: &mut [u32], out: &mut [u32], iters: u32) {
    T.require_block(32, 1, 1);
    if T.thread_idx() == 0 {
        if T.block_idx() == 1 {
            let mut h = 1;
            for i in 0..iters {
                h = h * 33 + i;
            }
            out[0] = h;
            flag[0] = 1;
        } else {
            while flag[0] == 0 {
                T.atomic.add(polls, 0, 1);
            }
            out[1] = flag[0] + 1;
        }
    }
}

#[test]
fn a_spin_on_a_flag_another_cta_sets_later_is_not_a_livelock_though_it_writes() {
    let k = spin_with_atomics::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let (flag, polls, out) = (dev.alloc::<u32>(1).unwrap(), dev.alloc::<u32>(1).unwrap(), dev.alloc::<u32>(2).unwrap());
    // Atomics wait for the end of the grid's epoch here (two CTAs): one poll per epoch.
    let iters = 1_200_000u32;
    let args = [Arg::buffer(&flag), Arg::buffer(&polls), Arg::buffer(&out), Arg::scalar(iters)];
    let rep = dev.simulate(&k, LaunchConfig::linear(2, 32), &args).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    let h = (0..iters).fold(1u32, |h, i| h.wrapping_mul(33).wrapping_add(i));
    assert_eq!(dev.download(&out).unwrap(), vec![h, 2]);
    // The spinner polled past the watch's start (4096 back-edges) and its repetition window.
    assert!(dev.download(&polls).unwrap()[0] > 4200, "{:?}", dev.download(&polls).unwrap());
}

/// Thread 0 spins until `ticks` reaches `until`; thread 32 (another warp) adds to `ticks`
/// forever. The adder repeats, and it writes what the spinner reads: no livelock until the
/// spinner has left, then the adder alone loops forever.
#[phaser::kernel(target = "sm_90a")]
fn spinner_and_adder(ticks: &mut [u32], out: &mut [u32], until: u32) {
    T.require_block(64, 1, 1);
    let tid = T.thread_idx();
    if tid == 0 {
        while ticks[0] < until {}
        out[0] = 1;
    }
    if tid == 32 {
        // ADD-FOREVER
        while until != 0 {
            T.atomic.add(ticks, 0, 1);
        }
    }
}

#[test]
fn a_writer_that_repeats_does_not_hide_that_its_writes_reach_a_spinner() {
    let k = spinner_and_adder::kernel().unwrap();
    let dev = Device::sim(SimConfig::default());
    let (ticks, out) = (dev.alloc::<u32>(1).unwrap(), dev.alloc::<u32>(1).unwrap());
    let args = [Arg::buffer(&ticks), Arg::buffer(&out), Arg::scalar(100_000u32)];
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 64), &args).unwrap();
    assert_eq!(dev.download(&out).unwrap(), vec![1], "the spinner left its loop:\n{}", rep.text());
    assert!(dev.download(&ticks).unwrap()[0] >= 100_000);
    let loops: Vec<_> = rep.findings.iter().filter(|f| f.category == Category::InfiniteLoop).collect();
    assert_eq!(loops.len(), 1, "{}", rep.text());
    assert_eq!(loops[0].thread, Some(32), "{}", rep.text());
    let head = line_of("ADD-FOREVER");
    assert!(loops[0].loc.is_some_and(|l| (head..=head + 1).contains(&l.line)), "{}", rep.text());
}
