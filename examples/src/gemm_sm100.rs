//! The book's asynchronous Blackwell GEMM, built with the builder API:
//! `C (M x N, bf16) = A (M x K, bf16, row-major) * B (N x K, bf16, K-major)^T`, f32
//! accumulation in tensor memory. It mirrors the Hopper GEMM (`gemm.rs`): warp-specialized,
//! persistent, every hand-off through a [`Pipeline`] (no hand-kept parity).
//!
//! Roles (192 threads, 6 warps):
//! - warp 0, one elected thread: the TMA producer. Per 64-wide K block it acquires a stage of
//!   the shared-memory pipeline (`stage_full`/`stage_empty`), registers the stage's bytes and
//!   loads the A tile (128 x 64) and the B tile (`block_n` x 64), 128-byte swizzled.
//! - warp 1: allocates tensor memory (the whole warp: `acc_stages * block_n` columns), then one
//!   elected thread issues every MMA. Per tile it acquires an accumulator buffer of the
//!   accumulator pipeline (`acc_full`/`acc_empty`, after `tcgen05.fence::after_thread_sync`),
//!   per K block waits for the stage, issues four `tcgen05.mma` (K = 16 each) from descriptors
//!   derived from the typed tiles, and hands the stage back with `tcgen05.commit` on its
//!   `empty` barrier (it arrives once those MMAs are done); after the tile's last K block it
//!   commits to the accumulator's `full` barrier.
//! - warps 2-5, the epilogue warpgroup (warp `w` reads tensor-memory lanes `32 (w % 4)..`):
//!   per tile each waits for the accumulator, fences (`after_thread_sync`), loads 64 columns at
//!   a time (`tcgen05.ld.32x32b`, `tcgen05.wait::ld`), converts them to bf16 into a 32 x 64
//!   swizzled staging buffer of its own and stores it with a TMA store (two buffers per warp,
//!   reused once the store two chunks back has read it). After its last load of the tile it
//!   fences (`before_thread_sync`) and releases the accumulator, so the next tile's MMAs
//!   overlap the rest of the epilogue.
//!
//! The 2-CTA variant (`two_cta`, `.cta_group::2`, a cluster of 2): a CTA pair computes a
//! 256 x `block_n` tile with M = 256 MMAs issued by the even CTA. Each CTA loads its 128 rows of
//! A and its `block_n / 2` rows of B into its own stage; the even CTA's MMA reads both CTAs'
//! shared memory and writes both CTAs' tensor memory (data-path Layout A), and its commits are
//! multicast (`.multicast::cluster`, mask `0b11`) to both CTAs' `stage_empty` and `acc_full`
//! barriers. The odd CTA's warp 1 relays its stage fills: it waits on its own `stage_full`
//! and arrives on the even CTA's `pair_full` barrier, which the MMA thread waits on too
//! (CUTLASS routes the peer's TMA completion to the leader's barrier with
//! `cp.async.bulk.tensor.cta_group::2`, which Phaser's TMA family does not have yet). Both
//! CTAs' epilogues release the even CTA's `acc_empty`. Tensor memory is allocated and freed by
//! warp 1 of each CTA, after a cluster barrier.
//!
//! Ragged shapes: TMA zero-fills out-of-bounds loads and clips stores; K and N must be
//! multiples of 8 (16-byte row strides).

use crate::gemm::{GemmShape, BLOCK_K};
use phaser::codegen::builder::{
    Arrivals, BarrierArray, IdescReg, KernelBuilder, Pipeline, PipelineConfig, TensorMapRef, TmemAlloc, UmmaDesc,
};
use phaser::codegen::ir::{
    CtaGroup, Dim, InstrDesc, LdStShape, Major, MmaOperand, Ordering, ProxySpace, Scope, Sem, SmemTile, Space, Swizzle,
    Type, UmmaElem, Value,
};
use phaser::codegen::{Kernel, Target};

