//! The seeds' two-stage `phase_tma` loop (chapter "Async Coordination: mbarrier"): one full
//! barrier per stage, a single `phase_tma` variable that flips after stage 1.
//!
//! ```text
//! stage = iteration % 2
//! try_wait(tma_bar[stage], phase_tma)
//! if stage == 1: phase_tma ^= 1
//! ```
//!
//! Thread 0 issues bulk copies (`cp.async.bulk` + `mbarrier.arrive.expect_tx`) of 256-byte
//! tiles; all 32 threads wait, read the stage and write `out`; thread 0 probes
//! `(iteration, stage, parity waited, barrier parity after completion, phase_tma after)`, so a
//! simulated run prints the seeds' table.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::codegen::{Kernel, Result, Target};
use phaser::problem::{random_u32, BufferId, Example, Outcome, Outputs, Problem, Size, POISON_U32};
use phaser::runtime::{Device, LaunchConfig, RuntimeError};

/// u32 elements per tile (256 bytes).
pub const TILE: u32 = 64;
pub const PROBE: &str = "phase_tma";
pub const HEADERS: [&str; 5] =
    ["iteration", "stage", "phase parity waited on", "barrier parity after completion", "phase_tma after iteration"];
/// The seeds' table for the first four iterations.
pub const SEED_TABLE: [[i64; 5]; 4] = [[0, 0, 0, 1, 0], [1, 1, 0, 1, 1], [2, 0, 1, 0, 1], [3, 1, 1, 0, 0]];

pub fn phase_tma(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new("phase_tma_table", target);
    let inp = k.param_global("inp", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    let iters = k.param("iters", Type::U32);
    k.require_block(32, 1, 1);
    let bars = k.alloc_barriers("tma_bar", 2);
    let buf = k.alloc_shared("stage", Type::U32, 2 * TILE);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        for s in 0..2 {
            let b = k.barrier_at(bars, Value::u32(s));
            k.mbarrier_init(b, Value::u32(1));
        }
    });
    k.cta_sync();
    // Prologue: fill both stages.
    k.if_then(is0, |k| {
        for s in 0..2u32 {
            let live = k.lt(Value::u32(s), iters);
            k.if_then(live, |k| {
                let b = k.barrier_at(bars, Value::u32(s));
                k.mbarrier_arrive_expect_tx(b, Value::u32(TILE * 4));
                let dst = k.shared_elem_addr(buf, Value::u32(s * TILE));
                let src = k.global_elem_addr(inp, Value::u32(s * TILE));
                k.bulk_load(dst, src, Value::u32(TILE * 4), b);
            });
        }
    });
    let phase = k.var(Value::u32(0));
    k.for_range(Value::u32(0), iters, |k, i| {
        let stage = k.and(i, Value::u32(1));
        let bar = k.barrier_at(bars, stage);
        let waited = k.var(Value::Reg(phase));
        k.mbarrier_wait(bar, Value::Reg(phase));
        let base = k.mul(stage, Value::u32(TILE));
        let j = k.add(base, tid);
        let a = k.ld_shared(buf, j);
        let j2 = k.add(j, Value::u32(32));
        let b = k.ld_shared(buf, j2);
        let v = k.add(a, b);
        let row = k.mul(i, Value::u32(32));
        let o = k.add(row, tid);
        k.st_global(out, o, v);
        // Every thread is done with the stage before it is refilled.
        k.cta_sync();
        let after = k.var(Value::u32(0));
        k.if_then(is0, |k| {
            let p = k.mbarrier_test_wait(bar, Value::u32(0));
            let p = k.cvt(p, Type::U32);
            k.assign(after, p);
            let next = k.add(i, Value::u32(2));
            let live = k.lt(next, iters);
            k.if_then(live, |k| {
                k.mbarrier_arrive_expect_tx(bar, Value::u32(TILE * 4));
                let dst = k.shared_elem_addr(buf, base);
                let off = k.mul(next, Value::u32(TILE));
                let src = k.global_elem_addr(inp, off);
                k.bulk_load(dst, src, Value::u32(TILE * 4), bar);
            });
        });
        let last = k.eq(stage, Value::u32(1));
        k.if_then(last, |k| {
            let f = k.xor(Value::Reg(phase), Value::u32(1));
            k.assign(phase, f);
        });
        k.if_then(is0, |k| k.probe(PROBE, &[i, stage, Value::Reg(waited), Value::Reg(after), Value::Reg(phase)]));
    });
    k.finish()
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "phase_tma_table",
        about: "the seeds' two-stage phase_tma loop over bulk copies; probes reproduce the seed table",
        kernels: |t| Ok(vec![phase_tma(t)?]),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub iters: u32,
    pub input: Vec<u32>,
    pub out: BufferId<u32>,
}

pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    let iters: u32 = match size {
        // Each stage refilled twice.
        Size::Small => 6,
        Size::Quick => 4,
        Size::Full => 256,
    };
    let input = random_u32((iters * TILE) as usize, seed ^ 7);
    let mut p = Problem::new(seed);
    let inp = p.input(dev, &input)?;
    let out = p.output(dev, (iters * 32) as usize, POISON_U32)?;
    p.launch(
        phase_tma(Target::Sm90a)?,
        LaunchConfig::linear(1, 32),
        [inp.into(), out.into(), iters.into()],
        [out.into()],
    );
    p.set_host(Host { iters, input, out });
    Ok(p)
}

/// `out[i][t] = tile i's t + (t + 32)`; in the simulator, the probe table must also be the
/// seeds' (the GPU records no probes: there the check is the output alone, and says so).
pub fn check(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let got = out.get(0, h.out);
    let input = &h.input;
    let bad = (0..(h.iters * 32) as usize)
        .filter(|&j| {
            let (i, t) = (j / 32, j % 32);
            got[j] != input[i * 64 + t].wrapping_add(input[i * 64 + t + 32])
        })
        .count();
    let mut detail = format!("{} iterations over 2 stages, {bad} wrong outputs", h.iters);
    let mut passed = bad == 0;
    match &out.launches[0].sim {
        Some(sim) => {
            let rows = sim.probe_rows(PROBE);
            let table_ok = rows.len() == h.iters as usize
                && rows
                    .iter()
                    .zip(SEED_TABLE.iter().cycle())
                    .enumerate()
                    .all(|(n, (row, want))| row[0] == n as i64 && row[1..] == want[1..]);
            passed &= table_ok;
            detail.push_str(if table_ok {
                "; probe table matches the seeds"
            } else {
                "; probe table differs from the seeds"
            });
        }
        None => detail.push_str("; probe table not recorded on this device"),
    }
    Outcome::new(passed, detail)
}
