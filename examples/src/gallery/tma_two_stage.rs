//! The seeds' two-stage TMA pipeline, written in the seeds' manual style: two stage buffers,
//! one TMA (full) barrier per stage, one `phase_tma` variable flipped after stage 1.
//!
//! ```text
//! stage = iteration % 2
//! T.ptx.mbarrier.try_wait(tma_bar.ptr_to([stage]), phase_tma)
//! if stage == 1:
//!     phase_tma ^= 1
//! ```
//!
//! Per iteration thread 0 records (iteration, stage, waited parity, the barrier's parity
//! right after the wait — probed with `mbarrier.test_wait.parity(bar, 0)`, which is true
//! exactly when the barrier's current parity is 1 — and `phase_tma` after the iteration).
//! The first four rows must be the seed's table
//! `[(0,0,0,1,0), (1,1,0,1,1), (2,0,1,0,1), (3,1,1,0,0)]`, later rows repeat it with period
//! 4, and every tile copied through shared memory must equal the input.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::codegen::{Kernel, Result, Target};
use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size, POISON_U32};
use phaser::runtime::{Device, LaunchConfig, RuntimeError, Swizzle};

/// Columns of a tile (the box's inner dimension).
pub const COLS: u32 = 64;
/// Rows of a tile.
pub const TILE_ROWS: u32 = 8;
pub const TILE_ELEMS: u32 = COLS * TILE_ROWS;
pub const TILE_BYTES: u32 = TILE_ELEMS * 4;
pub const THREADS: u32 = 128;
/// Columns of the recorded table.
pub const TABLE_COLS: usize = 5;

/// The seed's table: (iteration, stage, waited parity, parity after completion, phase_tma after).
pub const SEED_TABLE: [[u32; 5]; 4] = [[0, 0, 0, 1, 0], [1, 1, 0, 1, 1], [2, 0, 1, 0, 1], [3, 1, 1, 0, 0]];

/// `tma_two_stage(in_map, out, table, iters)`: tile `i` (rows `8i..8i+8` of a `[rows, 64]`
/// f32 tensor) is loaded by TMA into stage `i % 2` and copied to `out[i*512..]` by all 128
/// threads; thread 0 refills the stage with tile `i + 2` once everyone has read it.
pub fn kernel(target: Target) -> Result<Kernel> {
    let mut k = KernelBuilder::new("tma_two_stage", target);
    let map = k.param_tensor_map("in_map", 2);
    let out = k.param_global("out", Type::F32, true);
    let table = k.param_global("table", Type::U32, true);
    let iters = k.param("iters", Type::U32);
    k.require_block(THREADS, 1, 1);
    let tiles = k.alloc_shared_aligned("tiles", Type::F32, 2 * TILE_ELEMS, 128);
    let tma_bar = k.alloc_barriers("tma_bar", 2);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));

    k.if_then(is0, |k| {
        for s in 0..2 {
            let b = k.barrier_at(tma_bar, Value::u32(s));
            k.mbarrier_init(b, Value::u32(1));
        }
        k.fence_mbarrier_init();
    });
    k.cta_sync();

    let tiles_base = k.shared_base_addr(tiles);
    // Prologue: fill both stages (tiles 0 and 1, when they exist).
    k.if_then(is0, |k| {
        for s in 0..2u32 {
            let exists = k.lt(Value::u32(s), iters);
            k.if_then(exists, |k| {
                let b = k.barrier_at(tma_bar, Value::u32(s));
                k.mbarrier_arrive_expect_tx(b, Value::u32(TILE_BYTES));
                let dst = k.add(tiles_base, Value::u32(s * TILE_BYTES));
                k.tma_load(dst, map, &[Value::u32(0), Value::u32(s * TILE_ROWS)], b);
            });
        }
    });

    let phase_tma = k.var(Value::u32(0));
    k.for_range(Value::u32(0), iters, |k, it| {
        let stage = k.rem(it, Value::u32(2));
        let bar = k.barrier_at(tma_bar, stage);
        let waited = k.var(Value::Reg(phase_tma));
        k.mbarrier_wait(bar, Value::Reg(phase_tma));

        // Thread 0 probes the barrier's parity before anyone can refill the stage.
        let probe = k.mbarrier_test_wait(bar, Value::u32(0));
        let parity_after = k.cvt(probe, Type::U32);

        // Everyone copies the tile out of shared memory.
        let stage_off = k.mul(stage, Value::u32(TILE_ELEMS));
        let out_off = k.mul(it, Value::u32(TILE_ELEMS));
        for j in 0..TILE_ELEMS / THREADS {
            let e = k.add(tid, Value::u32(j * THREADS));
            let si = k.add(stage_off, e);
            let v = k.ld_shared(tiles, si);
            let oi = k.add(out_off, e);
            k.st_global(out, oi, v);
        }

        let is_stage1 = k.eq(stage, Value::u32(1));
        k.if_then(is_stage1, |k| {
            let f = k.xor(Value::Reg(phase_tma), Value::u32(1));
            k.assign(phase_tma, f);
        });

        k.if_then(is0, |k| {
            let row = k.mul(it, Value::u32(TABLE_COLS as u32));
            let vals = [it, stage, Value::Reg(waited), parity_after, Value::Reg(phase_tma)];
            for (c, v) in vals.iter().enumerate() {
                let i = k.add(row, Value::u32(c as u32));
                k.st_global(table, i, *v);
            }
            k.probe("tma_two_stage", &vals);
        });

        // Every thread has read the stage: thread 0 refills it with tile it + 2.
        k.cta_sync();
        let next = k.add(it, Value::u32(2));
        let more = k.lt(next, iters);
        let refill = k.and(is0, more);
        k.if_then(refill, |k| {
            k.mbarrier_arrive_expect_tx(bar, Value::u32(TILE_BYTES));
            let dst = k.mul(stage, Value::u32(TILE_BYTES));
            let dst = k.add(tiles_base, dst);
            let row = k.mul(next, Value::u32(TILE_ROWS));
            k.tma_load(dst, map, &[Value::u32(0), row], bar);
        });
    });
    k.finish()
}

