//! Ampere-style copies tracked by an mbarrier: `cp.async` into a ring of shared-memory stages,
//! with completion signalled by `cp.async.mbarrier.arrive` instead of `cp.async.wait_group`,
//! so the producers never wait for their own copies and the consumers learn that a stage
//! landed only through the barrier.
//!
//! Block of 128 threads: warps 0-1 produce, warps 2-3 consume; tiles of 256 `u32` (1 KiB)
//! go through `STAGES` stages with `full`/`empty` barriers per stage (producers start at
//! parity 1, consumers at parity 0; index wraps at `STAGES`, parity flips on wrap).
//! - Producer thread `p` waits `empty[s]`, copies 16 bytes of the tile
//!   (`cp.async.cg ... 16`) into slot `p` of the stage and executes
//!   `cp.async.mbarrier.arrive[.noinc] full[s]`: the arrival fires when its copy landed.
//!   `full` expects 64 arrivals. With `.noinc` those are the 64 triggered arrivals; without
//!   it each triggered arrival is net-zero (the instruction first raises the pending count),
//!   so every producer also arrives normally after it (`mbarrier.arrive`).
//! - Consumer thread `c` waits `full[s]` and reads slot `(c + 17) % 64`: a slot some *other*
//!   thread copied, so the barrier's ordering is what makes the read safe. Each consumer warp
//!   then converges (`bar.warp.sync`) and lane 0 releases the stage (`empty` expects 2
//!   arrivals), and the thread writes `out = x * 3 + tile`.
//!
//! compute-sanitizer's synccheck reports "Missing wait" for the non-`.noinc` form (one per
//! producer) though PTX defines it and the outputs are correct; the `.noinc` form is clean
//! (`bench/gpu-runs.md`, 10:11 run; `examples/src/bin/diag_cp_async_synccheck.rs`).
//!
//! Only sm_80 instructions (waits are `mbarrier.test_wait.parity` loops; no
//! `fence.mbarrier_init`, whose job `bar.sync` does inside one CTA), so it runs on Ampere
//! and later. CTAs walk tiles `blockIdx.x, blockIdx.x + gridDim.x, ...`.

use phaser::codegen::builder::{Barrier, KernelBuilder, PipelineState};
use phaser::codegen::ir::{Dim, Space, Type, Value};
use phaser::codegen::{Kernel, Result, Target};
use phaser::problem::{random_u32, BufferId, Example, Outcome, Outputs, Problem, Size, POISON_U32};
use phaser::runtime::{Device, LaunchConfig, RuntimeError};

pub const STAGES: u32 = 3;
pub const PRODUCERS: u32 = 64;
pub const CONSUMER_WARPS: u32 = 2;
pub const THREADS: u32 = PRODUCERS + 32 * CONSUMER_WARPS;
/// Bytes each producer copies per tile (one `cp.async` of the largest size).
pub const SLOT_BYTES: u32 = 16;
pub const TILE_BYTES: u32 = PRODUCERS * SLOT_BYTES;
pub const TILE_ELEMS: u32 = TILE_BYTES / 4;
/// The slot consumer `c` reads: another thread's copy.
pub const SLOT_SHIFT: u32 = 17;

pub fn kernel_name(noinc: bool) -> &'static str {
    if noinc {
        "cp_async_mbarrier_noinc"
    } else {
        "cp_async_mbarrier"
    }
}

/// Spin on `mbarrier.test_wait.parity` (sm_80; `try_wait` needs sm_90).
#[track_caller]
fn wait_parity(k: &mut KernelBuilder, bar: Barrier, parity: Value) {
    k.loop_(|k| {
        let done = k.mbarrier_test_wait(bar, parity);
        k.if_then(done, |k| k.break_());
    });
}

