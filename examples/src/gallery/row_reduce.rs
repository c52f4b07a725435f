//! Row sums with warp shuffles over a TMA pipeline, written only in the DSL.
//!
//! `y[r] = sum(x[r][0..256])` over a `rows x 256` f32 tensor. Warp 0's elected lane streams
//! 8 x 256 tiles into an S-stage ring with TMA; each of the 4 consumer warps reduces two rows
//! of a tile: lane `l` adds the row's elements `32 c + l` (c = 0..8), then 5 butterfly
//! shuffles (`shfl.sync.bfly` 16, 8, 4, 2, 1) add the 32 partial sums, and lane 0 writes the
//! row's sum. The warp's 32 lanes read 32 consecutive words of a row (rows start at multiples
//! of 1024 bytes), one per bank: no shared-memory bank conflicts, which the GPU run checks
//! with `ncu` (`.ci/gpu-run.sh`, `NCU=1`); the simulator and the GPU agree bit for bit (the
//! order of the additions is fixed, [`reference`] follows it).

use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::Swizzle;
use phaser::{Device, LaunchConfig, RuntimeError};

// The tensor and tile shape of the DSL pipeline example, whose ring this kernel shares.
pub use super::dsl_pipeline::{COLS, TILE_ELEMS, TILE_ROWS};
/// Stages of the ring.
pub const STAGES: u32 = 3;

#[phaser::kernel(target = "sm_90a")]
pub fn dsl_row_reduce(x: TensorMap<2>, y: &mut [f32], rows: u32, #[comptime] STAGES: u32) {
    T.require_block(160, 1, 1);
    let pipe = T.pipeline.new(STAGES, 4);
    let ring = T.alloc_shared::<f32>([STAGES * TILE_ELEMS]);
    T.pipeline.init(pipe);
    let warp = T.warp_idx();
    let tiles = (rows + (TILE_ROWS - 1)) / TILE_ROWS;
    if warp == 0 {
        if T.ptx.elect_sync() {
            let st = T.pipeline.producer_state(pipe);
            let mut t = T.block_idx();
            while t < tiles {
                T.pipeline.producer_acquire(pipe, st);
                let full = T.pipeline.producer_commit(pipe, st, TILE_ELEMS * 4);
                let dst = T.shared_elem_addr(ring, T.pipeline.stage(st) * TILE_ELEMS);
                T.ptx.cp_async.bulk.tensor.g2s(dst, x, [0, t * TILE_ROWS], full);
                T.pipeline.advance(st);
                t += T.grid_dim();
            }
            T.pipeline.producer_tail(pipe, st);
        }
    } else {
        let st = T.pipeline.consumer_state(pipe);
        let lane = T.lane_idx();
        let mut t = T.block_idx();
        while t < tiles {
            T.pipeline.consumer_wait(pipe, st);
            let base = T.pipeline.stage(st) * TILE_ELEMS;
            for r in 0..2 {
                let row = (warp - 1) * 2 + r;
                // Lane l reads words 32c + l of the row: 32 banks, one word each.
                let mut s = 0.0;
                for c in 0..8 {
                    s += ring[base + row * COLS + c * 32 + lane];
                }
                for k in 0..5 {
                    s += T.ptx.shfl.sync.bfly(s, 16 >> k);
                }
                let grow = t * TILE_ROWS + row;
                if lane == 0 && grow < rows {
                    y[grow] = s;
                }
            }
            T.pipeline.consumer_release(pipe, st);
            T.pipeline.advance(st);
            t += T.grid_dim();
        }
    }
}

/// The CPU reference, in the kernel's order: per lane the 8 strided elements in column order,
/// then the butterfly (every lane adds its partner's partial sum; addition commutes, so all
/// lanes end with the same bits).
pub fn reference(x: &[f32], rows: u32) -> Vec<f32> {
    (0..rows as usize)
        .map(|r| {
            let row = &x[r * COLS as usize..(r + 1) * COLS as usize];
            let mut s: Vec<f32> = (0..32).map(|l| (0..8).fold(0.0f32, |a, c| a + row[c * 32 + l])).collect();
            for step in [16, 8, 4, 2, 1] {
                s = (0..32).map(|l| s[l] + s[l ^ step]).collect();
            }
            s[0]
        })
        .collect()
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "dsl_row_reduce",
        about: "DSL row sums: TMA pipeline, 4 consumer warps, warp-shuffle butterflies, conflict-free shared reads",
        kernels: |t| Ok(vec![dsl_row_reduce::build(t, STAGES)?]),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub rows: u32,
    pub grid: u32,
    pub x: Vec<f32>,
    pub y: BufferId<f32>,
}

/// `rows x 256` random f32s; the last tile is ragged (TMA zero-fills past the tensor).
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    let (rows, grid) = match size {
        Size::Small => (44u32, 1u32),
        Size::Quick => (100, 3),
        Size::Full => (1 << 16, 132),
    };
    let n = (rows * COLS) as usize;
    let x = random_f32(n, seed);
    let mut p = Problem::new(seed);
    let xb = p.input(dev, &x)?;
    let y = p.output(dev, rows as usize, f32::NAN)?;
    let tmap = p.tensor_map(dev, xb, &[COLS as u64, rows as u64], &[COLS, TILE_ROWS], Swizzle::None)?;
    let k = dsl_row_reduce::kernel_for(STAGES)?;
    p.launch(k, LaunchConfig::linear(grid, 160), [tmap.into(), y.into(), rows.into()], [y.into()]);
    p.set_host(Host { rows, grid, x, y });
    Ok(p)
}

pub fn check(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.x, h.rows);
    let got = out.get(0, h.y);
    let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i].to_bits() != want[i].to_bits()).collect();
    let detail = match bad.first() {
        None => format!("{} rows x {COLS} f32, grid {}, seed {}: every row sum bit-exact", h.rows, h.grid, p.seed),
        Some(&i) => {
            format!("{} of {} row sums differ; row {i}: got {}, want {}", bad.len(), want.len(), got[i], want[i])
        }
    };
    Outcome::new(bad.is_empty(), detail)
}
