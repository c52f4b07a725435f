//! A matrix transpose through 128-byte swizzled shared tiles, written only in the DSL: no byte
//! count, tile size or shared-memory size appears twice.
//!
//! `out = inᵀ` for a `rows x cols` f32 matrix. Warp 0's elected lane walks the CTA's tiles and
//! loads each `TILE x TILE` box with TMA (128-byte swizzle) into an S-stage ring of typed tiles
//! (`ring[stage]`), committing `ring[stage].bytes()` on the stage's `full` barrier. The four
//! consumer warps read the tile by rows (`tile[r][c]`: the swizzle makes both the row reads
//! and the column writes of the transposed tile spread over the banks), write the transposed
//! tile `out_tile[c][r]`, release the stage, and one consumer thread stores `out_tile` with a
//! TMA store (the box comes from the same `#[tma]` declaration). The launch gives no dynamic
//! shared-memory size: the ring and the output tile declare it.

use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::Swizzle;
use phaser::{Device, LaunchConfig, RuntimeError};

/// Tile edge: one 128-byte swizzle row of f32 per tile row.
pub const TILE: u32 = 32;
/// Threads of the consumer warps, which share the work of a tile.
const CONSUMERS: u32 = 128;

#[phaser::kernel(target = "sm_90a")]
pub fn transpose_swizzled(
    #[tma(box = [TILE, TILE], swizzle = "128B")] src: TensorMap<f32, 2>,
    #[tma(box = [TILE, TILE], swizzle = "128B")] dst: TensorMap<f32, 2>,
    rows: u32,
    cols: u32,
    #[comptime] STAGES: u32,
) {
    T.require_block(32 + CONSUMERS, 1, 1);
    let pipe = T.pipeline.new(STAGES, CONSUMERS / 32);
    let ring = T.alloc_shared::<f32>([STAGES, TILE, TILE], "128B");
    let out_tile = T.alloc_shared::<f32>([TILE, TILE], "128B");
    T.pipeline.init(pipe);
    let tiles_across = (cols + TILE - 1) / TILE;
    let tiles = tiles_across * ((rows + TILE - 1) / TILE);
    if T.warp_idx() == 0 {
        if T.ptx.elect_sync() {
            let st = T.pipeline.producer_state(pipe);
            let mut t = T.block_idx();
            while t < tiles {
                T.pipeline.producer_acquire(pipe, st);
                let stage = ring[T.pipeline.stage(st)];
                let full = T.pipeline.producer_commit(pipe, st, stage.bytes());
                let row0 = (t / tiles_across * TILE) as i32;
                let col0 = (t % tiles_across * TILE) as i32;
                T.tma.load(stage, src, [row0, col0], full);
                T.pipeline.advance(st);
                t += T.grid_dim();
            }
            T.pipeline.producer_tail(pipe, st);
        }
    } else {
        let st = T.pipeline.consumer_state(pipe);
        let me = T.thread_idx() - 32;
        let mut t = T.block_idx();
        while t < tiles {
            T.pipeline.consumer_wait(pipe, st);
            let tile = ring[T.pipeline.stage(st)];
            #[unroll]
            for i in 0..TILE * TILE / CONSUMERS {
                let e = i * CONSUMERS + me;
                let r = e / TILE;
                let c = e % TILE;
                out_tile[c][r] = tile[r][c];
            }
            T.pipeline.consumer_release(pipe, st);
            // The generic-proxy writes of `out_tile`, then the async proxy's TMA store of it.
            T.ptx.fence.proxy_async("shared::cta");
            T.ptx.bar.sync(1, CONSUMERS);
            if me == 0 {
                let row0 = (t % tiles_across * TILE) as i32;
                let col0 = (t / tiles_across * TILE) as i32;
                T.tma.store(dst, [row0, col0], out_tile);
                T.ptx.cp_async.bulk.commit_group();
                // `out_tile` is written again only after the store has read it.
                T.ptx.cp_async.bulk.wait_group_read(0);
            }
            T.ptx.bar.sync(1, CONSUMERS);
            T.pipeline.advance(st);
            t += T.grid_dim();
        }
        if me == 0 {
            T.ptx.cp_async.bulk.wait_group(0);
        }
    }
}

