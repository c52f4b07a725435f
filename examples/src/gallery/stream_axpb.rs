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
//!
//! [`StreamConfig`] also describes the variants `bench_stream --sweep` measures against the
//! copy (`bench/stream.md`): several CTAs per SM (no `setmaxnreg`, `.minnctapersm`), stores
//! straight from registers (`st.global.v4`, no staging buffers), an L2 evict-first policy on
//! the TMA loads, and a linear view of the tensor (each tile one contiguous block). The
//! default configuration ([`StreamConfig::new`]) builds exactly the flagship kernel above.

use super::stream_plan::{push_plan, MapCache, Plan, PlanArg, Variant};
use phaser::codegen::builder::warp_spec::entry_register_cap;
use phaser::codegen::builder::{Arrivals, KernelBuilder, Pipeline, PipelineConfig, WarpgroupRoles};
use phaser::codegen::ir::{Dim, MemoryOp, ProxySpace, Space, Type, Value};
use phaser::codegen::{arch::limits::DYNAMIC_SHARED_ALIGN, arch::limits::TMA_MAX_BOX_DIM, Kernel, Result, Target};
use phaser::problem::{random_f32, BufferId, Example, Outcome, Outputs, Problem, Size};
use phaser::runtime::{Device, RuntimeError};

/// Tile columns (the TMA box's inner dimension): 256 f32 = 1 KiB rows.
pub const BOX_COLS: u32 = 256;
/// Output staging buffers per consumer warp.
pub const OUT_BUFS: u32 = 2;
pub const MIN_STAGES: u32 = 2;
pub const MAX_STAGES: u32 = 8;
/// Shared memory a block may use (227 KiB on sm_90a), less the 1 KiB the static barriers take
/// once the dynamic window is 1024-aligned.
pub const SMEM_BUDGET: u32 = Target::Sm90a.limits().max_shared_per_block - DYNAMIC_SHARED_ALIGN;
/// Shared memory of one SM (sm_90: 228 KiB), of which the driver reserves 1 KiB per resident CTA.
pub const SMEM_PER_SM: u32 = 228 * 1024;
/// The most CTAs per SM a configuration may ask for.
pub const MAX_CTAS_PER_SM: u32 = 4;
/// CUTLASS's `CacheHintSm90::EVICT_FIRST`: the 64-bit L2 cache policy TMA loads carry with
/// `.L2::cache_hint` (what `createpolicy.fractional.L2::evict_first` yields).
pub const EVICT_FIRST: u64 = 0x12F0_0000_0000_0000;

/// Where consumers put their results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreMode {
    /// Per-warp staging buffers in shared memory, then TMA stores (the flagship).
    Tma,
    /// `st.global.v4` straight from registers: no staging buffers, no async proxy on the way
    /// out; a lane reads its tile rows with `ld.shared.v4` (16 bytes, 4 columns).
    Direct,
}

/// The shape of one streaming kernel: pipeline depth, tile height, consumer warpgroups, and
/// the variant knobs. The gallery and the benchmark's main table use [`StreamConfig::new`]
/// (16-row tiles of 16 KiB, two consumer warpgroups, one CTA per SM, TMA stores, the 2-D
/// tiling); the benchmark sweeps the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamConfig {
    /// Pipeline depth S.
    pub stages: u32,
    /// Rows of a tile (the TMA load box is `BOX_COLS x box_rows`).
    pub box_rows: u32,
    /// Consumer warpgroups (each of their warps owns `box_rows / (4 * wgs)` rows of a tile).
    pub consumer_wgs: u32,
    /// CTAs resident per SM: 1 is the persistent flagship (`setmaxnreg` moves registers to the
    /// consumers); more split the SM's shared memory and registers (`.maxnreg`,
    /// `.minnctapersm`, no `setmaxnreg`) so that several independent pipelines share an SM.
    pub ctas_per_sm: u32,
    pub store: StoreMode,
    /// TMA loads carry the L2 evict-first policy ([`EVICT_FIRST`]).
    pub evict_first: bool,
    /// View the tensor as rows of [`BOX_COLS`] elements (it must hold a multiple of
    /// `BOX_COLS`): every tile is then one contiguous `tile_bytes()` block and consecutive
    /// tiles are consecutive blocks, where the 2-D tiling reads `box_rows` 1 KiB rows a row
    /// pitch apart. Only the host's tensor maps (and the tile count) change.
    pub linear: bool,
}