/// `cp_async_mbarrier[_noinc](inp, out, ntiles)`.
pub fn kernel(target: Target, noinc: bool) -> Result<Kernel> {
    let mut k = KernelBuilder::new(kernel_name(noinc), target);
    let inp = k.param_global("inp", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    let ntiles = k.param("ntiles", Type::U32);
    k.require_block(THREADS, 1, 1);
    let tiles = k.alloc_shared_aligned("tiles", Type::U32, STAGES * TILE_ELEMS, 16);
    let full = k.alloc_barriers("full", STAGES);
    let empty = k.alloc_barriers("empty", STAGES);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        for s in 0..STAGES {
            let f = k.barrier_at(full, Value::u32(s));
            k.mbarrier_init(f, Value::u32(PRODUCERS));
            let e = k.barrier_at(empty, Value::u32(s));
            k.mbarrier_init(e, Value::u32(CONSUMER_WARPS));
        }
    });
    // Inside one CTA, bar.sync publishes the inits (no fence.mbarrier_init needed).
    k.cta_sync();
    let base = k.shared_base_addr(tiles);
    let first = k.block_idx(Dim::X);
    let step = k.grid_dim(Dim::X);
    let producer = k.lt(tid, Value::u32(PRODUCERS));
    k.if_else(
        producer,
        |k| {
            let st = PipelineState::new(k, STAGES, 1);
            let slot = k.mul(tid, Value::u32(SLOT_BYTES));
            let t = k.var(first);
            k.while_(
                |k| k.lt(Value::Reg(t), ntiles),
                |k| {
                    let e = k.barrier_at(empty, st.index());
                    wait_parity(k, e, st.phase());
                    let stage = st.stage_addr(k, base, TILE_BYTES);
                    let dst = k.add(stage, slot);
                    let tile0 = k.mul(Value::Reg(t), Value::u32(TILE_ELEMS));
                    let e0 = k.mad(tid, Value::u32(SLOT_BYTES / 4), tile0);
                    let src = k.global_elem_addr(inp, e0);
                    k.cp_async(dst, src, SLOT_BYTES);
                    let f = k.barrier_at(full, st.index());
                    k.cp_async_mbarrier_arrive(f, noinc);
                    if !noinc {
                        // The triggered arrival was net-zero: this one is the producer's.
                        k.mbarrier_arrive(f);
                    }
                    st.advance(k);
                    let n = k.add(Value::Reg(t), step);
                    k.assign(t, n);
                },
            );
            // Leave no copy in flight at exit (`cp.async.wait_all`).
            k.cp_async_commit_group();
            k.cp_async_wait_group(0);
        },
        |k| {
            let c = k.sub(tid, Value::u32(PRODUCERS));
            let q = k.add(c, Value::u32(SLOT_SHIFT));
            let q = k.rem(q, Value::u32(PRODUCERS));
            let slot = k.mul(q, Value::u32(SLOT_BYTES));
            let lane = k.lane_idx();
            let is_lane0 = k.eq(lane, Value::u32(0));
            let st = PipelineState::new(k, STAGES, 0);
            let t = k.var(first);
            k.while_(
                |k| k.lt(Value::Reg(t), ntiles),
                |k| {
                    let f = k.barrier_at(full, st.index());
                    wait_parity(k, f, st.phase());
                    let stage = st.stage_addr(k, base, TILE_BYTES);
                    let src = k.add(stage, slot);
                    let xs: Vec<Value> =
                        (0..SLOT_BYTES / 4).map(|j| k.ld_raw(Space::Shared, Type::U32, src, (j * 4) as i32)).collect();
                    // The whole warp has read the stage before lane 0 hands it back.
                    k.warp_sync();
                    k.if_then(is_lane0, |k| {
                        let e = k.barrier_at(empty, st.index());
                        k.mbarrier_arrive(e);
                    });
                    let tile0 = k.mul(Value::Reg(t), Value::u32(TILE_ELEMS));
                    let e0 = k.mad(q, Value::u32(SLOT_BYTES / 4), tile0);
                    for (j, x) in xs.iter().enumerate() {
                        let y = k.mad(*x, Value::u32(3), Value::Reg(t));
                        let i = k.add(e0, Value::u32(j as u32));
                        k.st_global(out, i, y);
                    }
                    st.advance(k);
                    let n = k.add(Value::Reg(t), step);
                    k.assign(t, n);
                },
            );
        },
    );
    k.finish()
}

