//! A streaming kernel at memory bandwidth: `y = a*x + b` over a large 2-D f32 tensor,
//! through a depth-`S` TMA pipeline whose stage/phase bookkeeping the builder does
//! ([`Pipeline`], [`PipelineState`]).
//!
//! Shape of the kernel (persistent: one CTA per SM, each walking tiles `blockIdx.x,
//! blockIdx.x + gridDim.x, ...`; a tile is a 16 x 256 f32 box, 16 KiB):
//! - warpgroup 0 is the producer (`setmaxnreg.dec 40`): one elected thread of its warp 0
//!   acquires a stage, registers the tile's bytes (`arrive.expect_tx`) and issues the TMA
//!   load; at the end it waits for the final releases (`producer_tail`);
//! - warpgroups 1 and 2 are consumers (`setmaxnreg.inc 232`): each of their 8 warps owns 2
//!   rows of every tile. A warp waits for the stage, reads its rows into registers, releases
//!   the stage (`bar.warp.sync`, lane 0 arrives: `empty` expects 8 arrivals), computes
//!   `fma(a, x, b)`, writes its own 2 KiB output staging buffer (two per warp, alternating;
//!   lane 0 first waits `cp.async.bulk.wait_group.read 1` so the TMA store that last read the
//!   buffer is done with it), `fence.proxy.async.shared::cta`, `bar.warp.sync`, and lane 0
//!   issues the TMA store of its 2 x 256 sub-box and commits the bulk group.
//!
//! Edges: tensors whose sizes are not multiples of the tile work; TMA loads zero-fill the
//! part of a box outside the tensor (still completing the full box's bytes) and TMA stores
//! skip it.

use super::problem::MapId;
use super::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::codegen::builder::{Arrivals, KernelBuilder, Pipeline, PipelineConfig, WarpgroupRoles};
use phaser::codegen::ir::{Dim, ProxySpace, Space, Type, Value};
use phaser::codegen::{Kernel, Result, Target};
use phaser::runtime::{Device, LaunchConfig, RuntimeError, Swizzle};

/// Tile columns (the TMA box's inner dimension): 256 f32 = 1 KiB rows.
pub const BOX_COLS: u32 = 256;
/// Output staging buffers per consumer warp.
pub const OUT_BUFS: u32 = 2;
pub const MIN_STAGES: u32 = 2;
pub const MAX_STAGES: u32 = 8;
/// Shared memory a block may use (227 KiB), less the 1 KiB the static barriers take once the
/// dynamic window is 1024-aligned.
pub const SMEM_BUDGET: u32 = 226 * 1024;

/// The shape of one streaming kernel: pipeline depth, tile height, consumer warpgroups.
/// The gallery and the benchmark's main table use [`StreamConfig::new`] (16-row tiles of
/// 16 KiB, two consumer warpgroups); the benchmark can sweep the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// Pipeline depth S.
    pub stages: u32,
    /// Rows of a tile (the TMA load box is `BOX_COLS x box_rows`).
    pub box_rows: u32,
    /// Consumer warpgroups (each of their warps owns `box_rows / (4 * wgs)` rows of a tile).
    pub consumer_wgs: u32,
}

impl StreamConfig {
    pub fn new(stages: u32) -> StreamConfig {
        StreamConfig { stages, box_rows: 16, consumer_wgs: 2 }
    }
    pub fn consumer_warps(&self) -> u32 {
        self.consumer_wgs * 4
    }
    pub fn rows_per_warp(&self) -> u32 {
        self.box_rows / self.consumer_warps().max(1)
    }
    pub fn tile_bytes(&self) -> u32 {
        BOX_COLS * self.box_rows * 4
    }
    /// Bytes of one warp's TMA store (its rows of a tile).
    pub fn store_bytes(&self) -> u32 {
        BOX_COLS * self.rows_per_warp() * 4
    }
    pub fn threads(&self) -> u32 {
        (1 + self.consumer_wgs) * 128
    }
    /// Dynamic shared memory: the stages, then every consumer warp's staging buffers.
    pub fn dynamic_shared_bytes(&self) -> u32 {
        self.stages * self.tile_bytes() + self.consumer_warps() * OUT_BUFS * self.store_bytes()
    }
    pub fn name(&self) -> String {
        if *self == StreamConfig::new(self.stages) {
            format!("stream_axpb_s{}", self.stages)
        } else {
            format!("stream_axpb_s{}_r{}_w{}", self.stages, self.box_rows, self.consumer_wgs)
        }
    }
    /// Why this configuration cannot be built, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if !(1..=MAX_STAGES).contains(&self.stages) {
            return Some(format!("stream_axpb supports 1..={MAX_STAGES} stages, not {}", self.stages));
        }
        if !(1..=2).contains(&self.consumer_wgs) {
            return Some(format!("1 or 2 consumer warpgroups, not {}", self.consumer_wgs));
        }
        if self.box_rows == 0 || self.box_rows > 256 || !self.box_rows.is_multiple_of(self.consumer_warps()) {
            return Some(format!(
                "box_rows {} must be a multiple of the {} consumer warps, at most 256",
                self.box_rows,
                self.consumer_warps()
            ));
        }
        if self.dynamic_shared_bytes() > SMEM_BUDGET {
            return Some(format!(
                "{} bytes of shared memory exceed the {SMEM_BUDGET}-byte budget",
                self.dynamic_shared_bytes()
            ));
        }
        None
    }
}

