//! A deadlocked kernel becomes an error that names the starved wait: the watchdog writes a
//! record (barrier, parity, phase, CTA, thread) before it traps, and the runtime decodes it
//! with the wait's Rust line. Deliberately broken kernels, one per way a pipeline starves.
//!
//! A trapped kernel poisons its CUDA context for the rest of the process, so each broken
//! kernel runs in a child process: the test re-executes this test binary with
//! `PHASER_WATCHDOG_CASE=<case>` and `--exact <test>`, and checks what the child printed.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::emit::WaitKind;
use phaser::codegen::ir::{Dim, MemScope, Value};
use phaser::runtime::report::Category;
use phaser::runtime::sim::SimConfig;
use phaser::runtime::{RuntimeError, Watchdog};
use phaser::{Device, Kernel, LaunchConfig, Target, Type};
use std::process::Command;
use std::time::{Duration, Instant};

const CASE: &str = "PHASER_WATCHDOG_CASE";
/// What the child prints before its error, so the parent finds the error's text.
const MARK: &str = "watchdog-error: ";
/// Short, so the suite does not wait 4 s per case.
const TIMEOUT: Duration = Duration::from_millis(300);

/// In the child (`PHASER_WATCHDOG_CASE=case`): launch the broken kernel and print the error.
/// In the parent: run `test` in a child and return its output.
fn child_or_parent(case: &str, test: &str, run: impl FnOnce() -> RuntimeError) -> Option<String> {
    if std::env::var(CASE).as_deref() == Ok(case) {
        let t = Instant::now();
        let err = run();
        println!("{MARK}{err}");
        println!("elapsed: {:?}", t.elapsed());
        return None;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(CASE, case)
        .output()
        .expect("re-running this test binary");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("--- child {case} ---\n{text}");
    assert!(out.status.success(), "the child failed:\n{text}");
    // libtest prints `test NAME ... ` without a line break before the test's own output; the
    // error runs over several lines, up to the child's `elapsed:` line.
    let start = text.find(MARK).unwrap_or_else(|| panic!("no error printed:\n{text}")) + MARK.len();
    let end = text[start..].find("\nelapsed: ").map_or(text.len(), |e| start + e);
    Some(text[start..end].into())
}

fn gpu() -> Device {
    Device::cuda(0).expect("needs a CUDA GPU")
}

/// Launch `k` expecting the watchdog's fault; returns it.
fn fault(k: &Kernel, cfg: LaunchConfig, args: &[phaser::Arg]) -> RuntimeError {
    let err = gpu().launch(k, cfg, args).expect_err("the kernel must not finish");
    assert!(matches!(err, RuntimeError::KernelFault { watchdog: Some(_), .. }), "no watchdog record: {err}");
    err
}

fn assert_names(err: &str, line: u32, barrier: &str, parity: u32, phase: u32, thread: &str, cta: &str) {
    let at = format!("at {}:{line}:", file!());
    let wait = format!("on `{barrier}` for the phase of parity {parity} never saw it complete: the barrier's current phase has parity {phase};");
    let who = format!("thread {thread} of CTA {cta} on SM");
    for want in [
        at.as_str(),
        &wait,
        &who,
        "the wait watchdog trapped it",
        "The CUDA context is poisoned",
        "restart the process",
    ] {
        assert!(err.contains(want), "expected {want:?} in:\n{err}");
    }
}

/// The barriers the GPU error names as the likely root (its `likely root (*)` line).
fn gpu_root(err: &str) -> Vec<String> {
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("likely root (*): the waits on "))
        .unwrap_or_else(|| panic!("no root in:\n{err}"));
    let names = &line[..line.find(": ").expect("the root's reason")];
    names.split(", ").map(|n| n.trim_matches('`').to_string()).collect()
}

