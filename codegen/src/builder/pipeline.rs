//! Full/empty mbarrier pipelines with the stage-index and phase-parity bookkeeping done by
//! the builder (CUTLASS's `PipelineTmaAsync` + `PipelineState`, TIRx's pipeline helpers).
//!
//! A pipeline of `S` stages owns two barrier arrays, `full[S]` and `empty[S]`:
//! - the producer waits `empty[i]` (`producer_acquire`), fills stage `i` and arrives on
//!   `full[i]` (`producer_commit`: `arrive.expect_tx(bytes)`, the copy engine completes the
//!   bytes; or `producer_arrive` for threads that store with ordinary instructions);
//! - the consumer waits `full[i]` (`consumer_wait`), reads stage `i` and arrives on
//!   `empty[i]` (`consumer_release`).
//!
//! Each side walks the stages with a [`PipelineState`]: a stage index and a phase parity
//! held in registers. `advance` increments the index and, when it wraps at `S`, flips the
//! parity. The producer starts at parity 1 (a fresh barrier is in phase 0, and a wait on
//! parity 1 succeeds at once, so the first `S` acquires pass: every buffer starts empty);
//! the consumer starts at parity 0 (it must wait for the first fill).
//!
//! Arrival counts follow from the declared roles: `full` expects one arrival per producer
//! unit (typically one elected thread that also registers the transaction bytes), `empty`
//! one per consumer unit (thread or warp) in every CTA that reads the stage (with
//! multicast TMA, every CTA of the cluster releases every CTA's stage).
//!
//! ```
//! use phaser_codegen::builder::{Arrivals, KernelBuilder, Pipeline, PipelineConfig};
//! use phaser_codegen::ir::{Type, Value};
//! use phaser_codegen::Target;
//!
//! let mut k = KernelBuilder::new("copy_rows", Target::Sm90a);
//! let map = k.param_tensor_map("src", 2);
//! let n = k.param("ntiles", Type::U32);
//! k.require_block(64, 1, 1); // warp 0 produces, warp 1 consumes
//! let smem = k.alloc_shared_aligned("stages", Type::F32, 4 * 256, 128);
//! let pipe = Pipeline::new(&mut k, "p", PipelineConfig::tma(4, Arrivals::Warps(1)));
//! pipe.init(&mut k);
//! let base = k.shared_base_addr(smem);
//! let warp = k.warp_idx();
//! let producer = k.eq(warp, Value::u32(0));
//! k.if_else(
//!     producer,
//!     |k| {
//!         k.elect_one(|k| {
//!             let st = pipe.producer_start_state(k); // stage 0, parity 1
//!             k.for_range(Value::u32(0), n, |k, t| {
//!                 pipe.producer_acquire(k, &st); // wait empty[i]
//!                 let full = pipe.producer_commit(k, &st, Value::u32(1024)); // arrive.expect_tx
//!                 let dst = st.stage_addr(k, base, 1024);
//!                 k.tma_load(dst, map, &[Value::u32(0), t], full);
//!                 st.advance(k); // index += 1, parity flips on wrap
//!             });
//!             pipe.producer_tail(k, &st);
//!         });
//!     },
//!     |k| {
//!         let st = pipe.consumer_start_state(k); // stage 0, parity 0
//!         k.for_range(Value::u32(0), n, |k, _t| {
//!             pipe.consumer_wait(k, &st); // wait full[i]
//!             // ... read the stage ...
//!             pipe.consumer_release(k, &st); // bar.warp.sync; lane 0 arrives on empty[i]
//!             st.advance(k);
//!         });
//!     },
//! );
//! let kernel = k.finish().unwrap();
//! let ptx = phaser_codegen::emit_kernel(&kernel).unwrap();
//! assert!(phaser_codegen::ptx_text::has(&ptx, "mbarrier.arrive.expect_tx.*"));
//! ```

use super::handles::*;
use super::kernel_builder::KernelBuilder;
use crate::arch::check::MAX_ARRIVALS;
use crate::ir::*;

/// A group of agents that each arrive once per phase of a barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    /// `n` threads, each arriving on its own (a single elected TMA producer is `Threads(1)`).
    Threads(u32),
    /// `n` whole warps: the 32 lanes converge (`bar.warp.sync`) and lane 0 arrives once for
    /// the warp. Every lane of the warp must make the call.
    Warps(u32),
    /// `n` warpgroups of 128 threads, each arriving once per destination CTA, spread over the
    /// warpgroup as CUTLASS's `PipelineTmaAsync` does (`is_signalling_thread_`/`dst_blockid_`):
    /// thread `8i` of the warpgroup arrives for destination `dst(i)` (of 16), so no thread
    /// makes more than one arrival and no warp waits for another. Every thread of the
    /// warpgroup must make the call; only what that thread did is ordered before its arrival.
    Warpgroups(u32),
}

impl Arrivals {
    /// Arrivals per phase contributed by this group.
    pub fn count(self) -> u32 {
        match self {
            Arrivals::Threads(n) | Arrivals::Warps(n) | Arrivals::Warpgroups(n) => n,
        }
    }
}

/// The shape of a pipeline: depth and roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineConfig {
    /// Number of stages `S` (buffers in the ring).
    pub stages: u32,
    /// Who arrives on `full`.
    pub producers: Arrivals,
    /// Who arrives on `empty`, per consumer CTA.
    pub consumers: Arrivals,
    /// How many CTAs' consumers release each stage. 1 for a CTA-local pipeline; the cluster
    /// size when the producer multicasts into every CTA of the cluster (each CTA's consumers
    /// then arrive on the `empty` barrier of every CTA, through `mapa`).
    pub consumer_ctas: u32,
}

impl PipelineConfig {
    /// A CTA-local TMA pipeline: one elected producer thread, `consumers` releasing.
    pub fn tma(stages: u32, consumers: Arrivals) -> PipelineConfig {
        PipelineConfig { stages, producers: Arrivals::Threads(1), consumers, consumer_ctas: 1 }
    }
    /// Expected arrivals per phase of each `full` barrier.
    pub fn full_count(&self) -> u32 {
        self.producers.count()
    }
    /// Expected arrivals per phase of each `empty` barrier (saturating: a count past the
    /// mbarrier limit is refused by `Pipeline::new`, never wrapped to a small one).
    pub fn empty_count(&self) -> u32 {
        self.consumers.count().saturating_mul(self.consumer_ctas)
    }
    pub fn is_cluster(&self) -> bool {
        self.consumer_ctas > 1
    }
}

/// The names a pipeline `name` gives its barrier arrays: `{name}_full`, `{name}_empty`.
const FULL: &str = "_full";
const EMPTY: &str = "_empty";

/// The pipelines kernel `k` declares and their stages `S`: each pair of barrier arrays a
/// [`Pipeline::new`] allocated (`{name}_full[S]` beside `{name}_empty[S]`), in allocation order.
pub fn pipeline_stages(k: &Kernel) -> Vec<(String, u32)> {
    let barriers = || k.shared().iter().filter(|a| a.kind == SharedKind::Barriers);
    barriers()
        .filter_map(|full| {
            let name = full.name.strip_suffix(FULL)?;
            let empty = format!("{name}{EMPTY}");
            barriers().any(|e| e.name == empty && e.len == full.len).then(|| (name.to_owned(), full.len))
        })
        .collect()
}

/// A pipeline's barriers in shared memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pipeline {
    pub full: BarrierArray,
    pub empty: BarrierArray,
    pub cfg: PipelineConfig,
    /// How a cluster pipeline's cross-CTA hand-back is ordered (see [`ClusterSync`]).
    pub cluster_sync: ClusterSync,
    /// Which CTAs a consumer's release arrives on (see [`ReleaseTo`]).
    pub release_to: ReleaseTo,
}

