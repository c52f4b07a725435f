//! The mutation suite: inject mbarrier-protocol bugs into the IR of example kernels and check
//! that the simulator's checker flags every mutant with the right category, and flags nothing
//! on the unmutated kernels.
//!
//! `cargo run --release --bin mutations` prints the table and writes [`TABLE_PATH`]
//! (`bench/mutations.md`); the test `examples/tests/mutations.rs` fails when that file is
//! stale (`UPDATE_MUTATIONS=1` rewrites it).

use crate::gallery::{self, simulate_problem, Problem, Size};
use phaser::codegen::ir::*;
use phaser::codegen::Kernel;
use phaser::runtime::sim::{Category, SimConfig, SimReport, Strategy};
use phaser::runtime::{Device, RuntimeError};

/// One bug to inject; `usize` fields count matching instructions in program order (from 0).
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Delete the n-th arrive (`mbarrier.arrive`, `.expect_tx`).
    DropArrive(usize),
    /// Execute the n-th arrive twice.
    DuplicateArrive(usize),
    /// Wait on the other parity in the n-th blocking wait.
    FlipWaitParity(usize),
    /// Delete the n-th blocking wait.
    DeleteWait(usize),
    /// Make the n-th `x ^ 1` a copy of `x` (skip the `phase ^= 1`).
    SkipPhaseFlip(usize),
    /// Add `delta` to the byte count of the n-th `arrive.expect_tx`.
    TxBytes(usize, i64),
    /// Add `delta` to the byte count of the n-th bulk copy.
    CopyBytes(usize, i64),
    /// Add `delta` to the arrival count of the n-th `mbarrier.init`.
    InitCount(usize, i64),
    /// Delete the n-th `mbarrier.init`.
    DropInit(usize),
    /// Delete the n-th `bar.sync`.
    DeleteBarSync(usize),
    /// Delete the n-th `fence.proxy.async`.
    DeleteProxyFence(usize),
    /// Delete the n-th `cp.async.bulk.wait_group`.
    DeleteBulkWait(usize),
    /// The n-th blocking wait uses the other stage's barrier of array `alloc` (index ^ 1).
    SwapStage(usize, &'static str),
    /// Delete `count` arrives starting at the n-th (a whole consumer release of a cluster
    /// pipeline is one remote arrive per CTA).
    DropArrives(usize, usize),
    /// Turn the n-th `arrive.expect_tx` into a plain arrive: the bytes are never registered.
    DropExpectTx(usize),
    /// Flip the initial value of the parity register the n-th wait (blocking or
    /// `test_wait`) uses: a pipeline side starting on the wrong phase.
    FlipParityInit(usize),
    /// Replace the multicast mask of the n-th multicast TMA load.
    MulticastMask(usize, u32),
    /// Delete the n-th `bar.warp.sync`.
    DeleteWarpSync(usize),
    /// Delete the n-th `cp.async.mbarrier.arrive`.
    DropCpAsyncArrive(usize),
    /// Toggle `.noinc` on the n-th `cp.async.mbarrier.arrive`.
    FlipNoinc(usize),
}

impl Mutation {
    pub fn describe(&self) -> String {
        use Mutation::*;
        match self {
            DropArrive(n) => format!("drop arrive #{n}"),
            DuplicateArrive(n) => format!("duplicate arrive #{n}"),
            FlipWaitParity(n) => format!("flip parity of wait #{n}"),
            DeleteWait(n) => format!("delete wait #{n}"),
            SkipPhaseFlip(n) => format!("skip `phase ^= 1` #{n}"),
            TxBytes(n, d) => format!("expect_tx #{n} bytes {d:+}"),
            CopyBytes(n, d) => format!("bulk copy #{n} bytes {d:+}"),
            InitCount(n, d) => format!("init #{n} count {d:+}"),
            DropInit(n) => format!("drop init #{n}"),
            DeleteBarSync(n) => format!("delete bar.sync #{n}"),
            DeleteProxyFence(n) => format!("delete fence.proxy.async #{n}"),
            DeleteBulkWait(n) => format!("delete bulk wait_group #{n}"),
            SwapStage(n, a) => format!("wait #{n} on the other `{a}` stage"),
            DropArrives(n, c) => format!("drop arrives #{n}-#{}", n + c - 1),
            DropExpectTx(n) => format!("expect_tx #{n} without its bytes (plain arrive)"),
            FlipParityInit(n) => format!("start parity of wait #{n} flipped"),
            MulticastMask(n, m) => format!("multicast mask of TMA load #{n} = {m:#b}"),
            DeleteWarpSync(n) => format!("delete bar.warp.sync #{n}"),
            DropCpAsyncArrive(n) => format!("drop cp.async.mbarrier.arrive #{n}"),
            FlipNoinc(n) => format!("toggle .noinc of cp.async.mbarrier.arrive #{n}"),
        }
    }