/// Rows of A (and of D) per CTA: the tensor memory's 128 lanes.
pub const BLOCK_M: u32 = 128;
/// Bytes of a bf16 element.
const BF16: u32 = 2;
/// Threads: the producer warp, the MMA warp, the epilogue warpgroup.
pub const THREADS: u32 = 192;
/// The epilogue's first warp.
const EPILOGUE_WARP: u32 = 2;
/// Columns one epilogue step loads, converts and stores (a 128-byte swizzle row of bf16).
const EPI_COLS: u32 = 64;
/// Rows of one epilogue warp's staging buffer and TMA store box (its 32 lanes).
const EPI_ROWS: u32 = 32;
/// Largest shared memory a block may use on sm_100a (the target's limit in `arch::limits`).
pub const MAX_SMEM_BYTES: u32 = Target::Sm100a.limits().max_shared_per_block;
/// Static shared memory (barriers, the tensor-memory address), padded to the dynamic window's
/// 1024-byte alignment.
const STATIC_SMEM_BYTES: u32 = phaser::codegen::arch::DYNAMIC_SHARED_ALIGN;

/// A protocol mistake injected on purpose (tests show the simulator reports each one at its
/// Rust line); `None` builds the correct kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sm100Bug {
    /// The MMA thread hands a stage back with a commit on its `full` barrier instead of its
    /// `empty` one.
    CommitToWrongBarrier,
    /// The epilogue loads the accumulator without waiting for its `full` barrier.
    EpilogueSkipsAccumulatorWait,
    /// The epilogue waits for the accumulator but omits `tcgen05.fence::after_thread_sync`.
    MissingAfterThreadSyncFence,
    /// The epilogue releases the accumulator without `tcgen05.fence::before_thread_sync`.
    MissingBeforeThreadSyncFence,
    /// The producer refills a stage without waiting for its `empty` barrier.
    StageReusedEarly,
}

/// The tile shape, pipeline depths and CTA grouping of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sm100Config {
    /// N of the tile and of every MMA: a multiple of 16 (32 for the 2-CTA variant) in 64..=256.
    pub block_n: u32,
    /// Shared-memory pipeline depth.
    pub stages: u32,
    /// Accumulator buffers in tensor memory (1 or 2).
    pub acc_stages: u32,
    /// `.cta_group::2`: a 2-CTA cluster computes 256 x `block_n` tiles.
    pub two_cta: bool,
    pub bug: Option<Sm100Bug>,
}