/// The barriers the simulator's cause findings (wrong parity, missing arrivals, a tx
/// imbalance) name for the same launch: the checker's verdict, no GPU needed.
fn sim_roots(k: &Kernel, cfg: LaunchConfig, input: bool) -> Vec<String> {
    let dev = Device::sim(SimConfig::default());
    let buf = dev.upload(&[1.0f32; 64]).unwrap();
    let args = if input { vec![phaser::Arg::buffer(&buf)] } else { vec![] };
    let err = dev.launch(k, cfg, &args).expect_err("the simulator finds the deadlock");
    let findings = err.findings().unwrap_or_else(|| panic!("not a simulation report: {err}"));
    let causes = [Category::WrongParity, Category::MissingArrival, Category::TxImbalance];
    let mut v: Vec<String> = findings
        .iter()
        .filter(|f| causes.contains(&f.category))
        .filter_map(|f| f.barrier.as_ref().map(|b| format!("{}[{}]", b.name, b.index)))
        .collect();
    v.dedup();
    assert!(!v.is_empty(), "no cause finding: {err}");
    v
}

/// The GPU's root is the simulator's: every barrier the GPU names as the root is one a
/// cause finding of the simulator names.
fn assert_same_root(err: &str, k: &Kernel, cfg: LaunchConfig, input: bool) {
    let (gpu, sim) = (gpu_root(err), sim_roots(k, cfg, input));
    assert!(gpu.iter().all(|b| sim.contains(b)), "GPU root {gpu:?}, simulator's {sim:?}:\n{err}");
}

/// A producer that starts waiting on `empty` with parity 0: a fresh barrier is in phase 0,
/// so that wait never succeeds (producers start at parity 1). Returns the wait's line.
fn wrong_start_parity() -> (Kernel, u32) {
    let mut line = 0;
    let mut k = KernelBuilder::new("wrong_start_parity", Target::Sm90a);
    let full = k.alloc_barriers("full", 2);
    let empty = k.alloc_barriers("empty", 2);
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        for i in 0..2 {
            let f = k.barrier_at(full, Value::u32(i));
            let e = k.barrier_at(empty, Value::u32(i));
            k.mbarrier_init(f, Value::u32(1));
            k.mbarrier_init(e, Value::u32(1));
        }
        k.fence_mbarrier_init();
    });
    k.cta_sync();
    k.if_then(first, |k| {
        let e = k.barrier_at(empty, Value::u32(1));
        line = line!() + 1;
        k.mbarrier_wait(e, Value::u32(0));
    });
    (k.finish().unwrap(), line)
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn wrong_start_parity_names_empty_1() {
    let (k, line) = wrong_start_parity();
    let Some(err) = child_or_parent("wrong_start_parity", "wrong_start_parity_names_empty_1", || {
        fault(&k, LaunchConfig::linear(1, 32).with_watchdog(Watchdog::after(TIMEOUT)), &[])
    }) else {
        return;
    };
    assert_names(&err, line, "empty[1]", 0, 0, "(0,0,0)", "(0,0,0)");
    assert_eq!(gpu_root(&err), ["empty[1]"]);
    assert_same_root(&err, &k, LaunchConfig::linear(1, 32), false);
}

