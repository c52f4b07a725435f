//! What a mutant can point at: kinds of IR statements ([`Op`]) and the operands of an
//! instruction a mutator may change ([`Role`]).
//!
//! A new op family adds one [`Op`] constant per instruction kind a mutant names, and an arm in
//! [`operand_mut`] for each operand role it has (its byte count, its arrival count, its parity,
//! its multicast mask...). Every generic mutator ([`super::mutator`]) then works on it.

use phaser::codegen::ir::*;

/// A kind of IR statement, by a predicate on the statement.
#[derive(Clone, Copy)]
pub struct Op {
    /// What the table calls it: `mbarrier.arrive`, `bar.sync`, ...
    pub name: &'static str,
    pub matches: fn(&StmtKind) -> bool,
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! op {
    ($(#[$doc:meta])* $id:ident, $name:literal, $pat:pat) => {
        $(#[$doc])*
        pub const $id: Op = Op { name: $name, matches: |s| matches!(s, $pat) };
    };
}

/// The statement kinds of today's gallery kernels.
pub mod ops {
    use super::*;
    op!(INIT, "mbarrier.init", StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Init { .. })));
    op!(
        /// A plain arrive on this CTA's barrier.
        ARRIVE, "mbarrier.arrive", StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Arrive { space: BarSpace::Cta, .. })));
    op!(
        /// An arrive on a barrier of another CTA of the cluster (`.shared::cluster`, after `mapa`).
        REMOTE_ARRIVE,
        "mbarrier.arrive.shared::cluster",
        StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Arrive { space: BarSpace::Cluster, .. }))
    );
    op!(EXPECT_TX, "mbarrier.arrive.expect_tx", StmtKind::Inst(Inst::Mbarrier(MbarrierOp::ArriveExpectTx { .. })));
    op!(
        /// A blocking wait (`try_wait` retry loop in PTX).
        WAIT, "mbarrier.wait", StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Wait { .. })));
    op!(TRY_WAIT, "mbarrier.try_wait", StmtKind::Inst(Inst::Mbarrier(MbarrierOp::TryWait { .. })));
    op!(TEST_WAIT, "mbarrier.test_wait", StmtKind::Inst(Inst::Mbarrier(MbarrierOp::TestWait { .. })));
    op!(BAR_SYNC, "bar.sync", StmtKind::Inst(Inst::Sync(SyncOp::BarSync { .. })));
    op!(
        /// `bar.arrive id, count`: arrive at a named barrier without waiting (a ping-pong turn).
        BAR_ARRIVE, "bar.arrive", StmtKind::Inst(Inst::Sync(SyncOp::BarArrive { .. })));
    op!(WGMMA_FENCE, "wgmma.fence", StmtKind::Inst(Inst::Wgmma(WgmmaOp::Fence)));
    op!(WGMMA_MMA, "wgmma.mma_async", StmtKind::Inst(Inst::Wgmma(WgmmaOp::MmaAsync(_))));
    op!(WGMMA_COMMIT, "wgmma.commit_group", StmtKind::Inst(Inst::Wgmma(WgmmaOp::CommitGroup)));
    op!(WGMMA_WAIT, "wgmma.wait_group", StmtKind::Inst(Inst::Wgmma(WgmmaOp::WaitGroup { .. })));
    op!(
        /// `cvt.rn.bf16x2.f32`: two f32s packed into one register (`T.fragment.to_a`, `T.pack.*`).
        PACK_HALF2, "cvt.rn.{bf16,f16}x2.f32 (pack)", StmtKind::Inst(Inst::Fragment(FragmentOp::PackHalf2 { .. })));
    op!(WARP_SYNC, "bar.warp.sync", StmtKind::Inst(Inst::Sync(SyncOp::WarpSync { .. })));
    op!(FENCE_PROXY_ASYNC, "fence.proxy.async", StmtKind::Inst(Inst::Sync(SyncOp::FenceProxyAsync { .. })));
    op!(FENCE_MBARRIER_INIT, "fence.mbarrier_init", StmtKind::Inst(Inst::Sync(SyncOp::FenceMbarrierInit)));
    op!(CLUSTER_ARRIVE, "barrier.cluster.arrive", StmtKind::Inst(Inst::Sync(SyncOp::ClusterArrive { .. })));
    op!(CLUSTER_WAIT, "barrier.cluster.wait", StmtKind::Inst(Inst::Sync(SyncOp::ClusterWait)));
    op!(ELECT, "elect.sync", StmtKind::Inst(Inst::Sync(SyncOp::ElectSync { .. })));
    op!(MAPA, "mapa", StmtKind::Inst(Inst::Sync(SyncOp::Mapa { .. })));
    op!(BULK_LOAD, "cp.async.bulk (load)", StmtKind::Inst(Inst::Tma(TmaOp::LoadBulk { .. })));
    op!(BULK_STORE, "cp.async.bulk (store)", StmtKind::Inst(Inst::Tma(TmaOp::StoreBulk { .. })));
    op!(TMA_LOAD, "cp.async.bulk.tensor (load)", StmtKind::Inst(Inst::Tma(TmaOp::LoadTensor { multicast: None, .. })));
    op!(
        TMA_LOAD_MULTICAST,
        "cp.async.bulk.tensor.multicast",
        StmtKind::Inst(Inst::Tma(TmaOp::LoadTensor { multicast: Some(_), .. }))
    );
    op!(TMA_STORE, "cp.async.bulk.tensor (store)", StmtKind::Inst(Inst::Tma(TmaOp::StoreTensor { .. })));
    op!(BULK_COMMIT, "cp.async.bulk.commit_group", StmtKind::Inst(Inst::Tma(TmaOp::CommitGroup)));
    op!(BULK_WAIT, "cp.async.bulk.wait_group", StmtKind::Inst(Inst::Tma(TmaOp::WaitGroup { .. })));
    op!(CP_ASYNC, "cp.async", StmtKind::Inst(Inst::Memory(MemoryOp::CpAsync { .. })));
    op!(
        CP_ASYNC_ARRIVE,
        "cp.async.mbarrier.arrive",
        StmtKind::Inst(Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { .. }))
    );
    op!(CP_ASYNC_COMMIT, "cp.async.commit_group", StmtKind::Inst(Inst::Memory(MemoryOp::CpAsyncCommitGroup)));
    op!(CP_ASYNC_WAIT, "cp.async.wait_group", StmtKind::Inst(Inst::Memory(MemoryOp::CpAsyncWaitGroup { .. })));
    op!(
        /// A strong global store (`st.release`/`.relaxed` with a scope: a flag's signal).
        FLAG_STORE,
        "st.release/.relaxed.global (flag store)",
        StmtKind::Inst(Inst::Memory(MemoryOp::St { space: Space::Global, access: Access::Strong(_), .. }))
    );
    op!(
        /// `griddepcontrol.wait`: a programmatic dependent launch waits for the launch before.
        GRID_DEP_WAIT, "griddepcontrol.wait", StmtKind::Inst(Inst::Sync(SyncOp::GridDepWait)));
    op!(LD_SHARED, "ld.shared", StmtKind::Inst(Inst::Memory(MemoryOp::Ld { space: Space::Shared, .. })));
    op!(ST_SHARED, "st.shared", StmtKind::Inst(Inst::Memory(MemoryOp::St { space: Space::Shared, .. })));
    op!(
        /// `dst = a ^ b` (a `phase ^= 1`).
        XOR, "xor", StmtKind::Inst(Inst::Arith(ArithOp::Binary { op: BinOp::Xor, .. })));
    op!(
        /// `dst = a + b` (a stage or tile counter).
        ADD, "add", StmtKind::Inst(Inst::Arith(ArithOp::Binary { op: BinOp::Add, .. })));
    op!(
        /// `dst = imm` (a `let mut phase = 1`).
        MOV_IMM, "mov (immediate)", StmtKind::Inst(Inst::Arith(ArithOp::Mov { src: Value::Imm { .. }, .. })));
    op!(
        /// `dst = src` of a register (a fragment element copied into its place).
        MOV_REG, "mov (register)", StmtKind::Inst(Inst::Arith(ArithOp::Mov { src: Value::Reg(_), .. })));
    op!(
        /// A `loop` (a `while`, a `for`, or a polling loop such as a `test_wait` spin).
        LOOP, "loop", StmtKind::Loop { .. });
    op!(IF, "if", StmtKind::If { .. });
}

