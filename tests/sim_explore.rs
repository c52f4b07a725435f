//! Exhaustive exploration (`Device::explore`): a protocol bug that sampled schedules miss and
//! the explorer finds, its counterexample replayed from its schedule, correct kernels explored
//! completely, the bounds stated when they stop an exploration, and the settings refused with
//! the field named.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{BoundHit, Category, Schedule, SimConfig, Strategy};
use phaser::{Arg, Device, Kernel, LaunchConfig, RuntimeError, Target};

const FILE: &str = "tests/sim_explore.rs";

/// The line of this file holding `marker` (a comment on the line above the statement).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_explore.rs").lines().collect();
    let i = lines.iter().position(|l| l.trim_start() == format!("// {marker}")).unwrap_or_else(|| panic!("{marker}"));
    i as u32 + 2
}

/// Rounds of the torn-observation kernel.
const ROUNDS: u32 = 3;

/// Warp 0's lane 0 publishes each round in two halves, arriving on `a[r]` then `b[r]`, and
/// waits for the consumer's acknowledgement on `ack[r]`. Warp 1's lane 0 waits for `a[r]`,
/// then *probes* `b[r]` (`test_wait`) and counts the rounds it caught half-published, before
/// waiting for `b[r]` properly. The bug: the count indexes `out`, which holds `ROUNDS`
/// entries, so only a consumer that caught every round torn writes past the buffer. That
/// needs the producer preempted between its two arrivals in each of the rounds, and the
/// consumer to probe right then: a sampled schedule rarely lines up three times.
fn torn_rounds(fixed: bool) -> Kernel {
    let mut k = KernelBuilder::new(if fixed { "torn_rounds_fixed" } else { "torn_rounds" }, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(64, 1, 1);
    let a = k.alloc_barriers("a", ROUNDS);
    let b = k.alloc_barriers("b", ROUNDS);
    let ack = k.alloc_barriers("ack", ROUNDS);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        for arr in [a, b, ack] {
            for r in 0..ROUNDS {
                let bar = k.barrier_at(arr, Value::u32(r));
                k.mbarrier_init(bar, Value::u32(1));
            }
        }
    });
    k.cta_sync();
    k.if_then(is0, |k| {
        // producer-loop
        k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, r| {
            let ar = k.barrier_at(a, r);
            k.mbarrier_arrive(ar);
            let br = k.barrier_at(b, r);
            k.mbarrier_arrive(br);
            let ackr = k.barrier_at(ack, r);
            k.mbarrier_wait(ackr, Value::u32(0));
        });
    });
    let is32 = k.eq(tid, Value::u32(32));
    k.if_then(is32, |k| {
        let torn = k.var(Value::u32(0));
        // consumer-loop
        k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, r| {
            let ar = k.barrier_at(a, r);
            k.mbarrier_wait(ar, Value::u32(0));
            let br = k.barrier_at(b, r);
            let done = k.mbarrier_test_wait(br, Value::u32(0));
            let done = k.cvt(done, Type::U32);
            let caught = k.sub(Value::u32(1), done);
            let t = k.add(Value::Reg(torn), caught);
            k.assign(torn, t);
            k.mbarrier_wait(br, Value::u32(0));
            let ackr = k.barrier_at(ack, r);
            k.mbarrier_arrive(ackr);
        });
        let index = if fixed { k.rem(Value::Reg(torn), Value::u32(ROUNDS)) } else { Value::Reg(torn) };
        // torn-store
        k.st_global(out, index, Value::u32(1));
    });
    k.finish().unwrap()
}

fn device(cfg: SimConfig) -> Device {
    Device::sim(SimConfig { echo_printf: false, ..cfg })
}

fn launch_torn(d: &Device, k: &Kernel) -> (LaunchConfig, phaser::runtime::Buffer<u32>) {
    let _ = k;
    (LaunchConfig::linear(1, 64), d.alloc::<u32>(ROUNDS as usize).unwrap())
}

/// Seeds of the sampled strategies that find the bug (`SimConfig::default` is Random).
fn sampled_hits(strategy: Strategy, seeds: u64) -> u64 {
    let k = torn_rounds(false);
    let mut hits = 0;
    for seed in 0..seeds {
        let d = device(SimConfig { trace: false, ..SimConfig::default().with_strategy(strategy).with_seed(seed) });
        let (cfg, out) = launch_torn(&d, &k);
        let r = d.simulate(&k, cfg, &[Arg::buffer(&out)]).unwrap();
        hits += u64::from(r.has_errors());
    }
    hits
}