/// One arrival short: the barrier expects 2, one thread arrives. Only thread 33 of CTA 2
/// waits, so the record must name that thread and CTA; the timeout is the kernel's own.
fn missing_arrive() -> (Kernel, u32) {
    let mut line = 0;
    let mut k = KernelBuilder::new("missing_arrive", Target::Sm90a);
    k.watchdog(Watchdog::after(TIMEOUT));
    let full = k.alloc_barriers("full", 3);
    let tid = k.thread_idx(Dim::X);
    let cta = k.block_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    let f = k.barrier_at(full, Value::u32(1));
    k.if_then(first, |k| {
        k.mbarrier_init(f, Value::u32(2));
        k.fence_mbarrier_init();
    });
    k.cta_sync();
    k.if_then(first, |k| {
        k.mbarrier_arrive(f);
    });
    let t33 = k.eq(tid, Value::u32(33));
    let c2 = k.eq(cta, Value::u32(2));
    let waiter = k.and(t33, c2);
    k.if_then(waiter, |k| {
        line = line!() + 1;
        k.mbarrier_wait(f, Value::u32(0));
    });
    (k.finish().unwrap(), line)
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn missing_arrive_names_full_1_and_the_waiting_thread() {
    let (k, line) = missing_arrive();
    let test = "missing_arrive_names_full_1_and_the_waiting_thread";
    let Some(err) = child_or_parent("missing_arrive", test, || fault(&k, LaunchConfig::linear(3, 64), &[])) else {
        return;
    };
    assert_names(&err, line, "full[1]", 0, 0, "(33,0,0)", "(2,0,0)");
    assert_eq!(gpu_root(&err), ["full[1]"]);
    assert_same_root(&err, &k, LaunchConfig::linear(3, 64), false);
}

/// The same starved wait queued on a stream: the launch returns at once, and its `wait`
/// reports the watchdog's fault with the same record (the record is the device's, cleared
/// when no other launch is in flight).
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_stream_launch_reports_the_watchdog_record_at_wait() {
    let (k, line) = missing_arrive();
    let test = "a_stream_launch_reports_the_watchdog_record_at_wait";
    let Some(err) = child_or_parent("stream_missing_arrive", test, || {
        let dev = gpu();
        let stream = dev.stream().unwrap();
        let run = stream.launch(&k, LaunchConfig::linear(3, 64), []).expect("queued");
        let err = run.wait().expect_err("the kernel must not finish");
        assert!(matches!(err, RuntimeError::KernelFault { watchdog: Some(_), .. }), "no watchdog record: {err}");
        err
    }) else {
        return;
    };
    assert_names(&err, line, "full[1]", 0, 0, "(33,0,0)", "(2,0,0)");
}

/// The starved wait replayed from a CUDA graph: `Graph::synchronize` reports the watchdog's
/// record, decoded against the graph's kernel.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_graph_replay_reports_the_watchdog_record() {
    let (k, line) = missing_arrive();
    let test = "a_graph_replay_reports_the_watchdog_record";
    let Some(err) = child_or_parent("graph_missing_arrive", test, || {
        let dev = gpu();
        let stream = dev.stream().unwrap();
        let mut g = stream.graph().unwrap();
        g.launch(&k, LaunchConfig::linear(3, 64), []).unwrap();
        let mut graph = g.build().unwrap();
        graph.replay().unwrap();
        let err = graph.synchronize().expect_err("the kernel must not finish");
        assert!(matches!(err, RuntimeError::KernelFault { watchdog: Some(_), .. }), "no watchdog record: {err}");
        err
    }) else {
        return;
    };
    assert_names(&err, line, "full[1]", 0, 0, "(33,0,0)", "(2,0,0)");
}

/// `arrive.expect_tx` of 256 bytes, but the bulk copy brings 128: the tx-count never
/// reaches zero and the phase never completes.
fn tx_over_count() -> (Kernel, u32) {
    let mut k = KernelBuilder::new("tx_over_count", Target::Sm90a);
    let src = k.param_global("src", Type::F32, false);
    let full = k.alloc_barriers("full", 1);
    let data = k.alloc_shared("data", Type::F32, 64);
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    let f = k.barrier_at(full, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(f, Value::u32(1));
        k.fence_mbarrier_init();
    });
    k.cta_sync();
    k.if_then(first, |k| {
        k.mbarrier_arrive_expect_tx(f, Value::u32(256));
        let dst = k.shared_elem_addr(data, Value::u32(0));
        let from = k.global_elem_addr(src, Value::u32(0));
        k.bulk_load(dst, from, Value::u32(128), f);
    });
    let line = line!() + 1;
    k.mbarrier_wait(f, Value::u32(0));
    (k.finish().unwrap(), line)
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tx_over_count_names_full_0() {
    let (k, line) = tx_over_count();
    let Some(err) = child_or_parent("tx_over_count", "tx_over_count_names_full_0", || {
        let dev = gpu();
        let input = dev.upload(&[1.0f32; 64]).unwrap();
        let cfg = LaunchConfig::linear(1, 32).with_watchdog(Watchdog::after(TIMEOUT));
        let err = dev.launch(&k, cfg, &[phaser::Arg::buffer(&input)]).expect_err("the kernel must not finish");
        assert!(matches!(err, RuntimeError::KernelFault { watchdog: Some(_), .. }), "no watchdog record: {err}");
        err
    }) else {
        return;
    };
    let at = format!("at {}:{line}:", file!());
    // Any of the 32 waiting threads may be the first to give up.
    let wait =
        "on `full[0]` for the phase of parity 0 never saw it complete: the barrier's current phase has parity 0;";
    for want in [at.as_str(), wait, "of CTA (0,0,0)", "; 32 threads in"] {
        assert!(err.contains(want), "expected {want:?} in:\n{err}");
    }
    assert_eq!(gpu_root(&err), ["full[0]"]);
    assert_same_root(&err, &k, LaunchConfig::linear(1, 32), true);
}

