//! The ISA table: for every op, the oldest PTX ISA version and the targets that have it.

use super::target::{PtxVersion, Target};
use crate::ir::{Access, AtomOp, FragmentOp, MemOrder, MemScope, Space, WarpOp, WgmmaOp};
use crate::ir::{ArithOp, Value};
use crate::ir::{
    BarSpace, Inst, MbarrierOp, MemoryOp, Ordering, Scope, Sem, SpecialReg, SyncOp, Tcgen05Op, TmaOp, Type,
};

/// Which targets can run an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Avail {
    /// Any target with compute capability >= n.
    SmAtLeast(u32),
    /// Only the listed architecture-specific targets.
    Only(&'static [Target]),
}

/// What an op needs: a name for messages, a PTX ISA version, and target availability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub what: &'static str,
    pub ptx: PtxVersion,
    pub avail: Avail,
}

impl Requirement {
    const fn new(what: &'static str, major: u8, minor: u8, sm: u32) -> Self {
        Requirement { what, ptx: PtxVersion::new(major, minor), avail: Avail::SmAtLeast(sm) }
    }
    const fn only(what: &'static str, major: u8, minor: u8, targets: &'static [Target]) -> Self {
        Requirement { what, ptx: PtxVersion::new(major, minor), avail: Avail::Only(targets) }
    }
    pub fn available_on(&self, t: Target) -> bool {
        match self.avail {
            Avail::SmAtLeast(n) => t.sm() >= n,
            Avail::Only(ts) => ts.contains(&t),
        }
    }
    pub fn describe_avail(&self) -> String {
        match self.avail {
            Avail::SmAtLeast(n) => format!("sm_{n} or newer"),
            Avail::Only(ts) => ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(" or "),
        }
    }
}

const SM90A_UP: &[Target] = &[Target::Sm90a, Target::Sm100a];
const SM100A: &[Target] = &[Target::Sm100a];
/// wgmma exists on sm_90a only (Blackwell has tcgen05 instead).
const SM90A: &[Target] = &[Target::Sm90a];

/// `.release`/`.acquire` with `.cta` scope work on sm_80 (PTX 8.0); `.cluster` scope and
/// `.relaxed` need sm_90 (ptxas says so: `codegen/tests/registry_ptxas.rs`).
fn ordering_req(base: Requirement, order: &Ordering) -> Requirement {
    let mut r = base;
    if order.sem == Some(Sem::Relaxed) {
        r = max_req(r, Requirement::new("`.relaxed` mbarrier semantics", 8, 6, 90));
    } else if order.sem.is_some() || order.scope.is_some() {
        r = max_req(r, Requirement::new("mbarrier `.sem`/`.scope` qualifiers", 8, 0, 80));
    }
    if order.scope == Some(Scope::Cluster) {
        r = max_req(r, Requirement::new("mbarrier `.cluster` scope", 8, 0, 90));
    }
    r
}

/// The stricter of two requirements (versions max, availability intersected for our table).
fn max_req(a: Requirement, b: Requirement) -> Requirement {
    let avail = match (a.avail, b.avail) {
        (Avail::Only(x), _) => Avail::Only(x),
        (_, Avail::Only(y)) => Avail::Only(y),
        (Avail::SmAtLeast(x), Avail::SmAtLeast(y)) => Avail::SmAtLeast(x.max(y)),
    };
    let what = if b.ptx > a.ptx
        || matches!(b.avail, Avail::Only(_))
        || matches!((a.avail, b.avail), (Avail::SmAtLeast(x), Avail::SmAtLeast(y)) if y > x)
    {
        b.what
    } else {
        a.what
    };
    Requirement { what, ptx: a.ptx.max(b.ptx), avail }
}

fn space_req(base: Requirement, space: BarSpace) -> Requirement {
    match space {
        BarSpace::Cta => base,
        BarSpace::Cluster => max_req(base, Requirement::new("remote `.shared::cluster` mbarrier access", 8, 0, 90)),
    }
}

