//! A TMA pipeline written in the DSL with the `T.pipeline.*` ops: the codegen keeps the stage
//! index and phase parities (producer starts at phase 1, consumer at 0, flip on wrap) and
//! derives the barrier counts from the declared roles. No `phase ^= 1` in user code.
//!
//! `y = 2x + 1` over a `rows x 256` f32 tensor: warp 0's elected lane streams 8 x 256 tiles
//! into an S-stage ring with TMA; warps 1-4 each take two rows of a tile, write `y` with
//! ordinary stores and release the stage (one arrival per consumer warp).

use super::{fresh_seed, random_f32, Example, Outcome, Size};
use phaser::runtime::Swizzle;
use phaser::{Device, LaunchConfig, RuntimeError};

/// Columns of the tensor (one TMA box row).
pub const COLS: u32 = 256;
/// Rows per tile (the TMA box is `COLS x TILE_ROWS`).
pub const TILE_ROWS: u32 = 8;

#[phaser::kernel(target = "sm_90a")]
pub fn dsl_pipeline_axpb(x: TensorMap<2>, y: &mut [f32], rows: u32, #[comptime] STAGES: u32) {
    T.require_block(160, 1, 1);
    let pipe = T.pipeline.new(STAGES, 4);
    let ring = T.alloc_shared::<f32>([STAGES * 2048]);
    T.pipeline.init(pipe);
    let warp = T.warp_idx();
    let tiles = (rows + 7) / 8;
    if warp == 0 {
        if T.ptx.elect_sync() {
            let st = T.pipeline.producer_state(pipe);
            let mut t = T.block_idx();
            while t < tiles {
                T.pipeline.producer_acquire(pipe, st);
                let full = T.pipeline.producer_commit(pipe, st, 8192);
                let dst = T.shared_elem_addr(ring, T.pipeline.stage(st) * 2048);
                T.ptx.cp_async.bulk.tensor.g2s(dst, x, [0, t * 8], full);
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
            let base = T.pipeline.stage(st) * 2048;
            for r in 0..2 {
                let row = (warp - 1) * 2 + r;
                let grow = t * 8 + row;
                if grow < rows {
                    for c in 0..8 {
                        let col = c * 32 + lane;
                        y[grow * 256 + col] = ring[base + row * 256 + col] * 2.0 + 1.0;
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

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "dsl_pipeline_axpb",
        about: "DSL TMA pipeline with T.pipeline.* bookkeeping: producer warp + 4 consumer warps, S = 2, 3, 5",
        kernels: |t| [2, 3, 5].iter().map(|&s| dsl_pipeline_axpb::build(t, s)).collect::<Result<Vec<_>, _>>(),
        run,
        gpu_only: false,
    }]
}

fn run(dev: &Device, size: Size) -> Result<Outcome, RuntimeError> {
    // Ragged row counts: the last tile is partly outside the tensor (TMA zero-fills it).
    let (rows, grid) = match size {
        Size::Quick => (44u32, 2u32),
        Size::Full => (1 << 16, 132),
    };
    let seed = fresh_seed();
    let n = (rows * COLS) as usize;
    let host_x = random_f32(n, seed);
    let want = reference(&host_x);
    let x = dev.upload(&host_x)?;
    let mut y = dev.alloc::<f32>(n)?;
    let tmap = dev.tensor_map(&x, &[COLS as u64, rows as u64], &[COLS, TILE_ROWS], Swizzle::None)?;
    let mut details = Vec::new();
    let mut passed = true;
    let mut elapsed = None;
    for stages in [2, 3, 5] {
        dev.fill(&y, f32::NAN)?;
        let cfg = LaunchConfig::linear(grid, 160);
        let r = dsl_pipeline_axpb::launch(dev, cfg, &tmap, &mut y, rows, stages)?;
        elapsed = r.elapsed.or(elapsed);
        let got = dev.download(&y)?;
        super::record_output(&got);
        let bad = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
        passed &= bad == 0;
        details.push(if bad == 0 { format!("S={stages} ok") } else { format!("S={stages}: {bad} of {n} wrong") });
    }
    let mut o = Outcome::check(
        "dsl_pipeline_axpb",
        passed,
        format!("{rows}x{COLS} f32, grid {grid}, seed {seed}: {}", details.join("; ")),
    );
    o.elapsed = elapsed;
    Ok(o)
}