/// Dynamic shared memory the default depth-`stages` kernel needs.
pub fn dynamic_shared_bytes(stages: u32) -> u32 {
    StreamConfig::new(stages).dynamic_shared_bytes()
}

pub fn kernel_name(stages: u32) -> String {
    StreamConfig::new(stages).name()
}

/// `stream_axpb_s{S}(in_map, out_map, a, b, tiles_x, ntiles)`; `S` is fixed when the kernel
/// is built (the pipeline's barrier arrays, arrival counts and wrap are constants).
pub fn kernel(target: Target, stages: u32) -> Result<Kernel> {
    kernel_with(target, StreamConfig::new(stages))
}

/// The kernel for any [`StreamConfig`].
pub fn kernel_with(target: Target, cfg: StreamConfig) -> Result<Kernel> {
    let mut k = KernelBuilder::new(cfg.name(), target);
    if let Some(p) = cfg.problem() {
        k.error(p);
    }
    let stages = cfg.stages.clamp(1, MAX_STAGES);
    let box_rows = cfg.box_rows;
    let consumer_warps = cfg.consumer_warps();
    let rows_per_warp = cfg.rows_per_warp().max(1);
    let tile_bytes = cfg.tile_bytes();
    let store_bytes = cfg.store_bytes();
    let in_map = k.param_tensor_map("in_map", 2);
    let out_map = k.param_tensor_map("out_map", 2);
    let a = k.param("a", Type::F32);
    let b = k.param("b", Type::F32);
    let tiles_x = k.param("tiles_x", Type::U32);
    let ntiles = k.param("ntiles", Type::U32);
    k.require_block(cfg.threads(), 1, 1);

    let smem = k.dynamic_shared(Type::F32, 0);
    let pipe = Pipeline::new(&mut k, "stage", PipelineConfig::tma(stages, Arrivals::Warps(consumer_warps)));
    pipe.init(&mut k);
    let smem_base = k.shared_base_addr(smem);
    let first_tile = k.block_idx(Dim::X);
    let tile_step = k.grid_dim(Dim::X);

    // Tile `t` -> box coordinates {column, row} of its top-left element.
    let coords = move |k: &mut KernelBuilder, t: Value| {
        let ty = k.div(t, tiles_x);
        let tx = k.rem(t, tiles_x);
        let col = k.mul(tx, Value::u32(BOX_COLS));
        let row = k.mul(ty, Value::u32(box_rows));
        (col, row)
    };

    k.warpgroup_roles(
        WarpgroupRoles::rebalanced(1, cfg.consumer_wgs),
        |k| {
            // Producer warpgroup: warp 0, one elected lane, issues every load.
            k.if_warp(0, |k| {
                k.elect_one(|k| {
                    let st = pipe.producer_start_state(k);
                    let t = k.var(first_tile);
                    k.while_(
                        |k| k.lt(Value::Reg(t), ntiles),
                        |k| {
                            pipe.producer_acquire(k, &st);
                            let full = pipe.producer_commit(k, &st, Value::u32(tile_bytes));
                            let dst = st.stage_addr(k, smem_base, tile_bytes);
                            let (col, row) = coords(k, Value::Reg(t));
                            k.tma_load(dst, in_map, &[col, row], full);
                            st.advance(k);
                            let n = k.add(Value::Reg(t), tile_step);
                            k.assign(t, n);
                        },
                    );
                    pipe.producer_tail(k, &st);
                });
            });
        },
        |k, cwg| {
            let warp_in_wg = {
                let w = k.warp_idx();
                k.and(w, Value::u32(3))
            };
            let cw4 = k.mul(cwg, Value::u32(4));
            let cwarp = k.add(cw4, warp_in_wg); // 0..consumer_warps
            let lane = k.lane_idx();
            let is_lane0 = k.eq(lane, Value::u32(0));
            // This warp's rows inside a stage, and its lane's first element: byte offsets.
            let row_elems = k.mul(cwarp, Value::u32(rows_per_warp * BOX_COLS));
            let my_elem = k.add(row_elems, lane);
            let my_off = k.mul(my_elem, Value::u32(4));
            // This warp's staging buffers.
            let stg0 = {
                let w = k.mul(cwarp, Value::u32(OUT_BUFS * store_bytes));
                let o = k.add(w, Value::u32(stages * tile_bytes));
                k.add(smem_base, o)
            };
            let lane_off = k.mul(lane, Value::u32(4));
            let row_in_tile = k.mul(cwarp, Value::u32(rows_per_warp));
            let per_row = BOX_COLS / 32;

            let st = pipe.consumer_start_state(k);
            let buf = k.var(Value::u32(0));
            let t = k.var(first_tile);
            k.while_(
                |k| k.lt(Value::Reg(t), ntiles),
                |k| {
                    pipe.consumer_wait(k, &st);
                    let stage = st.stage_addr(k, smem_base, tile_bytes);
                    let src = k.add(stage, my_off);
                    let mut xs = Vec::new();
                    for r in 0..rows_per_warp {
                        for j in 0..per_row {
                            let off = (r * BOX_COLS + j * 32) * 4;
                            xs.push(k.ld_raw(Space::Shared, Type::F32, src, off as i32));
                        }
                    }
                    pipe.consumer_release(k, &st);
                    let ys: Vec<Value> = xs.iter().map(|&x| k.mad(a, x, b)).collect();

                    // Staging buffer `buf` is free once the store that last read it has.
                    k.if_then(is_lane0, |k| k.bulk_wait_group(OUT_BUFS - 1, true));
                    k.warp_sync();
                    let bo = k.mul(Value::Reg(buf), Value::u32(store_bytes));
                    let stg = k.add(stg0, bo);
                    let dst = k.add(stg, lane_off);
                    for (i, y) in ys.iter().enumerate() {
                        let (r, j) = (i as u32 / per_row, i as u32 % per_row);
                        k.st_raw(Space::Shared, dst, ((r * BOX_COLS + j * 32) * 4) as i32, *y);
                    }
                    // Generic-proxy writes, then the copy engine (async proxy) reads them.
                    k.fence_proxy_async(ProxySpace::SharedCta);
                    k.warp_sync();
                    let (col, row) = coords(k, Value::Reg(t));
                    k.if_then(is_lane0, |k| {
                        let r = k.add(row, row_in_tile);
                        k.tma_store(out_map, &[col, r], stg);
                        k.bulk_commit_group();
                    });
                    let nb = k.xor(Value::Reg(buf), Value::u32(1));
                    k.assign(buf, nb);
                    st.advance(k);
                    let n = k.add(Value::Reg(t), tile_step);
                    k.assign(t, n);
                },
            );
            // Stores must have finished reading shared memory (and landed) before exit.
            k.if_then(is_lane0, |k| k.bulk_wait_group(0, false));
        },
    );
    k.finish()
}

