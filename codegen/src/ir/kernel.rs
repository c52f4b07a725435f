//! Kernels, their parameters and shared-memory allocations; modules of kernels.

use super::shared_layout::DynamicAlloc;
use super::source_loc::SourceLoc;
use super::stmt::Block;
use super::tensor_map_spec::TensorMapSpec;
use super::types::Type;
use super::value::Reg;
use crate::arch::Target;
use crate::emit::PtxCache;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AllocId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar passed by value.
    Scalar(Type),
    /// A pointer to global memory holding `elem`s; the register holds the global address.
    Global { elem: Type, mutable: bool },
    /// A 128-byte `CUtensorMap`, passed by value, 64-byte aligned; the register holds the
    /// generic address of the parameter (what `cp.async.bulk.tensor` takes).
    TensorMap,
}

impl ParamKind {
    /// Size and alignment of the parameter in the launch argument buffer.
    pub fn layout(&self) -> (u32, u32) {
        match self {
            ParamKind::Scalar(t) => (t.size(), t.size()),
            ParamKind::Global { .. } => (8, 8),
            ParamKind::TensorMap => (128, 64),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    /// The register the kernel reads the parameter from (loaded at entry).
    pub reg: Reg,
    /// A tensor map's expected element type, box and swizzle (declared, or implied by the
    /// typed tiles it fills); the launch checks the map against it.
    pub tma: Option<TensorMapSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SharedKind {
    Data,
    /// An array of 8-byte mbarrier objects.
    Barriers,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SharedAlloc {
    pub name: String,
    pub elem: Type,
    pub len: u32,
    pub align: u32,
    pub kind: SharedKind,
    /// The Rust line that allocated it (what a limit error points at).
    pub loc: Option<SourceLoc>,
}

impl SharedAlloc {
    /// Size in bytes (saturating: the layout and the limit checks work in `u64`).
    pub fn bytes(&self) -> u32 {
        self.elem.size().saturating_mul(self.len)
    }
}

/// Launch-shape facts baked into the PTX entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchBounds {
    /// `.reqntid x, y, z`: the block shape the kernel must be launched with.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid`.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqnctapercluster x, y, z` + `.explicitcluster`.
    pub cluster: Option<[u32; 3]>,
    /// `.maxnreg`.
    pub maxnreg: Option<u32>,
    /// `.minnctapersm`.
    pub minnctapersm: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub target: Target,
    pub params: Vec<Param>,
    pub shared: Vec<SharedAlloc>,
    /// Whether the kernel addresses dynamic shared memory (`extern .shared`).
    pub uses_dynamic_shared: bool,
    /// Tiles the builder placed in the dynamic window; a launch that gives no explicit dynamic
    /// size gets what they need ([`Kernel::declared_dynamic_bytes`]).
    pub dynamic: Vec<DynamicAlloc>,
    pub bounds: LaunchBounds,
    pub body: Block,
    /// Number of virtual registers allocated (ids are `0..num_regs`).
    pub num_regs: u32,
    /// This kernel's PTX, printed on first use (see [`Kernel::ptx`]).
    pub(crate) ptx_cache: PtxCache,
}

impl Kernel {
    /// End of the static shared allocations (see [`super::SharedLayout`]), saturated to `u32`.
    pub fn static_shared_bytes(&self) -> u32 {
        u32::try_from(self.shared_layout().static_bytes).unwrap_or(u32::MAX)
    }
    pub fn param(&self, id: ParamId) -> &Param {
        &self.params[id.0 as usize]
    }
    pub fn alloc(&self, id: AllocId) -> &SharedAlloc {
        &self.shared[id.0 as usize]
    }
}

/// A PTX module: one or more kernels sharing a target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub kernels: Vec<Kernel>,
}

impl Module {
    pub fn new(kernels: Vec<Kernel>) -> Module {
        Module { kernels }
    }
}