#[test]
fn sampled_schedules_miss_the_torn_rounds_bug() {
    // 1,000 random seeds (about a second; bench/exhaustive.md has the adversarial figure,
    // `sampled_schedules_over_1000_seeds`) and the round-robin schedule all miss it.
    assert_eq!(sampled_hits(Strategy::Random, 1000), 0);
    assert_eq!(sampled_hits(Strategy::RoundRobin, 1), 0);
}

#[test]
#[ignore = "prints the figures of bench/exhaustive.md (adversarial schedules do find the bug sometimes)"]
fn sampled_schedules_over_1000_seeds() {
    for s in [Strategy::Random, Strategy::Adversarial] {
        println!("{}: {} of 1000 seeds find the bug", s.name(), sampled_hits(s, 1000));
    }
}

#[test]
fn the_explorer_finds_the_torn_rounds_bug_and_its_schedule_replays_it() {
    let k = torn_rounds(false);
    let d = device(SimConfig::default());
    let (cfg, out) = launch_torn(&d, &k);
    let e = d.explore(&k, cfg, &[Arg::buffer(&out)]).unwrap();
    println!("{}", e.summary());
    let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("no counterexample:\n{e}"));
    let f = c.findings.iter().find(|f| f.category == Category::OutOfBounds).unwrap_or_else(|| panic!("{e}"));
    let loc = f.loc.expect("the store's line");
    assert_eq!((loc.file, loc.line), (FILE, line_of("torn-store")), "{e}");
    assert!(e.text().contains("counterexample in execution"), "{e}");
    // The schedule replays the same finding in the normal simulator, from its text.
    let text = c.schedule.as_ref().expect("a counterexample has its schedule").to_string();
    let schedule: Schedule = text.parse().unwrap();
    let replay = device(SimConfig { schedule: Some(schedule), ..SimConfig::default() });
    let out2 = replay.alloc::<u32>(ROUNDS as usize).unwrap();
    let r = replay.simulate(&k, cfg, &[Arg::buffer(&out2)]).unwrap();
    let g = r.findings.iter().find(|f| f.category == Category::OutOfBounds).unwrap_or_else(|| panic!("{r}"));
    assert_eq!((g.loc, &g.message), (f.loc, &f.message));
}

#[test]
fn the_fixed_kernel_is_explored_completely() {
    let k = torn_rounds(true);
    let d = device(SimConfig::default());
    let (cfg, out) = launch_torn(&d, &k);
    let e = d.explore(&k, cfg, &[Arg::buffer(&out)]).unwrap();
    println!("{e}");
    assert!(e.complete(), "{e}");
    // Each round's probe can see `b[r]` before or after its arrival: at least 2^ROUNDS
    // executions, and the reduction keeps the independent steps (the other lanes' exits,
    // the inits) from multiplying them.
    assert!(e.executions >= 1 << ROUNDS, "{e}");
    assert!(e.executions < 1000, "{e}");
    assert!(e.text().contains("complete for these bounds"), "{e}");
}

/// The report states the instance's bounds: no pipeline here, and each role's trip count of
/// its loop (warp 0 publishes `ROUNDS` rounds, warp 1 consumes them).
#[test]
fn the_report_states_iterations_per_role_and_stages() {
    let k = torn_rounds(true);
    let d = device(SimConfig::default());
    let (cfg, out) = launch_torn(&d, &k);
    let e = d.explore(&k, cfg, &[Arg::buffer(&out)]).unwrap();
    let (p, c) = (line_of("producer-loop"), line_of("consumer-loop"));
    let expected = format!(
        "stages: none declared (no `T.pipeline`)\niterations per role (the most any execution ran): {FILE}:{p} (warp 0: \
         {ROUNDS}); {FILE}:{c} (warp 1: {ROUNDS})\n"
    );
    assert_eq!(e.instance_text(), expected);
    assert!(e.summary().contains(&expected), "{e}");
}