/// Which CTAs' `empty` barriers a consumer's release arrives on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReleaseTo {
    /// This CTA's; for a cluster pipeline (`consumer_ctas > 1`), every CTA's of the cluster
    /// (each CTA multicasts its slice into all of them).
    #[default]
    EveryCta,
    /// CUTLASS's 2-D multicast (`PipelineTmaAsync` built with a cluster shape): in a
    /// `rows x cols` cluster (`%cluster_ctaid.x < rows`, `.y < cols`; rank `x + y * rows`)
    /// the A tile is multicast along a row and the B tile along a column, so a stage of CTA
    /// `(x, y)` is filled by, and released to, the `rows + cols - 1` CTAs that share its `x`
    /// or its `y` (`is_same_row_or_col` in `sm90_pipeline.hpp`).
    RowAndColumn { rows: u32, cols: u32 },
}

impl ReleaseTo {
    /// How many CTAs' consumers release each stage of a CTA (`PipelineConfig::consumer_ctas`).
    fn releasing_ctas(self, every: u32) -> u32 {
        match self {
            ReleaseTo::EveryCta => every,
            ReleaseTo::RowAndColumn { rows, cols } => rows.saturating_add(cols).saturating_sub(1),
        }
    }
}

/// The memory ordering of a cluster pipeline's remote releases (consumers arriving on the
/// `empty` barriers of other CTAs) and of the producer's `empty` waits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClusterSync {
    /// `arrive.release.cluster` / `try_wait.acquire.cluster`: the consumers' prior memory
    /// operations are visible cluster-wide to the producer. In SASS every remote arrive costs
    /// `MEMBAR.ALL.GPU` and every wait `CCTL.IVALL`.
    #[default]
    ClusterScope,
    /// The PTX defaults (release/acquire at CTA scope), as CUTLASS's `PipelineTmaAsync`
    /// (`ClusterBarrier::arrive(cta_id)`, `ClusterBarrier::wait`): enough when a release only
    /// hands back a stage whose reads have completed (e.g. after `wgmma.wait_group`), which
    /// the producer's copy engine then overwrites; no fence on the hot path.
    CtaScope,
}

/// Where one side of a pipeline is: stage index and phase parity, both mutable `u32`
/// registers (`let mut` variables). Copying the struct copies the register names, not the
/// values: use [`PipelineState::clone_into_new`] for an independent copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineState {
    pub index: Reg,
    pub phase: Reg,
    pub stages: u32,
}

impl PipelineState {
    /// A state starting at stage 0 with the given parity.
    #[track_caller]
    pub fn new(k: &mut KernelBuilder, stages: u32, phase: u32) -> PipelineState {
        if stages == 0 {
            k.error("a pipeline state needs at least 1 stage");
        }
        let index = k.var(Value::u32(0));
        let phase = k.var(Value::u32(phase & 1));
        PipelineState { index, phase, stages }
    }

    /// Move to the next stage: `index += 1`; on reaching `S`, `index = 0` and `phase ^= 1`.
    /// Branch-free (`setp` + two `selp`/`xor`); with `S == 1` every advance flips the parity.
    #[track_caller]
    pub fn advance(&self, k: &mut KernelBuilder) {
        let s = *self;
        k.at_caller(|k| {
            let next = k.add(Value::Reg(s.index), Value::u32(1));
            let wrap = k.eq(next, Value::u32(s.stages));
            let idx = k.select(wrap, Value::u32(0), next);
            k.assign(s.index, idx);
            let flip = k.select(wrap, Value::u32(1), Value::u32(0));
            let ph = k.xor(Value::Reg(s.phase), flip);
            k.assign(s.phase, ph);
        })
    }

    /// Advance `n` times (a compile-time count). `2 * stages` advances bring the state back
    /// to itself, so only `n mod 2S` are emitted: one by one when few, else as arithmetic
    /// (`index + n` in 64 bits, the parity flipped once per wrap), never `n` copies.
    #[track_caller]
    pub fn advance_by(&self, k: &mut KernelBuilder, n: u32) {
        let period = 2 * self.stages.max(1) as u64;
        let n = n as u64 % period;
        if n <= 8 {
            for _ in 0..n {
                self.advance(k);
            }
            return;
        }
        k.at_caller(|k| self.advance_arith(k, Value::u64(n)))
    }

    /// Advance `n` times, `n` a constant (`advance_by`) or a run-time u32: `index + n` in 64
    /// bits, the parity flipped once per wrap (`(index + n) / S` wraps).
    #[track_caller]
    pub fn advance_by_value(&self, k: &mut KernelBuilder, n: Value) {
        if let Some(c) = n.as_imm_i128().and_then(|c| u32::try_from(c).ok()) {
            return self.advance_by(k, c);
        }
        k.at_caller(|k| {
            let n = k.cvt(n, Type::U64);
            self.advance_arith(k, n)
        })
    }

    /// `index + n` (`n` a u64) in 64 bits, the parity flipped once per wrap at S.
    fn advance_arith(&self, k: &mut KernelBuilder, n: Value) {
        let s = *self;
        let i = k.cvt(Value::Reg(s.index), Type::U64);
        let t = k.add(i, n);
        let stages = Value::u64(s.stages.max(1) as u64);
        let wraps = k.div(t, stages);
        let idx = k.rem(t, stages);
        let idx = k.cvt(idx, Type::U32);
        k.assign(s.index, idx);
        let odd = k.and(wraps, Value::u64(1));
        let flip = k.cvt(odd, Type::U32);
        let ph = k.xor(Value::Reg(s.phase), flip);
        k.assign(s.phase, ph);
    }

    /// An independent copy (new registers holding the current values).
    #[track_caller]
    pub fn clone_into_new(&self, k: &mut KernelBuilder) -> PipelineState {
        let index = k.var(Value::Reg(self.index));
        let phase = k.var(Value::Reg(self.phase));
        PipelineState { index, phase, stages: self.stages }
    }

    pub fn index(&self) -> Value {
        Value::Reg(self.index)
    }
    pub fn phase(&self) -> Value {
        Value::Reg(self.phase)
    }

    /// `base + index * stage_bytes`: the shared address of this stage's buffer. The stages
    /// must fit the target's shared memory (their offsets would wrap a 32-bit address).
    #[track_caller]
    pub fn stage_addr(&self, k: &mut KernelBuilder, base: Value, stage_bytes: u32) -> Value {
        let span = self.stages as u64 * stage_bytes as u64;
        let limit = k.target().limits().max_shared_per_block;
        if span > limit as u64 {
            k.error(format!(
                "{} stages of {stage_bytes} bytes span {span} bytes, more than {}'s {limit} bytes of shared memory",
                self.stages,
                k.target()
            ));
        }
        let off = k.mul(Value::Reg(self.index), Value::u32(stage_bytes));
        k.add(base, off)
    }
}

impl Pipeline {
    /// Allocate the `full` and `empty` barrier arrays (`{name}_full`, `{name}_empty`).
    /// Nothing is emitted yet: call [`Pipeline::init`] at the start of the kernel.
    #[track_caller]
    pub fn new(k: &mut KernelBuilder, name: &str, mut cfg: PipelineConfig) -> Pipeline {
        if cfg.stages == 0 {
            k.error(format!("pipeline `{name}` has 0 stages; it needs at least 1"));
        }
        // Checked before anything is allocated or unrolled (`init` emits 2 inits per stage):
        // the two barrier arrays must fit the target's shared memory.
        // A barrier is a `b64` in static shared memory (what `alloc_barriers` allocates).
        let (shared, barrier_bytes) = (k.target().limits().max_static_shared, Type::B64.size());
        let max_stages = shared / (2 * barrier_bytes);
        if cfg.stages > max_stages {
            k.error(format!(
                "pipeline `{name}` has {} stages: its 2 x {} barriers of {barrier_bytes} bytes exceed {}'s {shared} \
                 bytes of static shared memory (at most {max_stages} stages)",
                cfg.stages,
                cfg.stages,
                k.target()
            ));
            cfg.stages = 1;
        }
        if cfg.full_count() == 0 || cfg.consumers.count() == 0 || cfg.consumer_ctas == 0 {
            k.error(format!(
                "pipeline `{name}`: producer arrivals ({}), consumer arrivals ({}) and consumer CTAs ({}) must all be >= 1",
                cfg.full_count(),
                cfg.consumers.count(),
                cfg.consumer_ctas
            ));
        }
        if cfg.empty_count() as i128 > MAX_ARRIVALS || cfg.full_count() as i128 > MAX_ARRIVALS {
            k.error(format!("pipeline `{name}`: an arrival count exceeds the mbarrier limit of {MAX_ARRIVALS}"));
        }
        let full = k.alloc_barriers(&format!("{name}{FULL}"), cfg.stages.max(1));
        let empty = k.alloc_barriers(&format!("{name}{EMPTY}"), cfg.stages.max(1));
        Pipeline { full, empty, cfg, cluster_sync: ClusterSync::default(), release_to: ReleaseTo::EveryCta }
    }