/// Number of tiles along columns and in total for a `rows x cols` tensor, `box_rows`-row tiles.
pub fn tiling(rows: u64, cols: u64, box_rows: u32) -> (u32, u32) {
    let tx = cols.div_ceil(BOX_COLS as u64);
    let ty = rows.div_ceil(box_rows as u64);
    (tx as u32, (tx * ty) as u32)
}

/// What the check (and `bench_stream`) needs.
pub struct Host {
    pub rows: u64,
    pub cols: u64,
    pub a: f32,
    pub b: f32,
    pub x: Vec<f32>,
    pub input: BufferId<f32>,
    pub output: BufferId<f32>,
    /// The configuration of each launch, in order.
    pub configs: Vec<StreamConfig>,
}

/// A random `rows x cols` tensor `x` and random `a`, `b`, through one launch per entry of
/// `configs` (all writing the one output); tensor maps are made once per tile shape. The
/// grid is persistent (one CTA per SM, at most one per tile) unless `grid` fixes it.
pub fn setup_with(
    dev: &Device,
    rows: u64,
    cols: u64,
    configs: &[StreamConfig],
    grid: Option<u32>,
    seed: u64,
) -> std::result::Result<Problem, RuntimeError> {
    let n = (rows * cols) as usize;
    let x = random_f32(n, seed);
    let ab = random_f32(2, seed ^ 0x5eed);
    let (a, b) = (ab[0] + 1.5, ab[1]);
    let mut p = Problem::new(seed);
    let input = p.input(dev, &x)?;
    let output = p.output(dev, n, f32::NAN)?;
    // (load box rows, store box rows) -> (in_map, out_map)
    let mut maps: Vec<((u32, u32), (MapId, MapId))> = Vec::new();
    for &cfg in configs {
        let shape = (cfg.box_rows, cfg.rows_per_warp());
        let (in_map, out_map) = match maps.iter().find(|(s, _)| *s == shape) {
            Some(&(_, m)) => m,
            None => {
                let in_map = p.tensor_map(dev, input, &[cols, rows], &[BOX_COLS, shape.0], Swizzle::None)?;
                let out_map = p.tensor_map(dev, output, &[cols, rows], &[BOX_COLS, shape.1], Swizzle::None)?;
                maps.push((shape, (in_map, out_map)));
                (in_map, out_map)
            }
        };
        let (tiles_x, ntiles) = tiling(rows, cols, cfg.box_rows);
        let grid = match grid {
            Some(g) => g,
            None => ntiles.min(dev.sm_count()?).max(1),
        };
        p.launch(
            kernel_with(Target::Sm90a, cfg)?,
            LaunchConfig::linear(grid, cfg.threads()).with_dynamic_shared(cfg.dynamic_shared_bytes()),
            [in_map.into(), out_map.into(), a.into(), b.into(), tiles_x.into(), ntiles.into()],
            [output.into()],
        );
    }
    p.set_host(Host { rows, cols, a, b, x, input, output, configs: configs.to_vec() });
    Ok(p)
}

