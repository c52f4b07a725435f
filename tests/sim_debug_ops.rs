//! `printf`, clocks, `nanosleep`, programmatic dependent launch, inline PTX and the pipeline's
//! try/token acquires in the simulator. The printf kernels are the seed lesson's (CuTe's
//! mbarrier API, by its names): the simulator prints what the GPU prints.

use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::{Arg, Device, LaunchConfig};

const STRATEGIES: [Strategy; 3] = [Strategy::RoundRobin, Strategy::Random, Strategy::Adversarial];

fn dev(s: Strategy, seed: u64) -> Device {
    let mut cfg = SimConfig::default().with_strategy(s).with_seed(seed);
    cfg.echo_printf = false;
    Device::sim(cfg)
}

/// The lesson's experiment 1: `num_threads` threads arrive, then wait for the phase; thread 0
/// initializes the barrier. Experiment 2's producer data printed with `%.1f`.
#[phaser::kernel(target = "sm_90a")]
pub fn lesson_arrive_wait(num_threads: u32) {
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.cute.initialize_barrier(bar, num_threads);
        T.printf("[exp 1] mbarrier initialized, expected threads = %d\n", [num_threads]);
    }
    T.cuda.cta_sync();
    if tid < num_threads {
        let result = tid * tid;
        T.printf("  thread %d: computed (result=%d), arriving\n", [tid, result]);
        T.cute.arrive_barrier(bar);
    }
    if tid < num_threads {
        T.cute.wait_barrier(bar, 0);
        T.printf("  thread %d: wait passed (%5.1f)\n", [tid, tid as f32 * 1.5]);
    }
}

/// The lesson's experiment 3: one barrier reused for 4 phases; thread 0 probes the phase with
/// `test_wait.parity` after each round.
#[phaser::kernel(target = "sm_90a")]
pub fn lesson_phase_flip() {
    T.require_block(32, 1, 1);
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let tid = T.thread_idx();
    if tid == 0 {
        T.cute.initialize_barrier(bar, 32);
    }
    T.cuda.cta_sync();
    let mut phase = 0u32;
    for round in 0..4 {
        T.cute.arrive_barrier(bar);
        T.cute.wait_barrier(bar, phase);
        if tid == 0 {
            let hw = T.select(T.ptx.mbarrier.test_wait(bar, 0), 1, 0);
            T.printf("  round %d done: phase %d -> %d (probed parity %u)\n", [round, phase, 1 - phase, hw]);
        }
        phase ^= 1;
    }
}

/// What the lesson prints for 4 threads, in the order a converged warp prints it.
pub fn lesson_arrive_wait_text() -> String {
    let mut s = String::from("[exp 1] mbarrier initialized, expected threads = 4\n");
    for t in 0..4 {
        s += &format!("  thread {t}: computed (result={}), arriving\n", t * t);
    }
    for t in 0..4 {
        s += &format!("  thread {t}: wait passed ({:5.1})\n", t as f32 * 1.5);
    }
    s
}

pub fn lesson_phase_flip_text() -> String {
    (0..4)
        .map(|r| format!("  round {r} done: phase {} -> {} (probed parity {})\n", r % 2, 1 - r % 2, 1 - r % 2))
        .collect()
}

fn run(k: &phaser::Kernel, cfg: LaunchConfig, args: &[Arg], s: Strategy, seed: u64) -> SimReport {
    dev(s, seed).simulate(k, cfg, args).unwrap()
}

#[test]
fn printf_prints_what_the_lesson_prints() {
    let k = lesson_arrive_wait::kernel().unwrap();
    let rep = run(&k, LaunchConfig::linear(1, 8), &[Arg::scalar(4u32)], Strategy::RoundRobin, 1);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(rep.output(), lesson_arrive_wait_text());
    assert_eq!(rep.printed.len(), 9);
    assert!(rep.printed.iter().all(|p| p.ctaid == [0, 0, 0]));
    // Under any schedule the barrier orders every arrival's line before every wait's line.
    for s in STRATEGIES {
        for seed in 0..4 {
            let rep = run(&k, LaunchConfig::linear(1, 8), &[Arg::scalar(4u32)], s, seed);
            let out = rep.output();
            let mut got: Vec<&str> = out.lines().collect();
            let last_arrive = got.iter().rposition(|l| l.contains("arriving")).unwrap();
            let first_wait = got.iter().position(|l| l.contains("wait passed")).unwrap();
            assert!(last_arrive < first_wait, "{s:?} seed {seed}:\n{out}");
            assert!(got[0].starts_with("[exp 1]"), "{s:?}: {out}");
            let want = lesson_arrive_wait_text();
            let mut want: Vec<&str> = want.lines().collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{s:?} seed {seed}");
        }
    }
    let k = lesson_phase_flip::kernel().unwrap();
    let rep = run(&k, LaunchConfig::linear(1, 32), &[], Strategy::Random, 3);
    assert!(rep.findings.is_empty(), "{}", rep.text());
    assert_eq!(rep.output(), lesson_phase_flip_text());
}

