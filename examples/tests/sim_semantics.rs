//! mbarrier semantics in the simulator, the seeds' phase table from a real simulated run,
//! deadlock reports, and the trace export.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{Category, SimConfig, Strategy};
use phaser::{Arg, Device, LaunchConfig, RuntimeError, Target};
use phaser_examples::gallery::phase_table::{self, HEADERS, PROBE, SEED_TABLE};

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

#[test]
fn seed_phase_table_comes_out_of_a_simulated_run() {
    for s in [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial] {
        let dev = Device::sim(SimConfig::default().with_strategy(s));
        let k = phase_table::phase_tma(Target::Sm90a).unwrap();
        let inp = dev.upload(&phaser_examples::gallery::random_u32(4 * 64, 1)).unwrap();
        let out = dev.alloc::<u32>(4 * 32).unwrap();
        let r = dev
            .launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&inp), Arg::buffer(&out), Arg::scalar(4u32)])
            .unwrap();
        let rep = r.sim.expect("simulator report");
        let rows = rep.probe_rows(PROBE);
        let want: Vec<Vec<i64>> = SEED_TABLE.iter().map(|r| r.to_vec()).collect();
        assert_eq!(rows, want, "{s:?}");
        let table = rep.probe_table(PROBE, &HEADERS);
        assert!(table.starts_with("iteration | stage | phase parity waited on"), "{table}");
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6, "{table}");
        let cells: Vec<Vec<&str>> = lines[2..].iter().map(|l| l.split('|').map(str::trim).collect()).collect();
        assert_eq!(cells[2], ["2", "0", "1", "0", "1"], "{table}");
    }
}

/// A kernel of 32 threads around one barrier of `count`; `body` runs in thread 0 after init
/// and a `bar.sync`, and writes its observations to `out`.
fn one_barrier_kernel(
    name: &str,
    count: u32,
    body: impl FnOnce(&mut KernelBuilder, phaser::codegen::builder::Barrier, phaser::codegen::builder::GlobalPtr),
) -> phaser::Kernel {
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    let bar = k.barrier_at(bars, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(count)));
    k.cta_sync();
    k.if_then(is0, |k| body(k, bar, out));
    k.finish().unwrap()
}