/// The case: a producer/consumer pipeline whose producer starts its `empty` waits at
/// parity 0. Every consumer starves on `full[0]` (the symptom), the producer on `empty[0]`
/// (the cause). The report records both groups and names `empty[0]` as the root, as the
/// simulator does. Returns the producer's and the consumers' wait lines.
fn pipeline_wrong_start_parity() -> (Kernel, u32, u32) {
    let (mut producer, mut consumer) = (0, 0);
    let mut k = KernelBuilder::new("pipeline_wrong_start_parity", Target::Sm90a);
    let src = k.param_global("src", Type::F32, false);
    let full = k.alloc_barriers("full", 1);
    let empty = k.alloc_barriers("empty", 1);
    let data = k.alloc_shared("data", Type::F32, 64);
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    let f = k.barrier_at(full, Value::u32(0));
    let e = k.barrier_at(empty, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(f, Value::u32(1));
        // One arrival per consumer warp (two warps: threads 32..95).
        k.mbarrier_init(e, Value::u32(2));
        k.fence_mbarrier_init();
    });
    k.cta_sync();
    k.if_then(first, |k| {
        producer = line!() + 1;
        k.mbarrier_wait(e, Value::u32(0)); // wrong: a producer's first wait is at parity 1
        k.mbarrier_arrive_expect_tx(f, Value::u32(256));
        let dst = k.shared_elem_addr(data, Value::u32(0));
        let from = k.global_elem_addr(src, Value::u32(0));
        k.bulk_load(dst, from, Value::u32(256), f);
    });
    let consumers = k.ge(tid, Value::u32(32));
    k.if_then(consumers, |k| {
        consumer = line!() + 1;
        k.mbarrier_wait(f, Value::u32(0));
        let lane = k.and(tid, Value::u32(31));
        let leader = k.eq(lane, Value::u32(0));
        k.if_then(leader, |k| {
            k.mbarrier_arrive(e);
        });
    });
    (k.finish().unwrap(), producer, consumer)
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn pipeline_wrong_start_parity_records_every_wait_and_names_empty_0() {
    let (k, producer, consumer) = pipeline_wrong_start_parity();
    let test = "pipeline_wrong_start_parity_records_every_wait_and_names_empty_0";
    let cfg = || LaunchConfig::linear(2, 96).with_watchdog(Watchdog::after(TIMEOUT));
    let Some(err) = child_or_parent("pipeline_wrong_start_parity", test, || {
        let dev = gpu();
        let input = dev.upload(&[1.0f32; 64]).unwrap();
        let err = dev.launch(&k, cfg(), &[phaser::Arg::buffer(&input)]).expect_err("the kernel must not finish");
        assert!(matches!(err, RuntimeError::KernelFault { watchdog: Some(_), .. }), "no watchdog record: {err}");
        err
    }) else {
        return;
    };
    for want in [
        format!("at {}:{producer}:", file!()),
        format!("at {}:{consumer}:", file!()),
        // Both CTAs: two producers, four consumer warps of 32 lanes.
        "on `empty[0]` for the phase of parity 0 never saw it complete: the barrier's current phase has parity 0; 2 threads in 2 warps of 2 CTAs".into(),
        // Four consumer warps of 32 lanes (more entries if a warp's lanes were not converged).
        "on `full[0]` for the phase of parity 0 never saw it complete: the barrier's current phase has parity 0; 128 threads in".into(),
        "of 2 CTAs\n".into(),
        "recorded when the trap fired (130 threads in 2 groups)".into(),
        "LaunchConfig { grid: [2, 1, 1], block: [96, 1, 1], dynamic_shared_bytes: 0, .. }".into(),
        "phaser check --only pipeline_wrong_start_parity --exact".into(),
    ] {
        assert!(err.contains(&want), "expected {want:?} in:\n{err}");
    }
    assert_eq!(gpu_root(&err), ["empty[0]"]);
    assert_same_root(&err, &k, cfg(), true);
}