    /// A pipeline of a `rows x cols` cluster whose stages are filled by, and released to, the
    /// CTAs of the same row and column ([`ReleaseTo::RowAndColumn`], CUTLASS's
    /// `PipelineTmaAsync` with a cluster shape): `empty` expects `consumers` from each of
    /// those `rows + cols - 1` CTAs. A kernel that declares its cluster shape must declare
    /// `rows x cols x 1`.
    #[track_caller]
    pub fn new_rows_cols(
        k: &mut KernelBuilder,
        name: &str,
        stages: u32,
        consumers: Arrivals,
        rows: u32,
        cols: u32,
    ) -> Pipeline {
        let release_to = ReleaseTo::RowAndColumn { rows, cols };
        let most = k.target().limits().max_cluster_ctas_non_portable;
        // A target without clusters (sm_80) refuses the pipeline's cluster instructions through
        // the ISA check, as it does `new_cluster`'s; the size is judged where clusters exist.
        if rows == 0 || cols == 0 || (most > 0 && rows as u64 * cols as u64 > most as u64) {
            k.error(format!(
                "pipeline `{name}`: a {rows} x {cols} cluster; rows and columns must be >= 1 and hold at most \
                 {most} CTAs on {}",
                k.target()
            ));
        }
        if let Some(c) = k.bounds.cluster {
            if c != [rows, cols, 1] {
                k.error(format!(
                    "pipeline `{name}` releases to the rows and columns of a {rows} x {cols} cluster, but the kernel \
                     declares a {} x {} x {} cluster (T.cluster_dims): declare {rows} x {cols} x 1",
                    c[0], c[1], c[2]
                ));
            }
        }
        let cfg = PipelineConfig {
            consumer_ctas: release_to.releasing_ctas(1).max(1),
            ..PipelineConfig::tma(stages, consumers)
        };
        Pipeline { release_to, ..Pipeline::new(k, name, cfg) }
    }

    pub fn stages(&self) -> u32 {
        self.cfg.stages
    }

    /// Thread (0,0,0) initializes every barrier (`full`: producer count, `empty`: consumer
    /// count), then `fence.mbarrier_init.release.cluster`; then the whole CTA (`bar.sync 0`)
    /// or, for a cluster pipeline, the whole cluster (`barrier.cluster.arrive` + `wait`)
    /// synchronizes, so no thread (nor peer CTA's copy engine) uses a barrier before it
    /// exists. Every thread of the CTA must reach this call.
    #[track_caller]
    pub fn init(&self, k: &mut KernelBuilder) {
        let this = *self;
        k.at_caller(|k| {
            this.init_no_sync_here(k);
            if this.cfg.is_cluster() {
                k.cluster_sync();
            } else {
                k.cta_sync();
            }
        })
    }

    /// [`Pipeline::init`] without the final synchronization (when several pipelines are
    /// initialized, synchronize once after the last).
    #[track_caller]
    pub fn init_no_sync(&self, k: &mut KernelBuilder) {
        let this = *self;
        k.at_caller(|k| this.init_no_sync_here(k))
    }

    fn init_no_sync_here(&self, k: &mut KernelBuilder) {
        let (x, y, z) = (k.thread_idx(Dim::X), k.thread_idx(Dim::Y), k.thread_idx(Dim::Z));
        let xy = k.or(x, y);
        let xyz = k.or(xy, z);
        let first = k.eq(xyz, Value::u32(0));
        let (full, empty, cfg) = (self.full, self.empty, self.cfg);
        k.if_then(first, |k| {
            for s in 0..cfg.stages {
                let f = k.barrier_at(full, Value::u32(s));
                k.mbarrier_init(f, Value::u32(cfg.full_count()));
                let e = k.barrier_at(empty, Value::u32(s));
                k.mbarrier_init(e, Value::u32(cfg.empty_count()));
            }
            k.fence_mbarrier_init();
        });
    }

    /// The start state of the producer: stage 0, parity 1.
    #[track_caller]
    pub fn producer_start_state(&self, k: &mut KernelBuilder) -> PipelineState {
        PipelineState::new(k, self.cfg.stages, 1)
    }

    /// The start state of a consumer: stage 0, parity 0.
    #[track_caller]
    pub fn consumer_start_state(&self, k: &mut KernelBuilder) -> PipelineState {
        PipelineState::new(k, self.cfg.stages, 0)
    }

    /// `full[state.index]` (what a TMA load of this stage completes its bytes on).
    #[track_caller]
    pub fn full_barrier(&self, k: &mut KernelBuilder, st: &PipelineState) -> Barrier {
        k.barrier_at(self.full, st.index())
    }

    /// `empty[state.index]`.
    #[track_caller]
    pub fn empty_barrier(&self, k: &mut KernelBuilder, st: &PipelineState) -> Barrier {
        k.barrier_at(self.empty, st.index())
    }

    /// The same pipeline with its cross-CTA hand-back ordered as `sync` says.
    pub fn with_cluster_sync(self, sync: ClusterSync) -> Pipeline {
        Pipeline { cluster_sync: sync, ..self }
    }

    fn wait_order(&self) -> Ordering {
        if self.cfg.is_cluster() && self.cluster_sync == ClusterSync::ClusterScope {
            // Releases come from other CTAs (`arrive.release.cluster`): acquire at cluster scope.
            Ordering { sem: Some(Sem::Acquire), scope: Some(Scope::Cluster) }
        } else {
            Ordering::default()
        }
    }

    fn release_order(&self) -> Ordering {
        match self.cluster_sync {
            ClusterSync::ClusterScope => Ordering { sem: Some(Sem::Release), scope: Some(Scope::Cluster) },
            ClusterSync::CtaScope => Ordering::default(),
        }
    }

    /// Wait until the consumers released this stage (`empty[i]`, the producer's parity).
    #[track_caller]
    pub fn producer_acquire(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let bar = self.empty_barrier(k, st);
        let order = self.wait_order();
        k.mbarrier_wait_with(bar, st.phase(), order);
    }

    /// One non-blocking attempt at [`Pipeline::producer_acquire`] (a single `try_wait`):
    /// the token CUTLASS's `producer_try_acquire` returns, true if the stage is empty now.
    /// Pass it to [`Pipeline::producer_acquire_with_token`], which waits only when it is false.
    #[track_caller]
    pub fn producer_try_acquire(&self, k: &mut KernelBuilder, st: &PipelineState) -> Value {
        let bar = self.empty_barrier(k, st);
        let done = k.new_reg(Type::Pred);
        let on = WaitOn::Parity(st.phase());
        k.push(MbarrierOp::TryWait { done, bar: bar.addr, on, hint: None, order: self.wait_order() });
        Value::Reg(done)
    }

    /// [`Pipeline::producer_acquire`] unless `token` (from `producer_try_acquire` on the same
    /// state) already says the stage is empty.
    #[track_caller]
    pub fn producer_acquire_with_token(&self, k: &mut KernelBuilder, st: &PipelineState, token: Value) {
        let (this, st) = (*self, *st);
        k.at_caller(|k| {
            let not_yet = k.not(token);
            k.if_then(not_yet, |k| this.producer_acquire(k, &st));
        })
    }

    /// One non-blocking attempt at [`Pipeline::consumer_wait`]: true if the stage is full now
    /// (CUTLASS's `consumer_try_wait` token).
    #[track_caller]
    pub fn consumer_try_wait(&self, k: &mut KernelBuilder, st: &PipelineState) -> Value {
        let bar = self.full_barrier(k, st);
        k.mbarrier_try_wait_once(bar, st.phase(), None)
    }