    /// Apply to `k`; false when the kernel has no n-th matching instruction.
    pub fn apply(&self, k: &mut Kernel) -> bool {
        use Mutation::*;
        let mut next_reg = k.num_regs;
        let shared = k.shared.clone();
        // The parity registers of the waits, in program order (for `FlipParityInit`).
        let mut wait_parity_regs = Vec::new();
        walk_insts(&k.body, &mut |i, _| {
            if let Inst::Mbarrier(
                MbarrierOp::Wait { on: WaitOn::Parity(Value::Reg(r)), .. }
                | MbarrierOp::TestWait { on: WaitOn::Parity(Value::Reg(r)), .. },
            ) = i
            {
                wait_parity_regs.push(r.id);
            }
        });
        let mut new_reg = |ty: Type| {
            let r = Reg { id: next_reg, ty };
            next_reg += 1;
            r
        };
        let is_arrive =
            |i: &Inst| matches!(i, Inst::Mbarrier(MbarrierOp::Arrive { .. } | MbarrierOp::ArriveExpectTx { .. }));
        let is_wait = |i: &Inst| matches!(i, Inst::Mbarrier(MbarrierOp::Wait { on: WaitOn::Parity(_), .. }));
        let mut rewrite = |n: usize, pred: &dyn Fn(&Inst) -> bool, f: &mut dyn FnMut(&Stmt) -> Vec<Stmt>| {
            let mut count = 0;
            rewrite_nth(&mut k.body, &mut |s| {
                let StmtKind::Inst(i) = &s.kind else { return None };
                if !pred(i) {
                    return None;
                }
                count += 1;
                (count - 1 == n).then(|| f(s))
            })
        };
        let inst = |s: &Stmt, i: Inst| Stmt::new(StmtKind::Inst(i), s.loc);
        let ok = match self {
            DropArrive(n) => rewrite(*n, &is_arrive, &mut |_| vec![]),
            DuplicateArrive(n) => rewrite(*n, &is_arrive, &mut |s| vec![s.clone(), s.clone()]),
            DeleteWait(n) => rewrite(*n, &is_wait, &mut |_| vec![]),
            FlipWaitParity(n) => rewrite(*n, &is_wait, &mut |s| {
                let StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Wait { bar, on: WaitOn::Parity(p), order })) = &s.kind
                else {
                    unreachable!()
                };
                let r = new_reg(p.ty());
                vec![
                    inst(s, Inst::Arith(ArithOp::Binary { op: BinOp::Xor, dst: r, a: *p, b: Value::imm_u(1, p.ty()) })),
                    inst(
                        s,
                        Inst::Mbarrier(MbarrierOp::Wait {
                            bar: *bar,
                            on: WaitOn::Parity(Value::Reg(r)),
                            order: *order,
                        }),
                    ),
                ]
            }),
            SwapStage(n, alloc) => {
                let Some(id) = shared.iter().position(|a| a.name == *alloc) else { return false };
                rewrite(*n, &is_wait, &mut |s| {
                    let StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Wait { bar, on, order })) = &s.kind else {
                        unreachable!()
                    };
                    let (base, d, d2, nb) =
                        (new_reg(Type::U32), new_reg(Type::U32), new_reg(Type::U32), new_reg(Type::U32));
                    let bin = |op, dst, a, b| Inst::Arith(ArithOp::Binary { op, dst, a, b });
                    vec![
                        inst(s, Inst::Memory(MemoryOp::SharedAddr { dst: base, alloc: AllocId(id as u32) })),
                        inst(s, bin(BinOp::Sub, d, *bar, Value::Reg(base))),
                        inst(s, bin(BinOp::Xor, d2, Value::Reg(d), Value::u32(8))),
                        inst(s, bin(BinOp::Add, nb, Value::Reg(base), Value::Reg(d2))),
                        inst(s, Inst::Mbarrier(MbarrierOp::Wait { bar: Value::Reg(nb), on: *on, order: *order })),
                    ]
                })
            }
            SkipPhaseFlip(n) => rewrite(
                *n,
                &|i| matches!(i, Inst::Arith(ArithOp::Binary { op: BinOp::Xor, b: Value::Imm { bits: 1, .. }, .. })),
                &mut |s| {
                    let StmtKind::Inst(Inst::Arith(ArithOp::Binary { dst, a, .. })) = &s.kind else { unreachable!() };
                    vec![inst(s, Inst::Arith(ArithOp::Mov { dst: *dst, src: *a }))]
                },
            ),
            TxBytes(n, delta) => {
                rewrite(*n, &|i| matches!(i, Inst::Mbarrier(MbarrierOp::ArriveExpectTx { .. })), &mut |s| {
                    let StmtKind::Inst(Inst::Mbarrier(MbarrierOp::ArriveExpectTx { bar, bytes, order, space, state })) =
                        &s.kind
                    else {
                        unreachable!()
                    };
                    let (pre, b) = add_const(*bytes, *delta, &mut new_reg, s);
                    let mut v = pre;
                    v.push(inst(
                        s,
                        Inst::Mbarrier(MbarrierOp::ArriveExpectTx {
                            bar: *bar,
                            bytes: b,
                            order: *order,
                            space: *space,
                            state: *state,
                        }),
                    ));
                    v
                })
            }
            CopyBytes(n, delta) => rewrite(*n, &|i| matches!(i, Inst::Tma(TmaOp::LoadBulk { .. })), &mut |s| {
                let StmtKind::Inst(Inst::Tma(TmaOp::LoadBulk { dst, src, bytes, bar })) = &s.kind else {
                    unreachable!()
                };
                let (mut v, b) = add_const(*bytes, *delta, &mut new_reg, s);
                v.push(inst(s, Inst::Tma(TmaOp::LoadBulk { dst: *dst, src: *src, bytes: b, bar: *bar })));
                v
            }),
            InitCount(n, delta) => rewrite(*n, &|i| matches!(i, Inst::Mbarrier(MbarrierOp::Init { .. })), &mut |s| {
                let StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Init { bar, count })) = &s.kind else { unreachable!() };
                let (mut v, c) = add_const(*count, *delta, &mut new_reg, s);
                v.push(inst(s, Inst::Mbarrier(MbarrierOp::Init { bar: *bar, count: c })));
                v
            }),
            DropInit(n) => rewrite(*n, &|i| matches!(i, Inst::Mbarrier(MbarrierOp::Init { .. })), &mut |_| vec![]),
            DeleteBarSync(n) => rewrite(*n, &|i| matches!(i, Inst::Sync(SyncOp::BarSync { .. })), &mut |_| vec![]),
            DeleteProxyFence(n) => {
                rewrite(*n, &|i| matches!(i, Inst::Sync(SyncOp::FenceProxyAsync { .. })), &mut |_| vec![])
            }
            DeleteBulkWait(n) => rewrite(*n, &|i| matches!(i, Inst::Tma(TmaOp::WaitGroup { .. })), &mut |_| vec![]),
            DropArrives(n, count) => (0..*count).all(|_| rewrite(*n, &is_arrive, &mut |_| vec![])),
            DropExpectTx(n) => {
                rewrite(*n, &|i| matches!(i, Inst::Mbarrier(MbarrierOp::ArriveExpectTx { .. })), &mut |s| {
                    let StmtKind::Inst(Inst::Mbarrier(MbarrierOp::ArriveExpectTx { bar, order, space, state, .. })) =
                        &s.kind
                    else {
                        unreachable!()
                    };
                    let a = MbarrierOp::Arrive {
                        bar: *bar,
                        count: None,
                        order: *order,
                        space: *space,
                        state: *state,
                        drop: false,
                    };
                    vec![inst(s, Inst::Mbarrier(a))]
                })
            }
            FlipParityInit(n) => {
                let Some(&r) = wait_parity_regs.get(*n) else { return false };
                rewrite(
                    0,
                    &|i| matches!(i, Inst::Arith(ArithOp::Mov { dst, src: Value::Imm { .. } }) if dst.id == r),
                    &mut |s| {
                        let StmtKind::Inst(Inst::Arith(ArithOp::Mov { dst, src: Value::Imm { bits, ty } })) = &s.kind
                        else {
                            unreachable!()
                        };
                        vec![inst(
                            s,
                            Inst::Arith(ArithOp::Mov { dst: *dst, src: Value::Imm { bits: bits ^ 1, ty: *ty } }),
                        )]
                    },
                )
            }
            MulticastMask(n, mask) => {
                rewrite(*n, &|i| matches!(i, Inst::Tma(TmaOp::LoadTensor { multicast: Some(_), .. })), &mut |s| {
                    let StmtKind::Inst(Inst::Tma(TmaOp::LoadTensor {
                        dst,
                        tmap,
                        coords,
                        bar,
                        multicast: Some(m),
                        cache_hint,
                    })) = &s.kind
                    else {
                        unreachable!()
                    };
                    let load = TmaOp::LoadTensor {
                        dst: *dst,
                        tmap: *tmap,
                        coords: coords.clone(),
                        bar: *bar,
                        multicast: Some(Value::imm_u(*mask as u64, m.ty())),
                        cache_hint: *cache_hint,
                    };
                    vec![inst(s, Inst::Tma(load))]
                })
            }
            DeleteWarpSync(n) => rewrite(*n, &|i| matches!(i, Inst::Sync(SyncOp::WarpSync { .. })), &mut |_| vec![]),
            DropCpAsyncArrive(n) => {
                rewrite(*n, &|i| matches!(i, Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { .. })), &mut |_| vec![])
            }
            FlipNoinc(n) => {
                rewrite(*n, &|i| matches!(i, Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { .. })), &mut |s| {
                    let StmtKind::Inst(Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { bar, noinc })) = &s.kind else {
                        unreachable!()
                    };
                    vec![inst(s, Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { bar: *bar, noinc: !noinc }))]
                })
            }
        };
        k.num_regs = next_reg;
        ok
    }
}

