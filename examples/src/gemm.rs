//! A warp-specialized, persistent Hopper bf16 GEMM built with the builder API:
//! `C (M x N, bf16) = A (M x K, bf16, row-major) * B (K x N, bf16)`, f32 accumulation, B
//! either K-major (stored N x K, "TN") or N-major (stored K x N row-major, "NN").
//!
//! Design (CUTLASS's sm90 "warp-specialized persistent cooperative" kernel):
//! - 128 x (1 + consumers) threads: warpgroup 0 produces, warpgroups 1.. consume.
//!   `setmaxnreg` moves registers from the producer (40) to the consumers (232).
//! - The producer's first warp elects one thread that walks the tiles of this CTA and, per
//!   64-wide K block, acquires a stage of an S-stage [`Pipeline`] (no hand-kept parity),
//!   registers the stage's bytes (`arrive.expect_tx`) and issues TMA loads of the A tile
//!   (`block_m x 64`) and the B tile (`block_n x 64`), 128-byte swizzled.
//! - Each consumer warpgroup owns `wg_m` rows (one or two m64 wgmmas of N = `block_n`):
//!   per K block it waits for the stage, issues 4 k16 steps of `wgmma` from shared-memory
//!   descriptors (derived from the typed tiles), commits, waits until the previous K block's
//!   wgmmas retired (`wait_group 1`) and releases that stage (one arrive per warpgroup).
//! - Epilogue per warpgroup, overlapped with the producer's loads of the next tile: the f32
//!   accumulator is rounded to bf16 pairs and written with `stmatrix` into one of two 64 x 64
//!   swizzled staging buffers, which a TMA store writes to C (clipped at the edges); a buffer
//!   is reused once the store issued two sub-tiles earlier finished reading it.
//! - Persistent CTAs (one per SM) walk the tiles in grouped order (`group_m` cluster-tile
//!   rows at a time, Triton's "grouped ordering") so concurrently running CTAs share A and B
//!   tiles in L2.
//! - With `cluster_m = 2`, two CTAs computing vertically adjacent tiles form a cluster: each
//!   loads its own A tile and half of the shared B tile, multicast into both CTAs; consumers
//!   release stages in both CTAs.
//! - Ragged shapes: TMA zero-fills out-of-bounds loads (K tails contribute zeros) and clips
//!   stores; the row strides must be multiples of 16 bytes, so K and N must be multiples of 8
//!   (refused with an error naming the constraint otherwise).

use phaser::codegen::builder::{
    Accumulator, Arrivals, ClusterSync, KernelBuilder, MatrixDesc, Pipeline, PipelineConfig, PipelineState,
    TensorMapRef, WarpgroupRoles,
};
use phaser::codegen::ir::{Dim, Major, MmaElem, MmaOperand, ProxySpace, SmemTile, Swizzle, Type, Value};
use phaser::codegen::{Kernel, Target};

/// K extent of one pipeline stage: the DSL GEMM's, which this kernel matches statement for
/// statement (the two are interchangeable).
pub use crate::gallery::gemm_dsl::BLOCK_K;

pub mod dsl;
pub mod tp;
/// Bytes of a bf16 element.
const BF16: u32 = 2;
/// Largest shared memory a block may use on sm_90a (the target's limit in `arch::limits`).
pub const MAX_SMEM_BYTES: u32 = Target::Sm90a.limits().max_shared_per_block;
/// Shared memory before the dynamic window: the static barrier arrays, padded to the window's
/// 1024-byte alignment.
const STATIC_SMEM_BYTES: u32 = phaser::codegen::arch::DYNAMIC_SHARED_ALIGN;
/// Rows and columns of one epilogue staging buffer (64 x 64 bf16, one TMA store box): the DSL
/// GEMM's, which both GEMMs' epilogues share.
const EPI_TILE: u32 = crate::gallery::gemm_dsl::EPI;
/// The one tile width below [`EPI_TILE`] (the DSL GEMM's, K-major B): a 64 x 32 tile puts
/// twice the CTAs of 64 x 64 on a decode GEMM's N without split-K (cuBLAS's
/// `nvjet_sm90_tst_64x32_...` at 64 x 4096 x 4096, run 25), and stores C from the registers.
pub const NARROW_BLOCK_N: u32 = 32;

/// How B is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BLayout {
    /// N x K, K contiguous (cuBLAS "T" for a column-major K x N B; the wgmma default).
    KMajor,
    /// K x N row-major, N contiguous (`imm-trans-b = 1`).
    NMajor,
}

impl BLayout {
    pub fn name(self) -> &'static str {
        match self {
            BLayout::KMajor => "kmajor",
            BLayout::NMajor => "nmajor",
        }
    }
}

/// The tile shape and pipeline of a GEMM kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmConfig {
    /// N of the CTA tile and of every wgmma (a multiple of 64 up to 256).
    pub block_n: u32,
    /// Rows per consumer warpgroup: 64 (one m64 wgmma per k-step) or 128 (two).
    pub wg_m: u32,
    /// Consumer warpgroups (1, 2, or 3: the DSL GEMM's 192-row tile): the CTA tile is
    /// `consumers * wg_m` rows.
    pub consumers: u32,
    /// Pipeline depth S.
    pub stages: u32,
    /// CTAs per cluster along M (1 or 2); with 2 the B tile is multicast.
    pub cluster_m: u32,
    pub b_layout: BLayout,
    /// Raster group height, in cluster-tile rows.
    pub group_m: u32,
    /// Slices of K (split-K; 1: none): the DSL GEMM's, whose slices write f32 partials that a
    /// second launch sums (`gemm::dsl`); the builder GEMM has none.
    pub split_k: u32,
    /// How split-K's slices reach C (ignored without split-K).
    pub reduce: SplitReduce,
    /// Rows of A's TMA box below the tile's (the DSL GEMM's 64-row tile at M at most that:
    /// `gemm_dsl::Tiles::a_box_rows`, name suffix `_a16`); `None`: the tile's rows.
    pub a_box_rows: Option<u32>,
}