#[test]
fn a_bound_that_stops_the_exploration_is_stated() {
    let k = torn_rounds(true);
    let d = device(SimConfig { explore_max_executions: 2, ..SimConfig::default() });
    let (cfg, out) = launch_torn(&d, &k);
    let e = d.explore(&k, cfg, &[Arg::buffer(&out)]).unwrap();
    assert_eq!((e.executions, e.bound_hit), (2, Some(BoundHit::Executions)), "{e}");
    assert!(!e.complete());
    assert!(e.text().contains("the execution bound (2) was reached"), "{e}");

    let d = device(SimConfig { explore_max_depth: 5, ..SimConfig::default() });
    let (cfg, out) = launch_torn(&d, &k);
    let e = d.explore(&k, cfg, &[Arg::buffer(&out)]).unwrap();
    assert!(e.depth_cut > 0 && !e.complete(), "{e}");
    assert!(e.text().contains("were cut at 5 steps"), "{e}");

    // The memory bound: the first execution's tree of states (its steps, their footprints,
    // backtrack and sleep sets) is more than 4 KiB, so the exploration stops after it and says
    // that interleavings were left.
    let d = device(SimConfig { explore_max_memory_bytes: 4096, ..SimConfig::default() });
    let (cfg, out) = launch_torn(&d, &k);
    let e = d.explore(&k, cfg, &[Arg::buffer(&out)]).unwrap();
    let Some(BoundHit::Memory { bytes }) = e.bound_hit else { panic!("the memory bound: {e}") };
    assert!(bytes > 4096 && e.executions == 1 && !e.complete() && e.counterexample.is_none(), "{e}");
    let said = format!("the exploration's state ({bytes} bytes) passed its bound (4096); interleavings were left to explore");
    assert!(e.text().contains(&said) && e.text().contains("NOT complete"), "{e}");
}

#[test]
fn explore_settings_are_refused_with_the_field_named() {
    let k = torn_rounds(true);
    for (cfg, field) in [
        (SimConfig { explore_max_executions: 0, ..SimConfig::default() }, "SimConfig::explore_max_executions"),
        (SimConfig { explore_max_depth: 0, ..SimConfig::default() }, "SimConfig::explore_max_depth"),
        (SimConfig { explore_max_memory_bytes: 0, ..SimConfig::default() }, "SimConfig::explore_max_memory_bytes"),
        (SimConfig { schedule: Some(Schedule::default()), ..SimConfig::default() }, "SimConfig::schedule"),
        (SimConfig { skeleton: true, race_check: false, ..SimConfig::default() }, "SimConfig::skeleton"),
    ] {
        let d = device(cfg);
        let (lc, out) = launch_torn(&d, &k);
        match d.explore(&k, lc, &[Arg::buffer(&out)]) {
            Err(RuntimeError::InvalidSetting(s)) => assert_eq!(s.setting, field),
            other => panic!("{field}: {other:?}"),
        }
    }
}