    /// [`Pipeline::consumer_wait`] unless `token` (from `consumer_try_wait` on the same state)
    /// already says the stage is full.
    #[track_caller]
    pub fn consumer_wait_with_token(&self, k: &mut KernelBuilder, st: &PipelineState, token: Value) {
        let (this, st) = (*self, *st);
        k.at_caller(|k| {
            let not_yet = k.not(token);
            k.if_then(not_yet, |k| this.consumer_wait(k, &st));
        })
    }

    /// The producer's arrival on `full[i]` that also registers `bytes` of transactions
    /// (`mbarrier.arrive.expect_tx`): the bytes every TMA copy into this stage of *this* CTA
    /// will complete, multicast slices from peer CTAs included. Call it from exactly one
    /// thread per producer unit; before or after issuing the copies (the phase cannot
    /// complete while this arrival is pending, whatever the tx-count).
    #[track_caller]
    pub fn producer_commit(&self, k: &mut KernelBuilder, st: &PipelineState, bytes: Value) -> Barrier {
        let bar = self.full_barrier(k, st);
        k.mbarrier_arrive_expect_tx(bar, bytes);
        bar
    }

    /// A plain producer arrival on `full[i]` (producers that fill the stage with ordinary
    /// stores; the arrive's release semantics publish them).
    #[track_caller]
    pub fn producer_arrive(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let bar = self.full_barrier(k, st);
        k.mbarrier_arrive(bar);
    }

    /// Wait until stage `i` is full (`full[i]`, the consumer's parity).
    #[track_caller]
    pub fn consumer_wait(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let bar = self.full_barrier(k, st);
        k.mbarrier_wait(bar, st.phase());
    }

    /// Release stage `i`: one arrival per consumer unit on `empty[i]` (per warp: the lanes
    /// converge with `bar.warp.sync`, so their reads of the stage are ordered before it, and
    /// lane 0 arrives). For a cluster pipeline the unit arrives on `empty[i]` of every CTA in
    /// the cluster (`mapa` + `mbarrier.arrive.release.cluster.shared::cluster`, or CUTLASS's
    /// CTA-scope form: see [`ClusterSync`]).
    #[track_caller]
    pub fn consumer_release(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let (this, st) = (*self, *st);
        k.at_caller(|k| this.consumer_release_here(k, &st))
    }

    fn consumer_release_here(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let this = *self;
        let idx = st.index();
        match self.cfg.consumers {
            Arrivals::Threads(_) => this.arrive_on_targets(k, idx),
            Arrivals::Warps(_) => {
                k.warp_sync();
                let lane = k.lane_idx();
                let leader = k.eq(lane, Value::u32(0));
                k.if_then(leader, |k| this.arrive_on_targets(k, idx));
            }
            Arrivals::Warpgroups(_) => this.spread_release(k, idx),
        }
    }

    /// One unit's release: an arrival on `empty[idx]` of every CTA the pipeline releases to.
    fn arrive_on_targets(&self, k: &mut KernelBuilder, idx: Value) {
        let (empty, cfg, order) = (self.empty, self.cfg, self.release_order());
        let bar = k.barrier_at(empty, idx);
        match self.release_to {
            _ if !cfg.is_cluster() => {
                k.mbarrier_arrive(bar);
            }
            ReleaseTo::EveryCta => {
                for cta in 0..cfg.consumer_ctas {
                    let remote = k.map_barrier_to_cta(bar, Value::u32(cta));
                    k.mbarrier_arrive_remote_with(remote, None, order);
                }
            }
            ReleaseTo::RowAndColumn { rows, cols } => {
                // This CTA's column (x fixed, every y: itself included), then its row (y
                // fixed, every other x): rows + cols - 1 arrivals, none twice.
                let (x, y) = (k.cluster_ctaid(Dim::X), k.cluster_ctaid(Dim::Y));
                for n in 0..cols {
                    let rank = k.add(x, Value::u32(n * rows));
                    let remote = k.map_barrier_to_cta(bar, rank);
                    k.mbarrier_arrive_remote_with(remote, None, order);
                }
                let row0 = k.mul(y, Value::u32(rows));
                for m in 0..rows {
                    let other = k.ne(x, Value::u32(m));
                    k.if_then(other, |k| {
                        let rank = k.add(row0, Value::u32(m));
                        let remote = k.map_barrier_to_cta(bar, rank);
                        k.mbarrier_arrive_remote_with(remote, None, order);
                    });
                }
            }
        }
    }

    /// A warpgroup's release spread over its threads as CUTLASS's `PipelineTmaAsync` does:
    /// thread `t` (of the warpgroup) with `t % 8 == 0` signals destination
    /// `dst = 4 * (r ^ c) + c` (`r` its warp in the warpgroup, `c = (t / 8) % 4`: CuTe's
    /// `Swizzle<2,0,-2>` of a 4 x 4 layout), one of 16, and arrives on CTA `dst`'s `empty[idx]`
    /// when that CTA is one the pipeline releases to.
    fn spread_release(&self, k: &mut KernelBuilder, idx: Value) {
        let (empty, cfg, order, release_to) = (self.empty, self.cfg, self.release_order(), self.release_to);
        let tid = k.thread_idx(Dim::X);
        let t = k.rem(tid, Value::u32(128));
        let warp = k.div(tid, Value::u32(32));
        let r = k.rem(warp, Value::u32(4));
        let c8 = k.div(t, Value::u32(8));
        let c = k.rem(c8, Value::u32(4));
        let rc = k.xor(r, c);
        let hi = k.mul(rc, Value::u32(4));
        let dst = k.add(hi, c);
        let low = k.rem(t, Value::u32(8));
        let signals = k.eq(low, Value::u32(0));
        let target = match release_to {
            _ if !cfg.is_cluster() => k.eq(dst, Value::u32(0)),
            ReleaseTo::EveryCta => k.lt(dst, Value::u32(cfg.consumer_ctas)),
            ReleaseTo::RowAndColumn { rows, cols } => {
                let inside = k.lt(dst, Value::u32(rows * cols));
                let (x, y) = (k.cluster_ctaid(Dim::X), k.cluster_ctaid(Dim::Y));
                let dx = k.rem(dst, Value::u32(rows));
                let dy = k.div(dst, Value::u32(rows));
                let same_x = k.eq(dx, x);
                let same_y = k.eq(dy, y);
                let shares = k.or(same_x, same_y);
                k.and(inside, shares)
            }
        };
        let arrives = k.and(signals, target);
        k.if_then(arrives, |k| {
            let bar = k.barrier_at(empty, idx);
            if cfg.is_cluster() {
                let remote = k.map_barrier_to_cta(bar, dst);
                k.mbarrier_arrive_remote_with(remote, None, order);
            } else {
                k.mbarrier_arrive(bar);
            }
        });
    }

    /// The producer's epilogue: wait until the consumers released every stage once more
    /// (`S` acquires from `st` onwards), so the CTA does not exit while copies it issued are
    /// in flight or while peers may still arrive on its barriers. Uses a copy of `st`.
    #[track_caller]
    pub fn producer_tail(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let (this, st) = (*self, *st);
        k.at_caller(|k| {
            let t = st.clone_into_new(k);
            k.for_range(Value::u32(0), Value::u32(this.cfg.stages), |k, _| {
                this.producer_acquire(k, &t);
                t.advance(k);
            });
        })
    }
}