/// How the DSL GEMM's split-K slices are summed into C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SplitReduce {
    /// Every slice writes its f32 partials to the workspace; a second launch
    /// (`gemm_splitk_reduce`) sums them in slice order.
    #[default]
    TwoLaunch,
    /// One launch: every slice but the last writes its partials and signals a flag per tile; the last
    /// slice's CTA waits for them and sums in slice order into C (serial fix-up).
    InKernel,
    /// One launch: every slice writes its partials and signals; all slices of a tile wait for
    /// all its flags and each sums its 1/split share in slice order into C. Every work unit
    /// must be resident at once (`gemm::dsl::launch_problem` refuses more than one wave).
    EverySlice,
}

impl GemmConfig {
    /// The default: 128 x 256 x 64 tiles, two consumer warpgroups, 4 stages, 2-CTA clusters.
    pub fn new(b_layout: BLayout) -> GemmConfig {
        GemmConfig {
            block_n: 256,
            wg_m: 64,
            consumers: 2,
            stages: 4,
            cluster_m: 2,
            b_layout,
            group_m: 8,
            split_k: 1,
            reduce: SplitReduce::TwoLaunch,
            a_box_rows: None,
        }
    }
    pub fn block_m(&self) -> u32 {
        self.wg_m * self.consumers
    }
    /// Rows of A's TMA box: [`GemmConfig::a_box_rows`], else the tile's.
    pub fn a_rows(&self) -> u32 {
        self.a_box_rows.unwrap_or(self.block_m())
    }
    pub fn a_tile(&self) -> SmemTile {
        SmemTile::new(BF16, self.block_m(), BLOCK_K, Swizzle::B128)
    }
    /// B's stage tile and how wgmma sees it.
    pub fn b_operand(&self) -> MmaOperand {
        match self.b_layout {
            BLayout::KMajor => MmaOperand::new(SmemTile::new(BF16, self.block_n, BLOCK_K, Swizzle::B128), Major::K),
            BLayout::NMajor => MmaOperand::new(SmemTile::new(BF16, BLOCK_K, self.block_n, Swizzle::B128), Major::MN),
        }
    }
    pub fn a_operand(&self) -> MmaOperand {
        MmaOperand::new(self.a_tile(), Major::K)
    }
    /// The epilogue's staging tile (64 x 64 bf16, 128-byte swizzled: one TMA store box).
    pub fn c_tile(&self) -> SmemTile {
        SmemTile::new(BF16, EPI_TILE, EPI_TILE, Swizzle::B128)
    }
    pub fn stage_bytes(&self) -> u32 {
        self.a_tile().bytes() + self.b_operand().tile.bytes()
    }
    /// Two staging buffers per consumer warpgroup; none under split-K (the DSL GEMM's partials
    /// go from the wgmma fragment to the workspace) or for tiles narrower than one (the DSL
    /// GEMM's [`NARROW_BLOCK_N`]: C from the registers).
    pub fn epilogue_bytes(&self) -> u32 {
        // Narrower than a staging tile: the DSL GEMM stores C from the registers.
        if self.split_k > 1 || self.block_n < EPI_TILE {
            0
        } else {
            self.consumers * 2 * self.c_tile().bytes()
        }
    }
    /// Dynamic shared memory: the stages, then the epilogue buffers (barriers are static).
    pub fn dynamic_smem_bytes(&self) -> u32 {
        self.stages * self.stage_bytes() + self.epilogue_bytes()
    }
    pub fn threads(&self) -> u32 {
        self.roles().threads()
    }
    pub fn roles(&self) -> WarpgroupRoles {
        WarpgroupRoles::rebalanced(1, self.consumers)
    }
    /// A name that says the configuration: `phaser_gemm_128x256x64_s4_c2_g8_kmajor`, with
    /// `_k4` after the group for 4 slices of split-K (`_k4f`: reduced in the kernel by the last
    /// slice; `_k4e`: by every slice), then `_a16` for an A box of 16 rows.
    pub fn kernel_name(&self) -> String {
        let split = match (self.split_k, self.reduce) {
            (1, _) => String::new(),
            (s, SplitReduce::TwoLaunch) => format!("_k{s}"),
            (s, SplitReduce::InKernel) => format!("_k{s}f"),
            (s, SplitReduce::EverySlice) => format!("_k{s}e"),
        };
        let a_box = self.a_box_rows.map(|r| format!("_a{r}")).unwrap_or_default();
        format!(
            "phaser_gemm_{}x{}x{BLOCK_K}_s{}_c{}_g{}{split}{a_box}_{}",
            self.block_m(),
            self.block_n,
            self.stages,
            self.cluster_m,
            self.group_m,
            self.b_layout.name()
        )
    }
    /// What is wrong with this configuration, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.block_n != NARROW_BLOCK_N && (!(64..=256).contains(&self.block_n) || !self.block_n.is_multiple_of(64)) {
            return Some(format!("block_n = {}: {NARROW_BLOCK_N}, or a multiple of 64 in 64..=256", self.block_n));
        }
        if self.block_n == NARROW_BLOCK_N && self.b_layout == BLayout::NMajor {
            return Some(format!(
                "block_n = {NARROW_BLOCK_N} with N-major B: its tile is loaded in 64-column boxes; use K-major B"
            ));
        }
        if ![64, 128].contains(&self.wg_m) || ![1, 2, 3].contains(&self.consumers) {
            return Some(format!("wg_m = {} and consumers = {}: 64 or 128, and 1, 2 or 3", self.wg_m, self.consumers));
        }
        if !(2..=8).contains(&self.stages) {
            return Some(format!("{} stages: 2..=8", self.stages));
        }
        if self.split_k == 0 {
            return Some("split_k = 0: at least 1 slice of K (1: no split)".into());
        }
        if ![1, 2].contains(&self.cluster_m) || self.group_m == 0 {
            return Some(format!("cluster_m = {} (1 or 2), group_m = {} (>= 1)", self.cluster_m, self.group_m));
        }
        if self.b_layout == BLayout::NMajor && self.cluster_m > 1 && !(self.block_n / 64).is_multiple_of(self.cluster_m)
        {
            return Some("an N-major B tile must split into whole 64-column boxes per CTA".into());
        }
        // The static barriers take the first 1024 bytes: the dynamic window is 1024-aligned.
        let smem = self.dynamic_smem_bytes() + STATIC_SMEM_BYTES;
        if smem > MAX_SMEM_BYTES {
            return Some(format!(
                "{} stages of {} bytes + {} bytes of epilogue buffers = {smem} bytes of shared memory, over the {MAX_SMEM_BYTES} of sm_90",
                self.stages,
                self.stage_bytes(),
                self.epilogue_bytes()
            ));
        }
        None
    }
}

