//! Settings cannot switch the checker off or make a run impossible: every field of
//! `SimConfig`, `LaunchConfig` and `EmitOptions` is validated, refused with the field named,
//! and a cap on the findings a report *stores* never changes its verdict.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value, Watchdog};
use phaser::codegen::{emit_module, EmitOptions, Module, Target};
use phaser::runtime::sim::{Category, SimConfig};
use phaser::{Arg, Device, LaunchConfig, RuntimeError};

/// Every thread stores far past the end of a one-element buffer.
fn out_of_bounds_store() -> phaser::Kernel {
    let mut k = KernelBuilder::new("oob", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let at = k.add(tid, Value::u32(1 << 20));
    k.st_global(out, at, Value::u32(7));
    k.finish().unwrap()
}

/// Thread 0 initializes a barrier for two arrivals, arrives once and waits: a deadlock.
fn deadlock() -> phaser::Kernel {
    let mut k = KernelBuilder::new("stuck", Target::Sm90a);
    let _out = k.param_global("out", Type::U32, true);
    let bars = k.alloc_barriers("bar", 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, Value::u32(2));
        k.mbarrier_arrive(bar);
        k.mbarrier_wait(bar, Value::u32(0));
    });
    k.finish().unwrap()
}

fn launch(k: &phaser::Kernel, sc: SimConfig, threads: u32) -> Result<(), RuntimeError> {
    let dev = Device::sim(sc);
    let out = dev.alloc::<u32>(1).unwrap();
    dev.launch(k, LaunchConfig::linear(1, threads), &[Arg::buffer(&out)]).map(drop)
}

fn setting_of(e: &RuntimeError) -> &'static str {
    match e {
        RuntimeError::InvalidSetting(s) => s.setting,
        other => panic!("expected an invalid setting, got: {other}"),
    }
}

#[test]
fn max_findings_zero_is_refused_with_the_field_named() {
    for k in [out_of_bounds_store(), deadlock()] {
        let e = launch(&k, SimConfig { max_findings: 0, ..SimConfig::default() }, 32).unwrap_err();
        assert_eq!(setting_of(&e), "SimConfig::max_findings", "{e}");
        assert!(e.to_string().starts_with("setting `SimConfig::max_findings` = 0: must be at least 1"), "{e}");
    }
}

#[test]
fn every_zero_that_makes_a_run_impossible_is_refused_by_name() {
    let d = SimConfig::default;
    let cases: [(SimConfig, &str); 5] = [
        (SimConfig { max_steps: 0, ..d() }, "SimConfig::max_steps"),
        (SimConfig { max_memory_bytes: 0, ..d() }, "SimConfig::max_memory_bytes"),
        (SimConfig { max_findings: 0, ..d() }, "SimConfig::max_findings"),
        (SimConfig { max_resident_ctas: 0, ..d() }, "SimConfig::max_resident_ctas"),
        (SimConfig { threads: 0, ..d() }, "SimConfig::threads"),
    ];
    for (sc, field) in cases {
        assert_eq!(sc.validate().unwrap_err().setting, field);
        // `simulate` (findings as data, never an `Err`) checks the settings too.
        let dev = Device::sim(sc);
        let out = dev.alloc::<u32>(1);
        if let Ok(out) = out {
            let e = dev.simulate(&deadlock(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap_err();
            assert_eq!(setting_of(&e), field, "{e}");
        }
    }
    SimConfig::default().validate().unwrap();
    SimConfig::fast().validate().unwrap();
}

#[test]
fn a_cap_on_stored_findings_never_changes_the_verdict() {
    // 32 CTAs of a deadlock give one deadlock finding per CTA: 32 sites, 31 of them dropped.
    let dev = Device::sim(SimConfig { max_findings: 1, ..SimConfig::default() });
    let out = dev.alloc::<u32>(1).unwrap();
    let rep = dev.simulate(&deadlock(), LaunchConfig::linear(32, 32), &[Arg::buffer(&out)]).unwrap();
    assert_eq!(rep.findings.len(), 1, "{rep}");
    assert!(rep.dropped.count > 0, "the other CTAs' deadlocks are counted: {rep}");
    assert_eq!(rep.dropped.count, rep.dropped.errors, "{rep}");
    assert!(rep.has_errors());
    assert!(rep.has(Category::Deadlock));
    let text = rep.text();
    let total = 1 + rep.dropped.count;
    assert!(text.contains(&format!("\n{total} finding(s), {total} error(s):\n")), "{text}");
    let dropped = format!("\n... and {} more finding(s) not kept ({} error(s); categories: ", total - 1, total - 1);
    assert!(text.contains(&dropped), "{text}");
    assert!(rep.dropped.categories.contains(&Category::Deadlock), "{rep}");
    // The same launch fails exactly as it does with the default cap.
    let capped = dev.launch(&deadlock(), LaunchConfig::linear(32, 32), &[Arg::buffer(&out)]).unwrap_err();
    assert!(matches!(capped, RuntimeError::Simulation(_)), "{capped}");
    let e = launch(&out_of_bounds_store(), SimConfig { max_findings: 1, ..SimConfig::default() }, 32).unwrap_err();
    assert!(matches!(e, RuntimeError::Simulation(_)), "{e}");
}

#[test]
fn a_zero_watchdog_is_refused_wherever_it_is_set() {
    let k = out_of_bounds_store();
    // A launch's own watchdog.
    let cfg = LaunchConfig::linear(1, 32).with_watchdog(Watchdog::AfterNs(0));
    let dev = Device::sim(SimConfig::default());
    let out = dev.alloc::<u32>(1).unwrap();
    let e = dev.launch(&k, cfg, &[Arg::buffer(&out)]).unwrap_err().to_string();
    assert!(e.contains("setting `LaunchConfig::watchdog` = AfterNs(0): a watchdog of 0 ns traps every wait"), "{e}");
    // The printer's option.
    let opts = EmitOptions { wait_timeout_ns: Some(0), ..EmitOptions::default() };
    assert_eq!(opts.validate().unwrap_err().setting, "EmitOptions::wait_timeout_ns");
    let e = emit_module(&Module::new(vec![k.clone()]), &opts).unwrap_err().to_string();
    assert!(e.contains("setting `EmitOptions::wait_timeout_ns` = Some(0): a watchdog of 0 ns"), "{e}");
    // A kernel's own.
    let mut b = KernelBuilder::new("w0", Target::Sm90a);
    b.watchdog(Watchdog::AfterNs(0));
    let e = b.finish().unwrap_err().to_string();
    assert!(e.contains("setting `KernelBuilder::watchdog` = AfterNs(0)"), "{e}");
    // `PHASER_WATCHDOG=0ms`: a zero duration is not "off".
    let e = Watchdog::parse("0ms").unwrap_err();
    assert!(e.contains("is zero; write `off` (or `0`) to wait forever"), "{e}");
    assert_eq!(Watchdog::parse("off"), Ok(Watchdog::Off));
    assert_eq!(Watchdog::parse("1ns"), Ok(Watchdog::AfterNs(1)));
}

#[test]
fn a_zero_dimension_names_the_field() {
    let e = LaunchConfig { grid: [1, 0, 1], ..LaunchConfig::linear(1, 1) }.validate().unwrap_err();
    assert_eq!(e.setting, "LaunchConfig::grid");
    let e = LaunchConfig { block: [0, 1, 1], ..LaunchConfig::linear(1, 1) }.validate().unwrap_err();
    assert_eq!(e.setting, "LaunchConfig::block");
    LaunchConfig::linear(1, 1).validate().unwrap();
}