impl KernelBuilder {
    /// `Pipeline::new(self, name, cfg)`.
    #[track_caller]
    pub fn pipeline(&mut self, name: &str, cfg: PipelineConfig) -> Pipeline {
        Pipeline::new(self, name, cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;
    use crate::ptx_text::{self, count, has, has_directive};
    use proptest::prelude::*;
    use std::collections::HashMap;

    // ---- an interpreter for what the pipeline emits ------------------------------------------

    /// What one thread does to the barriers (and what it probes), in program order: a
    /// barrier is named by its array and stage.
    #[derive(Clone, Debug, PartialEq)]
    enum Op {
        Init {
            array: String,
            stage: u32,
            count: u64,
        },
        Wait {
            array: String,
            stage: u32,
            parity: u64,
        },
        /// One arrival, registering `tx` bytes (`arrive.expect_tx`; 0 for a plain arrive).
        Arrive {
            array: String,
            stage: u32,
            tx: u64,
        },
        WarpSync,
        BarSync,
        FenceMbarrierInit,
        Probe(Vec<u64>),
    }

    enum Flow {
        Next,
        Break,
        Continue,
    }

    /// Runs one thread of a kernel's IR (the arithmetic, control flow and special registers
    /// the pipeline uses) and records its [`Op`]s. Shared addresses are symbolic: array `a`
    /// starts at `(a + 1) << 16`.
    struct Thread<'k> {
        kernel: &'k Kernel,
        lane: u64,
        regs: HashMap<u32, u64>,
        ops: Vec<Op>,
        steps: u32,
    }

    impl<'k> Thread<'k> {
        fn run(kernel: &'k Kernel, lane: u64) -> Vec<Op> {
            let mut t = Thread { kernel, lane, regs: HashMap::new(), ops: Vec::new(), steps: 0 };
            t.block(kernel.body());
            t.ops
        }

        fn val(&self, v: &Value) -> u64 {
            match v {
                Value::Reg(r) => *self.regs.get(&r.id).unwrap_or_else(|| panic!("{r:?} read before it was written")),
                Value::Imm { bits, .. } => *bits,
            }
        }

        fn set(&mut self, r: Reg, v: u64) {
            let v = match r.ty.size() {
                _ if r.ty == Type::Pred => (v != 0) as u64,
                4 => v & 0xffff_ffff,
                _ => v,
            };
            self.regs.insert(r.id, v);
        }

        fn barrier(&self, addr: &Value) -> (String, u32) {
            let a = self.val(addr);
            let array = ((a >> 16) - 1) as usize;
            assert_eq!(a % 8, 0, "misaligned barrier address {a:#x}");
            (self.kernel.shared()[array].name.clone(), ((a & 0xffff) / 8) as u32)
        }

        fn block(&mut self, b: &[Stmt]) -> Flow {
            for s in b {
                self.steps += 1;
                assert!(self.steps < 1_000_000, "runaway loop");
                match &s.kind {
                    StmtKind::Inst(i) => self.inst(i),
                    StmtKind::If { cond, then_body, else_body } => {
                        let body = if self.val(cond) != 0 { then_body } else { else_body };
                        match self.block(body) {
                            Flow::Next => {}
                            f => return f,
                        }
                    }
                    StmtKind::Loop { body, latch } => loop {
                        if let Flow::Break = self.block(body) {
                            break;
                        }
                        if let Flow::Break = self.block(latch) {
                            break;
                        }
                    },
                    StmtKind::Break => return Flow::Break,
                    StmtKind::Continue => return Flow::Continue,
                    StmtKind::Return => panic!("unexpected return"),
                }
            }
            Flow::Next
        }

        fn inst(&mut self, i: &Inst) {
            match i {
                Inst::Arith(op) => self.arith(op),
                Inst::ReadSpecial { dst, sreg } => {
                    let v = if *sreg == SpecialReg::LaneId { self.lane } else { 0 };
                    self.set(*dst, v);
                }
                Inst::Memory(MemoryOp::SharedAddr { dst, alloc }) => self.set(*dst, (alloc.0 as u64 + 1) << 16),
                Inst::Mbarrier(MbarrierOp::Init { bar, count }) => {
                    let ((array, stage), count) = (self.barrier(bar), self.val(count));
                    self.ops.push(Op::Init { array, stage, count });
                }
                Inst::Mbarrier(MbarrierOp::Wait { bar, on: WaitOn::Parity(p), .. }) => {
                    let ((array, stage), parity) = (self.barrier(bar), self.val(p));
                    self.ops.push(Op::Wait { array, stage, parity });
                }
                Inst::Mbarrier(MbarrierOp::Arrive { bar, count: None, .. }) => {
                    let (array, stage) = self.barrier(bar);
                    self.ops.push(Op::Arrive { array, stage, tx: 0 });
                }
                Inst::Mbarrier(MbarrierOp::ArriveExpectTx { bar, bytes, .. }) => {
                    let ((array, stage), tx) = (self.barrier(bar), self.val(bytes));
                    self.ops.push(Op::Arrive { array, stage, tx });
                }
                Inst::Sync(SyncOp::WarpSync { .. }) => self.ops.push(Op::WarpSync),
                Inst::Sync(SyncOp::BarSync { .. }) => self.ops.push(Op::BarSync),
                Inst::Sync(SyncOp::FenceMbarrierInit) => self.ops.push(Op::FenceMbarrierInit),
                Inst::Probe { values, .. } => {
                    let v = values.iter().map(|v| self.val(v)).collect();
                    self.ops.push(Op::Probe(v));
                }
                other => panic!("the interpreter does not model {other:?}"),
            }
        }

        fn arith(&mut self, op: &ArithOp) {
            match op {
                // The constant evaluator's execution semantics (what the simulator runs).
                ArithOp::Mov { dst, src } => {
                    let v = self.val(src);
                    self.set(*dst, v);
                }
                ArithOp::Cvt { dst, src, rounding } => {
                    let v = crate::eval::cvt_rounded(
                        self.val(src),
                        src.ty(),
                        dst.ty,
                        rounding.or(Rounding::of_cast(src.ty(), dst.ty)),
                    );
                    self.set(*dst, v);
                }
                ArithOp::Binary { op, dst, a, b } => {
                    let r = crate::eval::bin_fn(*op, dst.ty)(self.val(a), self.val(b));
                    self.set(*dst, r);
                }
                ArithOp::Setp { cmp, dst, a, b } => {
                    let r = crate::eval::cmp_fn(*cmp, a.ty())(self.val(a), self.val(b));
                    self.set(*dst, r as u64);
                }
                ArithOp::Selp { dst, cond, a, b } => {
                    let r = if self.val(cond) != 0 { self.val(a) } else { self.val(b) };
                    self.set(*dst, r);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    /// Build a kernel around `f` and run it as lane `lane`.
    fn ops_of(cfg: PipelineConfig, lane: u64, f: impl FnOnce(&mut KernelBuilder, &Pipeline)) -> Vec<Op> {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let p = Pipeline::new(&mut k, "p", cfg);
        f(&mut k, &p);
        let kernel = k.finish().expect("builds");
        Thread::run(&kernel, lane)
    }

    // ---- PipelineState ------------------------------------------------------------------------

    /// The emitted `advance` walks (index, phase) like CUTLASS's `PipelineState`:
    /// index = n % S, phase = start ^ ((n / S) & 1); `stage_addr` is base + index * bytes.
    #[test]
    fn advance_and_stage_addr_every_depth() {
        for stages in 1..=8u32 {
            for start in 0..2u32 {
                let walks = 4 * stages + 3;
                let ops = ops_of(PipelineConfig::tma(stages, Arrivals::Threads(1)), 0, |k, _| {
                    let st = PipelineState::new(k, stages, start);
                    for _ in 0..walks {
                        let addr = st.stage_addr(k, Value::u32(0x400), 16384);
                        k.probe("state", &[st.index(), st.phase(), addr]);
                        st.advance(k);
                    }
                });
                let want: Vec<Op> = (0..walks)
                    .map(|n| {
                        let (i, ph) = (n % stages, start ^ ((n / stages) & 1));
                        Op::Probe(vec![i as u64, ph as u64, 0x400 + i as u64 * 16384])
                    })
                    .collect();
                assert_eq!(ops, want, "S={stages} start={start}");
            }
        }
    }

    #[test]
    fn advance_by_and_clone_into_new() {
        let ops = ops_of(PipelineConfig::tma(3, Arrivals::Threads(1)), 0, |k, _| {
            let st = PipelineState::new(k, 3, 1);
            st.advance_by(k, 4); // (1, 0)
            let copy = st.clone_into_new(k);
            copy.advance(k); // the copy moves on: (2, 0); the original stays at (1, 0)
            k.probe("s", &[st.index(), st.phase(), copy.index(), copy.phase()]);
        });
        assert_eq!(ops, [Op::Probe(vec![1, 0, 2, 0])]);
    }

    // ---- the full/empty protocol, driven by what the builder emits -----------------------------

    /// One agent of the model: the barrier ops one thread of the pipeline performs.
    struct Agent {
        ops: Vec<Op>,
        pc: usize,
    }

    #[derive(Clone, Copy, Debug)]
    struct Bar {
        expected: u64,
        pending: u64,
        tx: i64,
        /// Completed phases (the current phase's parity is `phase & 1`).
        phase: u64,
    }

    impl Bar {
        fn try_complete(&mut self) {
            if self.pending == 0 && self.tx == 0 {
                self.pending = self.expected;
                self.phase += 1;
            }
        }
    }

    /// Run `init` (thread 0), the producer and `consumers` consumer threads, as the builder
    /// emitted them, on a model of mbarriers (pending arrivals, tx-count, phase; a phase
    /// completes when both reach 0; `wait.parity(p)` passes once the current parity is not
    /// `p`) and a TMA that lands the producer's i-th tile in the stage it committed, at a
    /// time the schedule picks. Checks that no copy lands in a stage a consumer has not
    /// released, every consumer reads tiles 0, 1, ... in order, nobody deadlocks, and at the
    /// end no phase is half done.
    fn run_model(init: Vec<Op>, producer: Vec<Op>, consumers: Vec<Vec<Op>>, schedule: u64) -> Result<(), String> {
        let mut bars: HashMap<(String, u32), Bar> = HashMap::new();
        for op in &init {
            if let Op::Init { array, stage, count } = op {
                bars.insert((array.clone(), *stage), Bar { expected: *count, pending: *count, tx: 0, phase: 0 });
            }
        }
        let n_consumers = consumers.len();
        let mut agents: Vec<Agent> =
            std::iter::once(producer).chain(consumers).map(|ops| Agent { ops, pc: 0 }).collect();
        // Per stage: the tile in it and which consumers still hold it.
        let mut stage_tile: HashMap<u32, usize> = HashMap::new();
        let mut holders: HashMap<u32, Vec<bool>> = HashMap::new();
        let mut flying: Vec<(String, u32, usize, u64)> = Vec::new();
        let mut committed = 0usize;
        let mut read = vec![0usize; n_consumers];
        let mut rng = schedule | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        loop {
            // What can move: an agent whose next op can execute, or a landing copy.
            let ready: Vec<usize> = (0..agents.len())
                .filter(|&a| match agents[a].ops.get(agents[a].pc) {
                    Some(Op::Wait { array, stage, parity }) => {
                        let b = bars.get(&(array.clone(), *stage)).ok_or("wait on an uninitialized barrier").unwrap();
                        b.phase & 1 != *parity
                    }
                    Some(_) => true,
                    None => false,
                })
                .collect();
            if ready.is_empty() && flying.is_empty() {
                break;
            }
            let pick = next() as usize % (ready.len() + flying.len());
            if pick >= ready.len() {
                let (array, stage, tile, bytes) = flying.remove(pick - ready.len());
                if holders.get(&stage).is_some_and(|h| h.iter().any(|&x| x)) {
                    return Err(format!("tile {tile} landed in stage {stage} while a consumer still read it"));
                }
                stage_tile.insert(stage, tile);
                holders.insert(stage, vec![true; n_consumers]);
                let b = bars.get_mut(&(array, stage)).unwrap();
                b.tx -= bytes as i64;
                b.try_complete();
                continue;
            }
            let a = ready[pick];
            let op = agents[a].ops[agents[a].pc].clone();
            agents[a].pc += 1;
            match op {
                Op::Wait { array, stage, .. } if a > 0 && array == "p_full" => {
                    let c = a - 1;
                    if stage_tile.get(&stage) != Some(&read[c]) || !holders[&stage][c] {
                        return Err(format!(
                            "consumer {c} passed full[{stage}] for tile {} but the stage holds {:?}",
                            read[c],
                            stage_tile.get(&stage)
                        ));
                    }
                    read[c] += 1;
                }
                Op::Arrive { array, stage, tx } => {
                    if a == 0 && tx > 0 {
                        flying.push((array.clone(), stage, committed, tx));
                        committed += 1;
                    }
                    if a > 0 && array == "p_empty" {
                        let h = holders.get_mut(&stage).ok_or(format!("release of stage {stage}, never filled"))?;
                        if !std::mem::replace(&mut h[a - 1], false) {
                            return Err(format!("consumer {} released stage {stage} twice", a - 1));
                        }
                    }
                    let b = bars.get_mut(&(array.clone(), stage)).ok_or("arrive on an uninitialized barrier")?;
                    if b.pending == 0 {
                        return Err(format!("too many arrivals on {array}[{stage}]"));
                    }
                    b.pending -= 1;
                    b.tx += tx as i64;
                    b.try_complete();
                }
                _ => {}
            }
        }
        if let Some(a) = agents.iter().position(|a| a.pc < a.ops.len()) {
            return Err(format!("deadlock: agent {a} blocked at {:?}", agents[a].ops[agents[a].pc]));
        }
        for ((array, stage), b) in &bars {
            if b.pending != b.expected || b.tx != 0 {
                return Err(format!("{array}[{stage}] ends mid-phase: {b:?}"));
            }
        }
        Ok(())
    }

    /// The pipeline of `stages` with `consumers` consumer threads, as the builder emits it:
    /// (init, producer, one consumer) over `tiles` tiles; `producer_start` replaces the
    /// producer's start state (a broken pipeline, for the negative tests).
    fn pipeline_ops(
        stages: u32,
        consumers: u32,
        tiles: u32,
        producer_start: Option<u32>,
    ) -> (Vec<Op>, Vec<Op>, Vec<Op>) {
        let cfg = PipelineConfig::tma(stages, Arrivals::Threads(consumers));
        let init = ops_of(cfg, 0, |k, p| p.init(k));
        let producer = ops_of(cfg, 0, |k, p| {
            let st = match producer_start {
                Some(phase) => PipelineState::new(k, stages, phase),
                None => p.producer_start_state(k),
            };
            for _ in 0..tiles {
                p.producer_acquire(k, &st);
                p.producer_commit(k, &st, Value::u32(4096));
                st.advance(k);
            }
            p.producer_tail(k, &st);
        });
        let consumer = ops_of(cfg, 0, |k, p| {
            let st = p.consumer_start_state(k);
            for _ in 0..tiles {
                p.consumer_wait(k, &st);
                p.consumer_release(k, &st);
                st.advance(k);
            }
        });
        (init, producer, consumer)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The builder's pipeline (start states, advance, which barrier each call uses, the
        /// arrival counts of init) keeps the full/empty protocol under every schedule.
        #[test]
        fn full_empty_protocol_model(stages in 1..=6u32, consumers in 1..=3u32, tiles in 0..=20u32, schedule: u64) {
            let (init, producer, consumer) = pipeline_ops(stages, consumers, tiles, None);
            let r = run_model(init, producer, vec![consumer; consumers as usize], schedule);
            prop_assert!(r.is_ok(), "S={} consumers={} tiles={}: {:?}", stages, consumers, tiles, r);
        }
    }

    #[test]
    fn the_model_rejects_broken_pipelines() {
        // A producer starting on parity 0 waits for a release nobody will make.
        let (init, producer, consumer) = pipeline_ops(2, 1, 5, Some(0));
        let e = run_model(init, producer, vec![consumer], 7).unwrap_err();
        assert!(e.starts_with("deadlock: agent 0 blocked at Wait { array: \"p_empty\""), "{e}");
        // A consumer that never waits reads a stage before its tile landed.
        let (init, producer, consumer) = pipeline_ops(2, 1, 5, None);
        let no_wait: Vec<Op> = consumer.into_iter().filter(|o| !matches!(o, Op::Wait { .. })).collect();
        let e = run_model(init, producer, vec![no_wait], 7).unwrap_err();
        assert!(e.contains("release of stage 0, never filled") || e.contains("landed in stage"), "{e}");
        // Two consumers on an empty barrier that expects one: its phases complete before both
        // released the stage.
        let (init, producer, consumer) = pipeline_ops(2, 1, 5, None);
        let e = (0..20).find_map(|s| run_model(init.clone(), producer.clone(), vec![consumer.clone(); 2], s).err());
        assert!(e.is_some(), "an undercounted empty barrier went unnoticed");
    }

    // ---- the PTX of each call ----------------------------------------------------------------

    /// The operands of every `opcode` instruction (addresses without their brackets).
    fn insts<'a>(ptx: &'a str, opcode: &str) -> Vec<Vec<&'a str>> {
        ptx_text::find_all(ptx, opcode)
            .into_iter()
            .map(|i| i.operands.into_iter().map(|o| o.trim_matches(['[', ']'])).collect())
            .collect()
    }

    /// The first instruction writing `reg`: (opcode, operands after the destination).
    fn def<'a>(ptx: &'a str, reg: &str) -> (&'a str, Vec<&'a str>) {
        ptx_text::instructions(ptx)
            .into_iter()
            .find(|i| i.operands.first() == Some(&reg))
            .map(|i| (i.opcode, i.operands[1..].to_vec()))
            .unwrap_or_else(|| panic!("no definition of {reg} in\n{ptx}"))
    }

    /// The barrier a register addresses: (array symbol, index register or constant stage).
    fn barrier_of(ptx: &str, reg: &str) -> (String, String) {
        let (op, ops) = def(ptx, reg);
        if op == "mov.u32" && ops[0].starts_with("%smem_") {
            return (array_symbol(ptx, ops[0]), "0".into()); // stage 0: the array's own address
        }
        assert_eq!(op, "add.u32", "{reg} is not a barrier address");
        let (base_op, base) = def(ptx, ops[0]);
        assert_eq!(base_op, "mov.u32");
        let base = [array_symbol(ptx, base[0])];
        let index = match ops[1].parse::<u32>() {
            Ok(bytes) => (bytes / 8).to_string(),
            Err(_) => {
                let (shl, by) = def(ptx, ops[1]);
                assert_eq!((shl, by[1]), ("shl.b32", "3"), "{reg}: index * 8");
                by[0].to_string()
            }
        };
        (base[0].to_string(), index)
    }

    /// The shared array whose address the kernel computed once into `reg` at entry
    /// (`mov.u32 %smem_p_full_addr, smem_p_full;`).
    fn array_symbol(ptx: &str, reg: &str) -> String {
        let (op, ops) = def(ptx, reg);
        assert!(op == "mov.u32" && ops[0].starts_with("smem_"), "{reg} is not a shared array's address:\n{ptx}");
        ops[0].to_string()
    }

    fn r(reg: Reg) -> String {
        format!("%r{}", reg.id)
    }

    fn emit(k: KernelBuilder) -> String {
        emit_kernel(&k.finish().expect("builds")).expect("emits")
    }

    #[test]
    fn init_counts_fence_and_sync() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let p = Pipeline::new(&mut k, "p", PipelineConfig::tma(3, Arrivals::Warps(4)));
        p.init(&mut k);
        let ptx = emit(k);
        assert!(has_directive(&ptx, ".shared .align 8 .b64 smem_p_full[3];"), "{ptx}");
        assert!(has_directive(&ptx, ".shared .align 8 .b64 smem_p_empty[3];"), "{ptx}");
        let inits: Vec<(String, String, &str)> = insts(&ptx, "mbarrier.init.shared::cta.b64")
            .iter()
            .map(|o| {
                let (array, stage) = barrier_of(&ptx, o[0]);
                (array, stage, o[1])
            })
            .collect();
        let want: Vec<(String, String, &str)> = (0..3)
            .flat_map(|s| [("smem_p_full".into(), s.to_string(), "1"), ("smem_p_empty".into(), s.to_string(), "4")])
            .collect();
        assert_eq!(inits, want, "{ptx}");
        let fence = ptx.find("fence.mbarrier_init.release.cluster;").unwrap();
        let sync = ptx.find("bar.sync 0;").unwrap();
        assert!(fence < sync);
    }

    #[test]
    fn producer_and_consumer_ops() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.require_block(128, 1, 1);
        let p = Pipeline::new(&mut k, "p", PipelineConfig::tma(2, Arrivals::Threads(128)));
        p.init(&mut k);
        let ps = p.producer_start_state(&mut k);
        let cs = p.consumer_start_state(&mut k);
        p.producer_acquire(&mut k, &ps);
        p.producer_commit(&mut k, &ps, Value::u32(1024));
        p.producer_arrive(&mut k, &ps);
        p.consumer_wait(&mut k, &cs);
        p.consumer_release(&mut k, &cs);
        p.producer_tail(&mut k, &ps);
        let ptx = emit(k);
        // Start states: producer at parity 1, consumer at 0, both at stage 0.
        assert_eq!(def(&ptx, &r(ps.phase)), ("mov.b32", vec!["1"]));
        assert_eq!(def(&ptx, &r(cs.phase)), ("mov.b32", vec!["0"]));
        assert_eq!(def(&ptx, &r(ps.index)), ("mov.b32", vec!["0"]));
        assert_eq!(def(&ptx, &r(cs.index)), ("mov.b32", vec!["0"]));
        // Each wait is a try_wait retry loop: a first attempt, then retries with the same
        // barrier and parity plus a suspend-time hint.
        let waits = insts(&ptx, "mbarrier.try_wait.parity.shared::cta.b64");
        assert_eq!(waits.len(), 6, "{ptx}");
        let waits: Vec<(String, String, &str)> = waits
            .chunks(2)
            .map(|w| {
                assert_eq!((w[0].len(), w[1].len()), (3, 4), "{w:?}");
                assert_eq!(w[0][..], w[1][..3]);
                assert_eq!(w[0][0], "%wait_done");
                let (array, index) = barrier_of(&ptx, w[0][1]);
                (array, index, w[0][2])
            })
            .collect();
        // producer_acquire: empty[ps.index] on ps.phase; consumer_wait: full[cs.index] on cs.phase.
        assert_eq!(waits[0], ("smem_p_empty".into(), r(ps.index), r(ps.phase).as_str()));
        assert_eq!(waits[1], ("smem_p_full".into(), r(cs.index), r(cs.phase).as_str()));
        // producer_tail: empty[] on copies of the producer's state, S = 2 times.
        let (tail_bar, tail_index, tail_parity) = &waits[2];
        assert_eq!(tail_bar, "smem_p_empty");
        assert_eq!(def(&ptx, tail_index), ("mov.b32", vec![r(ps.index).as_str()]));
        assert_eq!(def(&ptx, tail_parity), ("mov.b32", vec![r(ps.phase).as_str()]));
        // (The wait watchdog's own compares write its `%wd_` registers.)
        let bounds: Vec<&str> =
            insts(&ptx, "setp.ge.u32").iter().filter(|o| !o[0].starts_with("%wd_")).map(|o| o[2]).collect();
        assert_eq!(bounds, ["2"], "one loop, of S = 2 acquires:\n{ptx}");
        // producer_commit: arrive.expect_tx on full[ps.index] with the bytes.
        let commit = insts(&ptx, "mbarrier.arrive.expect_tx.shared::cta.b64");
        assert_eq!(commit.len(), 1);
        assert_eq!(barrier_of(&ptx, commit[0][1]), ("smem_p_full".into(), r(ps.index)));
        assert_eq!(commit[0][2], "1024");
        // producer_arrive on full[ps.index], then the per-thread release on empty[cs.index]
        // (no warp sync).
        let arrives: Vec<(String, String)> =
            insts(&ptx, "mbarrier.arrive.shared::cta.b64").iter().map(|o| barrier_of(&ptx, o[1])).collect();
        assert_eq!(arrives, [("smem_p_full".into(), r(ps.index)), ("smem_p_empty".into(), r(cs.index))]);
        assert!(!ptx.contains("bar.warp.sync"));
    }