/// The tile walk every role of a CTA repeats identically: persistent, grouped along M.
#[derive(Clone, Copy)]
struct Schedule {
    /// Tiles along N, cluster-tile rows along M, and their product.
    tiles_n: Value,
    cluster_rows: Value,
    total: Value,
    /// This CTA's cluster, the number of clusters, and the CTA's rank in its cluster.
    first: Value,
    step: Value,
    rank: Value,
    k_blocks: Value,
}

impl Schedule {
    fn new(k: &mut KernelBuilder, cfg: &GemmConfig, m: Value, n: Value, kdim: Value) -> Schedule {
        let cm = cfg.cluster_m;
        let tiles_n = ceil_div(k, n, cfg.block_n);
        let cluster_rows = ceil_div(k, m, cfg.block_m() * cm);
        let total = k.mul(tiles_n, cluster_rows);
        let cta = k.block_idx(Dim::X);
        let ctas = k.grid_dim(Dim::X);
        let (first, step, rank) = if cm > 1 {
            let first = k.shr(cta, Value::u32(cm.trailing_zeros()));
            let step = k.shr(ctas, Value::u32(cm.trailing_zeros()));
            (first, step, k.cluster_cta_rank())
        } else {
            (cta, ctas, Value::u32(0))
        };
        let k_blocks = ceil_div(k, kdim, BLOCK_K);
        Schedule { tiles_n, cluster_rows, total, first, step, rank, k_blocks }
    }

    /// `for t in (first..total).step_by(step) { body(m0, n0) }` with the element offsets of
    /// this CTA's tile `t` in grouped order.
    fn for_each_tile(
        &self,
        k: &mut KernelBuilder,
        cfg: &GemmConfig,
        body: impl FnOnce(&mut KernelBuilder, Value, Value),
    ) {
        let s = *self;
        let t = k.var(s.first);
        k.while_(
            |k| k.lt(Value::Reg(t), s.total),
            |k| {
                // Triton's grouped ordering: `group_m` cluster rows at a time, down the
                // rows first, so the CTAs running together reuse the same A rows and B columns.
                let width = k.mul(s.tiles_n, Value::u32(cfg.group_m));
                let group = k.div(Value::Reg(t), width);
                let first_row = k.mul(group, Value::u32(cfg.group_m));
                let rows_left = k.sub(s.cluster_rows, first_row);
                let rows = k.min(rows_left, Value::u32(cfg.group_m));
                let in_group = k.rem(Value::Reg(t), width);
                let row_in_group = k.rem(in_group, rows);
                let cluster_row = k.add(first_row, row_in_group);
                let col = k.div(in_group, rows);
                let m_tile = k.mad(cluster_row, Value::u32(cfg.cluster_m), s.rank);
                let m0 = k.mul(m_tile, Value::u32(cfg.block_m()));
                let n0 = k.mul(col, Value::u32(cfg.block_n));
                body(k, m0, n0);
                let next = k.add(Value::Reg(t), s.step);
                k.assign(t, next);
            },
        );
    }
}

fn ceil_div(k: &mut KernelBuilder, x: Value, d: u32) -> Value {
    let x = k.add(x, Value::u32(d - 1));
    k.div(x, Value::u32(d))
}

/// Why the builder GEMM does not implement `cfg` (valid by [`GemmConfig::problem`]), if it
/// does not: it has no split-K and no third consumer warpgroup (the DSL GEMM's, `gemm::dsl`).
pub fn builder_unsupported(cfg: &GemmConfig) -> Option<String> {
    if cfg.block_n < EPI_TILE {
        return Some(format!(
            "block_n = {}: narrower than the builder GEMM's {EPI_TILE}-column epilogue sub-tile (the DSL GEMM's only)",
            cfg.block_n
        ));
    }
    if cfg.consumers == 3 {
        // Its host side and tests know one and two; the 192-row tile is the DSL GEMM's.
        return Some("3 consumer warpgroups (a 192-row tile): the DSL GEMM's only".into());
    }
    if let Some(r) = cfg.a_box_rows {
        return Some(format!("an A box of {r} rows: the DSL GEMM's only"));
    }
    (cfg.split_k != 1).then(|| format!("split_k = {}: the builder GEMM has no split-K (the DSL GEMM has)", cfg.split_k))
}