#[test]
fn a_schedule_that_does_not_fit_the_kernel_is_refused_with_its_step() {
    let k = torn_rounds(true);
    let schedule: Schedule = "w0 w7".parse().unwrap();
    let d = device(SimConfig { schedule: Some(schedule), ..SimConfig::default() });
    let (cfg, out) = launch_torn(&d, &k);
    match d.simulate(&k, cfg, &[Arg::buffer(&out)]) {
        Err(RuntimeError::InvalidSetting(s)) => {
            assert_eq!((s.setting, s.value.as_str()), ("SimConfig::schedule", "\"step 2\""));
            assert!(
                s.problem.starts_with("`w7` cannot run at this step (the actors that can: w0 w1)"),
                "{}",
                s.problem
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_launch_of_more_than_one_cluster_is_refused() {
    let k = torn_rounds(true);
    let d = device(SimConfig::default());
    let out = d.alloc::<u32>(ROUNDS as usize).unwrap();
    match d.explore(&k, LaunchConfig::linear(2, 64), &[Arg::buffer(&out)]) {
        Err(RuntimeError::InvalidSetting(s)) => {
            assert_eq!(s.setting, "Device::explore");
            assert!(s.problem.contains("has 2 (grid [2, 1, 1]"), "{}", s.problem);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_exhaustive_device_fails_a_launch_with_the_counterexample() {
    let k = torn_rounds(false);
    let d = device(SimConfig { exhaustive: true, ..SimConfig::default() });
    let (cfg, out) = launch_torn(&d, &k);
    match d.launch(&k, cfg, &[Arg::buffer(&out)]) {
        Err(RuntimeError::Simulation(r)) => {
            assert!(r.findings.iter().any(|f| f.category == Category::OutOfBounds), "{r}");
            assert!(r.schedule.is_some() && r.exploration.is_some(), "{r}");
        }
        other => panic!("{other:?}"),
    }
    let k = torn_rounds(true);
    let r = d.launch(&k, cfg, &[Arg::buffer(&out)]).unwrap().sim.expect("a simulated launch");
    assert!(r.exploration.as_ref().is_some_and(|e| e.complete()), "{r}");
    assert!(r.text().contains("complete for these bounds"), "{r}");
}

/// Warp 0 waits at named barrier 1 (`bar.sync 1, 64`); warp 1 signals it (`bar.arrive 1, 64`)
/// and then signals once more, on barrier 1 again where it meant barrier 2 (`fixed`): vllm
/// #26026's shape, a surplus arrival running ahead. Whether it hangs depends on which warp
/// completes round 0: if warp 1's two arrivals fill it, warp 0's `bar.sync` lands in round 1,
/// which nobody else joins (deadlock); if warp 0 arrives between them, round 0 is warp 0 and
/// warp 1's first arrival, and the surplus one is left in round 1 harmlessly. The reduction
/// that lets a round's counting arrivals commute must still explore who completes the round.
fn surplus_arrival(fixed: bool) -> Kernel {
    let mut k = KernelBuilder::new(if fixed { "surplus_arrival_fixed" } else { "surplus_arrival" }, Target::Sm90a);
    k.require_block(64, 1, 1);
    let tid = k.thread_idx(Dim::X);
    let warp = k.div(tid, Value::u32(32));
    let consumer = k.eq(warp, Value::u32(0));
    k.if_else(
        consumer,
        |k| {
            k.bar_sync(Value::u32(1), Some(Value::u32(64)));
        },
        |k| {
            k.bar_arrive(Value::u32(1), Value::u32(64));
            k.bar_arrive(Value::u32(if fixed { 2 } else { 1 }), Value::u32(64));
        },
    );
    k.finish().unwrap()
}

#[test]
fn who_completes_a_named_round_is_explored_a_surplus_arrival_is_found() {
    let k = surplus_arrival(false);
    let sampled = |s: Strategy, seed: u64| {
        let d = device(SimConfig { trace: false, ..SimConfig::default().with_strategy(s).with_seed(seed) });
        d.simulate(&k, LaunchConfig::linear(1, 64), &[]).unwrap().has_errors()
    };
    // The round-robin schedule runs warp 0 first: its arrival is in round 0, no hang.
    assert!(!sampled(Strategy::RoundRobin, 0), "round-robin runs the order that does not hang");
    let hits = (0..100).filter(|&s| sampled(Strategy::Random, s)).count();
    println!("random: {hits} of 100 seeds hang");
    let d = device(SimConfig::default());
    let e = d.explore(&k, LaunchConfig::linear(1, 64), &[]).unwrap();
    println!("{}", e.summary());
    let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("no counterexample:\n{e}"));
    let f = c.findings.iter().find(|f| f.category == Category::Deadlock).unwrap_or_else(|| panic!("{e}"));
    assert!(f.message.contains("bar.sync 1"), "the hang names the barrier: {f}");
    assert!(e.executions >= 2, "the first execution (warp 0 first) does not hang: {e}");
    // Its schedule replays the hang.
    let replay = device(SimConfig { schedule: c.schedule.clone(), ..SimConfig::default() });
    let r = replay.simulate(&k, LaunchConfig::linear(1, 64), &[]).unwrap();
    assert!(r.findings.iter().any(|g| g.category == Category::Deadlock), "{r}");

    let fixed = surplus_arrival(true);
    let e = d.explore(&fixed, LaunchConfig::linear(1, 64), &[]).unwrap();
    println!("{e}");
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
    assert!(e.executions <= 4, "the fixed kernel's orders are few: {e}");
}

/// The mbarrier form of `surplus_arrival`: `bar` expects two arrivals a phase. Thread 0
/// arrives once and waits for the phase its arrival's state token names; thread 32 arrives
/// twice, on `bar` again where it meant `spare` (`fixed`). Whether it hangs depends on which
/// arrival completes phase 0: if thread 32's two arrivals fill it, thread 0's arrival lands in
/// phase 1, which nobody else joins, and its token's wait never returns; if thread 0 arrives
/// between them, the surplus arrival is left in phase 1 harmlessly. A reduction that lets a
/// phase's counting arrivals commute must still explore who completes the phase.
fn surplus_mbarrier_arrival(fixed: bool) -> Kernel {
    let name = if fixed { "surplus_mbarrier_arrival_fixed" } else { "surplus_mbarrier_arrival" };
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    k.require_block(64, 1, 1);
    let bars = k.alloc_barriers("bars", 2);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, Value::u32(2));
        let spare = k.barrier_at(bars, Value::u32(1));
        k.mbarrier_init(spare, Value::u32(1));
    });
    k.cta_sync();
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        let token = k.mbarrier_arrive(bar);
        k.mbarrier_wait_state(bar, token);
    });
    let is32 = k.eq(tid, Value::u32(32));
    k.if_then(is32, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_arrive_discard(bar);
        let second = k.barrier_at(bars, Value::u32(if fixed { 1 } else { 0 }));
        k.mbarrier_arrive_discard(second);
    });
    k.finish().unwrap()
}