    #[test]
    fn warp_release_syncs_then_lane0_arrives() {
        let cfg = PipelineConfig::tma(2, Arrivals::Warps(4));
        let release = |lane| {
            ops_of(cfg, lane, |k, p| {
                let cs = p.consumer_start_state(k);
                cs.advance(k);
                p.consumer_release(k, &cs);
            })
        };
        let arrive = Op::Arrive { array: "p_empty".into(), stage: 1, tx: 0 };
        assert_eq!(release(0), [Op::WarpSync, arrive]);
        for lane in [1, 17, 31] {
            assert_eq!(release(lane), [Op::WarpSync], "lane {lane} only converges");
        }
    }

    #[test]
    fn cluster_release_arrives_in_every_cta() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.require_block(128, 1, 1);
        k.cluster(4, 1, 1);
        let cfg = PipelineConfig {
            stages: 2,
            producers: Arrivals::Threads(1),
            consumers: Arrivals::Warps(4),
            consumer_ctas: 4,
        };
        let p = Pipeline::new(&mut k, "p", cfg);
        p.init(&mut k);
        let cs = p.consumer_start_state(&mut k);
        let ps = p.producer_start_state(&mut k);
        p.consumer_release(&mut k, &cs);
        p.producer_acquire(&mut k, &ps);
        let ptx = emit(k);
        let counts: Vec<&str> = insts(&ptx, "mbarrier.init.shared::cta.b64").iter().map(|o| o[1]).collect();
        assert_eq!(counts, ["1", "16", "1", "16"], "empty expects 4 warps x 4 CTAs:\n{ptx}");
        assert!(has(&ptx, "barrier.cluster.arrive.release.aligned"), "{ptx}");
        assert!(has(&ptx, "barrier.cluster.wait.acquire.aligned"), "{ptx}");
        // One mapa of empty[cs.index] per CTA rank, each feeding one remote release arrive.
        let mapas = insts(&ptx, "mapa.shared::cluster.u32");
        let ranks: Vec<&str> = mapas.iter().map(|o| o[2]).collect();
        assert_eq!(ranks, ["0", "1", "2", "3"], "{ptx}");
        for m in &mapas {
            assert_eq!(barrier_of(&ptx, m[1]), ("smem_p_empty".into(), r(cs.index)));
        }
        let remote: Vec<&str> =
            insts(&ptx, "mbarrier.arrive.release.cluster.shared::cluster.b64").iter().map(|o| o[1]).collect();
        let mapped: Vec<&str> = mapas.iter().map(|o| o[0]).collect();
        assert_eq!(remote, mapped, "each arrive uses its mapa's address:\n{ptx}");
        let waits = insts(&ptx, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64");
        assert_eq!(barrier_of(&ptx, waits[0][1]), ("smem_p_empty".into(), r(ps.index)));
    }