/// The gallery's run: [`problem_size`], the default tile shape at every depth of [`depths`].
pub fn setup(dev: &Device, size: Size, seed: u64) -> std::result::Result<Problem, RuntimeError> {
    let (rows, cols) = problem_size(size);
    let configs: Vec<StreamConfig> = depths(size).into_iter().map(StreamConfig::new).collect();
    // Small: one persistent CTA walks every tile.
    let grid = (size == Size::Small).then_some(1);
    setup_with(dev, rows, cols, &configs, grid, seed)
}

/// Every launch wrote `fma(a, x, b)` bit for bit.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.x, h.a, h.b);
    let mut passed = true;
    let mut details = Vec::new();
    for (i, cfg) in h.configs.iter().enumerate() {
        let got = outputs.get(i, h.output);
        let label = if *cfg == StreamConfig::new(cfg.stages) { format!("S={}", cfg.stages) } else { cfg.name() };
        let (bad, first) = compare(got, &want);
        if bad == 0 {
            details.push(format!("{label} ok"));
        } else {
            passed = false;
            let i = first.unwrap_or(0);
            details.push(format!(
                "{label}: {bad} wrong, first at (row {}, col {}): got {} want {}",
                i as u64 / h.cols,
                i as u64 % h.cols,
                got[i],
                want[i]
            ));
        }
    }
    let grid = p.launches.first().map_or(0, |l| l.config.grid[0]);
    Outcome::new(
        passed,
        format!("{}x{} f32, a={} b={}, seed {}, grid {grid}: {}", h.rows, h.cols, h.a, h.b, p.seed, details.join("; ")),
    )
}

/// The CPU reference: `fma(a, x, b)` per element, rounded once like the GPU's `fma.rn.f32`.
pub fn reference(x: &[f32], a: f32, b: f32) -> Vec<f32> {
    x.iter().map(|&v| a.mul_add(v, b)).collect()
}

/// Compare bit for bit; returns (number wrong, first wrong index).
pub fn compare(got: &[f32], want: &[f32]) -> (usize, Option<usize>) {
    let mut bad = 0;
    let mut first = None;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.to_bits() != w.to_bits() {
            bad += 1;
            first.get_or_insert(i);
        }
    }
    (bad, first)
}