/// The kernel for `cfg`. Parameters: tensor maps of A (`{K, M}`, box `{64, block_m}`), B
/// (K-major `{K, N}`, box `{64, block_n / cluster_m}`; N-major `{N, K}`, box `{64, 64}`) and
/// C (`{N, M}`, box `{64, 64}`), all 128-byte swizzled, then `m`, `n`, `k`.
pub fn gemm_kernel(cfg: &GemmConfig) -> phaser::codegen::Result<Kernel> {
    let cfg = *cfg;
    let mut k = KernelBuilder::new(cfg.kernel_name(), Target::Sm90a);
    if let Some(p) = cfg.problem() {
        k.error(format!("GEMM configuration: {p}"));
    }
    if let Some(p) = builder_unsupported(&cfg) {
        k.error(format!("GEMM configuration: {p}"));
    }
    let tmap_a = k.param_tensor_map("a", 2);
    let tmap_b = k.param_tensor_map("b", 2);
    let tmap_c = k.param_tensor_map("c", 2);
    let m = k.param("m", Type::U32);
    let n = k.param("n", Type::U32);
    let kdim = k.param("k", Type::U32);
    let roles = cfg.roles();
    k.require_block(roles.threads(), 1, 1);
    if cfg.cluster_m > 1 {
        k.cluster(cfg.cluster_m, 1, 1);
    }
    // Full/empty barriers per stage: one producer thread fills; one thread per consumer
    // warpgroup releases, in every CTA whose producer writes the stage (the cluster).
    let pipe = Pipeline::new(
        &mut k,
        "stage",
        PipelineConfig {
            stages: cfg.stages,
            producers: Arrivals::Threads(1),
            consumers: Arrivals::Threads(cfg.consumers),
            consumer_ctas: cfg.cluster_m,
        },
    )
    // A release follows `wgmma.wait_group`, so the stage's reads are done: CUTLASS's
    // CTA-scope hand-back, without a MEMBAR.ALL.GPU per remote arrive.
    .with_cluster_sync(ClusterSync::CtaScope);
    let smem = k.dynamic_shared(Type::BF16, 0);
    pipe.init(&mut k);
    let base = k.shared_base_addr(smem);
    let sched = Schedule::new(&mut k, &cfg, m, n, kdim);
    k.warpgroup_roles(
        roles,
        |k| producer(k, &cfg, &pipe, &sched, base, tmap_a, tmap_b),
        |k, wg| consumer(k, &cfg, &pipe, &sched, base, tmap_c, wg),
    );
    k.finish()
}

/// Warp 0 of the producer warpgroup: one elected thread issues every TMA load.
#[allow(clippy::too_many_arguments)]
fn producer(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    pipe: &Pipeline,
    sched: &Schedule,
    base: Value,
    tmap_a: TensorMapRef,
    tmap_b: TensorMapRef,
) {
    let cfg = *cfg;
    let (pipe, sched) = (*pipe, *sched);
    k.if_warp(0, |k| {
        k.elect_one(|k| {
            let st = pipe.producer_start_state(k);
            sched.for_each_tile(k, &cfg, |k, m0, n0| {
                k.for_range(Value::u32(0), sched.k_blocks, |k, kb| {
                    let k0 = k.mul(kb, Value::u32(BLOCK_K));
                    pipe.producer_acquire(k, &st);
                    // Every byte that lands in this CTA's stage: A, and all of B (the peer's
                    // multicast half included).
                    let full = pipe.producer_commit(k, &st, Value::u32(cfg.stage_bytes()));
                    let stage = st.stage_addr(k, base, cfg.stage_bytes());
                    k.tma_load(stage, tmap_a, &[k0, m0], full);
                    let b_stage = k.add(stage, Value::u32(cfg.a_tile().bytes()));
                    load_b(k, &cfg, &sched, tmap_b, b_stage, full, k0, n0);
                    st.advance(k);
                });
            });
            pipe.producer_tail(k, &st);
        });
    });
}

/// This CTA's share of the B tile: all of it, or (cluster) its half, multicast to the cluster.
#[allow(clippy::too_many_arguments)]
fn load_b(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    sched: &Schedule,
    tmap_b: TensorMapRef,
    b_stage: Value,
    full: phaser::codegen::builder::Barrier,
    k0: Value,
    n0: Value,
) {
    let cm = cfg.cluster_m;
    let mask = Value::imm_u((1u64 << cm) - 1, Type::U16);
    let tile = cfg.b_operand().tile;
    match cfg.b_layout {
        BLayout::KMajor => {
            // Rows [rank * block_n / cm, ...) of the N x 64 tile: contiguous 128-byte rows.
            let rows = cfg.block_n / cm;
            let row0 = k.mul(sched.rank, Value::u32(rows));
            let n = k.add(n0, row0);
            let off = k.mul(row0, Value::u32(tile.row_bytes()));
            let dst = k.add(b_stage, off);
            if cm > 1 {
                k.tma_load_multicast(dst, tmap_b, &[k0, n], full, mask);
            } else {
                k.tma_load(dst, tmap_b, &[k0, n], full);
            }
        }
        BLayout::NMajor => {
            // 64-column blocks of the 64 x N tile, one TMA box each; the CTA of rank r loads
            // blocks [r * per_cta, (r + 1) * per_cta).
            let per_cta = tile.blocks() / cm;
            let block0 = k.mul(sched.rank, Value::u32(per_cta));
            for j in 0..per_cta {
                let block = k.add(block0, Value::u32(j));
                let col = k.mul(block, Value::u32(tile.block_cols()));
                let n = k.add(n0, col);
                let off = k.mul(block, Value::u32(tile.block_bytes()));
                let dst = k.add(b_stage, off);
                if cm > 1 {
                    k.tma_load_multicast(dst, tmap_b, &[n, k0], full, mask);
                } else {
                    k.tma_load(dst, tmap_b, &[n, k0], full);
                }
            }
        }
    }
}