/// The requirement of one instruction. Every variant states its own (`base`: PTX 7.0 / sm_80,
/// the oldest Phaser targets), so a new op does not compile until it has one; ptxas confirms
/// them (`codegen/tests/registry_ptxas.rs`).
pub fn requirement(inst: &Inst) -> Requirement {
    let base = Requirement::new("basic PTX", 7, 0, 80);
    match inst {
        Inst::Arith(op) => match op {
            ArithOp::Cvt { dst, src, .. } if dst.ty == Type::BF16 || src.ty() == Type::BF16 => {
                Requirement::new("bf16 conversion", 7, 8, 90)
            }
            ArithOp::Cvt { .. }
            | ArithOp::Mov { .. }
            | ArithOp::Unary { .. }
            | ArithOp::Binary { .. }
            | ArithOp::Mad { .. }
            | ArithOp::Setp { .. }
            | ArithOp::Selp { .. }
            | ArithOp::Bitcast { .. } => base,
            // ex2/lg2/rcp/rsqrt/sqrt `.approx.ftz.f32`: PTX 1.0, sm_10 (`.ftz` 1.4);
            // `rcp.rn`/`sqrt.rn` f32: PTX 1.4, sm_20; f64: sm_13. All within the base.
            ArithOp::Math { .. } => base,
            // `ex2.approx.f16x2`: PTX 7.0, sm_75; `ex2.approx.ftz.bf16x2`: PTX 7.8, sm_90
            // (PTX ISA, "Half Precision Floating Point Instructions: ex2").
            ArithOp::MathHalf2 { half: Type::BF16, .. } => Requirement::new("`ex2.approx.ftz.bf16x2`", 7, 8, 90),
            ArithOp::MathHalf2 { .. } => Requirement::new("`ex2.approx.f16x2`", 7, 0, 75),
            // `min.NaN`/`max.NaN` f32: PTX 7.0, sm_80; `copysign`: PTX 2.0, sm_20.
            ArithOp::FloatBinary { .. } => base,
        },
        // A probe prints a comment only.
        Inst::Probe { .. } => base,
        // The watchdog's counting and clock (`mov`, `add`, `%globaltimer`: PTX 3.1, sm_30); the
        // trap path's `match.any.sync` (sm_70) and `nanosleep` (sm_70) are under every target's floor.
        Inst::FlagSpin(_) => base,
        Inst::ReadSpecial { sreg, .. } => {
            if sreg.needs_cluster() {
                Requirement::new("cluster special registers", 7, 8, 90)
            } else {
                base
            }
        }
        Inst::Memory(m) => match m {
            MemoryOp::Ld { space, access, .. } | MemoryOp::St { space, access, .. } => {
                let r = match space {
                    Space::SharedCluster => Requirement::new("`ld/st.shared::cluster`", 7, 8, 90),
                    Space::Global | Space::Shared => base,
                };
                match access {
                    Access::Weak | Access::Volatile => r,
                    Access::Strong(MemOrder { scope, .. }) => {
                        let r = max_req(
                            r,
                            Requirement::new("`ld`/`st` with `.relaxed`/`.acquire`/`.release` and a scope", 6, 0, 70),
                        );
                        if *scope == MemScope::Cluster {
                            max_req(r, Requirement::new("`ld`/`st` with `.cluster` scope", 7, 8, 90))
                        } else {
                            r
                        }
                    }
                }
            }
            // Copies of addresses the entry computes (`mov` of a shared symbol).
            MemoryOp::SharedAddr { .. } | MemoryOp::DynSharedAddr { .. } => base,
            MemoryOp::ParamAddr { .. } => Requirement::new("`cvta.param` (tensor-map parameter address)", 7, 7, 80),
            MemoryOp::CpAsync { .. } | MemoryOp::CpAsyncCommitGroup | MemoryOp::CpAsyncWaitGroup { .. } => {
                Requirement::new("`cp.async`", 7, 0, 80)
            }
            MemoryOp::CpAsyncMbarrierArrive { .. } => Requirement::new("`cp.async.mbarrier.arrive`", 7, 0, 80),
            MemoryOp::LdVec { space, .. } => match space {
                Space::SharedCluster => Requirement::new("`ld.shared::cluster` (vector)", 7, 8, 90),
                Space::Global | Space::Shared => base,
            },
            MemoryOp::StVec { space, .. } => match space {
                Space::SharedCluster => Requirement::new("`st.shared::cluster` (vector)", 7, 8, 90),
                Space::Global | Space::Shared => base,
            },
            MemoryOp::Atom { space, order, op, ty, dst, .. } => {
                let name = if dst.is_some() { "`atom`" } else { "`red`" };
                let mut r = if *op == AtomOp::Add && *ty == Type::F64 {
                    Requirement::new("`atom.add.f64`", 5, 0, 60)
                } else {
                    Requirement::new(name, 6, 0, 70)
                };
                if *space == Space::SharedCluster {
                    r = max_req(r, Requirement::new("an atomic on `.shared::cluster`", 7, 8, 90));
                }
                if order.scope == Some(MemScope::Cluster) {
                    r = max_req(r, Requirement::new("an atomic with `.cluster` scope", 7, 8, 90));
                }
                r
            }
        },
        Inst::Mbarrier(op) => match op {
            MbarrierOp::Init { .. } => Requirement::new("`mbarrier.init`", 7, 0, 80),
            MbarrierOp::Inval { .. } => Requirement::new("`mbarrier.inval`", 7, 0, 80),
            MbarrierOp::PendingCount { .. } => Requirement::new("`mbarrier.pending_count`", 7, 0, 80),
            MbarrierOp::Arrive { order, space, drop, count, state, .. } => {
                let name = if *drop { "`mbarrier.arrive_drop`" } else { "`mbarrier.arrive`" };
                let mut r = Requirement::new(name, 7, 0, 80);
                if count.is_some() {
                    r = max_req(r, Requirement::new("an mbarrier arrive with a count", 7, 8, 90));
                }
                if state.is_none() {
                    r = max_req(r, Requirement::new("an mbarrier arrive discarding its state (`_`)", 7, 1, 80));
                }
                space_req(ordering_req(r, order), *space)
            }
            MbarrierOp::ArriveExpectTx { order, space, .. } => {
                space_req(ordering_req(Requirement::new("`mbarrier.arrive.expect_tx`", 8, 0, 90), order), *space)
            }
            MbarrierOp::ExpectTx { .. } => Requirement::new("`mbarrier.expect_tx`", 8, 0, 90),
            MbarrierOp::CompleteTx { .. } => Requirement::new("`mbarrier.complete_tx`", 8, 0, 90),
            MbarrierOp::TestWait { order, on, .. } => {
                let r = match on {
                    crate::ir::WaitOn::Parity(_) => Requirement::new("`mbarrier.test_wait.parity`", 7, 1, 80),
                    crate::ir::WaitOn::State(_) => Requirement::new("`mbarrier.test_wait`", 7, 0, 80),
                };
                ordering_req(r, order)
            }
            MbarrierOp::TryWait { order, .. } | MbarrierOp::Wait { order, .. } => {
                ordering_req(Requirement::new("`mbarrier.try_wait`", 7, 8, 90), order)
            }
        },
        Inst::Sync(op) => match op {
            SyncOp::BarSync { .. } | SyncOp::BarArrive { .. } | SyncOp::Trap => base,
            SyncOp::MemBar { scope } => match scope {
                MemScope::Cluster => Requirement::new("`fence.acq_rel.cluster`", 7, 8, 90),
                MemScope::Cta | MemScope::Gpu | MemScope::Sys => Requirement::new("`fence.acq_rel`", 6, 0, 70),
            },
            SyncOp::FenceMbarrierInit => Requirement::new("`fence.mbarrier_init`", 8, 0, 90),
            SyncOp::FenceProxyAsync { .. } => Requirement::new("`fence.proxy.async`", 8, 0, 90),
            SyncOp::WarpSync { .. } => Requirement::new("`bar.warp.sync`", 6, 0, 80),
            SyncOp::ElectSync { .. } => Requirement::new("`elect.sync`", 8, 0, 90),
            SyncOp::ActiveMask { .. } => Requirement::new("`activemask`", 6, 2, 70),
            SyncOp::SetMaxNReg { .. } => Requirement::only("`setmaxnreg`", 8, 0, SM90A_UP),
            SyncOp::Mapa { .. } => Requirement::new("`mapa`", 7, 8, 90),
            // `barrier.cluster` is PTX 7.8, but its `.release`/`.relaxed`/`.acquire` forms (the
            // ones emitted) are 8.0.
            SyncOp::ClusterArrive { .. } | SyncOp::ClusterWait => Requirement::new("`barrier.cluster`", 8, 0, 90),
            SyncOp::Nanosleep { .. } => Requirement::new("`nanosleep`", 6, 3, 70),
            SyncOp::GridDepWait | SyncOp::GridDepLaunchDependents => {
                Requirement::new("`griddepcontrol` (programmatic dependent launch)", 7, 8, 90)
            }
        },
        Inst::Warp(op) => match op {
            WarpOp::Shfl { .. } => Requirement::new("`shfl.sync`", 6, 0, 30),
            WarpOp::Vote { .. } => Requirement::new("`vote.sync`", 6, 0, 30),
            WarpOp::Match { .. } => Requirement::new("`match.sync`", 6, 0, 70),
            WarpOp::Redux { .. } => Requirement::new("`redux.sync`", 7, 0, 80),
        },
        Inst::Printf(_) | Inst::Asm(_) => base,
        // Every bulk copy is PTX 8.0 / sm_90; the names say which form a message is about.
        Inst::Tma(op) => match op {
            TmaOp::LoadTensor { multicast: Some(_), .. } => {
                Requirement::new("`cp.async.bulk.tensor` with `.multicast::cluster`", 8, 0, 90)
            }
            TmaOp::LoadTensor { multicast: None, .. } => {
                Requirement::new("`cp.async.bulk.tensor` (TMA load)", 8, 0, 90)
            }
            TmaOp::StoreTensor { .. } => Requirement::new("`cp.async.bulk.tensor` (TMA store)", 8, 0, 90),
            TmaOp::LoadBulk { .. } => Requirement::new("`cp.async.bulk` (bulk load)", 8, 0, 90),
            TmaOp::StoreBulk { .. } => Requirement::new("`cp.async.bulk` (bulk store)", 8, 0, 90),
            TmaOp::CommitGroup => Requirement::new("`cp.async.bulk.commit_group`", 8, 0, 90),
            TmaOp::WaitGroup { .. } => Requirement::new("`cp.async.bulk.wait_group`", 8, 0, 90),
            TmaOp::PrefetchTensor { .. } => Requirement::new("`cp.async.bulk.prefetch.tensor`", 8, 0, 90),
            TmaOp::LoadBulkMulticast { .. } => Requirement::new("`cp.async.bulk` with `.multicast::cluster`", 8, 0, 90),
            TmaOp::CopyBulkCluster { .. } => {
                Requirement::new("`cp.async.bulk.shared::cluster.shared::cta` (CTA to CTA)", 8, 0, 90)
            }
        },
        // Every tcgen05 instruction: "Introduced in PTX ISA version 8.6", "Supported on
        // following architectures: sm_100a, sm_101a" (and family targets from PTX 8.8, which
        // Phaser does not model); ptxas agrees (`codegen/tests/registry_ptxas.rs`).
        Inst::Tcgen05(op) => {
            let what = match op {
                Tcgen05Op::Alloc { .. } => "`tcgen05.alloc`",
                Tcgen05Op::Dealloc { .. } => "`tcgen05.dealloc`",
                Tcgen05Op::RelinquishAllocPermit { .. } => "`tcgen05.relinquish_alloc_permit`",
                Tcgen05Op::Ld { .. } => "`tcgen05.ld`",
                Tcgen05Op::St { .. } => "`tcgen05.st`",
                Tcgen05Op::Wait { .. } => "`tcgen05.wait`",
                Tcgen05Op::Cp { .. } => "`tcgen05.cp`",
                Tcgen05Op::Shift { .. } => "`tcgen05.shift`",
                Tcgen05Op::Mma(_) => "`tcgen05.mma`",
                Tcgen05Op::Commit { .. } => "`tcgen05.commit`",
                Tcgen05Op::Fence { .. } => "`tcgen05.fence`",
            };
            Requirement::only(what, 8, 6, SM100A)
        }
        Inst::Wgmma(op) => match op {
            WgmmaOp::Fence => Requirement::only("`wgmma.fence`", 8, 0, SM90A),
            WgmmaOp::CommitGroup => Requirement::only("`wgmma.commit_group`", 8, 0, SM90A),
            WgmmaOp::WaitGroup { .. } => Requirement::only("`wgmma.wait_group`", 8, 0, SM90A),
            WgmmaOp::MmaAsync(m) if m.a_ty.is_fp8() => {
                Requirement::only("`wgmma.mma_async` with FP8 operands", 8, 0, SM90A)
            }
            WgmmaOp::MmaAsync(_) => Requirement::only("`wgmma.mma_async`", 8, 0, SM90A),
        },
        Inst::Fragment(op) => match op {
            FragmentOp::PackHalf2 { .. } => Requirement::new("`cvt.rn.{bf16x2,f16x2}.f32`", 7, 0, 80),
            // ptxas: PTX 8.1 on sm_89, 7.8 from sm_90; one version per op, so the larger.
            FragmentOp::PackFp8x2 { .. } => Requirement::new("`cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`", 8, 1, 89),
            FragmentOp::UnpackHalf2 { .. } => base,
            FragmentOp::StMatrix { .. } => Requirement::new("`stmatrix`", 7, 8, 90),
            FragmentOp::LdMatrix { .. } => Requirement::new("`ldmatrix`", 6, 5, 75),
        },
    }
}

/// Whether `v` is an immediate (used by value checks that only apply to constants).
pub fn imm(v: &Value) -> Option<i128> {
    v.as_imm_i128()
}

/// Special registers that need at least this requirement.
pub fn special_requirement(s: SpecialReg) -> Requirement {
    requirement(&Inst::ReadSpecial { dst: crate::ir::Reg { id: 0, ty: Type::U32 }, sreg: s })
}
