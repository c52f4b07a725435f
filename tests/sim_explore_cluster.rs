//! Exhaustive exploration of a 2-CTA cluster (`Device::explore`): remote arrivals (`mapa`,
//! `mbarrier.arrive.shared::cluster`), remote `expect_tx` and a multicast TMA that completes
//! its bytes on the barrier of both CTAs. A protocol bug that needs the multicast to land early
//! in every round is found by the explorer and missed by 1,000 random seeds; its fixed twin
//! explores completely. Figures: bench/exhaustive.md.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::sim::{Category, Schedule, SimConfig, Strategy};
use phaser::{Arg, Buffer, Device, Kernel, LaunchConfig, Swizzle, Target, TensorMap};

const FILE: &str = "tests/sim_explore_cluster.rs";

/// The line of this file holding `marker` (a comment on the line above the statement).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("sim_explore_cluster.rs").lines().collect();
    let i = lines.iter().position(|l| l.trim_start() == format!("// {marker}")).unwrap_or_else(|| panic!("{marker}"));
    i as u32 + 2
}

/// Rounds, each one row of the input (`COLS` f32, one TMA box) multicast into both CTAs.
const ROUNDS: u32 = 3;
const COLS: u32 = 8;
const ROW_BYTES: u32 = COLS * 4;

/// CTA 0's lane 0 produces each round: it registers the row's bytes on its own `full[r]` and
/// (remotely, `expect_tx` through `mapa`) on CTA 1's, multicasts the row into slot `r` of both
/// CTAs (the TMA completes the bytes on each CTA's `full[r]`), then tells CTA 1 the round is
/// published with a remote arrival on its `ready[r]` and waits for CTA 1's remote `ack[r]`.
/// CTA 1's lane 0 waits for `ready[r]`, *probes* `full[r]` (`test_wait`) and counts the rounds
/// whose row had already landed, waits for `full[r]`, adds the row into its sum and
/// acknowledges. The bug: the count indexes `early`, which holds `ROUNDS` entries, so only a
/// consumer that found the multicast landed before its probe in every round writes past the
/// buffer. The copy engine usually lands a multicast after the issuing thread's next arrival
/// has been seen, and a sampled schedule rarely reverses that three times.
fn early_multicast(fixed: bool) -> Kernel {
    let name = if fixed { "early_multicast_fixed" } else { "early_multicast" };
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    let rows = k.param_tensor_map("rows", 2);
    let early = k.param_global("early", Type::U32, true);
    let sum = k.param_global("sum", Type::F32, true);
    k.require_block(32, 1, 1);
    k.cluster(2, 1, 1);
    let slots = k.alloc_shared_aligned("slots", Type::F32, ROUNDS * 32, 128);
    let full = k.alloc_barriers("full", ROUNDS);
    let ready = k.alloc_barriers("ready", ROUNDS);
    let ack = k.alloc_barriers("ack", ROUNDS);
    let lane = k.thread_idx(Dim::X);
    let lane0 = k.eq(lane, Value::u32(0));
    let rank = k.cluster_cta_rank();
    k.if_then(lane0, |k| {
        for arr in [full, ready, ack] {
            for r in 0..ROUNDS {
                let bar = k.barrier_at(arr, Value::u32(r));
                k.mbarrier_init(bar, Value::u32(1));
            }
        }
        k.fence_mbarrier_init();
    });
    // Both CTAs' barriers are initialized before any remote arrival or multicast.
    k.cluster_sync();
    let producer = k.eq(rank, Value::u32(0));
    let lead_producer = k.and(lane0, producer);
    k.if_then(lead_producer, |k| {
        let base = k.shared_base_addr(slots);
        k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, r| {
            let f = k.barrier_at(full, r);
            k.mbarrier_arrive_expect_tx(f, Value::u32(ROW_BYTES));
            let peer_full = k.map_barrier_to_cta(f, Value::u32(1));
            k.mbarrier_arrive_expect_tx_remote(peer_full, Value::u32(ROW_BYTES));
            let off = k.mul(r, Value::u32(128));
            let dst = k.add(base, off);
            k.tma_load_multicast(dst, rows, &[Value::u32(0), r], f, Value::u32(0b11));
            let rd = k.barrier_at(ready, r);
            k.mbarrier_arrive_on_cta(rd, Value::u32(1), None);
            let a = k.barrier_at(ack, r);
            k.mbarrier_wait(a, Value::u32(0));
        });
        // CTA 0's own copies have landed before it leaves.
        k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, r| {
            let f = k.barrier_at(full, r);
            k.mbarrier_wait(f, Value::u32(0));
        });
    });
    let consumer = k.eq(rank, Value::u32(1));
    let lead_consumer = k.and(lane0, consumer);
    k.if_then(lead_consumer, |k| {
        let base = k.shared_base_addr(slots);
        let count = k.var(Value::u32(0));
        let total = k.var(Value::f32(0.0));
        k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, r| {
            let rd = k.barrier_at(ready, r);
            k.mbarrier_wait(rd, Value::u32(0));
            let f = k.barrier_at(full, r);
            let landed = k.mbarrier_test_wait(f, Value::u32(0));
            let landed = k.cvt(landed, Type::U32);
            let c = k.add(Value::Reg(count), landed);
            k.assign(count, c);
            k.mbarrier_wait(f, Value::u32(0));
            let off = k.mul(r, Value::u32(128));
            let row = k.add(base, off);
            for j in 0..COLS {
                let x = k.ld_raw(phaser::codegen::ir::Space::Shared, Type::F32, row, (j * 4) as i32);
                let t = k.add(Value::Reg(total), x);
                k.assign(total, t);
            }
            let a = k.barrier_at(ack, r);
            k.mbarrier_arrive_on_cta(a, Value::u32(0), None);
        });
        let index = if fixed { k.rem(Value::Reg(count), Value::u32(ROUNDS)) } else { Value::Reg(count) };
        // early-store
        k.st_global(early, index, Value::u32(1));
        k.st_global(sum, Value::u32(0), Value::Reg(total));
    });
    // No CTA leaves while its peer may still arrive on its barriers.
    k.cluster_sync();
    k.finish().unwrap()
}