/// The simulator half of the agreement, on every machine: each broken kernel's cause
/// findings name the barrier the GPU report names as its root.
#[test]
fn the_simulator_names_each_broken_kernels_root() {
    let (k, _) = wrong_start_parity();
    assert_eq!(sim_roots(&k, LaunchConfig::linear(1, 32), false), ["empty[1]"]);
    let (k, _) = missing_arrive();
    assert_eq!(sim_roots(&k, LaunchConfig::linear(3, 64), false), ["full[1]"]);
    let (k, _) = tx_over_count();
    assert_eq!(sim_roots(&k, LaunchConfig::linear(1, 32), true), ["full[0]"]);
    let (k, _, _) = pipeline_wrong_start_parity();
    assert!(sim_roots(&k, LaunchConfig::linear(2, 96), true).contains(&"empty[0]".to_string()));
}

/// Two CTAs wait on `flags[2]` for 1 and nobody signals it: a flag wait that would spin
/// forever. Returns the wait's line.
fn never_signalled_flag() -> (Kernel, u32) {
    let mut k = KernelBuilder::new("never_signalled_flag", Target::Sm90a);
    let flags = k.param_global("flags", Type::U32, true);
    let line = line!() + 1;
    k.flag_wait(flags, Value::u32(2), Value::u32(1), MemScope::Gpu);
    (k.finish().unwrap(), line)
}

/// Two CTAs of two warps.
fn flag_cfg() -> LaunchConfig {
    LaunchConfig::linear(2, 64)
}

/// The simulator's infinite-loop finding for the never-signalled flag, at the wait's line.
fn sim_flag_finding(k: &Kernel, line: u32) -> String {
    let dev = Device::sim(SimConfig::default());
    let flags = dev.upload(&[0u32; 4]).unwrap();
    let err = dev.launch(k, flag_cfg(), &[phaser::Arg::buffer(&flags)]).expect_err("the flag is never signalled");
    let findings = err.findings().unwrap_or_else(|| panic!("not a simulation report: {err}"));
    let f = findings
        .iter()
        .find(|f| f.category == Category::InfiniteLoop && f.loc.is_some_and(|l| l.line == line))
        .unwrap_or_else(|| panic!("no infinite loop at line {line}: {err}"));
    f.message.clone()
}

/// How both reports name the flag (`ir::flag_name`, in backticks).
fn flag_named() -> String {
    format!("the flag `{}`", phaser::codegen::ir::flag_name("flags", 2))
}

/// Host-only: the flag wait is a site of the record's table, and the simulator names the flag
/// as the GPU's record will.
#[test]
fn a_never_signalled_flag_is_a_site_and_the_simulator_names_it() {
    let (k, line) = never_signalled_flag();
    let sites = k.wait_sites();
    assert_eq!(sites.len(), 1);
    assert_eq!((sites[0].loc.unwrap().file, sites[0].loc.unwrap().line), (file!(), line));
    assert!(matches!(&sites[0].kind, WaitKind::Flag { buffer: Some(b) } if b.name == "flags"), "{sites:?}");
    let msg = sim_flag_finding(&k, line);
    assert!(msg.contains(&format!("spins forever on {}, at buffer #0 byte 8 (of 16)", flag_named())), "{msg}");
}

/// On the GPU the same wait traps within the watchdog's time instead of hanging, and the
/// error names the flag wait's line, its buffer and element, the value waited for and read,
/// every starved warp (2 per CTA), and the flag as the root: the simulator's flag.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_never_signalled_flag_traps_naming_the_flag_wait() {
    let (k, line) = never_signalled_flag();
    let test = "a_never_signalled_flag_traps_naming_the_flag_wait";
    let Some(err) = child_or_parent("never_signalled_flag", test, || {
        let dev = gpu();
        let flags = dev.upload(&[0u32; 4]).unwrap();
        let t = Instant::now();
        let err = fault(&k, flag_cfg().with_watchdog(Watchdog::after(TIMEOUT)), &[phaser::Arg::buffer(&flags)]);
        // The limit, two grace periods at most (the default hint's), and the trap's own time.
        assert!(t.elapsed() < Duration::from_secs(10), "took {:?}", t.elapsed());
        err
    }) else {
        return;
    };
    let named = flag_named();
    for want in [
        format!("at {}:{line}:", file!()),
        format!("on {named} (`flag.wait` for 1) never saw it reached: the last try read 0; 128 threads in 4 warps of 2 CTAs"),
        "likely root (*): the waits on `flags[2]`: a flag that is never signalled".into(),
        "the wait watchdog trapped it".into(),
        "(flag buffer at 0x".into(),
        // The replay hint's shape is the launch's: the simulator, given it, names the same flag.
        "`LaunchConfig { grid: [2, 1, 1], block: [64, 1, 1], ".into(),
        "The CUDA context is poisoned".into(),
    ] {
        assert!(err.contains(&want), "expected {want:?} in:\n{err}");
    }
    assert_eq!(gpu_root(&err), ["flags[2]"]);
    assert!(sim_flag_finding(&k, line).contains(&named));
}

