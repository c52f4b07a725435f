//! Loads, stores and addresses of memory.

use super::types::Type;
use super::value::{AllocId, ParamId, Reg, Value};

/// PTX state spaces an address can point into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    /// This CTA's shared memory (32-bit addresses).
    Shared,
    /// Any CTA's shared memory in the cluster (an address from `mapa`).
    SharedCluster,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MemoryOp {
    /// `ld{.access}.space.ty dst, [addr + offset]`.
    Ld {
        space: Space,
        ty: Type,
        dst: Reg,
        addr: Value,
        offset: i32,
        access: Access,
    },
    /// `st{.access}.space.ty [addr + offset], src`.
    St {
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        src: Value,
        access: Access,
    },
    /// The 32-bit shared address of a static shared allocation.
    SharedAddr {
        dst: Reg,
        alloc: AllocId,
    },
    /// The 32-bit shared address of the dynamic shared memory window.
    DynSharedAddr {
        dst: Reg,
    },
    /// Generic address of a by-value kernel parameter (tensor maps are read from there).
    ParamAddr {
        dst: Reg,
        param: ParamId,
    },
    /// Ampere `cp.async.{ca,cg}.shared.global [dst], [src], bytes` (4, 8 or 16 bytes).
    CpAsync {
        dst: Value,
        src: Value,
        bytes: u32,
    },
    CpAsyncCommitGroup,
    /// `cp.async.mbarrier.arrive[.noinc].shared::cta.b64 [bar]`: an arrival on `bar` that fires
    /// once every prior `cp.async` of this thread completed. Without `.noinc` the pending count
    /// is incremented first, so the arrival is net-zero for the phase (init the barrier with the
    /// count of ordinary arrivals only); with `.noinc` it counts as one of the expected arrivals.
    CpAsyncMbarrierArrive {
        bar: Value,
        noinc: bool,
    },
    CpAsyncWaitGroup {
        n: u32,
    },
    /// `ld.space{.nc}{.v2,.v4}.ty {dsts}, [addr + offset]`: one load of `dsts.len()` (1, 2 or
    /// 4) consecutive elements, aligned to their total size. `nc`: through the non-coherent
    /// (read-only) data cache, global only (`ld.global.nc`, CUDA's `__ldg`).
    LdVec {
        space: Space,
        ty: Type,
        dsts: Vec<Reg>,
        addr: Value,
        offset: i32,
        nc: bool,
    },
    /// `st.space.v{2,4}.ty [addr+offset], {srcs}`: one vector store, aligned to its size.
    StVec {
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        srcs: Vec<Value>,
    },
    /// `atom{.sem}{.scope}.space.op.ty dst, [addr], src{, cmp}` (`cas`: `cmp` first), or with
    /// `dst: None` the reduction `red{.sem}{.scope}.space.op.ty [addr], src` (no result).
    Atom {
        op: AtomOp,
        order: AtomOrder,
        space: Space,
        ty: Type,
        dst: Option<Reg>,
        addr: Value,
        src: Value,
        /// The compare value of `cas`.
        cmp: Option<Value>,
    },
}

/// What an atomic does to memory (`old` is the value there, `v` the operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
    /// `v`.
    Exch,
    /// `old == cmp ? v : old`.
    Cas,
}

impl AtomOp {
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
        }
    }
    /// Bit-size operations take `.b32`/`.b64` operands; the others typed ones.
    pub fn is_bitwise(self) -> bool {
        matches!(self, AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch | AtomOp::Cas)
    }
}

/// How a plain `ld`/`st` takes part in the PTX memory consistency model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Access {
    /// No qualifier: a weak access (two of them to one location, one a write, unordered by
    /// synchronization, are a data race).
    #[default]
    Weak,
    /// `.volatile`: kept exactly as written (PTX: a `.relaxed.sys` access).
    Volatile,
    /// `.relaxed.scope`, `.acquire.scope` (loads only) or `.release.scope` (stores only): a
    /// strong access, the loads and stores of a flag protocol (PTX 6.0, sm_70).
    Strong(MemOrder),
}

/// `.sem` and `.scope` of a strong load or store, both required (PTX has no `ld.acquire`
/// without a scope).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemOrder {
    pub sem: AtomSem,
    pub scope: super::sync::MemScope,
}

impl MemOrder {
    /// Whether a load may have these semantics (`.relaxed`, `.acquire`), or a store
    /// (`.relaxed`, `.release`): the problem otherwise.
    pub fn problem(self, load: bool) -> Option<String> {
        let ok = match self.sem {
            AtomSem::Relaxed => true,
            AtomSem::Acquire => load,
            AtomSem::Release => !load,
            AtomSem::AcqRel => false,
        };
        (!ok).then(|| {
            let (what, allowed) =
                if load { ("a load", "`.relaxed` or `.acquire`") } else { ("a store", "`.relaxed` or `.release`") };
            format!("{what} has {allowed} semantics, not `.{}`", self.sem.name())
        })
    }
}

/// Memory semantics of an atomic or a strong load/store (PTX default for atomics: `.relaxed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomSem {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl AtomSem {
    pub fn name(self) -> &'static str {
        match self {
            AtomSem::Relaxed => "relaxed",
            AtomSem::Acquire => "acquire",
            AtomSem::Release => "release",
            AtomSem::AcqRel => "acq_rel",
        }
    }
}

/// `.sem` and `.scope` of an atomic; `None` prints nothing (PTX: `.relaxed`, `.gpu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AtomOrder {
    pub sem: Option<AtomSem>,
    pub scope: Option<super::sync::MemScope>,
}
