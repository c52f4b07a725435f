//! The seeds' three mbarrier experiments (cute lesson 10), built with the IR builder API.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::codegen::{Kernel, Result, Target};

/// Experiment 1: a block of 8 threads, a barrier expecting 4 arrivals; threads 0-3 each
/// publish `tid*tid`, arrive, wait, then write the sum of all four (14) to `out[tid]`.
/// Threads 4-7 never touch the barrier or `out`.
pub fn thread_arrive_wait(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new("seed_thread_arrive_wait", target);
    let out = k.param_global("out", Type::U32, true);
    let n = k.param("num_threads", Type::U32);
    k.require_block(8, 1, 1);
    let bar_arr = k.alloc_barriers("bar", 1);
    let partial = k.alloc_shared("partial", Type::U32, 8);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    let bar = k.barrier_at(bar_arr, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, n));
    k.cta_sync();
    let active = k.lt(tid, n);
    k.if_then(active, |k| {
        let sq = k.mul(tid, tid);
        k.st_shared(partial, tid, sq);
        k.mbarrier_arrive(bar);
        k.mbarrier_wait(bar, Value::u32(0));
        let sum = k.var(Value::u32(0));
        k.for_range(Value::u32(0), n, |k, i| {
            let p = k.ld_shared(partial, i);
            let s = k.add(Value::Reg(sum), p);
            k.assign(sum, s);
        });
        k.st_global(out, tid, Value::Reg(sum));
    });
    k.finish()
}

/// Experiment 2: barrier count 1; thread 0 fills `data[i] = 1.5*i` and arrives; threads 1-4
/// wait, then each copies all 32 values to `out[(tid-1)*32 + i]`.
pub fn producer_consumer(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new("seed_producer_consumer", target);
    let out = k.param_global("out", Type::F32, true);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let data = k.alloc_shared("data", Type::F32, 32);
    let tid = k.thread_idx(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(1)));
    k.cta_sync();
    k.if_then(is0, |k| {
        k.for_range(Value::u32(0), Value::u32(32), |k, i| {
            let f = k.cvt(i, Type::F32);
            let v = k.mul(f, Value::f32(1.5));
            k.st_shared(data, i, v);
        });
        k.mbarrier_arrive(bar);
    });
    let ge1 = k.ge(tid, Value::u32(1));
    let le4 = k.le(tid, Value::u32(4));
    let consumer = k.and(ge1, le4);
    k.if_then(consumer, |k| {
        k.mbarrier_wait(bar, Value::u32(0));
        let row = k.sub(tid, Value::u32(1));
        let base = k.mul(row, Value::u32(32));
        k.for_range(Value::u32(0), Value::u32(32), |k, i| {
            let v = k.ld_shared(data, i);
            let o = k.add(base, i);
            k.st_global(out, o, v);
        });
    });
    k.finish()
}

/// Experiment 3: 32 threads, 4 rounds of arrive + wait(parity); after each round thread 0
/// probes the phase with `mbarrier.test_wait.parity(0)` into `out[round]` (expect 1,0,1,0);
/// `out[4]` holds the probe right after init (expect 0).
pub fn phase_flip(target: Target) -> Result<Kernel> {
    const ROUNDS: u32 = 4;
    let mut k = KernelBuilder::new("seed_phase_flip", target);
    let out = k.param_global("out", Type::U32, true);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("bar", 1);
    let tid = k.thread_idx(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(32)));
    k.cta_sync();
    k.if_then(is0, |k| {
        let probe = k.mbarrier_test_wait(bar, Value::u32(0));
        let v = k.cvt(probe, Type::U32);
        k.st_global(out, Value::u32(ROUNDS), v);
    });
    let phase = k.var(Value::u32(0));
    k.for_range(Value::u32(0), Value::u32(ROUNDS), |k, round| {
        k.mbarrier_arrive(bar);
        k.mbarrier_wait(bar, Value::Reg(phase));
        k.if_then(is0, |k| {
            let probe = k.mbarrier_test_wait(bar, Value::u32(0));
            let v = k.cvt(probe, Type::U32);
            k.st_global(out, round, v);
            k.probe("phase_flip", &[round, Value::Reg(phase), v]);
        });
        let flipped = k.xor(Value::Reg(phase), Value::u32(1));
        k.assign(phase, flipped);
    });
    k.finish()
}

// ---- host side: setup and check ----------------------------------------------------------

use phaser::problem::{BufferId, Example, Outcome, Problem, POISON_U32};
use phaser::runtime::{Device, LaunchConfig, RuntimeError};