/// `v + delta` as an operand (folded for immediates), with the instructions computing it.
fn add_const(v: Value, delta: i64, new_reg: &mut dyn FnMut(Type) -> Reg, s: &Stmt) -> (Vec<Stmt>, Value) {
    match v {
        Value::Imm { bits, ty } => (vec![], Value::imm_i(bits as i64 + delta, ty)),
        Value::Reg(r) => {
            let d = new_reg(r.ty);
            let add = ArithOp::Binary { op: BinOp::Add, dst: d, a: v, b: Value::imm_i(delta, r.ty) };
            (vec![Stmt::new(StmtKind::Inst(Inst::Arith(add)), s.loc)], Value::Reg(d))
        }
    }
}

/// Replace the first statement (depth-first, program order) for which `f` returns a
/// replacement; returns whether one was replaced.
fn rewrite_nth(block: &mut Vec<Stmt>, f: &mut dyn FnMut(&Stmt) -> Option<Vec<Stmt>>) -> bool {
    let mut i = 0;
    while i < block.len() {
        if let Some(repl) = f(&block[i]) {
            block.splice(i..i + 1, repl);
            return true;
        }
        let done = match &mut block[i].kind {
            StmtKind::If { then_body, else_body, .. } => rewrite_nth(then_body, f) || rewrite_nth(else_body, f),
            StmtKind::Loop { body, latch } => rewrite_nth(body, f) || rewrite_nth(latch, f),
            _ => false,
        };
        if done {
            return true;
        }
        i += 1;
    }
    false
}