fn device(cfg: SimConfig) -> Device {
    Device::sim(SimConfig { echo_printf: false, ..cfg })
}

/// The input rows (row `r` holds `r * COLS + j`), the outputs, and what `sum` must hold.
struct Launch {
    _input: Buffer<f32>,
    rows: TensorMap,
    early: Buffer<u32>,
    sum: Buffer<f32>,
}

fn launch(d: &Device) -> Launch {
    let input: Vec<f32> = (0..ROUNDS * COLS).map(|i| i as f32).collect();
    let buf = d.upload(&input).unwrap();
    let rows = d.tensor_map(&buf, &[COLS as u64, ROUNDS as u64], &[COLS, 1], Swizzle::None).unwrap();
    let early = d.alloc::<u32>(ROUNDS as usize).unwrap();
    let sum = d.alloc::<f32>(1).unwrap();
    Launch { _input: buf, rows, early, sum }
}

impl Launch {
    fn args(&self) -> Vec<Arg<'_>> {
        vec![Arg::from(&self.rows), Arg::buffer(&self.early), Arg::buffer(&self.sum)]
    }
}

/// One cluster of 2 CTAs of one warp.
fn cluster() -> LaunchConfig {
    LaunchConfig::linear(2, 32)
}

/// Seeds of `strategy` whose run finds the bug.
fn sampled_hits(strategy: Strategy, seeds: u64) -> u64 {
    let k = early_multicast(false);
    let mut hits = 0;
    for seed in 0..seeds {
        let d = device(SimConfig { trace: false, ..SimConfig::default().with_strategy(strategy).with_seed(seed) });
        let l = launch(&d);
        hits += u64::from(d.simulate(&k, cluster(), &l.args()).unwrap().has_errors());
    }
    hits
}

#[test]
fn sampled_schedules_miss_the_early_multicast_bug() {
    // 1,000 random seeds (about a second) and the round-robin schedule; bench/exhaustive.md
    // has the adversarial figure (`sampled_schedules_over_1000_seeds`).
    assert_eq!(sampled_hits(Strategy::Random, 1000), 0);
    assert_eq!(sampled_hits(Strategy::RoundRobin, 1), 0);
}

#[test]
#[ignore = "prints the figures of bench/exhaustive.md"]
fn sampled_schedules_over_1000_seeds() {
    for s in [Strategy::Random, Strategy::Adversarial] {
        println!("{}: {} of 1000 seeds find the bug", s.name(), sampled_hits(s, 1000));
    }
}

#[test]
fn the_explorer_finds_the_early_multicast_bug_and_its_schedule_replays_it() {
    let k = early_multicast(false);
    let d = device(SimConfig::default());
    let l = launch(&d);
    let e = d.explore(&k, cluster(), &l.args()).unwrap();
    println!("{}", e.summary());
    let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("no counterexample:\n{e}"));
    let f = c.findings.iter().find(|f| f.category == Category::OutOfBounds).unwrap_or_else(|| panic!("{e}"));
    let loc = f.loc.expect("the store's line");
    assert_eq!((loc.file, loc.line), (FILE, line_of("early-store")), "{e}");
    // The schedule, through its text, replays the same finding in the normal simulator.
    let text = c.schedule.as_ref().expect("a counterexample has its schedule").to_string();
    let schedule: Schedule = text.parse().unwrap();
    let replay = device(SimConfig { schedule: Some(schedule), ..SimConfig::default() });
    let l2 = launch(&replay);
    let r = replay.simulate(&k, cluster(), &l2.args()).unwrap();
    let g = r.findings.iter().find(|f| f.category == Category::OutOfBounds).unwrap_or_else(|| panic!("{r}"));
    assert_eq!((g.loc, &g.message), (f.loc, &f.message));
}