impl StreamConfig {
    pub fn new(stages: u32) -> StreamConfig {
        StreamConfig {
            stages,
            box_rows: 16,
            consumer_wgs: 2,
            ctas_per_sm: 1,
            store: StoreMode::Tma,
            evict_first: false,
            linear: false,
        }
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
    /// Dynamic shared memory: the stages, then every consumer warp's staging buffers (none
    /// with direct stores).
    pub fn dynamic_shared_bytes(&self) -> u32 {
        let staging = match self.store {
            StoreMode::Tma => self.consumer_warps() * OUT_BUFS * self.store_bytes(),
            StoreMode::Direct => 0,
        };
        self.stages * self.tile_bytes() + staging
    }
    /// Dynamic shared memory one CTA may take when `ctas_per_sm` share an SM: its share of
    /// the SM, less the driver's 1 KiB per CTA and the 1 KiB of static barriers.
    pub fn smem_budget(&self) -> u32 {
        (SMEM_PER_SM / self.ctas_per_sm.max(1)).saturating_sub(2 * 1024).min(SMEM_BUDGET)
    }
    /// Bytes of loads one SM can have in flight: every stage of every resident CTA.
    pub fn load_bytes_in_flight_per_sm(&self) -> u32 {
        self.ctas_per_sm * self.stages * self.tile_bytes()
    }
    /// `stream_axpb_s{S}`, then `_r{rows}_w{wgs}` for another tile shape, `_c{n}` for `n` CTAs
    /// per SM, `_st` for direct stores, `_ef` for evict-first loads, `_lin` for the linear view.
    pub fn name(&self) -> String {
        let mut n = format!("stream_axpb_s{}", self.stages);
        if (self.box_rows, self.consumer_wgs) != (16, 2) {
            n += &format!("_r{}_w{}", self.box_rows, self.consumer_wgs);
        }
        if self.ctas_per_sm != 1 {
            n += &format!("_c{}", self.ctas_per_sm);
        }
        if self.store == StoreMode::Direct {
            n += "_st";
        }
        if self.evict_first {
            n += "_ef";
        }
        if self.linear {
            n += "_lin";
        }
        n
    }
    /// Why this configuration cannot stream a `rows x cols` tensor, if it cannot (the kernel
    /// builds for any shape; these are the host side's conditions).
    pub fn shape_problem(&self, rows: u64, cols: u64) -> Option<String> {
        let n = rows * cols;
        if self.linear && !n.is_multiple_of(BOX_COLS as u64) {
            return Some(format!(
                "{}: the linear view needs a multiple of {BOX_COLS} elements, not {rows} x {cols}",
                self.name()
            ));
        }
        if self.store == StoreMode::Direct && (!cols.is_multiple_of(4) || n >= 1 << 32) {
            return Some(format!(
                "{}: direct stores write 4 columns at once and index in 32 bits: {rows} x {cols} needs a multiple \
                 of 4 columns and fewer than 2^32 elements",
                self.name()
            ));
        }
        None
    }
    /// The `(rows, cols)` the kernel sees: the tensor itself, or its linear view.
    pub fn view(&self, rows: u64, cols: u64) -> (u64, u64) {
        if self.linear {
            (rows * cols / BOX_COLS as u64, BOX_COLS as u64)
        } else {
            (rows, cols)
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
        if !(1..=TMA_MAX_BOX_DIM).contains(&self.box_rows) || !self.box_rows.is_multiple_of(self.consumer_warps()) {
            return Some(format!(
                "box_rows {} must be a multiple of the {} consumer warps, at most {TMA_MAX_BOX_DIM}",
                self.box_rows,
                self.consumer_warps()
            ));
        }
        if !(1..=MAX_CTAS_PER_SM).contains(&self.ctas_per_sm) {
            return Some(format!("1..={MAX_CTAS_PER_SM} CTAs per SM, not {}", self.ctas_per_sm));
        }
        if self.dynamic_shared_bytes() > self.smem_budget() {
            return Some(format!(
                "{} bytes of shared memory exceed the {}-byte budget of {} CTA(s) per SM",
                self.dynamic_shared_bytes(),
                self.smem_budget(),
                self.ctas_per_sm
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
    let direct = cfg.store == StoreMode::Direct;
    let in_map = k.param_tensor_map("in_map", 2);
    // TMA stores write through a tensor map; direct stores through the buffer's address.
    let (out_map, out) = if direct {
        (None, Some(k.param_global("out", Type::F32, true)))
    } else {
        (Some(k.param_tensor_map("out_map", 2)), None)
    };
    let a = k.param("a", Type::F32);
    let b = k.param("b", Type::F32);
    let tiles_x = k.param("tiles_x", Type::U32);
    let ntiles = k.param("ntiles", Type::U32);
    let bounds = direct.then(|| (k.param("rows", Type::U32), k.param("cols", Type::U32)));
    k.require_block(cfg.threads(), 1, 1);
    let roles = if cfg.ctas_per_sm <= 1 {
        WarpgroupRoles::rebalanced(1, cfg.consumer_wgs)
    } else {
        // Several CTAs per SM: each gets its share of the register file at entry, no rebalancing.
        k.max_registers(entry_register_cap(cfg.threads() * cfg.ctas_per_sm));
        k.min_blocks_per_sm(cfg.ctas_per_sm);
        WarpgroupRoles { producer_warpgroups: 1, consumer_warpgroups: cfg.consumer_wgs, regs: None }
    };

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
        roles,
        |k| {
            // Producer warpgroup: warp 0, one elected lane, issues every load.
            k.if_warp(0, |k| {
                k.elect_one(|k| {
                    let policy = cfg.evict_first.then(|| k.var(Value::u64(EVICT_FIRST)));
                    let st = pipe.producer_start_state(k);
                    let t = k.var(first_tile);
                    k.while_(
                        |k| k.lt(Value::Reg(t), ntiles),
                        |k| {
                            pipe.producer_acquire(k, &st);
                            let full = pipe.producer_commit(k, &st, Value::u32(tile_bytes));
                            let dst = st.stage_addr(k, smem_base, tile_bytes);
                            let (col, row) = coords(k, Value::Reg(t));
                            if let Some(p) = policy {
                                k.tma_load_hinted(dst, in_map, &[col, row], full, Value::Reg(p));
                            } else {
                                k.tma_load(dst, in_map, &[col, row], full);
                            }
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
            if let (Some(out), Some(bounds)) = (out, bounds) {
                let row_in_tile = k.mul(cwarp, Value::u32(rows_per_warp));
                let first = move |k: &mut KernelBuilder, t: Value| {
                    let (col, row) = coords(k, t);
                    let r = k.add(row, row_in_tile);
                    (col, r)
                };
                let tiles = Tiles { first_tile, tile_step, ntiles };
                consume_direct(k, &cfg, &pipe, smem_base, tiles, (cwarp, lane), (a, b), out, bounds, first);
                return;
            }
            let out_map = out_map.expect("TMA stores have an output map");
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

/// The tiles a CTA walks: `first_tile`, then every `tile_step`-th, below `ntiles`.
#[derive(Clone, Copy)]
struct Tiles {
    first_tile: Value,
    tile_step: Value,
    ntiles: Value,
}

/// The consumer loop of [`StoreMode::Direct`]: wait for a stage, read this warp's rows with
/// `ld.shared.v4` (lane `l` holds columns `4l..4l+4` and `128+4l..128+4l+4` of each row),
/// release the stage, compute, and store each 16-byte vector with `st.global.v4` where it lies
/// inside the tensor (TMA zero-filled the rest of the box). `first(t)` is the tensor column
/// and row of this warp's first element of tile `t`.
#[allow(clippy::too_many_arguments)]
fn consume_direct(
    k: &mut KernelBuilder,
    cfg: &StreamConfig,
    pipe: &Pipeline,
    smem_base: Value,
    Tiles { first_tile, tile_step, ntiles }: Tiles,
    (cwarp, lane): (Value, Value),
    (a, b): (Value, Value),
    out: phaser::codegen::builder::GlobalPtr,
    (rows, cols): (Value, Value),
    first: impl Fn(&mut KernelBuilder, Value) -> (Value, Value),
) {
    let rows_per_warp = cfg.rows_per_warp().max(1);
    let tile_bytes = cfg.tile_bytes();
    // Vectors per lane and row: a row of BOX_COLS floats is BOX_COLS / 128 warp-wide float4s.
    let per_row = BOX_COLS / 128;
    let lane4 = k.mul(lane, Value::u32(4));
    // This lane's first byte in a stage: the warp's first row, then 4 floats per lane.
    let my_off = {
        let r = k.mul(cwarp, Value::u32(rows_per_warp * BOX_COLS * 4));
        let l = k.mul(lane, Value::u32(16));
        k.add(r, l)
    };
    let st = pipe.consumer_start_state(k);
    let t = k.var(first_tile);
    k.while_(
        |k| k.lt(Value::Reg(t), ntiles),
        |k| {
            pipe.consumer_wait(k, &st);
            let stage = st.stage_addr(k, smem_base, tile_bytes);
            let src = k.add(stage, my_off);
            let mut xs: Vec<Vec<Value>> = Vec::new();
            for r in 0..rows_per_warp {
                for j in 0..per_row {
                    let dsts: Vec<_> = (0..4).map(|_| k.new_reg(Type::F32)).collect();
                    let offset = ((r * BOX_COLS + j * 128) * 4) as i32;
                    k.push(MemoryOp::LdVec {
                        space: Space::Shared,
                        ty: Type::F32,
                        dsts: dsts.clone(),
                        addr: src,
                        offset,
                        nc: false,
                    });
                    xs.push(dsts.into_iter().map(Value::Reg).collect());
                }
            }
            pipe.consumer_release(k, &st);
            let (col0, row0) = first(k, Value::Reg(t));
            let my_col = k.add(col0, lane4);
            for r in 0..rows_per_warp {
                let row = k.add(row0, Value::u32(r));
                let row_in = k.lt(row, rows);
                // Element index of this lane's first column in the row (fits u32: checked on the host).
                let base = {
                    let e = k.mul(row, cols);
                    k.add(e, my_col)
                };
                let addr = k.global_elem_addr(out, base);
                for j in 0..per_row {
                    let x = &xs[(r * per_row + j) as usize];
                    let c = k.add(my_col, Value::u32(j * 128));
                    let col_in = k.lt(c, cols);
                    let inside = k.and(row_in, col_in);
                    k.if_then(inside, |k| {
                        let ys: Vec<Value> = x.iter().map(|&v| k.mad(a, v, b)).collect();
                        k.st_vec(Space::Global, addr, (j * 128 * 4) as i32, &ys);
                    });
                }
            }
            st.advance(k);
            let n = k.add(Value::Reg(t), tile_step);
            k.assign(t, n);
        },
    );
}

/// Number of tiles along columns and in total for a `rows x cols` tensor, `box_rows`-row tiles.
pub fn tiling(rows: u64, cols: u64, box_rows: u32) -> (u32, u32) {
    let tx = cols.div_ceil(BOX_COLS as u64);
    let ty = rows.div_ceil(box_rows as u64);
    (tx as u32, (tx * ty) as u32)
}

impl StreamConfig {
    /// The launch over a `rows x cols` tensor: a persistent grid (`ctas_per_sm` CTAs per SM,
    /// at most one per tile), the tensor maps of [`Self::view`].
    pub fn plan(&self, rows: u64, cols: u64, sm_count: u32) -> std::result::Result<Plan, RuntimeError> {
        let (vrows, vcols) = self.view(rows, cols);
        let dims = [vcols, vrows];
        let (tiles_x, ntiles) = tiling(vrows, vcols, self.box_rows);
        let mut args = vec![PlanArg::InputMap { dims, box_dims: [BOX_COLS, self.box_rows] }];
        args.push(match self.store {
            StoreMode::Tma => PlanArg::OutputMap { dims, box_dims: [BOX_COLS, self.rows_per_warp()] },
            StoreMode::Direct => PlanArg::Output,
        });
        args.extend([PlanArg::A, PlanArg::B, PlanArg::U32(tiles_x), PlanArg::U32(ntiles)]);
        if self.store == StoreMode::Direct {
            args.extend([PlanArg::U32(vrows as u32), PlanArg::U32(vcols as u32)]);
        }
        Ok(Plan {
            kernel: kernel_with(Target::Sm90a, *self)?,
            grid: ntiles.min(sm_count * self.ctas_per_sm).max(1),
            block: self.threads(),
            dynamic_smem: self.dynamic_shared_bytes(),
            args,
        })
    }
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
    /// The variant of each launch, in order.
    pub variants: Vec<Variant>,
}

/// A random `rows x cols` tensor `x` and random `a`, `b`, through one launch per entry of
/// `variants` (all writing the one output; launches share tensor maps of the same shape).
/// Each variant's own grid ([`Variant::plan`]) unless `grid` fixes it.
pub fn setup_with(
    dev: &Device,
    rows: u64,
    cols: u64,
    variants: &[Variant],
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
    let mut maps = MapCache::default();
    let sm_count = dev.sm_count()?;
    for v in variants {
        if let Some(why) = v.problem(rows, cols) {
            return Err(RuntimeError::BadLaunch { kernel: v.name(), problem: why });
        }
        let mut plan = v.plan(rows, cols, sm_count)?;
        if let Some(g) = grid {
            plan.grid = g;
        }
        push_plan(&mut p, dev, &mut maps, plan, (input, output), (a, b))?;
    }
    p.set_host(Host { rows, cols, a, b, x, input, output, variants: variants.to_vec() });
    Ok(p)
}

/// The gallery's run: [`problem_size`], the default tile shape at every depth of [`depths`].
pub fn setup(dev: &Device, size: Size, seed: u64) -> std::result::Result<Problem, RuntimeError> {
    let (rows, cols) = problem_size(size);
    let variants: Vec<Variant> = depths(size).into_iter().map(|s| Variant::Tma(StreamConfig::new(s))).collect();
    // Small: one persistent CTA walks every tile.
    let grid = (size == Size::Small).then_some(1);
    setup_with(dev, rows, cols, &variants, grid, seed)
}

/// Every launch wrote `fma(a, x, b)` bit for bit.
pub fn check(p: &Problem, outputs: &Outputs) -> Outcome {
    let h: &Host = p.host();
    let want = reference(&h.x, h.a, h.b);
    let mut passed = true;
    let mut details = Vec::new();
    for (i, v) in h.variants.iter().enumerate() {
        let got = outputs.get(i, h.output);
        let label = match v {
            Variant::Tma(cfg) if *cfg == StreamConfig::new(cfg.stages) => format!("S={}", cfg.stages),
            _ => v.name(),
        };
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
            let c = StreamConfig { stages, box_rows, consumer_wgs: wgs, ..StreamConfig::new(stages) };
            if c.problem().is_none() {
                v.push(c);
            }
        }
    }
    v
}

/// The knobs `bench_stream --sweep` measures against the flagship (`bench/stream.md` says what
/// each is for): evict-first loads and the linear view at the flagship's shape; direct stores;
/// two and four CTAs per SM (with TMA stores where the staging buffers fit, else direct).
pub fn variant_configs() -> Vec<StreamConfig> {
    let base = |stages| StreamConfig::new(stages);
    let direct = |stages| StreamConfig { store: StoreMode::Direct, ..base(stages) };
    let mut v = vec![
        StreamConfig { evict_first: true, ..base(4) },
        StreamConfig { linear: true, ..base(4) },
        StreamConfig { evict_first: true, linear: true, ..base(4) },
        direct(4),
        direct(8),
        StreamConfig { evict_first: true, ..direct(4) },
        StreamConfig { linear: true, ..direct(8) },
        StreamConfig { ctas_per_sm: 2, ..base(3) },
        StreamConfig { ctas_per_sm: 2, ..direct(4) },
        StreamConfig { ctas_per_sm: 2, ..direct(6) },
        StreamConfig { ctas_per_sm: 2, evict_first: true, ..direct(6) },
        StreamConfig { ctas_per_sm: 4, ..direct(3) },
        StreamConfig { ctas_per_sm: 4, consumer_wgs: 1, ..direct(3) },
    ];
    v.retain(|c| c.problem().is_none());
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
            assert_eq!(k.bounds().maxnreg, Some(168));
            assert!(dynamic_shared_bytes(s) <= SMEM_BUDGET);
        }
        assert!(kernel(Target::Sm90a, 9).is_err());
    }

    #[test]
    fn other_configs() {
        for cfg in sweep_configs() {
            let k = kernel_with(Target::Sm90a, cfg).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
            assert_eq!(k.bounds().reqntid, Some([cfg.threads(), 1, 1]));
        }
        let c = StreamConfig { box_rows: 32, consumer_wgs: 1, ..StreamConfig::new(4) };
        assert_eq!(c.rows_per_warp(), 8);
        assert_eq!(c.name(), "stream_axpb_s4_r32_w1");
        assert_eq!(kernel_with(Target::Sm90a, c).unwrap().bounds().maxnreg, Some(248));
        assert!(StreamConfig { box_rows: 32, ..StreamConfig::new(8) }.problem().unwrap().contains("budget"));
        assert!(StreamConfig { box_rows: 12, ..StreamConfig::new(4) }.problem().is_some());
    }

    #[test]
    fn ptx_protocol() {
        use phaser::codegen::ptx_text::{find_all, has, has_directive};
        let ptx = phaser::codegen::emit_kernel(&kernel(Target::Sm90a, 4).unwrap()).unwrap();
        for inst in [
            "setmaxnreg.dec.sync.aligned.u32 40",
            "setmaxnreg.inc.sync.aligned.u32 232",
            "elect.sync _|%p*, _",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes*",
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group*",
            "cp.async.bulk.commit_group",
            "cp.async.bulk.wait_group.read 1",
            "cp.async.bulk.wait_group 0",
            "fence.proxy.async.shared::cta",
            "bar.warp.sync 0xffffffff",
        ] {
            assert!(has(&ptx, inst), "missing `{inst}` in\n{ptx}");
        }
        for directive in
            [".maxnreg 168", ".shared .align 8 .b64 smem_stage_full[4];", ".shared .align 8 .b64 smem_stage_empty[4];"]
        {
            assert!(has_directive(&ptx, directive), "missing `{directive}` in\n{ptx}");
        }
        // full: 1 producer arrival; empty: 8 consumer warps.
        let counts: Vec<&str> = find_all(&ptx, "mbarrier.init.shared::cta.b64").iter().map(|i| i.operands[1]).collect();
        assert!(counts.contains(&"1") && counts.contains(&"8"), "{counts:?}");
    }

    #[test]
    fn tiling_rounds_up() {
        assert_eq!(tiling(70, 516, 16), (3, 15));
        assert_eq!(tiling(16384, 16384, 16), (64, 65536));
    }
}