/// A kernel of a gallery example that the suite mutates: the example's own setup (at
/// [`Size::Small`]) provides the launch, and a mutant is launched in place of the kernel.
/// Adding a subject is one line in [`subjects`].
pub struct Subject {
    /// The kernel's name (also what the mutants name).
    pub name: &'static str,
    /// The gallery example whose problem launches it.
    pub example: &'static str,
}

impl Subject {
    /// The example's small problem on `dev`, reduced to the launch of this kernel; returns it
    /// with that launch's kernel.
    fn problem(&self, dev: &Device) -> Result<(Problem, Kernel), RuntimeError> {
        let e = gallery::find(self.example).unwrap_or_else(|| panic!("no gallery example `{}`", self.example));
        let p = (e.setup)(dev, Size::Small, SEED)?;
        let i = p.launch_of(self.name).unwrap_or_else(|| {
            panic!("example `{}` launches no kernel `{}` at the small size", self.example, self.name)
        });
        let p = p.only_launch(i);
        let k = p.launches[0].kernel.clone();
        Ok((p, k))
    }

    /// The unmutated kernel.
    pub fn kernel(&self) -> Result<Kernel, RuntimeError> {
        Ok(self.problem(&Device::sim(SimConfig::default()))?.1)
    }

    /// Simulate `k` (this kernel or a mutant of it) under `sc` with the example's inputs.
    pub fn simulate(&self, k: &Kernel, sc: &SimConfig) -> Result<SimReport, RuntimeError> {
        let dev = Device::sim(sc.clone());
        let (p, _) = self.problem(&dev)?;
        let mut p = p.with_kernel(0, k.clone());
        Ok(simulate_problem(&dev, &mut p, sc)?.remove(0))
    }
}