#[test]
fn the_fixed_cluster_kernel_is_explored_completely() {
    let k = early_multicast(true);
    let d = device(SimConfig::default());
    let l = launch(&d);
    let e = d.explore(&k, cluster(), &l.args()).unwrap();
    println!("{e}");
    assert!(e.complete(), "{e}");
    // Each round's probe can find the row landed in CTA 1 or not: at least 2^ROUNDS
    // executions; and the reduction keeps them few (the idle lanes' cluster arrivals, the
    // arrivals that leave others pending, commute).
    assert!(e.executions >= 1 << ROUNDS, "{e}");
    assert!(e.executions < 2000, "{e}");
    // Run once more in the normal simulator: the rows' sum, and one count marked.
    let r = d.simulate(&k, cluster(), &l.args()).unwrap();
    assert!(!r.has_errors(), "{r}");
    let want: f32 = (0..ROUNDS * COLS).map(|i| i as f32).sum();
    assert_eq!(d.download(&l.sum).unwrap(), vec![want]);
    assert_eq!(d.download(&l.early).unwrap().iter().sum::<u32>(), 1);
}

/// The cluster-barrier form of `tests/sim_explore.rs::surplus_arrival`: one warp per CTA; CTA 1
/// initializes `go` and both meet at a cluster barrier (round 0). Then CTA 0 arrives and waits
/// at the cluster barrier (round 1) and releases CTA 1 with a remote arrival on its `go`; CTA 1
/// arrives on the cluster barrier *twice* (the second where it meant to wait, `fixed`) and waits
/// on `go`. If CTA 0 arrives first, round 1 is both CTAs' first arrivals and CTA 1's second is
/// left in round 2 harmlessly; if CTA 1's two arrivals come first they fill round 1, CTA 0's
/// arrival lands in round 2, which CTA 1 (waiting on `go`, not exited) never joins: a hang. A
/// reduction that lets a round's arrivals commute must still explore who completes the round.
fn surplus_cluster_arrival(fixed: bool) -> Kernel {
    let name = if fixed { "surplus_cluster_arrival_fixed" } else { "surplus_cluster_arrival" };
    let mut k = KernelBuilder::new(name, Target::Sm90a);
    k.require_block(32, 1, 1);
    k.cluster(2, 1, 1);
    let go = k.alloc_barriers("go", 1);
    let lane = k.thread_idx(Dim::X);
    let lane0 = k.eq(lane, Value::u32(0));
    let rank = k.cluster_cta_rank();
    k.if_then(lane0, |k| {
        let bar = k.barrier_at(go, Value::u32(0));
        k.mbarrier_init(bar, Value::u32(1));
        k.fence_mbarrier_init();
    });
    k.cluster_sync();
    let first = k.eq(rank, Value::u32(0));
    k.if_else(
        first,
        |k| {
            k.cluster_sync();
            k.if_then(lane0, |k| {
                let bar = k.barrier_at(go, Value::u32(0));
                k.mbarrier_arrive_on_cta(bar, Value::u32(1), None);
            });
        },
        |k| {
            k.cluster_arrive();
            if fixed {
                k.cluster_wait();
            } else {
                k.cluster_arrive();
            }
            let bar = k.barrier_at(go, Value::u32(0));
            k.mbarrier_wait(bar, Value::u32(0));
        },
    );
    k.finish().unwrap()
}

#[test]
fn who_completes_a_cluster_barrier_round_is_explored_a_surplus_arrival_is_found() {
    let k = surplus_cluster_arrival(false);
    let sampled = |s: Strategy, seed: u64| {
        let d = device(SimConfig { trace: false, ..SimConfig::default().with_strategy(s).with_seed(seed) });
        d.simulate(&k, cluster(), &[]).unwrap().has_errors()
    };
    // The round-robin schedule runs CTA 0's warp first: its arrival is in round 1, no hang.
    assert!(!sampled(Strategy::RoundRobin, 0), "round-robin runs the order that does not hang");
    let hits = (0..100).filter(|&s| sampled(Strategy::Random, s)).count();
    println!("random: {hits} of 100 seeds hang");
    let d = device(SimConfig::default());
    let e = d.explore(&k, cluster(), &[]).unwrap();
    println!("{}", e.summary());
    let c = e.counterexample.as_ref().unwrap_or_else(|| panic!("no counterexample:\n{e}"));
    assert!(c.findings.iter().any(|f| f.category == Category::Deadlock), "{e}");
    assert!(e.executions >= 2, "the first execution (CTA 0 first) does not hang: {e}");
    // Its schedule replays the hang.
    let replay = device(SimConfig { schedule: c.schedule.clone(), ..SimConfig::default() });
    let r = replay.simulate(&k, cluster(), &[]).unwrap();
    assert!(r.findings.iter().any(|g| g.category == Category::Deadlock), "{r}");

    let fixed = surplus_cluster_arrival(true);
    let e = d.explore(&fixed, cluster(), &[]).unwrap();
    println!("{e}");
    assert!(e.complete() && e.counterexample.is_none(), "{e}");
    // The rounds' arrivals commute, whichever CTA completes each round (measured: 1, run 9).
    assert!(e.executions <= 2, "{e}");
}