/// Inline PTX is not simulated: the launch stops at it with a finding naming its line.
#[phaser::kernel(target = "sm_90a")]
fn with_inline_ptx(out: &mut [u32]) {
    let x = T.thread_idx();
    let mut y = 0u32;
    T.asm("add.u32 {1}, {0}, 41;", [x], [y]);
    out[x] = y;
}

#[test]
fn inline_ptx_is_reported_unsupported_at_its_line() {
    let src = include_str!("sim_debug_ops.rs");
    let line = src.lines().position(|l| l.contains("T.asm(\"add.u32 {1}, {0}, 41;\"")).unwrap() as u32 + 1;
    let d = dev(Strategy::RoundRobin, 1);
    let out = d.upload(&[0u32; 4]).unwrap();
    let rep =
        d.simulate(&with_inline_ptx::kernel().unwrap(), LaunchConfig::linear(1, 4), &[Arg::buffer(&out)]).unwrap();
    let f =
        rep.findings.iter().find(|f| f.category == Category::Unsupported).unwrap_or_else(|| panic!("{}", rep.text()));
    assert!(f.message.contains("inline PTX"), "{}", f.message);
    assert_eq!(f.loc.map(|l| l.line), Some(line), "{f}");
    assert!(with_inline_ptx::ptx().unwrap().contains("add.u32 %r"), "the template is in the PTX");
}

/// Clocks never run backwards for a thread, and count the work between two reads.
#[phaser::kernel(target = "sm_90a")]
fn clocks(out: &mut [u64]) {
    let t = T.thread_idx();
    let c0 = T.clock64();
    let g0 = T.globaltimer();
    let mut x = t;
    for i in 0..50 {
        x = x * 3 + i;
    }
    let c1 = T.clock64();
    let g1 = T.globaltimer();
    out[2 * t] = c1 - c0;
    out[2 * t + 1] = (g1 - g0) + (x as u64 & 0);
}

#[test]
fn clocks_advance_with_the_work_done() {
    for s in STRATEGIES {
        let d = dev(s, 2);
        let out = d.upload(&[u64::MAX; 64]).unwrap();
        let rep = d.simulate(&clocks::kernel().unwrap(), LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
        for (i, v) in d.download(&out).unwrap().into_iter().enumerate() {
            // 50 iterations of at least 4 instructions each lie between the reads.
            assert!((200..1 << 20).contains(&v), "{s:?}: delta {i} = {v}");
        }
    }
}

/// Every thread polls a barrier with a backoff; only one of its two arrivals ever comes
/// (`ARRIVALS` = 1) or both do (`ARRIVALS` = 2). `BACKOFF` = 0 polls without `nanosleep`.
#[phaser::kernel(target = "sm_90a")]
fn backoff_poll(out: &mut [u32], #[comptime] ARRIVALS: u32, #[comptime] BACKOFF: u32) {
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 2);
    }
    T.cuda.cta_sync();
    if t < ARRIVALS {
        T.ptx.mbarrier.arrive(bar);
    }
    while !T.ptx.mbarrier.test_wait(bar, 0) {
        if BACKOFF == 1 {
            T.nanosleep(64);
        }
    }
    out[t] = 1;
}