/// The inputs' seed (the protocol does not depend on the data; a fixed seed keeps the table
/// reproducible).
const SEED: u64 = 0x6d75_7461;

pub fn subjects() -> Vec<Subject> {
    let s = |name, example| Subject { name, example };
    vec![
        s("seed_thread_arrive_wait", "seed_thread_arrive_wait"),
        s("seed_producer_consumer", "seed_producer_consumer"),
        s("seed_phase_flip", "seed_phase_flip"),
        s("phase_tma_table", "phase_tma_table"),
        s("fe_pipeline", "fe_pipeline"),
        s("bulk_pipeline", "bulk_pipeline"),
        s("tma_two_stage", "tma_two_stage"),
        s("stream_axpb_s2", "stream_axpb"),
        s("cluster_multicast_x2", "cluster_multicast"),
        s("cluster_multicast_x4", "cluster_multicast"),
        s("cp_async_mbarrier", "cp_async_mbarrier"),
        s("cp_async_mbarrier_noinc", "cp_async_mbarrier"),
    ]
}

/// A mutant: which subject, which bug, and the categories that correctly describe it.
pub struct Mutant {
    pub subject: &'static str,
    pub mutation: Mutation,
    pub expect: &'static [Category],
}

pub fn mutants() -> Vec<Mutant> {
    use Category::*;
    use Mutation::*;
    const INIT: &[Category] = &[Uninitialized, InitVisibility];
    let m = |subject, mutation, expect| Mutant { subject, mutation, expect };
    vec![
        // seed 1: 4 threads arrive on a count-4 barrier, wait, read each other's data.
        m("seed_thread_arrive_wait", DropArrive(0), &[Deadlock]),
        m("seed_thread_arrive_wait", DuplicateArrive(0), &[Deadlock, ArrivalOverflow, SharedRace, StaleParity]),
        m("seed_thread_arrive_wait", InitCount(0, 1), &[Deadlock]),
        m("seed_thread_arrive_wait", InitCount(0, -1), &[IncompletePhase, SharedRace]),
        m("seed_thread_arrive_wait", FlipWaitParity(0), &[SharedRace, Deadlock]),
        m("seed_thread_arrive_wait", DeleteWait(0), &[SharedRace]),
        m("seed_thread_arrive_wait", DeleteBarSync(0), INIT),
        m("seed_thread_arrive_wait", DropInit(0), &[Uninitialized]),
        // seed 2: thread 0 fills data and arrives (count 1); threads 1-4 wait and read.
        m("seed_producer_consumer", DeleteWait(0), &[SharedRace]),
        m("seed_producer_consumer", FlipWaitParity(0), &[SharedRace, Deadlock]),
        m("seed_producer_consumer", DropArrive(0), &[Deadlock]),
        m("seed_producer_consumer", InitCount(0, 1), &[Deadlock]),
        m("seed_producer_consumer", DeleteBarSync(0), INIT),
        // seed 3: 32 threads, 4 rounds of arrive + wait(phase), phase ^= 1.
        m("seed_phase_flip", SkipPhaseFlip(0), &[StaleParity, Deadlock]),
        m("seed_phase_flip", DropArrive(0), &[Deadlock]),
        m("seed_phase_flip", InitCount(0, -1), &[IncompletePhase, StaleParity, Deadlock]),
        m("seed_phase_flip", InitCount(0, 1), &[Deadlock]),
        // two-stage phase_tma loop over bulk copies.
        m("phase_tma_table", FlipWaitParity(0), &[AsyncReadRace]),
        m("phase_tma_table", SkipPhaseFlip(0), &[StaleParity, AsyncReadRace, Deadlock]),
        m("phase_tma_table", TxBytes(0, 16), &[Deadlock, TxImbalance]),
        m("phase_tma_table", TxBytes(2, -16), &[Deadlock, TxImbalance, EarlyPhaseCompletion]),
        m("phase_tma_table", CopyBytes(1, -16), &[Deadlock, TxImbalance]),
        m("phase_tma_table", DropArrive(0), &[Deadlock, TxImbalance]),
        m("phase_tma_table", DeleteBarSync(1), &[AsyncWriteRace, AsyncReadRace]),
        m("phase_tma_table", DeleteBarSync(0), INIT),
        m("phase_tma_table", SwapStage(0, "tma_bar"), &[AsyncReadRace, StaleParity, Deadlock]),
        m("phase_tma_table", DeleteWait(0), &[AsyncReadRace]),
        // full/empty pipeline with ordinary arrivals (producer warp, consumer warp).
        m("fe_pipeline", DeleteWait(0), &[SharedRace]),
        m("fe_pipeline", DeleteWait(1), &[SharedRace]),
        m("fe_pipeline", FlipWaitParity(0), &[Deadlock]),
        m("fe_pipeline", FlipWaitParity(1), &[SharedRace, UninitializedSharedRead]),
        m("fe_pipeline", SkipPhaseFlip(0), &[Deadlock, StaleParity, SharedRace]),
        m("fe_pipeline", SkipPhaseFlip(1), &[StaleParity, Deadlock, SharedRace]),
        m("fe_pipeline", DropArrive(0), &[Deadlock]),
        m("fe_pipeline", DropArrive(1), &[Deadlock]),
        m("fe_pipeline", InitCount(0, 1), &[Deadlock]),
        m("fe_pipeline", InitCount(1, -1), &[SharedRace, IncompletePhase]),
        m("fe_pipeline", SwapStage(1, "full"), &[SharedRace, StaleParity, Deadlock]),
        m("fe_pipeline", DeleteBarSync(0), INIT),
        m("fe_pipeline", DuplicateArrive(1), &[SharedRace, StaleParity, Deadlock, IncompletePhase]),
        // full/empty pipeline over bulk copies with a bulk-store epilogue.
        m("bulk_pipeline", DeleteProxyFence(0), &[ProxyFence]),
        m("bulk_pipeline", DeleteBulkWait(0), &[AsyncWriteRace]),
        m("bulk_pipeline", TxBytes(0, 16), &[Deadlock, TxImbalance]),
        m("bulk_pipeline", TxBytes(0, -16), &[Deadlock, TxImbalance, EarlyPhaseCompletion]),
        m("bulk_pipeline", DeleteWait(0), &[AsyncWriteRace, AsyncReadRace, ArrivalOverflow]),
        m("bulk_pipeline", DeleteWait(1), &[AsyncReadRace, UninitializedSharedRead]),
        m("bulk_pipeline", FlipWaitParity(1), &[AsyncReadRace, UninitializedSharedRead]),
        m("bulk_pipeline", SkipPhaseFlip(1), &[StaleParity, AsyncReadRace, Deadlock]),
        m("bulk_pipeline", DeleteBarSync(2), &[AsyncReadRace]),
        m("bulk_pipeline", DropArrive(0), &[Deadlock]),
        m("bulk_pipeline", InitCount(1, 1), &[Deadlock]),
        m("bulk_pipeline", DeleteBarSync(0), INIT),
        // the seeds' two-stage TMA loop (manual phase_tma; arrive #0/#1 = prologue, #2 = refill).
        m("tma_two_stage", DropExpectTx(0), &[AsyncReadRace, TxImbalance, Deadlock, EarlyPhaseCompletion]),
        m("tma_two_stage", TxBytes(2, 16), &[Deadlock, TxImbalance]),
        m("tma_two_stage", TxBytes(1, -16), &[Deadlock, TxImbalance, EarlyPhaseCompletion]),
        m("tma_two_stage", FlipParityInit(0), &[AsyncReadRace, Deadlock]),
        m("tma_two_stage", SkipPhaseFlip(0), &[StaleParity, AsyncReadRace, Deadlock]),
        m("tma_two_stage", DeleteBarSync(1), &[AsyncWriteRace]),
        m("tma_two_stage", DeleteBarSync(0), INIT),
        // warp-specialized TMA pipeline, S = 2 (arrive #0 = producer_commit, #1 = consumer
        // release; wait #0 = producer_acquire, #1 = producer_tail, #2 = consumer_wait; warp syncs: #0 in the
        // release, #1 after the staging buffer's wait_group.read, #2 before the TMA store).
        m("stream_axpb_s2", DropExpectTx(0), &[AsyncReadRace, TxImbalance, Deadlock, EarlyPhaseCompletion]),
        m("stream_axpb_s2", TxBytes(0, 1024), &[Deadlock, TxImbalance]),
        m("stream_axpb_s2", TxBytes(0, -1024), &[Deadlock, TxImbalance, AsyncReadRace, EarlyPhaseCompletion]),
        m("stream_axpb_s2", FlipParityInit(0), &[Deadlock]),
        m("stream_axpb_s2", FlipParityInit(2), &[AsyncReadRace, AsyncWriteRace, StaleParity, Deadlock]),
        m("stream_axpb_s2", DropArrive(1), &[Deadlock]),
        m("stream_axpb_s2", DeleteProxyFence(0), &[ProxyFence]),
        m("stream_axpb_s2", DeleteBulkWait(0), &[AsyncWriteRace]),
        m("stream_axpb_s2", DeleteWarpSync(0), &[AsyncWriteRace]),
        m("stream_axpb_s2", DeleteWarpSync(1), &[AsyncWriteRace, SharedRace]),
        m("stream_axpb_s2", DeleteWarpSync(2), &[AsyncReadRace]),
        m("stream_axpb_s2", DeleteBarSync(0), INIT),
        // clusters: multicast slices, remote releases (arrive #0 = producer_commit, #1..#n =
        // one remote arrive per CTA of the cluster).
        m("cluster_multicast_x2", MulticastMask(0, 0b01), &[Deadlock, TxImbalance]),
        m("cluster_multicast_x2", TxBytes(0, -4096), &[AsyncReadRace, TxImbalance, Deadlock, EarlyPhaseCompletion]),
        m("cluster_multicast_x2", DropExpectTx(0), &[AsyncReadRace, TxImbalance, Deadlock, EarlyPhaseCompletion]),
        m("cluster_multicast_x2", DropArrive(2), &[Deadlock]),
        m("cluster_multicast_x2", DropArrives(1, 2), &[Deadlock]),
        m("cluster_multicast_x2", FlipParityInit(0), &[Deadlock]),
        m("cluster_multicast_x2", DeleteWarpSync(0), &[AsyncWriteRace]),
        m("cluster_multicast_x4", MulticastMask(0, 0b0111), &[Deadlock, TxImbalance]),
        m("cluster_multicast_x4", TxBytes(0, -2048), &[AsyncReadRace, TxImbalance, Deadlock, EarlyPhaseCompletion]),
        m("cluster_multicast_x4", DropArrive(4), &[Deadlock]),
        // cp.async completion through cp.async.mbarrier.arrive (wait #0 = empty, #1 = full).
        m("cp_async_mbarrier", DropArrive(0), &[Deadlock]),
        m("cp_async_mbarrier", FlipNoinc(0), &[ArrivalOverflow, AsyncReadRace, IncompletePhase]),
        m("cp_async_mbarrier", FlipParityInit(1), &[AsyncReadRace, AsyncWriteRace, UninitializedSharedRead]),
        m("cp_async_mbarrier", FlipParityInit(0), &[Deadlock]),
        m("cp_async_mbarrier", DeleteWarpSync(0), &[AsyncWriteRace]),
        m("cp_async_mbarrier_noinc", DropCpAsyncArrive(0), &[Deadlock]),
        m("cp_async_mbarrier_noinc", FlipNoinc(0), &[Deadlock]),
        m("cp_async_mbarrier_noinc", DeleteBarSync(0), INIT),
    ]
}