fn run_out(k: &phaser::Kernel, n: usize) -> Vec<u32> {
    let dev = sim();
    let out = dev.upload(&vec![0xFFFF_FFFFu32; n]).unwrap();
    dev.launch(k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
    dev.download(&out).unwrap()
}

#[test]
fn wait_on_parity_one_passes_on_a_fresh_barrier() {
    let k = one_barrier_kernel("fresh_parity", 1, |k, bar, out| {
        k.mbarrier_wait(bar, Value::u32(1));
        let p0 = k.mbarrier_test_wait(bar, Value::u32(0));
        let p0 = k.cvt(p0, Type::U32);
        k.st_global(out, Value::u32(0), p0);
        k.mbarrier_arrive(bar);
    });
    assert_eq!(run_out(&k, 1), [0], "phase 0 has not completed, parity 1 has");
}

#[test]
fn arrive_expect_tx_is_one_arrival_plus_tx_and_the_phase_waits_for_both() {
    let k = one_barrier_kernel("expect_tx", 1, |k, bar, out| {
        let state = k.mbarrier_arrive_expect_tx(bar, Value::u32(48));
        let pending = k.mbarrier_pending_count(state);
        k.st_global(out, Value::u32(0), pending);
        let done = k.mbarrier_test_wait(bar, Value::u32(0));
        let done = k.cvt(done, Type::U32);
        k.st_global(out, Value::u32(1), done);
        k.mbarrier_complete_tx(bar, Value::u32(16));
        let done = k.mbarrier_test_wait(bar, Value::u32(0));
        let done = k.cvt(done, Type::U32);
        k.st_global(out, Value::u32(2), done);
        k.mbarrier_complete_tx(bar, Value::u32(32));
        let done = k.mbarrier_test_wait(bar, Value::u32(0));
        let done = k.cvt(done, Type::U32);
        k.st_global(out, Value::u32(3), done);
    });
    // pending 0 after the one arrival; incomplete with 48 and then 32 bytes outstanding;
    // complete once tx reaches 0.
    assert_eq!(run_out(&k, 4), [0, 0, 0, 1]);
}

#[test]
fn phase_needs_all_expected_arrivals() {
    let k = one_barrier_kernel("two_arrivals", 2, |k, bar, out| {
        k.mbarrier_arrive(bar);
        let d = k.mbarrier_test_wait(bar, Value::u32(0));
        let d = k.cvt(d, Type::U32);
        k.st_global(out, Value::u32(0), d);
        k.mbarrier_arrive(bar);
        let d = k.mbarrier_test_wait(bar, Value::u32(0));
        let d = k.cvt(d, Type::U32);
        k.st_global(out, Value::u32(1), d);
    });
    assert_eq!(run_out(&k, 2), [0, 1]);
}

#[test]
fn deadlock_is_reported_with_waiter_barrier_phase_and_last_arrivals() {
    let k = one_barrier_kernel("deadlock", 2, |k, bar, _out| {
        k.mbarrier_arrive(bar);
        k.mbarrier_wait(bar, Value::u32(0));
    });
    let dev = sim();
    let out = dev.alloc::<u32>(1).unwrap();
    let err = dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap_err();
    let RuntimeError::Simulation(report) = &err else { panic!("expected a simulation error, got {err}") };
    // The deadlock, and its cause: the phase lacks an arrival no thread will make.
    assert_eq!(report.categories(), [Category::Deadlock, Category::MissingArrival], "the findings travel as data");
    let text = err.to_string();
    for needle in [
        "error[deadlock]",
        "kernel `deadlock`",
        "thread 0",
        "barrier `bar[0]`",
        "blocked since tick",
        "for parity 0",
        "pending 1 of 2 arrivals, tx-count 0",
        "error[missing-arrival]",
        "lacks 1 of its 2 arrivals",
        "thread 0 arrived x1 in phase 0",
        "examples/tests/sim_semantics.rs:",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    let rep = dev.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
    assert_eq!(rep.categories(), [Category::Deadlock, Category::MissingArrival]);
    let f = &rep.findings[0];
    assert_eq!((f.thread, f.phase, f.barrier.as_ref().map(|b| b.index)), (Some(0), Some(0), Some(0)));
}

#[test]
fn step_limit_stops_an_infinite_loop_with_a_clear_error() {
    let mut k = KernelBuilder::new("spin", Target::Sm90a);
    k.require_block(32, 1, 1);
    let x = k.var(Value::u32(0));
    k.loop_(|k| {
        let y = k.add(Value::Reg(x), Value::u32(1));
        k.assign(x, y);
    });
    let k = k.finish().unwrap();
    let dev = Device::sim(SimConfig { max_steps: 100_000, ..SimConfig::default() });
    let err = dev.launch(&k, LaunchConfig::linear(1, 32), &[]).unwrap_err().to_string();
    assert!(err.contains("max_steps") && err.contains("infinite loop"), "{err}");
}

#[test]
fn memory_limit_is_a_clear_error() {
    let dev = Device::sim(SimConfig { max_memory_bytes: 1 << 20, ..SimConfig::default() });
    let err = dev.alloc::<u32>(1 << 20).expect_err("4 MiB over a 1 MiB limit").to_string();
    assert!(err.contains("memory limit"), "{err}");
}

#[test]
fn chrome_trace_has_barrier_counters_arrivals_phase_flips_and_waits() {
    let dev = sim();
    let k = phase_table::phase_tma(Target::Sm90a).unwrap();
    let inp = dev.upload(&[1u32; 256]).unwrap();
    let out = dev.alloc::<u32>(128).unwrap();
    let r = dev
        .launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&inp), Arg::buffer(&out), Arg::scalar(4u32)])
        .unwrap();
    let json = r.sim.unwrap().chrome_trace_json();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ev = v["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = ev.iter().filter_map(|e| e["name"].as_str()).collect();
    // Copies land in pieces (a 256-byte copy in four 64-byte pieces), each completing tx.
    for want in ["init tma_bar[0] count 1", "arrive x1", "expect_tx +256", "complete_tx -64", "phase 0 complete"] {
        assert!(names.contains(&want), "no {want:?} event");
    }
    assert!(ev.iter().any(|e| e["ph"] == "C" && e["name"] == "tma_bar[1]"), "counter track per barrier");
    assert!(ev.iter().any(|e| e["ph"] == "B" && e["name"].as_str().unwrap().starts_with("wait tma_bar")));
    let begins = ev.iter().filter(|e| e["ph"] == "B").count();
    let ends = ev.iter().filter(|e| e["ph"] == "E").count();
    assert_eq!(begins, ends, "every wait span is closed");
}
