//! A TMA pipeline written in the DSL with the `T.pipeline.*` ops: the codegen keeps the stage
//! index and phase parities (producer starts at phase 1, consumer at 0, flip on wrap) and
//! derives the barrier counts from the declared roles. No `phase ^= 1` in user code.
//!
//! `y = 2x + 1` over a `rows x 256` f32 tensor: warp 0's elected lane streams 8 x 256 tiles
//! into an S-stage ring with TMA; warps 1-4 each take two rows of a tile, write `y` with
//! ordinary stores and release the stage (one arrival per consumer warp).

use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::Swizzle;
use phaser::{Device, LaunchConfig, RuntimeError};

/// Columns of the tensor (one TMA box row).
pub const COLS: u32 = 256;
/// Rows per tile (the TMA box is `COLS x TILE_ROWS`).
pub const TILE_ROWS: u32 = 8;
/// Elements of a tile (one ring stage).
pub const TILE_ELEMS: u32 = COLS * TILE_ROWS;

#[phaser::kernel(target = "sm_90a")]
pub fn dsl_pipeline_axpb(x: TensorMap<2>, y: &mut [f32], rows: u32, #[comptime] STAGES: u32) {
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
                let grow = t * TILE_ROWS + row;
                if grow < rows {
                    for c in 0..8 {
                        let col = c * 32 + lane;
                        y[grow * COLS + col] = ring[base + row * COLS + col] * 2.0 + 1.0;
                    }
                }
            }
            T.pipeline.consumer_release(pipe, st);
            T.pipeline.advance(st);
            t += T.grid_dim();
        }
    }
}

/// The CPU reference: the same two roundings as the kernel (`mul.rn`, `add.rn`).
pub fn reference(x: &[f32]) -> Vec<f32> {
    x.iter().map(|&v| v * 2.0 + 1.0).collect()
}

/// The pipeline depths the gallery launches, one launch each.
pub const DEPTHS: [u32; 3] = [2, 3, 5];

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "dsl_pipeline_axpb",
        about: "DSL TMA pipeline with T.pipeline.* bookkeeping: producer warp + 4 consumer warps, S = 2, 3, 5",
        kernels: |t| DEPTHS.iter().map(|&s| dsl_pipeline_axpb::build(t, s)).collect::<Result<Vec<_>, _>>(),
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

/// `rows x 256` random f32s through every depth of [`DEPTHS`]; the output is shared, poisoned
/// before each launch.
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    // Ragged row counts: the last tile is partly outside the tensor (TMA zero-fills it).
    let (rows, grid) = match size {
        Size::Small => (44u32, 1u32),
        Size::Quick => (44, 2),
        Size::Full => (1 << 16, 132),
    };
    let n = (rows * COLS) as usize;
    let x = random_f32(n, seed);
    let mut p = Problem::new(seed);
    let xb = p.input(dev, &x)?;
    let y = p.output(dev, n, f32::NAN)?;
    let tmap = p.tensor_map(dev, xb, &[COLS as u64, rows as u64], &[COLS, TILE_ROWS], Swizzle::None)?;
    for stages in DEPTHS {
        let k = dsl_pipeline_axpb::kernel_for(stages)?;
        p.launch(k, LaunchConfig::linear(grid, 160), [tmap.into(), y.into(), rows.into()], [y.into()]);
    }
    p.set_host(Host { rows, grid, x, y });
    Ok(p)
}

pub fn check(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.x);
    let mut passed = true;
    let details: Vec<String> = DEPTHS
        .iter()
        .enumerate()
        .map(|(i, stages)| {
            let got = out.get(i, h.y);
            let bad = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
            passed &= bad == 0;
            if bad == 0 {
                format!("S={stages} ok")
            } else {
                format!("S={stages}: {bad} of {} wrong", want.len())
            }
        })
        .collect();
    Outcome::new(passed, format!("{}x{COLS} f32, grid {}, seed {}: {}", h.rows, h.grid, p.seed, details.join("; ")))
}
