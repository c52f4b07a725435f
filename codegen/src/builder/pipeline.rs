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
//! assert!(phaser_codegen::emit_kernel(&kernel).unwrap().contains("mbarrier.arrive.expect_tx"));
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
}

impl Arrivals {
    /// Arrivals per phase contributed by this group.
    pub fn count(self) -> u32 {
        match self {
            Arrivals::Threads(n) | Arrivals::Warps(n) => n,
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

/// A pipeline's barriers in shared memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pipeline {
    pub full: BarrierArray,
    pub empty: BarrierArray,
    pub cfg: PipelineConfig,
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
        let s = *self;
        k.at_caller(|k| {
            let i = k.cvt(Value::Reg(s.index), Type::U64);
            let t = k.add(i, Value::u64(n));
            let stages = Value::u64(s.stages.max(1) as u64);
            let wraps = k.div(t, stages);
            let idx = k.rem(t, stages);
            let idx = k.cvt(idx, Type::U32);
            k.assign(s.index, idx);
            let odd = k.and(wraps, Value::u64(1));
            let flip = k.cvt(odd, Type::U32);
            let ph = k.xor(Value::Reg(s.phase), flip);
            k.assign(s.phase, ph);
        })
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
    pub fn new(k: &mut KernelBuilder, name: &str, cfg: PipelineConfig) -> Pipeline {
        if cfg.stages == 0 {
            k.error(format!("pipeline `{name}` has 0 stages; it needs at least 1"));
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
        let full = k.alloc_barriers(&format!("{name}_full"), cfg.stages.max(1));
        let empty = k.alloc_barriers(&format!("{name}_empty"), cfg.stages.max(1));
        Pipeline { full, empty, cfg }
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

    fn wait_order(&self) -> Ordering {
        if self.cfg.is_cluster() {
            // Releases come from other CTAs (`arrive.release.cluster`): acquire at cluster scope.
            Ordering { sem: Some(Sem::Acquire), scope: Some(Scope::Cluster) }
        } else {
            Ordering::default()
        }
    }

    /// Wait until the consumers released this stage (`empty[i]`, the producer's parity).
    #[track_caller]
    pub fn producer_acquire(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let bar = self.empty_barrier(k, st);
        let order = self.wait_order();
        k.mbarrier_wait_with(bar, st.phase(), order);
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
    /// the cluster (`mapa` + `mbarrier.arrive.release.cluster.shared::cluster`).
    #[track_caller]
    pub fn consumer_release(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let (this, st) = (*self, *st);
        k.at_caller(|k| this.consumer_release_here(k, &st))
    }

    fn consumer_release_here(&self, k: &mut KernelBuilder, st: &PipelineState) {
        let (empty, cfg) = (self.empty, self.cfg);
        let idx = st.index();
        let arrive = move |k: &mut KernelBuilder| {
            let bar = k.barrier_at(empty, idx);
            if cfg.is_cluster() {
                for cta in 0..cfg.consumer_ctas {
                    let remote = k.map_barrier_to_cta(bar, Value::u32(cta));
                    k.mbarrier_arrive_remote(remote, None);
                }
            } else {
                k.mbarrier_arrive(bar);
            }
        };
        match cfg.consumers {
            Arrivals::Threads(_) => arrive(k),
            Arrivals::Warps(_) => {
                k.warp_sync();
                let lane = k.lane_idx();
                let leader = k.eq(lane, Value::u32(0));
                k.if_then(leader, arrive);
            }
        }
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
    use std::collections::HashMap;

    /// Evaluate the straight-line arithmetic a `PipelineState` emits (mov/add/xor/setp/selp).
    fn eval(body: &[Stmt], regs: &mut HashMap<u32, u64>) {
        let val = |regs: &HashMap<u32, u64>, v: &Value| match v {
            Value::Reg(r) => regs[&r.id],
            Value::Imm { bits, .. } => *bits,
        };
        for s in body {
            let StmtKind::Inst(Inst::Arith(op)) = &s.kind else { panic!("unexpected statement {s:?}") };
            match op {
                ArithOp::Mov { dst, src } => {
                    let v = val(regs, src);
                    regs.insert(dst.id, v);
                }
                ArithOp::Binary { op, dst, a, b } => {
                    let (x, y) = (val(regs, a), val(regs, b));
                    let r = match op {
                        BinOp::Add => x.wrapping_add(y) & 0xffff_ffff,
                        BinOp::Xor => x ^ y,
                        other => panic!("unexpected {other:?}"),
                    };
                    regs.insert(dst.id, r);
                }
                ArithOp::Setp { cmp: CmpOp::Eq, dst, a, b } => {
                    let r = (val(regs, a) == val(regs, b)) as u64;
                    regs.insert(dst.id, r);
                }
                ArithOp::Selp { dst, cond, a, b } => {
                    let r = if val(regs, cond) != 0 { val(regs, a) } else { val(regs, b) };
                    regs.insert(dst.id, r);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    /// The emitted `advance` walks (index, phase) exactly like CUTLASS's `PipelineState`:
    /// index = n % S, phase = start ^ ((n / S) & 1).
    #[test]
    fn advance_semantics_every_depth() {
        for stages in 1..=8u32 {
            for start in 0..2u32 {
                let mut k = KernelBuilder::new("adv", Target::Sm90a);
                let st = PipelineState::new(&mut k, stages, start);
                let n_init = k.blocks[0].len();
                st.advance(&mut k);
                let init: Vec<Stmt> = k.blocks[0][..n_init].to_vec();
                let step: Vec<Stmt> = k.blocks[0][n_init..].to_vec();
                let mut regs = HashMap::new();
                eval(&init, &mut regs);
                for n in 0..4 * stages + 3 {
                    let (idx, ph) = (regs[&st.index.id] as u32, regs[&st.phase.id] as u32);
                    assert_eq!(idx, n % stages, "S={stages} start={start} n={n}");
                    assert_eq!(ph, start ^ ((n / stages) & 1), "S={stages} start={start} n={n}");
                    eval(&step, &mut regs);
                }
            }
        }
    }

    /// A protocol model: mbarriers as (pending, tx, phase), the producer and consumer walking
    /// with the start parities the pipeline uses (producer 1, consumer 0), interleaved by a
    /// pseudo-random schedule. The producer must never refill a stage the consumer has not
    /// released, the consumer must see every tile in order, and nobody deadlocks.
    #[test]
    fn full_empty_protocol_model() {
        #[derive(Clone, Copy)]
        struct Bar {
            expected: u32,
            pending: u32,
            tx: i64,
            phase: u32,
        }
        impl Bar {
            fn new(expected: u32) -> Bar {
                Bar { expected, pending: expected, tx: 0, phase: 0 }
            }
            fn try_complete(&mut self) {
                if self.pending == 0 && self.tx == 0 {
                    self.pending = self.expected;
                    self.phase ^= 1;
                }
            }
            fn arrive(&mut self, bytes: i64) {
                self.pending -= 1;
                self.tx += bytes;
                self.try_complete();
            }
            fn complete_tx(&mut self, bytes: i64) {
                self.tx -= bytes;
                self.try_complete();
            }
            /// `try_wait.parity(p)`: the phase with parity p completed, i.e. current != p.
            fn test_wait(&self, p: u32) -> bool {
                self.phase != p
            }
        }
        const BYTES: i64 = 4096;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for stages in 1..=8usize {
            for trial in 0..20 {
                let tiles = 3 * stages + trial % 5;
                let mut full = vec![Bar::new(1); stages];
                let mut empty = vec![Bar::new(2); stages]; // two consumer warps release
                let mut buf: Vec<Option<usize>> = vec![None; stages];
                // In-flight TMA copies: (stage, tile).
                let mut flying: Vec<(usize, usize)> = Vec::new();
                let (mut p_idx, mut p_ph, mut p_tile) = (0usize, 1u32, 0usize);
                let (mut c_idx, mut c_ph, mut c_tile) = (0usize, 0u32, 0usize);
                let mut c_released = [true, true];
                let mut steps = 0;
                while c_tile < tiles {
                    steps += 1;
                    assert!(steps < 100_000, "deadlock: S={stages}");
                    match rnd() % 4 {
                        0 if p_tile < tiles && empty[p_idx].test_wait(p_ph) => {
                            // acquire passed: the stage must be free.
                            assert!(buf[p_idx].is_none(), "S={stages}: producer overwrote stage {p_idx}");
                            full[p_idx].arrive(BYTES); // arrive.expect_tx
                            flying.push((p_idx, p_tile));
                            p_tile += 1;
                            p_idx += 1;
                            if p_idx == stages {
                                p_idx = 0;
                                p_ph ^= 1;
                            }
                        }
                        1 if !flying.is_empty() => {
                            let i = (rnd() as usize) % flying.len();
                            let (s, t) = flying.remove(i);
                            buf[s] = Some(t);
                            full[s].complete_tx(BYTES);
                        }
                        2 if c_released.iter().all(|&r| r) && full[c_idx].test_wait(c_ph) => {
                            assert_eq!(buf[c_idx], Some(c_tile), "S={stages}: consumer read a wrong tile");
                            c_released = [false, false];
                        }
                        3 if c_released.iter().any(|&r| !r) => {
                            let w = c_released.iter().position(|&r| !r).unwrap();
                            c_released[w] = true;
                            if c_released.iter().all(|&r| r) {
                                buf[c_idx] = None; // the data is no longer needed
                                c_tile += 1;
                            }
                            empty[c_idx].arrive(0);
                            if c_released.iter().all(|&r| r) {
                                c_idx += 1;
                                if c_idx == stages {
                                    c_idx = 0;
                                    c_ph ^= 1;
                                }
                            }
                        }
                        _ => {}
                    }
                }
                // producer_tail: S more acquires pass once everything is released.
                for _ in 0..stages {
                    assert!(empty[p_idx].test_wait(p_ph), "S={stages}: producer_tail would hang");
                    p_idx += 1;
                    if p_idx == stages {
                        p_idx = 0;
                        p_ph ^= 1;
                    }
                }
            }
        }
    }

    fn ptx_of(f: impl FnOnce(&mut KernelBuilder)) -> String {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.require_block(128, 1, 1);
        f(&mut k);
        emit_kernel(&k.finish().expect("builds")).expect("emits")
    }

    #[test]
    fn init_counts_fence_and_sync() {
        let ptx = ptx_of(|k| {
            let p = Pipeline::new(k, "p", PipelineConfig::tma(3, Arrivals::Warps(4)));
            p.init(k);
        });
        assert!(ptx.contains(".shared .align 8 .b64 smem_p_full[3];"), "{ptx}");
        assert!(ptx.contains(".shared .align 8 .b64 smem_p_empty[3];"));
        assert_eq!(ptx.matches("mbarrier.init.shared::cta.b64").count(), 6);
        assert_eq!(ptx.matches("], 1;").count(), 3, "{ptx}");
        assert_eq!(ptx.matches("], 4;").count(), 3);
        let fence = ptx.find("fence.mbarrier_init.release.cluster;").unwrap();
        let sync = ptx.find("bar.sync 0;").unwrap();
        assert!(fence < sync);
    }

    #[test]
    fn producer_and_consumer_ops() {
        let ptx = ptx_of(|k| {
            let p = Pipeline::new(k, "p", PipelineConfig::tma(2, Arrivals::Threads(128)));
            p.init(k);
            let ps = p.producer_start_state(k);
            let cs = p.consumer_start_state(k);
            p.producer_acquire(k, &ps);
            p.producer_commit(k, &ps, Value::u32(1024));
            p.producer_arrive(k, &ps);
            p.consumer_wait(k, &cs);
            p.consumer_release(k, &cs);
            p.producer_tail(k, &ps);
        });
        // Producer starts at parity 1, consumer at 0.
        assert!(ptx.contains("mov.b32 %r") && ptx.contains(", 1;\n"), "{ptx}");
        assert!(ptx.contains("mbarrier.try_wait.parity.shared::cta.b64 %wait_done, [%r"), "{ptx}");
        assert!(ptx.contains("mbarrier.arrive.expect_tx.shared::cta.b64 %rd"));
        assert!(ptx.contains("], 1024;"));
        assert_eq!(ptx.matches("mbarrier.arrive.shared::cta.b64").count(), 2);
        // Per-thread release: no warp sync.
        assert!(!ptx.contains("bar.warp.sync"));
        // producer_tail: a loop of S=2 acquires.
        assert!(ptx.contains("setp.ge.u32") && ptx.contains(", 2;"));
    }

    #[test]
    fn warp_release_syncs_then_lane0_arrives() {
        let ptx = ptx_of(|k| {
            let p = Pipeline::new(k, "p", PipelineConfig::tma(2, Arrivals::Warps(4)));
            p.init(k);
            let cs = p.consumer_start_state(k);
            p.consumer_release(k, &cs);
        });
        let ws = ptx.find("bar.warp.sync 0xffffffff;").expect("warp sync");
        let lane = ptx.find("%laneid").unwrap();
        let arrive = ptx.find("mbarrier.arrive.shared::cta.b64").unwrap();
        assert!(ws < lane && lane < arrive, "{ptx}");
    }

    #[test]
    fn cluster_release_arrives_in_every_cta() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        k.require_block(128, 1, 1);
        k.cluster(4, 1, 1);
        let p = Pipeline::new(
            &mut k,
            "p",
            PipelineConfig {
                stages: 2,
                producers: Arrivals::Threads(1),
                consumers: Arrivals::Warps(4),
                consumer_ctas: 4,
            },
        );
        p.init(&mut k);
        let cs = p.consumer_start_state(&mut k);
        let ps = p.producer_start_state(&mut k);
        p.consumer_release(&mut k, &cs);
        p.producer_acquire(&mut k, &ps);
        let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
        assert!(ptx.contains("], 16;"), "empty expects 4 warps x 4 CTAs:\n{ptx}");
        assert!(ptx.contains("barrier.cluster.arrive.release.aligned;"));
        assert!(ptx.contains("barrier.cluster.wait.acquire.aligned;"));
        for cta in 0..4 {
            assert!(ptx.contains(&"mapa.shared::cluster.u32 %r".to_string()) && ptx.contains(&format!(", {cta};")));
        }
        assert_eq!(ptx.matches("mapa.shared::cluster.u32").count(), 4);
        assert_eq!(ptx.matches("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r").count(), 4);
        assert!(ptx.contains("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"));
    }

    #[test]
    fn bad_configs_are_reported() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        Pipeline::new(&mut k, "p", PipelineConfig::tma(0, Arrivals::Warps(4)));
        Pipeline::new(&mut k, "q", PipelineConfig::tma(2, Arrivals::Warps(0)));
        let e = k.finish().unwrap_err();
        assert!(e.diagnostics[0].message.contains("0 stages"), "{e}");
        assert!(e.diagnostics.iter().any(|d| d.message.contains("must all be >= 1")), "{e}");
        // The location is the caller's line (this file), not the library's.
        assert!(e.diagnostics[0].loc.unwrap().file.ends_with("pipeline.rs"));
    }

    #[test]
    fn stage_addr_is_index_times_bytes() {
        let ptx = ptx_of(|k| {
            let p = Pipeline::new(k, "p", PipelineConfig::tma(4, Arrivals::Warps(4)));
            let st = p.consumer_start_state(k);
            let a = st.stage_addr(k, Value::u32(0x400), 16384);
            k.probe("addr", &[a]);
        });
        assert!(ptx.contains(", 16384;"), "{ptx}");
    }
}
