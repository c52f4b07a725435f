//! Typed handles the builder hands out, so that Rust's type checker keeps barrier
//! pointers, shared arrays and global buffers apart.

use crate::ir::{AllocId, Type, Value};

/// A pointer into global memory (the kernel parameter's address, already `cvta`'d).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlobalPtr {
    pub addr: Value,
    pub elem: Type,
    pub mutable: bool,
}

/// Where a shared array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedBase {
    Static(AllocId),
    /// The dynamic shared-memory window, starting `offset` bytes in.
    Dynamic {
        offset: u32,
    },
}

/// A typed array in this CTA's shared memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharedArray {
    pub base: SharedBase,
    pub elem: Type,
    /// Known length (static allocations); `None` for dynamic shared memory.
    pub len: Option<u32>,
}

/// An array of mbarriers in shared memory (`T.alloc_barriers(n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierArray {
    pub alloc: AllocId,
    pub len: u32,
}

/// The shared::cta address of one mbarrier (`bars.ptr_to([i])`). Only the builder makes
/// these, from a `BarrierArray` or an explicit shared address, so a global pointer can never
/// be passed where a barrier is expected.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Barrier {
    pub addr: Value,
}

/// The shared::cluster address of an mbarrier in some CTA of the cluster (from `mapa`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteBarrier {
    pub addr: Value,
}

/// The generic address of a `CUtensorMap` kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorMapRef {
    pub addr: Value,
    pub rank: u8,
}

/// A shared array of some CTA of the cluster, by its shared::cluster address (`mapa` of the
/// array's base): indexing it reads and writes with `ld`/`st.shared::cluster` (distributed
/// shared memory).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteShared {
    pub addr: Value,
    pub elem: Type,
    pub len: Option<u32>,
}

/// Any array an element-wise op can address: a global buffer, this CTA's shared array, or a
/// shared array of another CTA of the cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrayRef {
    Global(GlobalPtr),
    Shared(SharedArray),
    Remote(RemoteShared),
}

impl ArrayRef {
    pub fn elem(&self) -> Type {
        match self {
            ArrayRef::Global(g) => g.elem,
            ArrayRef::Shared(s) => s.elem,
            ArrayRef::Remote(r) => r.elem,
        }
    }
    /// The state space its addresses are in.
    pub fn space(&self) -> crate::ir::Space {
        match self {
            ArrayRef::Global(_) => crate::ir::Space::Global,
            ArrayRef::Shared(_) => crate::ir::Space::Shared,
            ArrayRef::Remote(_) => crate::ir::Space::SharedCluster,
        }
    }
}

impl From<GlobalPtr> for ArrayRef {
    fn from(g: GlobalPtr) -> ArrayRef {
        ArrayRef::Global(g)
    }
}
impl From<SharedArray> for ArrayRef {
    fn from(s: SharedArray) -> ArrayRef {
        ArrayRef::Shared(s)
    }
}
impl From<RemoteShared> for ArrayRef {
    fn from(r: RemoteShared) -> ArrayRef {
        ArrayRef::Remote(r)
    }
}