impl Sm100Config {
    /// 128 x 256 x 64 tiles (256 x 256 per pair with `two_cta`), 4 stages, 2 accumulators.
    pub fn new(two_cta: bool) -> Sm100Config {
        Sm100Config { block_n: 256, stages: 4, acc_stages: 2, two_cta, bug: None }
    }
    pub fn with_bug(self, bug: Sm100Bug) -> Sm100Config {
        Sm100Config { bug: Some(bug), ..self }
    }
    pub fn cta_group(&self) -> CtaGroup {
        if self.two_cta {
            CtaGroup::Two
        } else {
            CtaGroup::One
        }
    }
    pub fn ctas(&self) -> u32 {
        self.cta_group().ctas()
    }
    /// Rows of C one tile (one CTA, or one pair) covers.
    pub fn tile_m(&self) -> u32 {
        BLOCK_M * self.ctas()
    }
    /// This CTA's B rows per stage.
    pub fn b_rows(&self) -> u32 {
        self.block_n / self.ctas()
    }
    pub fn a_operand(&self) -> MmaOperand {
        MmaOperand::new(SmemTile::new(BF16, BLOCK_M, BLOCK_K, Swizzle::B128), Major::K)
    }
    pub fn b_operand(&self) -> MmaOperand {
        MmaOperand::new(SmemTile::new(BF16, self.b_rows(), BLOCK_K, Swizzle::B128), Major::K)
    }
    /// One epilogue warp's staging buffer: 32 rows x 64 bf16, one TMA store box.
    pub fn c_tile(&self) -> SmemTile {
        SmemTile::new(BF16, EPI_ROWS, EPI_COLS, Swizzle::B128)
    }
    pub fn stage_bytes(&self) -> u32 {
        self.a_operand().tile.bytes() + self.b_operand().tile.bytes()
    }
    /// Two staging buffers per epilogue warp.
    pub fn epilogue_bytes(&self) -> u32 {
        4 * 2 * self.c_tile().bytes()
    }
    pub fn dynamic_smem_bytes(&self) -> u32 {
        self.stages * self.stage_bytes() + self.epilogue_bytes()
    }
    /// Tensor-memory columns: the accumulators, rounded up to an allocation size.
    pub fn tmem_columns(&self) -> u32 {
        (self.acc_stages * self.block_n).next_power_of_two().max(32)
    }
    pub fn idesc(&self) -> InstrDesc {
        InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, self.tile_m(), self.block_n)
    }
    pub fn kernel_name(&self) -> String {
        format!(
            "phaser_gemm_sm100_{}x{}x{BLOCK_K}_s{}_a{}{}",
            self.tile_m(),
            self.block_n,
            self.stages,
            self.acc_stages,
            if self.two_cta { "_2cta" } else { "" }
        )
    }
    /// What is wrong with this configuration, if anything.
    pub fn problem(&self) -> Option<String> {
        let step = 16 * self.ctas();
        if !(64..=256).contains(&self.block_n) || !self.block_n.is_multiple_of(step.max(EPI_COLS)) {
            return Some(format!("block_n = {}: a multiple of {} in 64..=256", self.block_n, step.max(EPI_COLS)));
        }
        if !(2..=8).contains(&self.stages) || ![1, 2].contains(&self.acc_stages) {
            return Some(format!("{} stages (2..=8), {} accumulators (1 or 2)", self.stages, self.acc_stages));
        }
        if self.acc_stages * self.block_n > 512 {
            return Some(format!(
                "{} accumulators of {} columns exceed the 512 of tensor memory",
                self.acc_stages, self.block_n
            ));
        }
        let smem = self.dynamic_smem_bytes() + STATIC_SMEM_BYTES;
        if smem > MAX_SMEM_BYTES {
            return Some(format!(
                "{} stages of {} bytes + {} bytes of epilogue buffers = {smem} bytes of shared memory, over the {MAX_SMEM_BYTES} of sm_100a",
                self.stages,
                self.stage_bytes(),
                self.epilogue_bytes()
            ));
        }
        None
    }
}

/// The tile walk every role repeats identically: persistent, one tile (of a CTA or a pair) at
/// a time, M fastest.
#[derive(Clone, Copy)]
struct Schedule {
    tiles_m: Value,
    total: Value,
    /// This CTA's cluster (pair), the number of clusters, the CTA's rank in the pair.
    first: Value,
    step: Value,
    rank: Value,
    k_blocks: Value,
}

impl Schedule {
    fn new(k: &mut KernelBuilder, cfg: &Sm100Config, m: Value, n: Value, kdim: Value) -> Schedule {
        let tiles_m = ceil_div(k, m, cfg.tile_m());
        let tiles_n = ceil_div(k, n, cfg.block_n);
        let total = k.mul(tiles_m, tiles_n);
        let cta = k.block_idx(Dim::X);
        let ctas = k.grid_dim(Dim::X);
        let (first, step, rank) = if cfg.two_cta {
            (k.shr(cta, Value::u32(1)), k.shr(ctas, Value::u32(1)), k.cluster_cta_rank())
        } else {
            (cta, ctas, Value::u32(0))
        };
        let k_blocks = ceil_div(k, kdim, BLOCK_K);
        Schedule { tiles_m, total, first, step, rank, k_blocks }
    }