#[test]
fn who_completes_an_mbarrier_phase_is_explored_a_surplus_arrival_is_found() {
    let k = surplus_mbarrier_arrival(false);
    let sampled = |s: Strategy, seed: u64| {
        let d = device(SimConfig { trace: false, ..SimConfig::default().with_strategy(s).with_seed(seed) });
        d.simulate(&k, LaunchConfig::linear(1, 64), &[]).unwrap().has_errors()
    };
    // The round-robin schedule runs warp 0 first: its arrival is in phase 0, no hang.
    assert!(!sampled(Strategy::RoundRobin, 0), "round-robin runs the order that does not hang");
    let hits = (0..100).filter(|&s| sampled(Strategy::Random, s)).count();
    println!("random: {hits} of 100 seeds hang");
    let d = device(SimConfig::default());
    let e = d.explore(&k, LaunchConfig::linear(1, 64), &[]).unwrap();
    println!("{}", e.summary());
    let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("no counterexample:\n{e}"));
    let f = c.findings.iter().find(|f| f.category == Category::Deadlock).unwrap_or_else(|| panic!("{e}"));
    assert!(e.executions >= 2, "the first execution (warp 0 first) does not hang: {e}");
    // Its schedule replays the hang.
    let replay = device(SimConfig { schedule: c.schedule.clone(), ..SimConfig::default() });
    let r = replay.simulate(&k, LaunchConfig::linear(1, 64), &[]).unwrap();
    assert!(r.findings.iter().any(|g| g.category == Category::Deadlock), "{f}\n{r}");

    let fixed = surplus_mbarrier_arrival(true);
    let e = d.explore(&fixed, LaunchConfig::linear(1, 64), &[]).unwrap();
    println!("{e}");
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
}

/// Two warps share a register pool of 2 x 64 registers per thread (`.maxnreg 64`). Each gives
/// 32 back (`setmaxnreg.dec 32`), then takes 96 (`setmaxnreg.inc 96`), which fits only while the
/// other holds 32: the second warp's inc waits until the first exits. Warp `1 - a` arrives on
/// `bar` after its inc and exits; warp `a` waits on `bar` after its own inc. If `a`'s inc takes
/// the room first, the other's inc waits for `a` to exit and `a` waits for its arrival: a hang.
/// Which warp takes first depends on the order of the two incs (and of the one that blocked's
/// wake against the other's inc). The fixed kernel has `a` wait before its inc.
fn register_pool_race(a: u32, fixed: bool) -> Kernel {
    let name = if fixed { "register_pool_race_fixed" } else { "register_pool_race" };
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    k.require_block(64, 1, 1);
    k.max_registers(64);
    let bars = k.alloc_barriers("bars", 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, Value::u32(1));
    });
    k.cta_sync();
    k.setmaxnreg(false, 32);
    let warp = k.warp_idx();
    let is_a = k.eq(warp, Value::u32(a));
    k.if_else(
        is_a,
        |k| {
            let bar = k.barrier_at(bars, Value::u32(0));
            if fixed {
                k.mbarrier_wait(bar, Value::u32(0));
            }
            k.setmaxnreg(true, 96);
            if !fixed {
                k.mbarrier_wait(bar, Value::u32(0));
            }
        },
        |k| {
            // OTHER-INC
            k.setmaxnreg(true, 96);
            let leader = k.eq(tid, Value::u32((1 - a) * 32));
            k.if_then(leader, |k| {
                let bar = k.barrier_at(bars, Value::u32(0));
                k.mbarrier_arrive_discard(bar);
            });
        },
    );
    k.finish().unwrap()
}