/// The target the seeds are built for on `dev` (sm_90a on Hopper, which is what they need).
pub fn target_for(_dev: &Device) -> Target {
    Target::Sm90a
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "seed_thread_arrive_wait",
            about: "8 threads, barrier expects 4; threads 0-3 arrive and wait, then read each other's data",
            kernels: |t| Ok(vec![thread_arrive_wait(t)?]),
            setup: |dev, _size, seed| setup_thread_arrive_wait(dev, thread_arrive_wait(target_for(dev))?, seed),
            check: |p, out| check_thread_arrive_wait(out.get(0, *p.host())),
        },
        Example {
            name: "seed_producer_consumer",
            about: "count-1 barrier; thread 0 fills data[i] = 1.5*i and arrives; threads 1-4 wait and read",
            kernels: |t| Ok(vec![producer_consumer(t)?]),
            setup: |dev, _size, seed| setup_producer_consumer(dev, producer_consumer(target_for(dev))?, seed),
            check: |p, out| check_producer_consumer(out.get(0, *p.host())),
        },
        Example {
            name: "seed_phase_flip",
            about: "32 threads, 4 rounds of arrive + wait(parity); test_wait.parity probes read 1,0,1,0",
            kernels: |t| Ok(vec![phase_flip(t)?]),
            setup: |dev, _size, seed| setup_phase_flip(dev, phase_flip(target_for(dev))?, 4, seed),
            check: |p, out| check_phase_flip(out.get(0, *p.host())),
        },
    ]
}

// The setups take the kernel: the DSL versions (`dsl_seeds.rs`) launch theirs with the same
// arguments and share the checks. The host data of each problem is its output buffer.

/// Experiment 1: one block of 8 threads, 4 of them active (`num_threads = 4`).
pub fn setup_thread_arrive_wait(dev: &Device, k: Kernel, seed: u64) -> Result<Problem, RuntimeError> {
    let mut p = Problem::new(seed);
    let out = p.output(dev, 8, POISON_U32)?;
    p.launch(k, LaunchConfig::linear(1, 8), [out.into(), 4u32.into()], [out.into()]);
    p.set_host::<BufferId<u32>>(out);
    Ok(p)
}

/// Experiment 2: one block of 32 threads, consumers 1-4 copy 32 values each.
pub fn setup_producer_consumer(dev: &Device, k: Kernel, seed: u64) -> Result<Problem, RuntimeError> {
    let mut p = Problem::new(seed);
    let out = p.output(dev, 128, f32::NAN)?;
    p.launch(k, LaunchConfig::linear(1, 32), [out.into()], [out.into()]);
    p.set_host::<BufferId<f32>>(out);
    Ok(p)
}

/// Experiment 3: one block of 32 threads, `rounds` rounds; `out` holds `rounds + 1` probes.
pub fn setup_phase_flip(dev: &Device, k: Kernel, rounds: u32, seed: u64) -> Result<Problem, RuntimeError> {
    let mut p = Problem::new(seed);
    let out = p.output(dev, rounds as usize + 1, POISON_U32)?;
    p.launch(k, LaunchConfig::linear(1, 32), [out.into()], [out.into()]);
    p.set_host::<BufferId<u32>>(out);
    Ok(p)
}

// ---- checks shared by the builder and DSL versions ---------------------------------------

/// Experiment 1 with 4 of 8 threads active: each active thread wrote 0+1+4+9, the rest nothing.
pub fn check_thread_arrive_wait(got: &[u32]) -> Outcome {
    let mut want = [POISON_U32; 8];
    want[..4].fill(1 + 4 + 9);
    Outcome::new(got == want, format!("out = {got:?}, expected {want:?}"))
}

/// Experiment 2: consumers 1-4 each copied `data[i] = 1.5*i` for i in 0..32.
pub fn check_producer_consumer(got: &[f32]) -> Outcome {
    let bad: Vec<usize> =
        (0..got.len()).filter(|&j| got[j].to_bits() != (1.5f32 * (j % 32) as f32).to_bits()).collect();
    let ok = bad.is_empty() && got.len() == 128;
    let detail = if ok {
        "consumers 1-4 each read data[0..32] == 1.5*i after the wait".to_string()
    } else if let Some(&j) = bad.first() {
        format!("{} of {} values wrong, first at {j}: {}", bad.len(), got.len(), got[j])
    } else {
        format!("{} values, expected 128", got.len())
    };
    Outcome::new(ok, detail)
}

/// Experiment 3 with 4 rounds: probes 1,0,1,0 after the rounds, 0 after init.
pub fn check_phase_flip(got: &[u32]) -> Outcome {
    let ok = got == [1, 0, 1, 0, 0];
    let detail = match got {
        [r @ .., init] => format!("phase probes after rounds = {r:?} (expect [1, 0, 1, 0]), after init = {init}"),
        [] => "no output".into(),
    };
    Outcome::new(ok, detail)
}