/// The sizes a run uses: `Small` is 6 ragged tiles (one CTA wraps the depth-2 ring three
/// times and reuses both staging buffers of every warp); `Quick` is small and ragged (partial
/// tiles on both edges; 21 tiles, so on the simulator's 4 SMs every checked depth wraps its
/// ring at least once); `Full` is 16384 x 16384 f32 = 1 GiB in and 1 GiB out.
pub fn problem_size(size: Size) -> (u64, u64) {
    match size {
        Size::Small => (40, 300),
        Size::Quick => (100, 516),
        Size::Full => (16384, 16384),
    }
}

/// The depths a gallery run checks.
pub fn depths(size: Size) -> Vec<u32> {
    match size {
        Size::Small | Size::Quick => vec![2, 3, 4],
        Size::Full => (MIN_STAGES..=MAX_STAGES).collect(),
    }
}

/// Extra shapes the benchmark can sweep (`bench_stream --sweep`) and the ptxas test assembles:
/// 32-row tiles (32 KiB) and one consumer warpgroup, at a few depths.
pub fn sweep_configs() -> Vec<StreamConfig> {
    let mut v = Vec::new();
    for (box_rows, wgs) in [(32, 2), (16, 1), (32, 1)] {
        for stages in [2, 3, 4, 6] {
            let c = StreamConfig { stages, box_rows, consumer_wgs: wgs };
            if c.problem().is_none() {
                v.push(c);
            }
        }
    }
    v
}

pub fn examples() -> Vec<Example> {
    vec![Example {
        name: "stream_axpb",
        about: "y = a*x + b streamed through a warp-specialized depth-S TMA pipeline (S = 2..8), TMA stores, persistent grid",
        kernels: |t| (MIN_STAGES..=MAX_STAGES).map(|s| kernel(t, s)).collect(),
        setup,
        check,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_for_every_depth() {
        for s in MIN_STAGES..=MAX_STAGES {
            let k = kernel(Target::Sm90a, s).unwrap();
            assert_eq!(k.bounds.maxnreg, Some(168));
            assert!(dynamic_shared_bytes(s) <= SMEM_BUDGET);
        }
        assert!(kernel(Target::Sm90a, 9).is_err());
    }

    #[test]
    fn other_configs() {
        for cfg in sweep_configs() {
            let k = kernel_with(Target::Sm90a, cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
            assert_eq!(k.bounds.reqntid, Some([cfg.threads(), 1, 1]));
        }
        let c = StreamConfig { stages: 4, box_rows: 32, consumer_wgs: 1 };
        assert_eq!(c.rows_per_warp(), 8);
        assert_eq!(c.name(), "stream_axpb_s4_r32_w1");
        assert_eq!(kernel_with(Target::Sm90a, c).unwrap().bounds.maxnreg, Some(248));
        assert!(StreamConfig { stages: 8, box_rows: 32, consumer_wgs: 2 }.problem().unwrap().contains("budget"));
        assert!(StreamConfig { stages: 4, box_rows: 12, consumer_wgs: 2 }.problem().is_some());
    }

    #[test]
    fn ptx_protocol() {
        let ptx = phaser::codegen::emit_kernel(&kernel(Target::Sm90a, 4).unwrap()).unwrap();
        for needle in [
            "setmaxnreg.dec.sync.aligned.u32 40;",
            "setmaxnreg.inc.sync.aligned.u32 232;",
            "elect.sync _|",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
            "cp.async.bulk.commit_group;",
            "cp.async.bulk.wait_group.read 1;",
            "cp.async.bulk.wait_group 0;",
            "fence.proxy.async.shared::cta;",
            "bar.warp.sync 0xffffffff;",
            ".maxnreg 168",
            ".shared .align 8 .b64 smem_stage_full[4];",
            ".shared .align 8 .b64 smem_stage_empty[4];",
        ] {
            assert!(ptx.contains(needle), "missing `{needle}` in\n{ptx}");
        }
        // full: 1 producer arrival; empty: 8 consumer warps.
        assert!(ptx.contains("], 1;"));
        assert!(ptx.contains("], 8;"));
    }

    #[test]
    fn tiling_rounds_up() {
        assert_eq!(tiling(70, 516, 16), (3, 15));
        assert_eq!(tiling(16384, 16384, 16), (64, 65536));
    }
}