/// One consumer warpgroup: the wgmma mainloop over the K blocks of each tile, then the
/// epilogue through shared memory and TMA stores.
#[allow(clippy::too_many_arguments)]
fn consumer(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    pipe: &Pipeline,
    sched: &Schedule,
    base: Value,
    tmap_c: TensorMapRef,
    wg: Value,
) {
    let cfg = *cfg;
    let (pipe, sched) = (*pipe, *sched);
    let tid = k.thread_idx(Dim::X);
    let t = k.and(tid, Value::u32(127));
    let leader = k.eq(t, Value::u32(0));
    // Named barrier of this warpgroup's epilogue (0 is the CTA barrier).
    let bar_id = k.add(wg, Value::u32(1));
    let epi_base = {
        let per_wg = k.mul(wg, Value::u32(2 * cfg.c_tile().bytes()));
        let at = k.add(base, Value::u32(cfg.stages * cfg.stage_bytes()));
        k.add(at, per_wg)
    };
    let accs: Vec<Accumulator> = (0..cfg.wg_m / 64).map(|_| Accumulator::new(k, cfg.block_n)).collect();
    let read = pipe.consumer_start_state(k);
    let release = pipe.consumer_start_state(k);
    let wg_row0 = k.mul(wg, Value::u32(cfg.wg_m));
    // This warpgroup's rows of the A tile start wg * wg_m rows in: an offset (in the
    // descriptor's 16-byte units) added to every A descriptor.
    let a_wg_off = {
        let units = k.mul(wg_row0, Value::u32(cfg.a_tile().row_bytes() / 16));
        k.cvt(units, Type::U64)
    };
    sched.for_each_tile(k, &cfg, |k, m0, n0| {
        // K block 0 overwrites the accumulators (scale-d = 0 on its first k-step).
        pipe.consumer_wait(k, &read);
        mma_k_block(k, &cfg, &read, base, a_wg_off, &accs, true);
        read.advance(k);
        k.for_range(Value::u32(1), sched.k_blocks, |k, _| {
            pipe.consumer_wait(k, &read);
            mma_k_block(k, &cfg, &read, base, a_wg_off, &accs, false);
            // The previous K block's wgmmas have retired: its stage can be refilled.
            k.wgmma_wait_group(1);
            release_stage(k, &pipe, &release, leader);
            read.advance(k);
        });
        k.wgmma_wait_group(0);
        release_stage(k, &pipe, &release, leader);
        epilogue(k, &cfg, &accs, tmap_c, epi_base, bar_id, t, leader, m0, n0, wg_row0);
    });
    // Stores still reading the staging buffers must finish before the CTA exits.
    k.if_then(leader, |k| k.bulk_wait_group(0, false));
}

/// Fence, the 4 k16 steps of one K block for every m64 slice of the warpgroup, commit.
#[allow(clippy::too_many_arguments)]
fn mma_k_block(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    st: &PipelineState,
    base: Value,
    a_wg_off: Value,
    accs: &[Accumulator],
    first: bool,
) {
    let stage = st.stage_addr(k, base, cfg.stage_bytes());
    let b_addr = k.add(stage, Value::u32(cfg.a_tile().bytes()));
    let a: MatrixDesc = k.matrix_desc(MmaElem::BF16, cfg.a_operand(), stage);
    let b: MatrixDesc = k.matrix_desc(MmaElem::BF16, cfg.b_operand(), b_addr);
    let a = MatrixDesc { desc: k.add(a.desc, a_wg_off), ..a };
    k.wgmma_fence();
    for step in 0..BLOCK_K / 16 {
        for (j, acc) in accs.iter().enumerate() {
            let scale_d = Value::pred(!(first && step == 0));
            k.wgmma(acc, &a, 64 * j as u32, &b, 0, 16 * step, scale_d);
        }
    }
    k.wgmma_commit_group();
}

/// One arrive per warpgroup (its leader) on the stage's `empty` barrier(s); every thread
/// advances its copy of the release state.
fn release_stage(k: &mut KernelBuilder, pipe: &Pipeline, st: &PipelineState, leader: Value) {
    let (pipe, st) = (*pipe, *st);
    k.if_then(leader, |k| pipe.consumer_release(k, &st));
    st.advance(k);
}

/// Round the accumulators to bf16 and store them to C through two 64 x 64 staging buffers.
#[allow(clippy::too_many_arguments)]
fn epilogue(
    k: &mut KernelBuilder,
    cfg: &GemmConfig,
    accs: &[Accumulator],
    tmap_c: TensorMapRef,
    epi_base: Value,
    bar_id: Value,
    t: Value,
    leader: Value,
    m0: Value,
    n0: Value,
    wg_row0: Value,
) {
    let c = cfg.c_tile();
    let threads = Value::u32(128);
    let mut sub = 0;
    for (j, acc) in accs.iter().enumerate() {
        let row = k.add(m0, wg_row0);
        let row = k.add(row, Value::u32(64 * j as u32));
        for col in (0..cfg.block_n).step_by(EPI_TILE as usize) {
            let buf = k.add(epi_base, Value::u32((sub % 2) * c.bytes()));
            // The store issued from this buffer two sub-tiles ago must have read it. With an
            // odd number of sub-tiles per tile (block_n = 192), the previous tile's last store,
            // the latest, used this buffer: wait for every store (long done by now).
            let odd = (cfg.wg_m / 64 * cfg.block_n / EPI_TILE) % 2 == 1;
            let pending = if sub == 0 && odd { 0 } else { 1 };
            sub += 1;
            k.if_then(leader, |k| k.bulk_wait_group(pending, true));
            k.bar_sync(bar_id, Some(threads));
            acc.store_bf16_stmatrix(k, &c, buf, t, 0, 0, col, EPI_TILE);
            // Generic-proxy writes before the async-proxy (TMA) read.
            k.fence_proxy_async(ProxySpace::SharedCta);
            k.bar_sync(bar_id, Some(threads));
            k.if_then(leader, |k| {
                let n = k.add(n0, Value::u32(col));
                k.tma_store(tmap_c, &[n, row], buf);
                k.bulk_commit_group();
            });
        }
    }
}