    /// `for t in (first..total).step_by(step) { body(m0, n0) }`: the element offsets of tile
    /// `t` (the pair's first row with `two_cta`).
    fn for_each_tile(
        &self,
        k: &mut KernelBuilder,
        cfg: &Sm100Config,
        body: impl FnOnce(&mut KernelBuilder, Value, Value),
    ) {
        let s = *self;
        let t = k.var(s.first);
        k.while_(
            |k| k.lt(Value::Reg(t), s.total),
            |k| {
                let tm = k.rem(Value::Reg(t), s.tiles_m);
                let tn = k.div(Value::Reg(t), s.tiles_m);
                let m0 = k.mul(tm, Value::u32(cfg.tile_m()));
                let n0 = k.mul(tn, Value::u32(cfg.block_n));
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

/// Everything the roles share.
#[derive(Clone, Copy)]
struct Gemm {
    cfg: Sm100Config,
    /// Shared-memory stages: TMA fills, the MMA commit releases.
    smem: Pipeline,
    /// Accumulator buffers: the MMA commit fills, the epilogue warps release.
    acc: Pipeline,
    /// 2-CTA: the odd CTA's stage fills, relayed to the even CTA's MMA thread.
    pair_full: Option<BarrierArray>,
    sched: Schedule,
    /// Shared address of the stages (dynamic window) and the tensor-memory base address.
    base: Value,
    tmem: Value,
}

/// The kernel for `cfg`. Parameters: tensor maps of A (`{K, M}`, box `{64, 128}`), B
/// (`{K, N}`, box `{64, block_n / ctas}`) and C (`{N, M}`, box `{64, 32}`), all 128-byte
/// swizzled, then `m`, `n`, `k`.
pub fn gemm_sm100_kernel(cfg: &Sm100Config) -> phaser::codegen::Result<Kernel> {
    let cfg = *cfg;
    let mut k = KernelBuilder::new(cfg.kernel_name(), Target::Sm100a);
    if let Some(p) = cfg.problem() {
        k.error(format!("sm100 GEMM configuration: {p}"));
    }
    let tmap_a = k.param_tensor_map("a", 2);
    let tmap_b = k.param_tensor_map("b", 2);
    let tmap_c = k.param_tensor_map("c", 2);
    let m = k.param("m", Type::U32);
    let n = k.param("n", Type::U32);
    let kdim = k.param("k", Type::U32);
    k.require_block(THREADS, 1, 1);
    if cfg.two_cta {
        k.cluster(2, 1, 1);
    }
    let group = cfg.cta_group();
    // `stage_full`: the producer's arrive.expect_tx; `stage_empty`: one commit (multicast by
    // the pair's MMA thread into both CTAs with `two_cta`).
    let smem = Pipeline::new(&mut k, "stage", PipelineConfig::tma(cfg.stages, Arrivals::Threads(1)));
    // `acc_full`: one commit; `acc_empty`: each epilogue warp of each CTA of the pair.
    let acc = Pipeline::new(
        &mut k,
        "acc",
        PipelineConfig {
            stages: cfg.acc_stages,
            producers: Arrivals::Threads(1),
            consumers: Arrivals::Warps(4),
            consumer_ctas: cfg.ctas(),
        },
    );
    let pair_full = cfg.two_cta.then(|| k.alloc_barriers("pair_full", cfg.stages));
    let slot = k.alloc_shared("tmem_slot", Type::U32, 1);
    let dynamic = k.dynamic_shared(Type::BF16, 0);
    let alloc = TmemAlloc::new(&mut k, group, cfg.tmem_columns());

    // Set-up: barriers (thread 0), tensor memory (warp 1), then one CTA (cluster) barrier so
    // every thread sees both.
    smem.init_no_sync(&mut k);
    acc.init_no_sync(&mut k);
    let tid = k.thread_idx(Dim::X);
    if let Some(pf) = pair_full {
        let first = k.eq(tid, Value::u32(0));
        k.if_then(first, |k| {
            for s in 0..cfg.stages {
                let b = k.barrier_at(pf, Value::u32(s));
                k.mbarrier_init(b, Value::u32(1));
            }
            k.fence_mbarrier_init();
        });
    }
    let warp = k.warp_idx();
    let slot_addr = k.shared_base_addr(slot);
    let is_mma_warp = k.eq(warp, Value::u32(1));
    k.if_then(is_mma_warp, |k| alloc.allocate(k, slot_addr));
    if cfg.two_cta {
        k.cluster_sync();
    } else {
        k.cta_sync();
    }
    let tmem = k.ld_shared(slot, Value::u32(0));
    let base = k.shared_base_addr(dynamic);
    let sched = Schedule::new(&mut k, &cfg, m, n, kdim);
    let g = Gemm { cfg, smem, acc, pair_full, sched, base, tmem };

    let is_producer = k.eq(warp, Value::u32(0));
    k.if_else(
        is_producer,
        |k| producer(k, &g, tmap_a, tmap_b),
        |k| {
            k.if_else(is_mma_warp, |k| mma_warp(k, &g), |k| epilogue_warp(k, &g, tmap_c));
        },
    );

    // Tear-down: every tensor-memory access of the CTA (the pair) is done before warp 1 frees
    // the columns.
    k.tcgen05_fence_before_thread_sync();
    if cfg.two_cta {
        k.cluster_sync();
    } else {
        k.cta_sync();
    }
    k.if_then(is_mma_warp, |k| {
        k.tcgen05_fence_after_thread_sync();
        alloc.free(k, tmem);
    });
    if cfg.two_cta {
        // "the issuing warp must make sure that peer CTA is launched and is still active": no
        // CTA exits before its peer freed the pair's columns.
        k.cluster_sync();
    }
    k.finish()
}

/// Warp 0: one elected thread issues every TMA load.
fn producer(k: &mut KernelBuilder, g: &Gemm, tmap_a: TensorMapRef, tmap_b: TensorMapRef) {
    let g = *g;
    let cfg = g.cfg;
    k.elect_one(|k| {
        let st = g.smem.producer_start_state(k);
        g.sched.for_each_tile(k, &cfg, |k, m0, n0| {
            // This CTA's rows of A and of B (its half of them with `two_cta`).
            let a_row = k.mad(g.sched.rank, Value::u32(BLOCK_M), m0);
            let b_row = k.mad(g.sched.rank, Value::u32(cfg.b_rows()), n0);
            k.for_range(Value::u32(0), g.sched.k_blocks, |k, kb| {
                let k0 = k.mul(kb, Value::u32(BLOCK_K));
                if cfg.bug != Some(Sm100Bug::StageReusedEarly) {
                    g.smem.producer_acquire(k, &st); // ACQUIRE
                }
                let full = g.smem.producer_commit(k, &st, Value::u32(cfg.stage_bytes()));
                let stage = st.stage_addr(k, g.base, cfg.stage_bytes());
                k.tma_load(stage, tmap_a, &[k0, a_row], full); // TMA-A
                let b_stage = k.add(stage, Value::u32(cfg.a_operand().tile.bytes()));
                k.tma_load(b_stage, tmap_b, &[k0, b_row], full);
                st.advance(k);
            });
        });
        g.smem.producer_tail(k, &st);
    });
}

/// Warp 1: in the MMA CTA one elected thread issues the MMAs; in the odd CTA of a pair one
/// relays the stage fills to the even CTA.
fn mma_warp(k: &mut KernelBuilder, g: &Gemm) {
    let g = *g;
    let cfg = g.cfg;
    k.elect_one(|k| {
        if cfg.two_cta {
            let leader = k.eq(g.sched.rank, Value::u32(0));
            k.if_else(leader, |k| issue_mmas(k, &g), |k| relay_stage_fills(k, &g));
        } else {
            issue_mmas(k, &g);
        }
    });
}

/// The MMA thread: per tile an accumulator buffer, per K block four MMAs and a commit that
/// hands the stage back, per tile a commit that publishes the accumulator.
fn issue_mmas(k: &mut KernelBuilder, g: &Gemm) {
    let cfg = g.cfg;
    let group = cfg.cta_group();
    // Commits of a pair's MMA reach both CTAs' barriers.
    let both = cfg.two_cta.then(|| Value::imm_u(0b11, Type::U16));
    let idesc: IdescReg = k.instr_desc(cfg.idesc(), group);
    let st = g.smem.consumer_start_state(k);
    let acc_st = g.acc.producer_start_state(k);
    g.sched.for_each_tile(k, &cfg, |k, _m0, _n0| {
        // The epilogue released this buffer (its loads fenced before the release): order our
        // MMAs after them.
        g.acc.producer_acquire(k, &acc_st);
        k.tcgen05_fence_after_thread_sync();
        let acc_col = k.mul(acc_st.index(), Value::u32(cfg.block_n));
        let d = k.add(g.tmem, acc_col);
        // K block 0 overwrites the accumulator (enable-input-d = false on its first MMA).
        let first = k.var(Value::pred(true));
        k.for_range(Value::u32(0), g.sched.k_blocks, |k, _| {
            g.smem.consumer_wait(k, &st);
            if let Some(pf) = g.pair_full {
                // The odd CTA's half of the stage, relayed by its warp 1.
                let b = k.barrier_at(pf, st.index());
                k.mbarrier_wait_with(b, st.phase(), Ordering { sem: Some(Sem::Acquire), scope: Some(Scope::Cluster) });
            }
            let stage = st.stage_addr(k, g.base, cfg.stage_bytes());
            let b_addr = k.add(stage, Value::u32(cfg.a_operand().tile.bytes()));
            let a: UmmaDesc = k.umma_desc(UmmaElem::BF16, cfg.a_operand(), stage);
            let b: UmmaDesc = k.umma_desc(UmmaElem::BF16, cfg.b_operand(), b_addr);
            for step in 0..BLOCK_K / 16 {
                let accumulate = if step == 0 { k.not(Value::Reg(first)) } else { Value::pred(true) };
                k.tcgen05_mma(&idesc, d, &a, 0, &b, 0, 16 * step, accumulate); // MMA-ISSUE
            }
            k.assign(first, Value::pred(false));
            // Arrives once these MMAs (every earlier one of this thread) finished reading.
            if cfg.bug == Some(Sm100Bug::CommitToWrongBarrier) {
                g.smem.producer_commit_mma(k, &st, group, both); // BUG: commit-to-full
            } else {
                g.smem.consumer_release_mma(k, &st, group, both);
            }
            st.advance(k);
        });
        g.acc.producer_commit_mma(k, &acc_st, group, both);
        acc_st.advance(k);
    });
    g.acc.producer_tail(k, &acc_st);
}

/// The odd CTA's relay: each fill of its own stage is an arrival on the even CTA's `pair_full`.
fn relay_stage_fills(k: &mut KernelBuilder, g: &Gemm) {
    let cfg = g.cfg;
    let Some(pf) = g.pair_full else { return };
    let st = g.smem.consumer_start_state(k);
    g.sched.for_each_tile(k, &cfg, |k, _m0, _n0| {
        k.for_range(Value::u32(0), g.sched.k_blocks, |k, _| {
            g.smem.consumer_wait(k, &st);
            let b = k.barrier_at(pf, st.index());
            let remote = k.map_barrier_to_cta(b, Value::u32(0));
            let order = Ordering { sem: Some(Sem::Release), scope: Some(Scope::Cluster) };
            k.mbarrier_arrive_remote_with(remote, None, order);
            st.advance(k);
        });
    });
}

/// Warps 2-5: per tile, 64 accumulator columns at a time from tensor memory to bf16 in shared
/// memory to C with TMA stores.
fn epilogue_warp(k: &mut KernelBuilder, g: &Gemm, tmap_c: TensorMapRef) {
    let g = *g;
    let cfg = g.cfg;
    let c_tile = cfg.c_tile();
    let warp = k.warp_idx();
    let lane = k.lane_idx();
    let is_lane0 = k.eq(lane, Value::u32(0));
    // Warp w accesses lanes 32 (w % 4) .. 32 (w % 4) + 31 (PTX ISA "Access restrictions").
    let quarter = k.and(warp, Value::u32(3));
    let lane_bits = k.mul(quarter, Value::u32(EPI_ROWS << 16));
    let tmem_rows = k.add(g.tmem, lane_bits);
    let buffers = {
        let ew = k.sub(warp, Value::u32(EPILOGUE_WARP));
        let off = k.mul(ew, Value::u32(2 * c_tile.bytes()));
        let at = k.add(g.base, Value::u32(cfg.stages * cfg.stage_bytes()));
        k.add(at, off)
    };
    // The 16-byte chunk of row `lane` of a 128-byte swizzled buffer: chunk ^ (lane % 8).
    let row_addr = k.mul(lane, Value::u32(c_tile.row_bytes()));
    let r8 = k.and(lane, Value::u32(7));
    let st = g.acc.consumer_start_state(k);
    let chunks = cfg.block_n / EPI_COLS;
    let used = k.var(Value::u32(0));
    g.sched.for_each_tile(k, &cfg, |k, m0, n0| {
        if cfg.bug != Some(Sm100Bug::EpilogueSkipsAccumulatorWait) {
            g.acc.consumer_wait(k, &st);
        }
        if cfg.bug != Some(Sm100Bug::MissingAfterThreadSyncFence) {
            k.tcgen05_fence_after_thread_sync();
        }
        let acc_col = k.mul(st.index(), Value::u32(cfg.block_n));
        let tile_tmem = k.add(tmem_rows, acc_col);
        // Global row of this warp's 32 rows: the tile's, the CTA's 128 within a pair, the warp's.
        let row0 = k.mad(g.sched.rank, Value::u32(BLOCK_M), m0);
        let q_rows = k.mul(quarter, Value::u32(EPI_ROWS));
        let row0 = k.add(row0, q_rows);
        for chunk in 0..chunks {
            let col = Value::u32(chunk * EPI_COLS);
            let at = k.add(tile_tmem, col);
            let lo = k.tcgen05_ld(LdStShape::S32x32b, 32, at, Type::F32); // TMEM-LD
            let at_hi = k.add(at, Value::u32(32));
            let hi = k.tcgen05_ld(LdStShape::S32x32b, 32, at_hi, Type::F32);
            k.tcgen05_wait_ld();
            if chunk + 1 == chunks {
                // Every load of this accumulator is complete: hand it back to the MMA thread.
                if cfg.bug != Some(Sm100Bug::MissingBeforeThreadSyncFence) {
                    k.tcgen05_fence_before_thread_sync();
                }
                g.acc.consumer_release(k, &st);
            }
            // The buffer's previous TMA store (two chunks back) must have read it.
            let which = k.and(Value::Reg(used), Value::u32(1));
            let buf_off = k.mul(which, Value::u32(c_tile.bytes()));
            let buf = k.add(buffers, buf_off);
            k.if_then(is_lane0, |k| k.bulk_wait_group(1, true));
            k.warp_sync();
            let vals: Vec<Value> = lo.into_iter().chain(hi).collect();
            let row = k.add(buf, row_addr);
            for c16 in 0..EPI_COLS / 8 {
                // Columns 8 c16 .. 8 c16 + 7: one 16-byte chunk, swizzled by the row.
                let sw = k.xor(r8, Value::u32(c16));
                let sw = k.shl(sw, Value::u32(4));
                let chunk_addr = k.add(row, sw);
                for p in 0..4 {
                    let i = (c16 * 8 + 2 * p) as usize;
                    let pair = pack_bf16x2(k, vals[i], vals[i + 1]);
                    k.st_raw(Space::Shared, chunk_addr, 4 * p as i32, pair);
                }
            }
            // Generic-proxy writes before the async-proxy (TMA) read; the warp converges so
            // lane 0's store sees every lane's writes.
            k.fence_proxy_async(ProxySpace::SharedCta);
            k.warp_sync();
            k.if_then(is_lane0, |k| {
                let n = k.add(n0, col);
                k.tma_store(tmap_c, &[n, row0], buf);
                k.bulk_commit_group();
            });
            let next = k.add(Value::Reg(used), Value::u32(1));
            k.assign(used, next);
        }
        st.advance(k);
    });
    // Stores still reading the staging buffers finish before the CTA exits.
    k.if_then(is_lane0, |k| k.bulk_wait_group(0, false));
}

/// Two f32 values rounded to bf16 and packed into one `b32`, `lo` in the low half (the lower
/// address once stored): `cvt.rn.bf16.f32` twice, then a bit move and a shift.
fn pack_bf16x2(k: &mut KernelBuilder, lo: Value, hi: Value) -> Value {
    let bits = |k: &mut KernelBuilder, v: Value| {
        let h = k.cvt(v, Type::BF16);
        let raw = k.new_reg(Type::B16);
        k.push(phaser::codegen::ir::ArithOp::Mov { dst: raw, src: h });
        k.cvt(Value::Reg(raw), Type::U32)
    };
    let l = bits(k, lo);
    let h = bits(k, hi);
    let h = k.shl(h, Value::u32(16));
    k.or(l, h)
}

/// The configurations the benchmark would sweep, and the tests assemble.
pub fn configs() -> Vec<Sm100Config> {
    let mut v = Vec::new();
    for two_cta in [false, true] {
        for (block_n, acc_stages) in [(256, 2), (128, 2), (256, 1)] {
            for stages in [3, 4] {
                let c = Sm100Config { block_n, stages, acc_stages, two_cta, bug: None };
                if c.problem().is_none() {
                    v.push(c);
                }
            }
        }
    }
    v
}

// ---- host side ------------------------------------------------------------------------

/// A, B and C on a device with the tensor maps a kernel of `cfg` reads them through.
pub struct Sm100Buffers {
    pub shape: GemmShape,
    pub a: phaser::Buffer<half::bf16>,
    pub b: phaser::Buffer<half::bf16>,
    pub c: phaser::Buffer<half::bf16>,
}

impl Sm100Buffers {
    /// Upload A (M x K) and B (N x K), C poisoned.
    pub fn new(
        dev: &phaser::Device,
        shape: GemmShape,
        a: &[half::bf16],
        b: &[half::bf16],
    ) -> phaser::runtime::Result<Self> {
        assert_eq!(a.len(), shape.m as usize * shape.k as usize, "A is M x K");
        assert_eq!(b.len(), shape.n as usize * shape.k as usize, "B is N x K");
        let mut c = dev.alloc::<half::bf16>(shape.m as usize * shape.n as usize)?;
        dev.fill(&mut c, crate::gemm::POISON)?;
        Ok(Sm100Buffers { shape, a: dev.upload(a)?, b: dev.upload(b)?, c })
    }

    /// The three tensor maps of `cfg` (128-byte swizzled boxes; see [`gemm_sm100_kernel`]).
    pub fn tensor_maps(
        &self,
        dev: &phaser::Device,
        cfg: &Sm100Config,
    ) -> phaser::runtime::Result<[phaser::TensorMap; 3]> {
        let GemmShape { m, n, k } = self.shape;
        let (m, n, k) = (m as u64, n as u64, k as u64);
        let sw = phaser::Swizzle::B128;
        let a = dev.tensor_map(&self.a, &[k, m], &[BLOCK_K, BLOCK_M], sw)?;
        let b = dev.tensor_map(&self.b, &[k, n], &[BLOCK_K, cfg.b_rows()], sw)?;
        let c = dev.tensor_map(&self.c, &[n, m], &[EPI_COLS, EPI_ROWS], sw)?;
        Ok([a, b, c])
    }
}

/// The persistent grid: at most one CTA (pair) per tile and per SM (pair of SMs).
pub fn grid(cfg: &Sm100Config, shape: &GemmShape, sm_count: u32) -> u32 {
    let tiles = shape.m.div_ceil(cfg.tile_m()) as u64 * shape.n.div_ceil(cfg.block_n) as u64;
    let clusters = tiles.min((sm_count / cfg.ctas()).max(1) as u64) as u32;
    clusters.max(1) * cfg.ctas()
}

/// The launch of `cfg` at `shape` on `ctas` CTAs (a multiple of the cluster size).
pub fn launch_config(cfg: &Sm100Config, ctas: u32) -> phaser::LaunchConfig {
    phaser::LaunchConfig::linear(ctas, THREADS).with_dynamic_shared(cfg.dynamic_smem_bytes())
}

/// The kernel arguments for `bufs` and their maps.
pub fn args<'a>(maps: &'a [phaser::TensorMap; 3], shape: &GemmShape) -> [phaser::Arg<'a>; 6] {
    [
        phaser::Arg::TensorMap(&maps[0]),
        phaser::Arg::TensorMap(&maps[1]),
        phaser::Arg::TensorMap(&maps[2]),
        phaser::Arg::scalar(shape.m),
        phaser::Arg::scalar(shape.n),
        phaser::Arg::scalar(shape.k),
    ]
}

/// CPU reference of one element with B K-major (f64 accumulation of the bf16 products).
pub fn reference_at(a: &[half::bf16], b: &[half::bf16], shape: &GemmShape, i: usize, j: usize) -> f64 {
    let k = shape.k as usize;
    (0..k).map(|kk| a[i * k + kk].to_f64() * b[j * k + kk].to_f64()).sum()
}