#[test]
fn a_backoff_loop_that_can_never_succeed_is_still_found_stuck() {
    for s in STRATEGIES {
        let d = dev(s, 4);
        let out = d.upload(&[0u32; 32]).unwrap();
        let stuck = |backoff: u32| {
            let k = backoff_poll::kernel_for(1, backoff).unwrap();
            let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
            assert!(
                rep.has(Category::Deadlock) || rep.has(Category::InfiniteLoop),
                "{s:?} backoff {backoff}:\n{}",
                rep.text()
            );
            rep.categories()
        };
        assert_eq!(stuck(1), stuck(0), "{s:?}: nanosleep is not progress");
        let k = backoff_poll::kernel_for(2, 1).unwrap();
        let rep = d.simulate(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
        assert!(rep.findings.is_empty(), "{s:?}: both arrivals come\n{}", rep.text());
        assert_eq!(d.download(&out).unwrap(), vec![1u32; 32]);
    }
}

#[phaser::kernel(target = "sm_90a")]
pub fn pdl_producer(data: &mut [u32]) {
    T.ptx.griddepcontrol.launch_dependents();
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    data[i] = i * 7 + 1;
}

#[phaser::kernel(target = "sm_90a")]
pub fn pdl_consumer(data: &[u32], out: &mut [u32]) {
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    // Everything before the wait may overlap the producer; what it wrote is read after.
    let scale = i + 1;
    T.ptx.griddepcontrol.wait();
    out[i] = data[i] * scale;
}

#[test]
fn a_dependent_launch_reads_what_its_predecessor_wrote() {
    let d = dev(Strategy::Random, 5);
    let mut data = d.upload(&[0u32; 256]).unwrap();
    let mut out = d.upload(&[0u32; 256]).unwrap();
    pdl_producer::launch(&d, LaunchConfig::linear(2, 128), &mut data).unwrap();
    pdl_consumer::launch(&d, LaunchConfig::linear(2, 128).with_programmatic_dependent_launch(), &data, &mut out)
        .unwrap();
    let out = d.download(&out).unwrap();
    for (i, v) in out.into_iter().enumerate() {
        let i = i as u32;
        assert_eq!(v, (i * 7 + 1) * (i + 1));
    }
    let ptx = pdl_consumer::ptx().unwrap();
    assert!(ptx.contains("griddepcontrol.wait;") && pdl_producer::ptx().unwrap().contains("launch_dependents"));
}

/// A ring of 2 stages between a producer warp and a consumer warp with CUTLASS's try/token
/// acquires: one non-blocking try, then a wait only when the token says so.
#[phaser::kernel(target = "sm_90a")]
fn token_pipeline(out: &mut [u32], n: u32) {
    T.require_block(64, 1, 1);
    let pipe = T.pipeline.new(2, 1);
    let ring = T.alloc_shared::<u32>([64]);
    T.pipeline.init(pipe);
    let warp = T.warp_idx();
    let lane = T.lane_idx();
    if warp == 0 {
        let st = T.pipeline.producer_state(pipe);
        for i in 0..n {
            let empty = T.pipeline.producer_try_acquire(pipe, st);
            T.pipeline.producer_acquire_with_token(pipe, st, empty);
            ring[T.pipeline.stage(st) * 32 + lane] = i * 100 + lane;
            T.cuda.warp_sync();
            if lane == 0 {
                T.pipeline.producer_arrive(pipe, st);
            }
            T.pipeline.advance(st);
        }
    } else {
        let st = T.pipeline.consumer_state(pipe);
        for i in 0..n {
            let full = T.pipeline.consumer_try_wait(pipe, st);
            T.pipeline.consumer_wait_with_token(pipe, st, full);
            out[i * 32 + lane] = ring[T.pipeline.stage(st) * 32 + lane];
            T.pipeline.consumer_release(pipe, st);
            T.pipeline.advance(st);
        }
    }
}

#[test]
fn try_and_token_acquires_keep_the_ring_in_order() {
    let n = 9u32;
    for s in STRATEGIES {
        for seed in 0..3 {
            let d = dev(s, seed);
            let out = d.upload(&vec![0u32; (n * 32) as usize]).unwrap();
            let k = token_pipeline::kernel().unwrap();
            let rep = d.simulate(&k, LaunchConfig::linear(1, 64), &[Arg::buffer(&out), Arg::scalar(n)]).unwrap();
            assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
            let out = d.download(&out).unwrap();
            for i in 0..n {
                for l in 0..32 {
                    assert_eq!(out[(i * 32 + l) as usize], i * 100 + l, "{s:?} item {i} lane {l}");
                }
            }
        }
    }
}