/// An operand of an instruction, by what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The byte count: `expect_tx`, bulk copies.
    Bytes,
    /// The arrival count: `mbarrier.init`, a counted arrive, `bar.sync id, count`.
    Count,
    /// The parity a wait waits on.
    Parity,
    /// The CTA mask of a multicast copy.
    Mask,
    /// The barrier address an mbarrier op, a copy or a commit acts or completes on.
    Barrier,
    /// The source of a `mov`.
    Source,
    /// The second operand of a binary op (the `1` of `phase ^ 1`).
    Rhs,
}

/// The operand of `inst` playing `role`, if it has one.
pub fn operand_mut(inst: &mut Inst, role: Role) -> Option<&mut Value> {
    use Role::*;
    if role == Barrier {
        // Which operand is the barrier is the IR's answer, for every family.
        return inst.barrier_mut();
    }
    match (inst, role) {
        (
            Inst::Mbarrier(
                MbarrierOp::ArriveExpectTx { bytes, .. }
                | MbarrierOp::ExpectTx { bytes, .. }
                | MbarrierOp::CompleteTx { bytes, .. },
            )
            | Inst::Tma(TmaOp::LoadBulk { bytes, .. } | TmaOp::StoreBulk { bytes, .. }),
            Bytes,
        ) => Some(bytes),
        (
            Inst::Mbarrier(MbarrierOp::Init { count, .. } | MbarrierOp::Arrive { count: Some(count), .. })
            | Inst::Sync(SyncOp::BarSync { count: Some(count), .. } | SyncOp::BarArrive { count, .. }),
            Count,
        ) => Some(count),
        (
            Inst::Mbarrier(
                MbarrierOp::Wait { on: WaitOn::Parity(p), .. }
                | MbarrierOp::TryWait { on: WaitOn::Parity(p), .. }
                | MbarrierOp::TestWait { on: WaitOn::Parity(p), .. },
            ),
            Parity,
        ) => Some(p),
        (Inst::Tma(TmaOp::LoadTensor { multicast: Some(m), .. }), Mask) => Some(m),
        (Inst::Arith(ArithOp::Mov { src, .. }), Source) => Some(src),
        (Inst::Arith(ArithOp::Binary { b, .. }), Rhs) => Some(b),
        _ => None,
    }
}
