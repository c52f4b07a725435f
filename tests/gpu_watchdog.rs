//! A deadlocked kernel becomes an error that names the starved wait: the watchdog writes a
//! record (barrier, parity, phase, CTA, thread) before it traps, and the runtime decodes it
//! with the wait's Rust line. Deliberately broken kernels, one per way a pipeline starves.
//!
//! A trapped kernel poisons its CUDA context for the rest of the process, so each broken
//! kernel runs in a child process: the test re-executes this test binary with
//! `PHASER_WATCHDOG_CASE=<case>` and `--exact <test>`, and checks what the child printed.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Value};
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
    // libtest prints `test NAME ... ` without a line break before the test's own output.
    let error = text.lines().find_map(|l| l.find(MARK).map(|i| &l[i + MARK.len()..]));
    Some(error.unwrap_or_else(|| panic!("no error printed:\n{text}")).into())
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
        "the mbarrier wait watchdog trapped it",
        "The CUDA context is poisoned",
        "restart the process",
    ] {
        assert!(err.contains(want), "expected {want:?} in:\n{err}");
    }
}

/// A producer that starts waiting on `empty` with parity 0: a fresh barrier is in phase 0,
/// so that wait never succeeds (producers start at parity 1).
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
    for want in [at.as_str(), wait, "of CTA (0,0,0)"] {
        assert!(err.contains(want), "expected {want:?} in:\n{err}");
    }
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
        assert_eq!(sites[0].parity.as_deref(), Some("0"));
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
