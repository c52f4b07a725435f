//! Loads, stores and addresses of memory.

use super::kernel::{AllocId, ParamId};
use super::types::Type;
use super::value::{Reg, Value};

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
    /// `ld.space.ty dst, [addr + offset]`.
    Ld {
        space: Space,
        ty: Type,
        dst: Reg,
        addr: Value,
        offset: i32,
        volatile: bool,
    },
    /// `st.space.ty [addr + offset], src`.
    St {
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        src: Value,
        volatile: bool,
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
    /// Atomic add on global memory, returning the old value.
    AtomAdd {
        space: Space,
        ty: Type,
        dst: Reg,
        addr: Value,
        src: Value,
    },
}