/// The configurations the sweep tries (tile shape x stages x cluster size) for a B layout.
pub fn sweep_configs(b_layout: BLayout) -> Vec<GemmConfig> {
    let mut v = Vec::new();
    for (block_n, wg_m) in [(256, 64), (128, 128), (128, 64)] {
        for stages in 3..=6 {
            for cluster_m in [1, 2] {
                let c = GemmConfig { block_n, wg_m, stages, cluster_m, ..GemmConfig::new(b_layout) };
                if c.problem().is_none() {
                    v.push(c);
                }
            }
        }
    }
    v
}

// ---- host side ------------------------------------------------------------------------

/// The sizes of `C (m x n) = A (m x k) * B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl GemmShape {
    pub const fn new(m: u32, n: u32, k: u32) -> GemmShape {
        GemmShape { m, n, k }
    }
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    /// Why the kernel cannot compute this shape, naming the constraint.
    pub fn problem(&self) -> Option<String> {
        let GemmShape { m, n, k } = *self;
        if m == 0 || n == 0 || k == 0 {
            return Some(format!("{m} x {n} x {k}: every dimension must be at least 1"));
        }
        if m > i32::MAX as u32 || n > i32::MAX as u32 || k > i32::MAX as u32 {
            return Some(format!("{m} x {n} x {k}: TMA coordinates are 32-bit signed"));
        }
        if !k.is_multiple_of(8) {
            return Some(format!(
                "K = {k}: a row of A (and of a K-major B) is {} bytes, but TMA needs row strides that are \
                 multiples of 16 bytes, so K must be a multiple of 8",
                2 * k as u64
            ));
        }
        if !n.is_multiple_of(8) {
            return Some(format!(
                "N = {n}: a row of C (and of an N-major B) is {} bytes, but TMA needs row strides that are \
                 multiples of 16 bytes, so N must be a multiple of 8",
                2 * n as u64
            ));
        }
        None
    }
}

impl std::fmt::Display for GemmShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

impl std::str::FromStr for GemmShape {
    type Err = String;
    fn from_str(s: &str) -> Result<GemmShape, String> {
        let v: Vec<u32> = s
            .split('x')
            .map(|p| p.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("`{s}`: {e}"))?;
        match v.as_slice() {
            [m, n, k] => Ok(GemmShape::new(*m, *n, *k)),
            _ => Err(format!("`{s}`: expected MxNxK")),
        }
    }
}

/// Elements of B as stored: `N x K` (K-major) or `K x N` (N-major), row-major either way.
pub fn b_len(shape: &GemmShape) -> usize {
    shape.n as usize * shape.k as usize
}

/// The B element multiplying `A[.., kk]` into `C[.., j]`.
pub fn b_at(b: &[half::bf16], shape: &GemmShape, layout: BLayout, kk: usize, j: usize) -> half::bf16 {
    match layout {
        BLayout::KMajor => b[j * shape.k as usize + kk],
        BLayout::NMajor => b[kk * shape.n as usize + j],
    }
}

/// CPU reference of one element (f64 accumulation of the bf16 products).
pub fn reference_at(a: &[half::bf16], b: &[half::bf16], shape: &GemmShape, layout: BLayout, i: usize, j: usize) -> f64 {
    let k = shape.k as usize;
    (0..k).map(|kk| a[i * k + kk].to_f64() * b_at(b, shape, layout, kk, j).to_f64()).sum()
}

/// How far a bf16 result may be from the reference: two bf16 roundings (unit roundoff 2^-8)
/// relative to the value, plus an absolute term for f32 accumulation-order differences, which
/// grow with K (inputs are in [-1, 1)).
pub fn tolerance(reference: f64, k: u32) -> f64 {
    2.0 * (1.0 / 256.0) * reference.abs() + k as f64 / (1u64 << 18) as f64
}

/// Random bf16 inputs in [-1, 1).
pub fn random_bf16(len: usize, seed: u64) -> Vec<half::bf16> {
    use rand::{Rng, SeedableRng};
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| half::bf16::from_f32(r.random_range(-1.0f32..1.0))).collect()
}

/// The bf16 NaN written into C before every run: an element the kernel did not write stays
/// NaN and fails every comparison.
pub const POISON: half::bf16 = half::bf16::from_bits(0xFFFF);

/// A, B and C on a device, with the tensor maps a kernel of `cfg` reads them through.
pub struct GemmBuffers {
    pub shape: GemmShape,
    pub layout: BLayout,
    pub a: phaser::Buffer<half::bf16>,
    pub b: phaser::Buffer<half::bf16>,
    pub c: phaser::Buffer<half::bf16>,
}

impl GemmBuffers {
    /// Upload A and B (C zero-filled), after checking the shape.
    pub fn new(
        dev: &phaser::Device,
        shape: GemmShape,
        layout: BLayout,
        a: &[half::bf16],
        b: &[half::bf16],
    ) -> Result<GemmBuffers, crate::timing::BenchError> {
        if let Some(p) = shape.problem() {
            return Err(crate::timing::BenchError(format!("GEMM {shape}: {p}")));
        }
        assert_eq!(a.len(), shape.m as usize * shape.k as usize, "A is M x K");
        assert_eq!(b.len(), b_len(&shape), "B is N x K or K x N");
        Ok(GemmBuffers {
            shape,
            layout,
            a: dev.upload(a)?,
            b: dev.upload(b)?,
            c: dev.alloc::<half::bf16>(shape.m as usize * shape.n as usize)?,
        })
    }