/// The CPU reference: `out[t * 256 + e] = inp[..] * 3 + t` (wrapping).
pub fn reference(inp: &[u32]) -> Vec<u32> {
    inp.iter().enumerate().map(|(i, &x)| x.wrapping_mul(3).wrapping_add(i as u32 / TILE_ELEMS)).collect()
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "cp_async_mbarrier",
        about: "cp.async into a 3-stage ring, completion tracked only by cp.async.mbarrier.arrive (with and without .noinc); sm_80 ops",
        kernels: |t| Ok(vec![kernel(t, false)?, kernel(t, true)?]),
        setup,
        check,
    }]
}

/// The two forms, in launch order.
pub const NOINC: [bool; 2] = [false, true];

/// What the check needs.
pub struct Host {
    pub ntiles: u32,
    pub grid: u32,
    pub x: Vec<u32>,
    pub out: BufferId<u32>,
}

/// `ntiles` random tiles through both kernels (the output is shared, poisoned before each).
pub fn setup(dev: &Device, size: Size, seed: u64) -> std::result::Result<Problem, RuntimeError> {
    let (ntiles, grid) = match size {
        // One CTA: the 3-stage ring wraps twice.
        Size::Small => (7u32, 1u32),
        // 11 tiles over 2 CTAs: each wraps the 3-stage ring at least once.
        Size::Quick => (11, 2),
        Size::Full => (16384, dev.sm_count()?),
    };
    let x = random_u32((ntiles * TILE_ELEMS) as usize, seed);
    let mut p = Problem::new(seed);
    let inp = p.input(dev, &x)?;
    let out = p.output(dev, x.len(), POISON_U32)?;
    for noinc in NOINC {
        let cfg = LaunchConfig::linear(grid, THREADS);
        p.launch(kernel(Target::Sm90a, noinc)?, cfg, [inp.into(), out.into(), ntiles.into()], [out.into()]);
    }
    p.set_host(Host { ntiles, grid, x, out });
    Ok(p)
}

pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.x);
    let mut passed = true;
    let mut details = Vec::new();
    for (i, noinc) in NOINC.into_iter().enumerate() {
        let got = outputs.get(i, h.out);
        let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
        if bad.is_empty() {
            details.push(format!("{} ok", kernel_name(noinc)));
        } else {
            passed = false;
            let i = bad[0];
            details.push(format!(
                "{}: {} wrong, first at {i} (tile {}): got {:#x} want {:#x}",
                kernel_name(noinc),
                bad.len(),
                i as u32 / TILE_ELEMS,
                got[i],
                want[i]
            ));
        }
    }
    Outcome::new(
        passed,
        format!("{} tiles of {TILE_BYTES} bytes, grid {}, seed {}: {}", h.ntiles, h.grid, p.seed, details.join("; ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_only_sm_80() {
        for noinc in [false, true] {
            let k = kernel(Target::Sm80, noinc).unwrap_or_else(|e| panic!("{e}"));
            let ptx = phaser::codegen::emit_kernel(&k).unwrap();
            // PTX 7.0 (sm_80) spells the CTA window `.shared`.
            let arrive =
                if noinc { "cp.async.mbarrier.arrive.noinc.shared.b64" } else { "cp.async.mbarrier.arrive.shared.b64" };
            use phaser::codegen::ptx_text::{count, has};
            for inst in
                [arrive, "cp.async.cg.shared.global*", "mbarrier.test_wait.parity.*", "bar.warp.sync 0xffffffff"]
            {
                assert!(has(&ptx, inst), "missing `{inst}` in\n{ptx}");
            }
            assert!(!ptx.contains("fence.mbarrier_init") && !ptx.contains("try_wait"), "{ptx}");
            // Without .noinc each producer also arrives normally: 64 plain arrivals per tile.
            assert_eq!(count(&ptx, "mbarrier.arrive.shared.b64"), if noinc { 1 } else { 2 }, "{ptx}");
        }
    }

    #[test]
    fn reference_adds_the_tile_index() {
        let x = vec![1u32; 2 * TILE_ELEMS as usize];
        let r = reference(&x);
        assert_eq!((r[0], r[TILE_ELEMS as usize - 1], r[TILE_ELEMS as usize]), (3, 3, 4));
    }
}
