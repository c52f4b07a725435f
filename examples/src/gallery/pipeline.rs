//! Two small full/empty pipelines of depth 2: warp 0 produces, warp 1 consumes.
//!
//! - `fe_pipeline`: the producer warp copies each 32-element tile into shared memory itself
//!   and arrives on `full[stage]` (32 arrivals); the consumers arrive on `empty[stage]`.
//! - `bulk_pipeline`: one elected producer lane fills a stage with a bulk copy (`expect_tx` +
//!   `cp.async.bulk`); the consumer warp writes its results through a shared staging buffer
//!   and a bulk store (`fence.proxy.async`, `bar.sync 1, 32`, `cp.async.bulk` store groups).
//!
//! Both follow the protocol of the seeds: full/empty per stage, each with its own parity;
//! producers start at phase 1, consumers at phase 0; the stage index wraps at 2 and the
//! parity flips on wrap.

use phaser::codegen::builder::{BarrierArray, KernelBuilder};
use phaser::codegen::ir::{Dim, ProxySpace, Type, Value};
use phaser::codegen::{Kernel, Result, Target};
use phaser::problem::{random_u32, BufferId, Example, Outcome, Outputs, Problem, Size, POISON_U32};
use phaser::runtime::{Device, LaunchConfig, RuntimeError};

pub fn fe_pipeline(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new("fe_pipeline", target);
    let inp = k.param_global("inp", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    let iters = k.param("iters", Type::U32);
    k.require_block(64, 1, 1);
    let full = k.alloc_barriers("full", 2);
    let empty = k.alloc_barriers("empty", 2);
    let buf = k.alloc_shared("stage", Type::U32, 64);
    let (lane, warp) = init_two_stages(&mut k, full, empty, 32);
    let producer = k.eq(warp, Value::u32(0));
    k.if_else(
        producer,
        |k| {
            let phase = k.var(Value::u32(1));
            k.for_range(Value::u32(0), iters, |k, i| {
                let stage = k.and(i, Value::u32(1));
                let e = k.barrier_at(empty, stage);
                k.mbarrier_wait(e, Value::Reg(phase));
                let row = k.mul(i, Value::u32(32));
                let g = k.add(row, lane);
                let v = k.ld_global(inp, g);
                let base = k.mul(stage, Value::u32(32));
                let j = k.add(base, lane);
                k.st_shared(buf, j, v);
                let f = k.barrier_at(full, stage);
                k.mbarrier_arrive(f);
                let wrap = k.eq(stage, Value::u32(1));
                k.if_then(wrap, |k| {
                    let x = k.xor(Value::Reg(phase), Value::u32(1));
                    k.assign(phase, x);
                });
            });
        },
        |k| {
            let phase = k.var(Value::u32(0));
            k.for_range(Value::u32(0), iters, |k, i| {
                let stage = k.and(i, Value::u32(1));
                let f = k.barrier_at(full, stage);
                k.mbarrier_wait(f, Value::Reg(phase));
                let base = k.mul(stage, Value::u32(32));
                let j = k.add(base, lane);
                let v = k.ld_shared(buf, j);
                let e = k.barrier_at(empty, stage);
                k.mbarrier_arrive(e);
                let y = k.mad(v, Value::u32(2), Value::u32(1));
                let row = k.mul(i, Value::u32(32));
                let g = k.add(row, lane);
                k.st_global(out, g, y);
                let wrap = k.eq(stage, Value::u32(1));
                k.if_then(wrap, |k| {
                    let x = k.xor(Value::Reg(phase), Value::u32(1));
                    k.assign(phase, x);
                });
            });
        },
    );
    k.finish()
}

/// u32 elements per bulk-copied tile (256 bytes).
pub const TILE: u32 = 64;

pub fn bulk_pipeline(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new("bulk_pipeline", target);
    let inp = k.param_global("inp", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    let iters = k.param("iters", Type::U32);
    k.require_block(64, 1, 1);
    let full = k.alloc_barriers("full", 2);
    let empty = k.alloc_barriers("empty", 2);
    let buf = k.alloc_shared("stage", Type::U32, 2 * TILE);
    let staging = k.alloc_shared("out_stage", Type::U32, 32);
    let (lane, warp) = init_two_stages(&mut k, full, empty, 1);
    let producer = k.eq(warp, Value::u32(0));
    k.if_else(
        producer,
        |k| {
            let leader = k.elect_sync();
            k.if_then(leader, |k| {
                let phase = k.var(Value::u32(1));
                k.for_range(Value::u32(0), iters, |k, i| {
                    let stage = k.and(i, Value::u32(1));
                    let e = k.barrier_at(empty, stage);
                    k.mbarrier_wait(e, Value::Reg(phase));
                    let f = k.barrier_at(full, stage);
                    k.mbarrier_arrive_expect_tx(f, Value::u32(TILE * 4));
                    let base = k.mul(stage, Value::u32(TILE));
                    let dst = k.shared_elem_addr(buf, base);
                    let off = k.mul(i, Value::u32(TILE));
                    let src = k.global_elem_addr(inp, off);
                    k.bulk_load(dst, src, Value::u32(TILE * 4), f);
                    let wrap = k.eq(stage, Value::u32(1));
                    k.if_then(wrap, |k| {
                        let x = k.xor(Value::Reg(phase), Value::u32(1));
                        k.assign(phase, x);
                    });
                });
            });
        },
        |k| {
            let lane0 = k.eq(lane, Value::u32(0));
            let phase = k.var(Value::u32(0));
            k.for_range(Value::u32(0), iters, |k, i| {
                let stage = k.and(i, Value::u32(1));
                let f = k.barrier_at(full, stage);
                k.mbarrier_wait(f, Value::Reg(phase));
                let base = k.mul(stage, Value::u32(TILE));
                let j = k.add(base, lane);
                let a = k.ld_shared(buf, j);
                let j2 = k.add(j, Value::u32(32));
                let b = k.ld_shared(buf, j2);
                let e = k.barrier_at(empty, stage);
                k.mbarrier_arrive(e);
                let v = k.add(a, b);
                // The previous bulk store must have read the staging buffer before it is rewritten.
                k.if_then(lane0, |k| k.bulk_wait_group(0, true));
                k.bar_sync(Value::u32(1), Some(Value::u32(32)));
                k.st_shared(staging, lane, v);
                k.fence_proxy_async(ProxySpace::SharedCta);
                k.bar_sync(Value::u32(1), Some(Value::u32(32)));
                k.if_then(lane0, |k| {
                    let row = k.mul(i, Value::u32(32));
                    let dst = k.global_elem_addr(out, row);
                    let src = k.shared_elem_addr(staging, Value::u32(0));
                    k.bulk_store(dst, src, Value::u32(128));
                    k.bulk_commit_group();
                });
                let wrap = k.eq(stage, Value::u32(1));
                k.if_then(wrap, |k| {
                    let x = k.xor(Value::Reg(phase), Value::u32(1));
                    k.assign(phase, x);
                });
            });
            k.if_then(lane0, |k| k.bulk_wait_group(0, false));
        },
    );
    k.finish()
}

pub fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "fe_pipeline",
            about: "depth-2 full/empty pipeline, producer warp stores tiles and arrives (32 arrivals per phase)",
            kernels: |t| Ok(vec![fe_pipeline(t)?]),
            setup: setup_fe,
            check: check_fe,
        },
        Example {
            name: "bulk_pipeline",
            about: "depth-2 full/empty pipeline over bulk copies (expect_tx) with bulk-store output staging",
            kernels: |t| Ok(vec![bulk_pipeline(t)?]),
            setup: setup_bulk,
            check: check_bulk,
        },
    ]
}