    /// The three tensor maps of `cfg` (128-byte swizzled boxes; see [`gemm_kernel`]).
    pub fn tensor_maps(
        &self,
        dev: &phaser::Device,
        cfg: &GemmConfig,
    ) -> phaser::runtime::Result<[phaser::TensorMap; 3]> {
        let GemmShape { m, n, k } = self.shape;
        let (m, n, k) = (m as u64, n as u64, k as u64);
        let sw = phaser::Swizzle::B128;
        let a = dev.tensor_map(&self.a, &[k, m], &[BLOCK_K, cfg.a_rows()], sw)?;
        let b = match cfg.b_layout {
            BLayout::KMajor => dev.tensor_map(&self.b, &[k, n], &[BLOCK_K, cfg.block_n / cfg.cluster_m], sw)?,
            BLayout::NMajor => dev.tensor_map(&self.b, &[n, k], &[EPI_TILE, BLOCK_K], sw)?,
        };
        let c = dev.tensor_map(&self.c, &[n, m], &[EPI_TILE, EPI_TILE], sw)?;
        Ok([a, b, c])
    }
}

/// The persistent grid: one CTA per SM (whole clusters), at most one per tile.
pub fn grid(cfg: &GemmConfig, shape: &GemmShape, sm_count: u32) -> u32 {
    let cm = cfg.cluster_m;
    let rows = shape.m.div_ceil(cfg.block_m() * cm) as u64;
    let cols = shape.n.div_ceil(cfg.block_n) as u64;
    let clusters = (rows * cols).min((sm_count / cm).max(1) as u64) as u32;
    clusters.max(1) * cm
}

/// The launch shape of `cfg` for `shape`.
pub fn launch_config(cfg: &GemmConfig, shape: &GemmShape, sm_count: u32) -> phaser::LaunchConfig {
    phaser::LaunchConfig::linear(grid(cfg, shape, sm_count), cfg.threads())
        .with_dynamic_shared(cfg.dynamic_smem_bytes())
}

/// Launch `kernel` (built from `cfg`) on the buffers through [`phaser::Device::launch`].
pub fn launch(
    dev: &phaser::Device,
    kernel: &Kernel,
    cfg: &GemmConfig,
    bufs: &GemmBuffers,
) -> phaser::runtime::Result<phaser::runtime::LaunchReport> {
    let maps = bufs.tensor_maps(dev, cfg)?;
    let s = bufs.shape;
    dev.launch(kernel, launch_config(cfg, &s, dev.sm_count()?), &args(&maps, &s))
}

/// A GEMM of one configuration as the launches that compute C: the builder's kernel, or the
/// DSL's (with split-K, its GEMM and the reduction).
#[derive(Clone, Debug)]
pub enum GemmKernels {
    Builder(Kernel),
    Dsl(dsl::DslKernels),
}

impl GemmKernels {
    /// The kernels of `cfg` in the builder GEMM or the DSL GEMM.
    pub fn new(cfg: &GemmConfig, dsl: bool) -> phaser::codegen::Result<GemmKernels> {
        Ok(if dsl { GemmKernels::Dsl(dsl::kernels(cfg)?) } else { GemmKernels::Builder(gemm_kernel(cfg)?) })
    }
    /// The GEMM's name (the DSL's kernel, or the builder's).
    pub fn name(&self) -> &str {
        match self {
            GemmKernels::Builder(k) => k.name(),
            GemmKernels::Dsl(d) => d.gemm.name(),
        }
    }
    /// Compute C of `bufs` (`cfg` is the builder kernel's configuration; the DSL's carries its
    /// own), through [`phaser::Device::launch`]: complete when it returns. The DSL's split-K
    /// workspace is allocated for the call.
    pub fn run(&self, dev: &phaser::Device, cfg: &GemmConfig, bufs: &mut GemmBuffers) -> phaser::runtime::Result<()> {
        match self {
            GemmKernels::Builder(k) => launch(dev, k, cfg, bufs).map(drop),
            GemmKernels::Dsl(d) => {
                let mut ws = dsl::workspace(dev, &d.cfg, &bufs.shape)?;
                let mut flags = dsl::flags(dev, &d.cfg, &bufs.shape)?;
                dsl::launch(dev, d, bufs, &mut ws, &mut flags).map(drop)
            }
        }
    }
}

/// The GEMM kernel's arguments: the three tensor maps (A, B, C), then M, N and K.
pub fn args<'a>(maps: &'a [phaser::TensorMap; 3], s: &GemmShape) -> [phaser::Arg<'a>; 6] {
    [
        phaser::Arg::TensorMap(&maps[0]),
        phaser::Arg::TensorMap(&maps[1]),
        phaser::Arg::TensorMap(&maps[2]),
        phaser::Arg::scalar(s.m),
        phaser::Arg::scalar(s.n),
        phaser::Arg::scalar(s.k),
    ]
}

/// The outcome of comparing a result with a reference.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Largest |result - reference| / tolerance (<= 1 passes).
    pub worst: f64,
    /// Where, and the two values.
    pub at: (usize, usize, f64, f64),
    pub compared: usize,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.worst <= 1.0
    }
}