/// Which warp's `setmaxnreg.inc` takes the pool's room first is explored (an `.inc` that
/// blocked reads every take, and so does a blocked one's wake), whichever warp's order the
/// first execution runs: the hang is found at the other warp's `setmaxnreg.inc`, and its
/// schedule replays it; the fixed kernel explores completely.
#[test]
fn which_warp_takes_the_register_pool_first_is_explored_a_hang_is_found() {
    let line = line_of("OTHER-INC");
    let launch = LaunchConfig::linear(1, 64);
    let d = device(SimConfig::default());
    for a in [0, 1] {
        let e = d.explore(&register_pool_race(a, false), launch, &[]).unwrap();
        println!("warp {a} waits: {}", e.summary().lines().next().unwrap_or_default());
        let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("warp {a}: no counterexample:\n{e}"));
        let at_inc = |f: &phaser::runtime::sim::Finding| {
            f.category == Category::Deadlock && f.message.contains("waits at `setmaxnreg.inc` for 96 registers")
        };
        let f = c.findings.iter().find(|f| at_inc(f)).unwrap_or_else(|| panic!("warp {a}: {e}"));
        assert_eq!(f.loc.map(|l| (l.file.ends_with(FILE), l.line)), Some((true, line)), "{f}");
        let replay = device(SimConfig { schedule: c.schedule.clone(), ..SimConfig::default() });
        let r = replay.simulate(&register_pool_race(a, false), launch, &[]).unwrap();
        assert!(r.findings.iter().any(at_inc), "warp {a}: the schedule replays the hang\n{r}");
        let e = d.explore(&register_pool_race(a, true), launch, &[]).unwrap();
        println!("warp {a} waits first (fixed): {}", e.summary().lines().next().unwrap_or_default());
        assert!(e.complete() && e.counterexample.is_none(), "{e}");
    }
}

/// Four warps each give registers back (`setmaxnreg.dec 32` of `.maxnreg 64`) and take them
/// again (`setmaxnreg.inc 64`, which fits whatever the others hold): frees commute with each
/// other and with takes, and takes that fit commute, so one execution is every order.
#[test]
fn register_pool_frees_and_takes_that_fit_commute() {
    let mut k = KernelBuilder::new("register_pool_commute", Target::Sm90a);
    k.require_block(128, 1, 1);
    k.max_registers(64);
    k.setmaxnreg(false, 32);
    k.setmaxnreg(true, 64);
    let k = k.finish().unwrap();
    let e = device(SimConfig::default()).explore(&k, LaunchConfig::linear(1, 128), &[]).unwrap();
    println!("{}", e.summary().lines().next().unwrap_or_default());
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
    assert_eq!(e.executions, 1, "{e}");
}

/// `bar` expects two arrivals a phase: thread 0 stores `data[0]` and arrives, thread 32 arrives,
/// waits for the phase and reads `data[0]`. Which of the two arrivals completes the phase does
/// not matter (they commute), and the reader's wait is ordered after *both* arrivals, whichever
/// completed it (its wake acquires the phase's arrivals, `Object::MbarArrival`): so the store
/// and the read are ordered, and no order of `bar`'s steps is left to explore.
fn publish_through_a_phase() -> Kernel {
    let mut k = KernelBuilder::new("publish_through_a_phase", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(64, 1, 1);
    let bars = k.alloc_barriers("bars", 1);
    let data = k.alloc_shared("data", Type::U32, 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, Value::u32(2));
    });
    k.cta_sync();
    k.if_then(is0, |k| {
        k.st_shared(data, Value::u32(0), Value::u32(7));
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_arrive_discard(bar);
    });
    let is32 = k.eq(tid, Value::u32(32));
    k.if_then(is32, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_arrive_discard(bar);
        k.mbarrier_wait(bar, Value::u32(0));
        let v = k.ld_shared(data, Value::u32(0));
        k.st_global(out, Value::u32(0), v);
    });
    k.finish().unwrap()
}