/// The table the kernel must record for `iters` iterations (the seed's, with period 4).
pub fn expected_table(iters: usize) -> Vec<u32> {
    let mut v = Vec::with_capacity(iters * TABLE_COLS);
    for it in 0..iters {
        let mut row = SEED_TABLE[it % 4];
        row[0] = it as u32;
        v.extend_from_slice(&row);
    }
    v
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "tma_two_stage",
        about:
            "the seeds' two-stage TMA pipeline (manual phase_tma); checks the seed's phase table and the copied tiles",
        kernels: |t| Ok(vec![kernel(t)?]),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub iters: usize,
    pub input: Vec<f32>,
    pub out: BufferId<f32>,
    pub table: BufferId<u32>,
}

pub fn setup(dev: &Device, size: Size, seed: u64) -> std::result::Result<Problem, RuntimeError> {
    let iters: usize = match size {
        // Each stage refilled twice.
        Size::Small => 6,
        Size::Quick => 4,
        Size::Full => 64,
    };
    let rows = iters as u64 * TILE_ROWS as u64;
    let input = random_f32(iters * TILE_ELEMS as usize, seed);
    let mut p = Problem::new(seed);
    let inp = p.input(dev, &input)?;
    let out = p.output(dev, input.len(), f32::NAN)?;
    let table = p.output(dev, iters * TABLE_COLS, POISON_U32)?;
    let map = p.tensor_map(dev, inp, &[COLS as u64, rows], &[COLS, TILE_ROWS], Swizzle::None)?;
    p.launch(
        kernel(Target::Sm90a)?,
        LaunchConfig::linear(1, THREADS),
        [map.into(), out.into(), table.into(), (iters as u32).into()],
        [table.into(), out.into()],
    );
    p.set_host(Host { iters, input, out, table });
    Ok(p)
}

/// The recorded table is the seed's (period 4) and every tile was copied bit for bit.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let (h, seed): (&Host, u64) = (p.host(), p.seed);
    let (got_table, got) = (outputs.get(0, h.table), outputs.get(0, h.out));
    let (iters, input) = (h.iters, &h.input);
    let want_table = expected_table(iters);
    let table_ok = got_table == want_table;
    let bad = (0..input.len()).filter(|&i| got[i].to_bits() != input[i].to_bits()).count();
    let rows_str: Vec<String> = got_table
        .chunks(TABLE_COLS)
        .take(4)
        .map(|r| format!("({},{},{},{},{})", r[0], r[1], r[2], r[3], r[4]))
        .collect();
    let detail = if table_ok && bad == 0 {
        format!(
            "{iters} iterations (seed {seed}); table starts [{}] = seed table; all tiles copied",
            rows_str.join(",")
        )
    } else {
        let first_bad_row = got_table.chunks(TABLE_COLS).zip(want_table.chunks(TABLE_COLS)).position(|(g, w)| g != w);
        format!(
            "seed {seed}: table {} (first wrong row {:?}: got {:?}, want {:?}); {bad} of {} values differ",
            if table_ok { "ok" } else { "WRONG" },
            first_bad_row,
            first_bad_row.map(|i| &got_table[i * TABLE_COLS..(i + 1) * TABLE_COLS]),
            first_bad_row.map(|i| &want_table[i * TABLE_COLS..(i + 1) * TABLE_COLS]),
            input.len()
        )
    };
    Outcome::new(table_ok && bad == 0, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_table_is_the_seed_table() {
        let t = expected_table(8);
        assert_eq!(&t[..20], SEED_TABLE.concat().as_slice());
        assert_eq!(&t[20..25], &[4, 0, 0, 1, 0]);
        assert_eq!(&t[35..40], &[7, 1, 1, 0, 0]);
    }

    #[test]
    fn ptx_has_the_two_stage_protocol() {
        let ptx = phaser::codegen::emit_kernel(&kernel(Target::Sm90a).unwrap()).unwrap();
        use phaser::codegen::ptx_text::{has, has_directive};
        assert!(has(&ptx, "mbarrier.arrive.expect_tx.shared::cta.b64"), "{ptx}");
        assert!(has(&ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes*"), "{ptx}");
        assert!(has(&ptx, "mbarrier.test_wait.parity.shared::cta.b64"), "{ptx}");
        assert!(has(&ptx, "fence.mbarrier_init.release.cluster"), "{ptx}");
        assert!(has_directive(&ptx, ".shared .align 128 .f32 smem_tiles[1024];"), "{ptx}");
    }
}