/// The suite's table, at the workspace root: `bench/mutations.md`.
pub const TABLE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/mutations.md");

/// The schedules every kernel is simulated under.
pub fn schedules() -> Vec<SimConfig> {
    vec![
        SimConfig::default().with_strategy(Strategy::RoundRobin).with_seed(1),
        SimConfig::default().with_strategy(Strategy::Random).with_seed(2),
        SimConfig::default().with_strategy(Strategy::Adversarial).with_seed(3),
    ]
}

pub struct MutantResult {
    pub subject: &'static str,
    pub mutation: String,
    pub expect: Vec<Category>,
    /// Categories found under each schedule (or the error text when it failed to run).
    pub found: Vec<Result<Vec<Category>, String>>,
    pub caught: bool,
}

pub struct CleanResult {
    pub subject: &'static str,
    pub found: Vec<Result<Vec<Category>, String>>,
    pub clean: bool,
}

pub struct Suite {
    pub clean: Vec<CleanResult>,
    pub mutants: Vec<MutantResult>,
}

impl Suite {
    pub fn caught(&self) -> usize {
        self.mutants.iter().filter(|m| m.caught).count()
    }
}

fn categories(r: Result<SimReport, RuntimeError>) -> Result<Vec<Category>, String> {
    r.map(|rep| rep.categories()).map_err(|e| e.to_string())
}