#[test]
fn a_waiter_follows_every_arrival_of_the_phase_it_observed() {
    let d = device(SimConfig::default());
    let out = d.alloc::<u32>(1).unwrap();
    let e = d.explore(&publish_through_a_phase(), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    println!("{e}");
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
    // One execution: the `cta_sync`'s two arrivals commute (run 8: until then each wrote the
    // CTA's exit count, and the explorer ran 2), and nothing of `bar` is left. Measured (run 7):
    // without the wake's acquire, the store and the read look unordered when thread 32's
    // arrival completes the phase, and the explorer ran 4.
    assert_eq!(e.executions, 1, "the two arrivals commute and the read follows both: {e}");
}

/// `bar` expects three arrivals a phase and gets two, neither completing it: thread 0's, then
/// thread 32's, which indexes `out` (2 entries) with its token's pending count. Arriving
/// second it reads 1; arriving first, 2: past the end (`fixed`: an `out` of 3). Arrivals that
/// leave a phase pending commute only when nothing reads their token's count, which depends
/// on the order (`Program::tokens_read`).
fn pending_count_order(fixed: bool) -> Kernel {
    let name = if fixed { "pending_count_order_fixed" } else { "pending_count_order" };
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(64, 1, 1);
    let bars = k.alloc_barriers("bars", 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_init(bar, Value::u32(3));
    });
    k.cta_sync();
    k.if_then(is0, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        k.mbarrier_arrive_discard(bar);
    });
    let is32 = k.eq(tid, Value::u32(32));
    k.if_then(is32, |k| {
        let bar = k.barrier_at(bars, Value::u32(0));
        let token = k.mbarrier_arrive(bar);
        let pending = k.mbarrier_pending_count(token);
        k.st_global(out, pending, Value::u32(1));
    });
    k.finish().unwrap()
}

#[test]
fn an_arrival_whose_pending_count_is_read_keeps_its_order_an_overrun_is_found() {
    let k = pending_count_order(false);
    let run = |s: Strategy, seed: u64| {
        let d = device(SimConfig { trace: false, ..SimConfig::default().with_strategy(s).with_seed(seed) });
        let out = d.alloc::<u32>(2).unwrap();
        let r = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
        r.findings.iter().any(|f| f.category == Category::OutOfBounds)
    };
    // The round-robin schedule runs warp 0 first: thread 32 arrives second, in bounds.
    assert!(!run(Strategy::RoundRobin, 0), "round-robin runs the order that stays in bounds");
    let hits = (0..100).filter(|&s| run(Strategy::Random, s)).count();
    println!("random: {hits} of 100 seeds overrun");
    let d = device(SimConfig::default());
    let out = d.alloc::<u32>(2).unwrap();
    let e = d.explore(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    println!("{}", e.summary());
    let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("no counterexample:\n{e}"));
    assert!(c.findings.iter().any(|f| f.category == Category::OutOfBounds), "{e}");
    let replay = device(SimConfig { schedule: c.schedule.clone(), ..SimConfig::default() });
    let out = replay.alloc::<u32>(2).unwrap();
    let r = replay.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    assert!(r.findings.iter().any(|g| g.category == Category::OutOfBounds), "{r}");

    let fixed = pending_count_order(true);
    let out = d.alloc::<u32>(3).unwrap();
    let e = d.explore(&fixed, LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    println!("{e}");
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
}

/// Warps 0 and 1 each store their warp number into `out` without synchronizing: at `[warp * 32
/// + lane]` (disjoint bytes), or all at `[0]` (`overlap`: the last store wins). Weak global
/// stores touch only their bytes (bench/exhaustive.md, run 9): disjoint ones commute, one
/// execution; stores to the same bytes are explored in both orders.
fn global_stores(overlap: bool) -> Kernel {
    let mut k = KernelBuilder::new(if overlap { "overlapping_stores" } else { "disjoint_stores" }, Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(64, 1, 1);
    let tid = k.thread_idx(Dim::X);
    let warp = k.div(tid, Value::u32(32));
    let at = if overlap { Value::u32(0) } else { tid };
    for round in 0..3 {
        let at = k.add(at, Value::u32(if overlap { 0 } else { 64 * round }));
        k.st_global(out, at, warp);
    }
    k.finish().unwrap()
}

#[test]
fn weak_global_stores_to_disjoint_bytes_commute_to_the_same_bytes_they_do_not() {
    let d = device(SimConfig::default());
    let out = d.alloc::<u32>(3 * 64).unwrap();
    let e = d.explore(&global_stores(false), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    println!("{}", e.summary());
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
    assert_eq!(e.executions, 1, "disjoint stores commute: {e}");
    let e = d.explore(&global_stores(true), LaunchConfig::linear(1, 64), &[Arg::buffer(&out)]).unwrap();
    println!("{}", e.summary());
    assert!(e.complete(), "{e}");
    assert!(e.executions >= 2, "which warp stores last is explored: {e}");
}