/// The transpose on the CPU: `out[c][r] = in[r][c]`.
pub fn reference(input: &[f32], rows: u32, cols: u32) -> Vec<f32> {
    let (rows, cols) = (rows as usize, cols as usize);
    let mut out = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// The ring depths the gallery launches, one launch each.
pub const DEPTHS: [u32; 2] = [2, 3];

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "transpose_swizzled",
        about: "DSL transpose through 128B-swizzled typed tiles: TMA ring in, TMA store out, sizes from the tiles",
        kernels: |t| DEPTHS.iter().map(|&s| transpose_swizzled::build(t, s)).collect::<Result<Vec<_>, _>>(),
        setup,
        check,
    }]
}

/// What the check needs.
pub struct Host {
    pub rows: u32,
    pub cols: u32,
    pub grid: u32,
    pub input: Vec<f32>,
    pub out: BufferId<f32>,
}

/// A `rows x cols` matrix of random f32s through every depth of [`DEPTHS`]. Ragged shapes (not
/// multiples of the tile): TMA zero-fills the loads past the edge and clips the stores.
pub fn setup(dev: &Device, size: Size, seed: u64) -> Result<Problem, RuntimeError> {
    // Row pitches are multiples of 16 bytes (a tensor map's rule): both extents multiples of 4.
    let (rows, cols, grid) = match size {
        Size::Small => (72u32, 44u32, 1u32),
        Size::Quick => (100, 68, 3),
        Size::Full => (8196, 4100, 264),
    };
    let n = (rows * cols) as usize;
    let input = random_f32(n, seed);
    let mut p = Problem::new(seed);
    let x = p.input(dev, &input)?;
    let out = p.output(dev, n, f32::NAN)?;
    let boxed = [TILE, TILE];
    let src = p.tensor_map(dev, x, &[cols as u64, rows as u64], &boxed, Swizzle::B128)?;
    let dst = p.tensor_map(dev, out, &[rows as u64, cols as u64], &boxed, Swizzle::B128)?;
    for stages in DEPTHS {
        let k = transpose_swizzled::kernel_for(stages)?;
        let cfg = LaunchConfig::linear(grid, 32 + CONSUMERS);
        p.launch(k, cfg, [src.into(), dst.into(), rows.into(), cols.into()], [out.into()]);
    }
    p.set_host(Host { rows, cols, grid, input, out });
    Ok(p)
}

pub fn check(p: &Problem, out: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.input, h.rows, h.cols);
    let mut passed = true;
    let details: Vec<String> = DEPTHS
        .iter()
        .enumerate()
        .map(|(i, stages)| {
            let got = out.get(i, h.out);
            let bad = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
            passed &= bad == 0;
            if bad == 0 {
                format!("S={stages} ok")
            } else {
                format!("S={stages}: {bad} of {} wrong", want.len())
            }
        })
        .collect();
    Outcome::new(
        passed,
        format!("{}x{} f32 transposed, grid {}, seed {}: {}", h.rows, h.cols, h.grid, p.seed, details.join("; ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_derives_its_sizes() {
        let k = transpose_swizzled::kernel_for(3).unwrap();
        // Three 4 KiB ring stages and the output tile, each 1024-byte aligned.
        assert_eq!(k.declared_dynamic_bytes(), 4 * TILE * TILE * 4);
        let ptx = transpose_swizzled::ptx_for(3).unwrap();
        use phaser::codegen::ptx_text::has;
        // One stage's bytes registered on its full barrier; the output tile stored by TMA.
        assert!(has(&ptx, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r*], 4096"), "{ptx}");
        assert!(has(&ptx, "cp.async.bulk.tensor.2d.global.shared::cta.*"), "{ptx}");
    }

    #[test]
    fn reference_transposes() {
        let input: Vec<f32> = (0..6).map(|x| x as f32).collect();
        assert_eq!(reference(&input, 2, 3), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }
}