/// Compare `c` (M x N) with `reference(i, j)` at the positions `at` (a NaN on either side fails).
pub fn compare(
    c: &[half::bf16],
    shape: &GemmShape,
    at: impl Iterator<Item = (usize, usize)>,
    reference: impl Fn(usize, usize) -> f64,
) -> Comparison {
    let mut worst = Comparison { worst: 0.0, at: (0, 0, 0.0, 0.0), compared: 0 };
    for (i, j) in at {
        let got = c[i * shape.n as usize + j].to_f64();
        let want = reference(i, j);
        // A NaN on either side (an element left poisoned) fails.
        let ratio =
            if got.is_nan() || want.is_nan() { f64::INFINITY } else { (got - want).abs() / tolerance(want, shape.k) };
        worst.compared += 1;
        if ratio > worst.worst || (ratio.is_infinite() && worst.worst.is_finite()) {
            worst.worst = ratio;
            worst.at = (i, j, got, want);
        }
    }
    worst
}

/// The shapes of the correctness check: tile-aligned, ragged in every dimension, smaller than
/// a tile, one row, and large.
pub fn check_shapes() -> Vec<GemmShape> {
    [
        (128, 256, 64),
        (64, 8, 8),
        (1, 4096, 4096),
        (130, 264, 72),
        (777, 520, 264),
        (1001, 1000, 1000),
        (256, 256, 128),
        (2048, 2048, 2048),
        (3000, 1992, 1504),
        (512, 8192, 8192),
        (4096, 4096, 4096),
        (8192, 8192, 1024),
    ]
    .into_iter()
    .map(|(m, n, k)| GemmShape::new(m, n, k))
    .collect()
}

/// The performance shapes: two squares, a short-K and a skinny one.
pub fn perf_shapes() -> Vec<GemmShape> {
    vec![
        GemmShape::new(4096, 4096, 4096),
        GemmShape::new(8192, 8192, 8192),
        GemmShape::new(8192, 8192, 1024),
        GemmShape::new(512, 8192, 8192),
    ]
}

/// Check `kernel` (built from `cfg`) at `shape` on the GPU: random inputs from `seed`, C
/// poisoned first; every element compared with cuBLAS, and with the f64 CPU reference (every
/// element for small shapes, corners plus 508 random positions otherwise).
/// Returns (vs cuBLAS, vs CPU).
pub fn check_against_cublas(
    dev: &phaser::Device,
    blas: &crate::cublas::CublasLt,
    kernel: &GemmKernels,
    cfg: &GemmConfig,
    shape: GemmShape,
    seed: u64,
) -> crate::timing::BenchResult<(Comparison, Comparison)> {
    use crate::timing;
    let cuda = timing::cuda(dev)?;
    let a = random_bf16(shape.m as usize * shape.k as usize, seed);
    let b = random_bf16(b_len(&shape), seed ^ 0x9e37_79b9);
    let mut bufs = GemmBuffers::new(dev, shape, cfg.b_layout, &a, &b)?;
    dev.fill(&mut bufs.c, POISON)?;
    kernel.run(dev, cfg, &mut bufs)?;
    let ours = dev.download(&bufs.c)?;
    let mut reference = dev.alloc::<half::bf16>(shape.m as usize * shape.n as usize)?;
    dev.fill(&mut reference, POISON)?;
    let plan = blas.plan(shape.m as u64, shape.n as u64, shape.k as u64, cfg.b_layout)?;
    let (pa, pb, pc) = (dev.buffer_addr(&bufs.a)?, dev.buffer_addr(&bufs.b)?, dev.buffer_addr(&reference)?);
    timing::time(cuda, || blas.run(cuda.stream(), &plan, pa, pb, pc))?;
    let theirs = dev.download(&reference)?;
    let (m, n) = (shape.m as usize, shape.n as usize);
    let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
    let vs_cublas = compare(&ours, &shape, all, |i, j| theirs[i * n + j].to_f64());
    let small = (shape.m as u64) * (shape.n as u64) * (shape.k as u64) <= 1 << 28;
    let positions: Vec<(usize, usize)> = if small {
        (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
    } else {
        use rand::{Rng, SeedableRng};
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 7);
        let mut v = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
        v.extend((0..508).map(|_| (r.random_range(0..m), r.random_range(0..n))));
        v
    };
    let vs_cpu = compare(&ours, &shape, positions.into_iter(), |i, j| reference_at(&a, &b, &shape, cfg.b_layout, i, j));
    Ok((vs_cublas, vs_cpu))
}

/// A kernel that only walks the tile schedule of `cfg`: thread 0 of every CTA appends
/// `(cta, m0, n0)` for each tile it would compute to `out` (slot from an atomic counter).
/// Tests run it in the simulator to check that the persistent, grouped, clustered walk covers
/// every tile exactly once and that the CTAs of a cluster stay on the same columns.
pub fn tile_walk_kernel(cfg: &GemmConfig) -> phaser::codegen::Result<Kernel> {
    let cfg = *cfg;
    let mut k = KernelBuilder::new("gemm_tile_walk", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let count = k.param_global("count", Type::U32, true);
    let m = k.param("m", Type::U32);
    let n = k.param("n", Type::U32);
    k.require_block(32, 1, 1);
    if cfg.cluster_m > 1 {
        k.cluster(cfg.cluster_m, 1, 1);
    }
    let sched = Schedule::new(&mut k, &cfg, m, n, Value::u32(BLOCK_K));
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        let cta = k.block_idx(Dim::X);
        sched.for_each_tile(k, &cfg, |k, m0, n0| {
            let slot = k.atomic_add_global(count, Value::u32(0), Value::u32(1));
            let at = k.mul(slot, Value::u32(3));
            k.st_global(out, at, cta);
            let at1 = k.add(at, Value::u32(1));
            k.st_global(out, at1, m0);
            let at2 = k.add(at, Value::u32(2));
            k.st_global(out, at2, n0);
        });
    });
    k.finish()
}