/// The site tables the records are decoded against: each broken kernel's wait is where
/// its builder says (host-only, runs without a GPU).
#[test]
fn site_tables_hold_the_waits_lines() {
    for (k, line) in [wrong_start_parity(), missing_arrive(), tx_over_count()] {
        let sites = k.wait_sites();
        assert_eq!(sites.len(), 1, "{}", k.name());
        let loc = sites[0].loc.expect("a Rust location");
        assert_eq!((loc.file, loc.line), (file!(), line), "{}", k.name());
        assert_eq!(sites[0].kind, WaitKind::Barrier { parity: Some("0".into()) });
    }
}

/// A deadlock with the default watchdog (4 s), as the simplest kernel has it: the error
/// arrives in seconds, not never.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn deadlocked_wait_becomes_a_kernel_fault() {
    let Some(err) = child_or_parent("default", "deadlocked_wait_becomes_a_kernel_fault", || {
        let dev = gpu();
        // Expects 2 arrivals; only 1 thread arrives: the phase never completes.
        let mut k = KernelBuilder::new("deadlock", Target::Sm90a);
        let bars = k.alloc_barriers("b", 1);
        let b = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(b, Value::u32(2));
        k.mbarrier_arrive(b);
        k.mbarrier_wait(b, Value::u32(0));
        let k = k.finish().unwrap();
        let t = Instant::now();
        let err = dev.launch(&k, LaunchConfig::linear(1, 1), &[]).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(30), "took {:?}", t.elapsed());
        err
    }) else {
        return;
    };
    assert!(err.contains("on `b[0]` for the phase of parity 0"), "{err}");
    assert!(err.contains("gave up after 4."), "the default timeout is 4 s: {err}");
}

/// With the watchdog off (a cuda-gdb session's setting) a healthy kernel runs as before,
/// from its own module (the PTX differs: no timer, no trap).
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn watchdog_off_loads_its_own_module_and_runs() {
    let dev = gpu();
    let mut k = KernelBuilder::new("healthy", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let bars = k.alloc_barriers("b", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        k.mbarrier_init(b, Value::u32(1));
        k.fence_mbarrier_init();
    });
    k.cta_sync();
    k.if_then(first, |k| {
        k.mbarrier_arrive(b);
    });
    k.mbarrier_wait(b, Value::u32(0));
    k.st_global(out, tid, tid);
    let k = k.finish().unwrap();
    let on = k.ptx_with(&phaser::codegen::EmitOptions::default()).unwrap();
    let off = k.ptx_with(&phaser::codegen::EmitOptions { wait_timeout_ns: None, ..Default::default() }).unwrap();
    assert!(on.contains("trap;") && !off.contains("trap;"));
    for w in [Watchdog::Off, Watchdog::DEFAULT] {
        let mut buf = dev.upload(&[0u32; 32]).unwrap();
        dev.launch(&k, LaunchConfig::linear(1, 32).with_watchdog(w), &[phaser::Arg::buffer(&buf)]).unwrap();
        assert_eq!(dev.download(&buf).unwrap(), (0..32).collect::<Vec<u32>>(), "{w}");
        dev.fill(&mut buf, 0).unwrap();
    }
    match &dev {
        Device::Cuda(d) => assert_eq!(d.modules.len(), 2, "one module per watchdog setting"),
        Device::Sim(_) => unreachable!(),
    }
}