    #[test]
    fn cta_scope_cluster_sync_uses_cutlass_forms() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.require_block(128, 1, 1);
        k.cluster(2, 1, 1);
        let cfg = PipelineConfig {
            stages: 2,
            producers: Arrivals::Threads(1),
            consumers: Arrivals::Threads(1),
            consumer_ctas: 2,
        };
        let p = Pipeline::new(&mut k, "p", cfg).with_cluster_sync(ClusterSync::CtaScope);
        p.init(&mut k);
        let (cs, ps) = (p.consumer_start_state(&mut k), p.producer_start_state(&mut k));
        p.consumer_release(&mut k, &cs);
        p.producer_acquire(&mut k, &ps);
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        assert_eq!(count(&ptx, "mbarrier.arrive.shared::cluster.b64 _, [%r*]"), 2, "{ptx}");
        assert!(!ptx.contains(".release.cluster.shared::cluster") && !ptx.contains("acquire.cluster"), "{ptx}");
        assert!(has(&ptx, "mbarrier.try_wait.parity.shared::cta.b64"), "{ptx}");
    }

    #[test]
    fn row_and_column_release_counts_and_arrives_remotely() {
        // A 2 x 4 cluster: each stage is released by the 2 + 4 - 1 CTAs of its row and column.
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.require_block(128, 1, 1);
        k.cluster(2, 4, 1);
        let p = Pipeline::new_rows_cols(&mut k, "p", 2, Arrivals::Warpgroups(1), 2, 4)
            .with_cluster_sync(ClusterSync::CtaScope);
        p.init(&mut k);
        let cs = p.consumer_start_state(&mut k);
        p.consumer_release(&mut k, &cs);
        let ptx = emit(k);
        let counts: Vec<&str> = insts(&ptx, "mbarrier.init.shared::cta.b64").iter().map(|o| o[1]).collect();
        assert_eq!(counts, ["1", "5", "1", "5"], "{ptx}");
        // One predicated arrival per signalling thread, on the mapa of its destination.
        let mapas = insts(&ptx, "mapa.shared::cluster.u32");
        assert_eq!(mapas.len(), 1, "{ptx}");
        let remote: Vec<&str> = insts(&ptx, "mbarrier.arrive.shared::cluster.b64").iter().map(|o| o[1]).collect();
        assert_eq!(remote, [mapas[0][0]], "{ptx}");
        assert!(has(&ptx, "mov.u32 %r*, %cluster_ctaid.y"), "{ptx}");
    }

    #[test]
    fn a_row_and_column_pipeline_must_match_the_cluster() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.cluster(2, 1, 1);
        Pipeline::new_rows_cols(&mut k, "p", 2, Arrivals::Warpgroups(1), 2, 2);
        Pipeline::new_rows_cols(&mut k, "q", 2, Arrivals::Warpgroups(1), 0, 2);
        let e = k.finish().unwrap_err();
        let msgs: Vec<&str> = e.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert!(
            msgs.contains(
                &"pipeline `p` releases to the rows and columns of a 2 x 2 cluster, but the kernel declares a \
                            2 x 1 x 1 cluster (T.cluster_dims): declare 2 x 2 x 1"
            ),
            "{msgs:?}"
        );
        assert!(
            msgs.contains(
                &"pipeline `q`: a 0 x 2 cluster; rows and columns must be >= 1 and hold at most 16 CTAs on sm_90a"
            ),
            "{msgs:?}"
        );
    }

    #[test]
    fn bad_configs_are_reported() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let (line, _) = (line!(), Pipeline::new(&mut k, "p", PipelineConfig::tma(0, Arrivals::Warps(4))));
        Pipeline::new(&mut k, "q", PipelineConfig::tma(2, Arrivals::Warps(0)));
        let e = k.finish().unwrap_err();
        assert!(e.diagnostics[0].message.contains("0 stages"), "{e}");
        assert!(e.diagnostics.iter().any(|d| d.message.contains("must all be >= 1")), "{e}");
        // The location is the caller's line, not the library's.
        let loc = e.diagnostics[0].loc.unwrap();
        assert_eq!((loc.file, loc.line), (file!(), line), "{e}");
    }

    #[test]
    fn a_stage_count_beyond_shared_memory_is_refused_before_anything_is_built() {
        // 2^32 - 1 stages unrolled 2 x 2^32 inits into memory before any check (OOM at 24 GB).
        let t0 = std::time::Instant::now();
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let p = Pipeline::new(&mut k, "p", PipelineConfig::tma(u32::MAX, Arrivals::Warps(4)));
        p.init(&mut k);
        let e = k.finish().unwrap_err();
        let max = Target::Sm90a.limits().max_static_shared / 16;
        let want = format!(
            "pipeline `p` has 4294967295 stages: its 2 x 4294967295 barriers of 8 bytes exceed sm_90a's {} bytes of \
             static shared memory (at most {max} stages)",
            max * 16
        );
        assert_eq!(e.diagnostics[0].message, want, "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(5), "refused quickly: {:?}", t0.elapsed());
        // The largest count that fits builds.
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        Pipeline::new(&mut k, "p", PipelineConfig::tma(max, Arrivals::Warps(4)));
        k.finish().unwrap();
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.alloc_barriers("b", u32::MAX);
        let e = k.finish().unwrap_err().to_string();
        assert!(e.contains("alloc_barriers(`b`, 4294967295): 4294967295 barriers of 8 bytes exceed"), "{e}");
    }
}