fn iters(size: Size) -> u32 {
    match size {
        // Each of the two stages is refilled twice.
        Size::Small => 6,
        Size::Quick => 8,
        Size::Full => 512,
    }
}

/// What both checks need.
pub struct Host {
    pub iters: u32,
    pub input: Vec<u32>,
    pub out: BufferId<u32>,
}

/// `iters` tiles of `tile` random `u32`s in, 32 per tile out; one block of 64 threads.
fn setup_tiles(dev: &Device, k: Kernel, iters: u32, tile: u32, seed: u64) -> Result<Problem, RuntimeError> {
    let input = random_u32((iters * tile) as usize, seed);
    let mut p = Problem::new(seed);
    let inp = p.input(dev, &input)?;
    let out = p.output(dev, (iters * 32) as usize, POISON_U32)?;
    p.launch(k, LaunchConfig::linear(1, 64), [inp.into(), out.into(), iters.into()], [out.into()]);
    p.set_host(Host { iters, input, out });
    Ok(p)
}

/// `fe_pipeline` over `iters` tiles (the exhaustive runs take a few).
pub fn setup_fe_iters(dev: &Device, iters: u32, seed: u64) -> Result<Problem, RuntimeError> {
    setup_tiles(dev, fe_pipeline(Target::Sm90a)?, iters, 32, seed ^ 11)
}

/// `bulk_pipeline` over `iters` tiles.
pub fn setup_bulk_iters(dev: &Device, iters: u32, seed: u64) -> Result<Problem, RuntimeError> {
    setup_tiles(dev, bulk_pipeline(Target::Sm90a)?, iters, TILE, seed ^ 13)
}

pub fn setup_fe(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    setup_tiles(dev, fe_pipeline(Target::Sm90a)?, iters(size), 32, seed ^ 11)
}

pub fn setup_bulk(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    setup_tiles(dev, bulk_pipeline(Target::Sm90a)?, iters(size), TILE, seed ^ 13)
}

/// `out = 2 * inp + 1`, element for element.
pub fn check_fe(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let got = out.get(0, h.out);
    let bad = h.input.iter().zip(got).filter(|(x, y)| x.wrapping_mul(2).wrapping_add(1) != **y).count();
    Outcome::new(bad == 0, format!("{} tiles through 2 stages, {bad} wrong outputs", h.iters))
}

/// `out[i][t] = tile i's t + (t + 32)`.
pub fn check_bulk(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let (got, input) = (out.get(0, h.out), &h.input);
    let bad = (0..(h.iters * 32) as usize)
        .filter(|&j| {
            let (i, t) = (j / 32, j % 32);
            got[j] != input[i * 64 + t].wrapping_add(input[i * 64 + t + 32])
        })
        .count();
    Outcome::new(bad == 0, format!("{} bulk tiles through 2 stages, {bad} wrong outputs", h.iters))
}

/// Thread 0 inits both stages' `full` (expecting `full_count` arrivals) and `empty` (one per
/// consumer lane) barriers, then the CTA syncs. Returns `(lane, warp)`.
fn init_two_stages(k: &mut KernelBuilder, full: BarrierArray, empty: BarrierArray, full_count: u32) -> (Value, Value) {
    let tid = k.thread_idx(Dim::X);
    let lane = k.and(tid, Value::u32(31));
    let warp = k.shr(tid, Value::u32(5));
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        for s in 0..2 {
            let f = k.barrier_at(full, Value::u32(s));
            k.mbarrier_init(f, Value::u32(full_count));
            let e = k.barrier_at(empty, Value::u32(s));
            k.mbarrier_init(e, Value::u32(32));
        }
    });
    k.cta_sync();
    (lane, warp)
}