/// Run every subject clean and every mutant under every schedule.
pub fn run_suite() -> Suite {
    let subs = subjects();
    let mut clean = Vec::new();
    for s in &subs {
        let k = s.kernel().unwrap_or_else(|e| panic!("subject `{}`: {e}", s.name));
        let found: Vec<_> = schedules().iter().map(|sc| categories(s.simulate(&k, sc))).collect();
        let ok = found.iter().all(|f| matches!(f, Ok(c) if c.is_empty()));
        clean.push(CleanResult { subject: s.name, found, clean: ok });
    }
    let mut results = Vec::new();
    for m in mutants() {
        let s = subs.iter().find(|s| s.name == m.subject).expect("known subject");
        let mut k = s.kernel().unwrap_or_else(|e| panic!("subject `{}`: {e}", s.name));
        let applied = m.mutation.apply(&mut k);
        let found: Vec<_> = if applied {
            schedules().iter().map(|sc| categories(s.simulate(&k, sc))).collect()
        } else {
            vec![Err("mutation did not apply".into())]
        };
        let caught = applied && found.iter().any(|f| matches!(f, Ok(c) if c.iter().any(|x| m.expect.contains(x))));
        results.push(MutantResult {
            subject: m.subject,
            mutation: m.mutation.describe(),
            expect: m.expect.to_vec(),
            found,
            caught,
        });
    }
    Suite { clean, mutants: results }
}

fn cats(c: &Result<Vec<Category>, String>) -> String {
    match c {
        Ok(v) if v.is_empty() => "-".into(),
        Ok(v) => v.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
        Err(e) => format!("error: {}", e.lines().next().unwrap_or("")),
    }
}

/// The caught/total table in Markdown.
pub fn markdown(s: &Suite) -> String {
    let names: Vec<&str> = schedules().iter().map(|c| c.strategy.name()).collect();
    let mut out = String::from("# Mutation suite: the simulator's mbarrier protocol checker\n\n");
    out.push_str(
        "Generated by `cargo run --release --bin mutations` (writes this file; the test \
                  `examples/tests/mutations.rs` fails when it is stale). Each mutant is one bug injected into the IR \
                  of an example kernel, launched in place of the kernel by the example's own setup (small size) and \
                  simulated under three schedules; it is caught when a finding of an expected category appears \
                  under at least one schedule.\n\n",
    );
    out.push_str(&format!(
        "**Caught {}/{} mutants.** Unmutated kernels with no finding under any schedule: {}/{}.\n\n",
        s.caught(),
        s.mutants.len(),
        s.clean.iter().filter(|c| c.clean).count(),
        s.clean.len()
    ));
    out.push_str(&format!("## Unmutated kernels\n\n| kernel | {} | clean |\n|---|", names.join(" | ")));
    out.push_str(&"---|".repeat(names.len() + 1));
    out.push('\n');
    for c in &s.clean {
        let f: Vec<String> = c.found.iter().map(cats).collect();
        out.push_str(&format!("| {} | {} | {} |\n", c.subject, f.join(" | "), if c.clean { "yes" } else { "NO" }));
    }
    out.push_str(&format!(
        "\n## Mutants\n\n| kernel | mutation | expected (any of) | {} | caught |\n|---|---|---|",
        names.join(" | ")
    ));
    out.push_str(&"---|".repeat(names.len() + 1));
    out.push('\n');
    for m in &s.mutants {
        let f: Vec<String> = m.found.iter().map(cats).collect();
        let exp: Vec<&str> = m.expect.iter().map(|c| c.name()).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            m.subject,
            m.mutation,
            exp.join(", "),
            f.join(" | "),
            if m.caught { "yes" } else { "**NO**" }
        ));
    }
    out
}
