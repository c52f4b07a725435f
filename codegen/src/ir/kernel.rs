//! Kernels, their parameters and shared-memory allocations; modules of kernels.

use super::derived::Derived;
use super::dynamic_alloc::DynamicAlloc;
use super::printed::Printed;
use super::source_loc::SourceLoc;
use super::stmt::Block;
use super::target::Target;
use super::tensor_map_spec::TensorMapSpec;
use super::types::Type;
use super::value::{AllocId, ParamId, Reg};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar passed by value.
    Scalar(Type),
    /// A pointer to global memory holding `elem`s; the register holds the global address.
    Global { elem: Type, mutable: bool },
    /// A 128-byte `CUtensorMap`, passed by value, 64-byte aligned; the register holds the
    /// generic address of the parameter (what `cp.async.bulk.tensor` takes). `rank` is the
    /// tensor's number of dimensions, the `.Nd` of every TMA copy through it: a map of
    /// another rank is refused at launch (PTX leaves the mismatch undefined).
    TensorMap { rank: u8 },
}

impl ParamKind {
    /// Size and alignment of the parameter in the launch argument buffer.
    pub fn layout(&self) -> (u32, u32) {
        match self {
            ParamKind::Scalar(t) => (t.size(), t.size()),
            ParamKind::Global { .. } => (8, 8),
            ParamKind::TensorMap { .. } => (128, 64),
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

/// A finished kernel. It cannot be edited, so its PTX is printed once and kept beside it: read
/// it through the getters; to build a variant, take it apart with [`Kernel::into_parts`], edit
/// the [`KernelParts`] and `finish` them again, which checks the result.
#[derive(Clone, Debug)]
pub struct Kernel {
    parts: KernelParts,
    /// Text printed from this kernel (see `Kernel::ptx`). A clone is the same kernel, so it
    /// shares the text.
    pub(crate) printed: Arc<Printed>,
    /// Facts computed from it once (see `derived.rs`), shared by its clones like the text.
    derived: Arc<Derived>,
}

/// Two kernels are equal when their IR is: the printed text follows from it.
impl PartialEq for Kernel {
    fn eq(&self, other: &Kernel) -> bool {
        self.parts == other.parts
    }
}

/// A kernel's parts, open to edit: what [`Kernel::into_parts`] returns and what the builder
/// assembles. `finish` (in the builder) checks them and makes a [`Kernel`] again.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelParts {
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
    /// What this kernel's blocking waits do when a phase never completes (`None`: what the
    /// launch or the device decides; see [`Watchdog`]).
    pub watchdog: Option<Watchdog>,
}

impl KernelParts {
    /// A fresh register of type `ty` (for code added to the body).
    pub fn fresh_reg(&mut self, ty: Type) -> Reg {
        let r = Reg { id: self.num_regs, ty };
        self.num_regs += 1;
        r
    }

    /// The kernel these parts make, unchecked: for the crate's constructors, which check it.
    pub(crate) fn into_kernel_unchecked(self) -> Kernel {
        Kernel { parts: self, printed: Arc::default(), derived: Arc::default() }
    }
}

impl Kernel {
    /// Take the kernel apart to build a variant of it (the variant prints its own PTX).
    pub fn into_parts(self) -> KernelParts {
        self.parts
    }

    /// A copy of the kernel's parts, to build a variant while keeping the kernel.
    pub fn to_parts(&self) -> KernelParts {
        self.parts.clone()
    }

    /// The kernel's name (its PTX entry symbol).
    pub fn name(&self) -> &str {
        &self.parts.name
    }
    pub fn target(&self) -> Target {
        self.parts.target
    }
    pub fn params(&self) -> &[Param] {
        &self.parts.params
    }
    /// The static shared allocations, in declaration order.
    pub fn shared(&self) -> &[SharedAlloc] {
        &self.parts.shared
    }
    /// Whether the kernel addresses dynamic shared memory (`extern .shared`).
    pub fn uses_dynamic_shared(&self) -> bool {
        self.parts.uses_dynamic_shared
    }
    /// Tiles the builder placed in the dynamic window; a launch that gives no explicit dynamic
    /// size gets what they need ([`Kernel::declared_dynamic_bytes`]).
    pub fn dynamic(&self) -> &[DynamicAlloc] {
        &self.parts.dynamic
    }
    pub fn bounds(&self) -> &LaunchBounds {
        &self.parts.bounds
    }
    pub fn body(&self) -> &Block {
        &self.parts.body
    }
    /// The deepest control-flow nesting of the body, walked once per kernel (every launch
    /// checks it: `arch::check_nesting`).
    pub fn nesting_depth(&self) -> usize {
        *self.derived.nesting_depth.get_or_init(|| super::stmt::nesting_depth(self.body()))
    }
    /// Number of virtual registers allocated (ids are `0..num_regs`).
    pub fn num_regs(&self) -> u32 {
        self.parts.num_regs
    }
    /// What this kernel's blocking waits do when a phase never completes (`None`: what the
    /// launch or the device decides; see [`Watchdog`]).
    pub fn watchdog(&self) -> Option<Watchdog> {
        self.parts.watchdog
    }
}

/// The wait watchdog: a blocking mbarrier wait that has waited longer than this traps,
/// after writing a record naming itself (the printer's `emit::watchdog`), so a deadlock
/// becomes an error instead of a hung process. `Off` waits forever: what a debugger
/// (cuda-gdb) session wants, to inspect the hung threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Watchdog {
    Off,
    /// Trap after this many nanoseconds of `%globaltimer` in one wait.
    AfterNs(u64),
}

impl Watchdog {
    /// The default timeout: no legitimate single mbarrier wait lasts seconds.
    pub const DEFAULT_TIMEOUT_NS: u64 = 4_000_000_000;
    pub const DEFAULT: Watchdog = Watchdog::AfterNs(Watchdog::DEFAULT_TIMEOUT_NS);

    pub fn after(d: std::time::Duration) -> Watchdog {
        Watchdog::AfterNs(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1))
    }

    /// A timeout of 0 would trap every wait that does not succeed at its first try; `Off`
    /// is how a kernel waits forever. `setting` names where the value came from.
    pub fn validate(self, setting: &'static str) -> Result<(), crate::error::InvalidSetting> {
        match self {
            Watchdog::AfterNs(0) => Err(crate::error::InvalidSetting::new(
                setting,
                self,
                "a watchdog of 0 ns traps every wait that does not succeed at its first try; use a positive \
                 duration, or `Watchdog::Off` to wait forever",
            )),
            Watchdog::Off | Watchdog::AfterNs(_) => Ok(()),
        }
    }

    /// The emitter's timeout (`None`: wait forever).
    pub fn timeout_ns(self) -> Option<u64> {
        match self {
            Watchdog::Off => None,
            Watchdog::AfterNs(ns) => Some(ns),
        }
    }

    /// Parse `off` (or `0`), or a non-zero duration with a unit: `250ms`, `4s`, `1500us`, `100ns`.
    pub fn parse(text: &str) -> Result<Watchdog, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("off") || t == "0" {
            return Ok(Watchdog::Off);
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("watchdog `{text}`: expected `off` or a number with a unit (ms, s, us, ns)"))?;
        let scale = match unit.trim() {
            "ns" => 1,
            "us" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            other => return Err(format!("watchdog `{text}`: unknown unit `{other}` (ns, us, ms or s)")),
        };
        match n.checked_mul(scale) {
            // A zero duration is not a spelling of `off`: it would trap every wait that does
            // not succeed at once, so it is more likely a mistake than a wish.
            Some(0) => Err(format!("watchdog `{text}` is zero; write `off` (or `0`) to wait forever")),
            Some(ns) => Ok(Watchdog::AfterNs(ns)),
            None => Err(format!("watchdog `{text}` is too long")),
        }
    }
}

impl std::fmt::Display for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Watchdog::Off => f.write_str("off"),
            Watchdog::AfterNs(ns) if ns % 1_000_000_000 == 0 => write!(f, "{}s", ns / 1_000_000_000),
            Watchdog::AfterNs(ns) if ns % 1_000_000 == 0 => write!(f, "{}ms", ns / 1_000_000),
            Watchdog::AfterNs(ns) if ns % 1_000 == 0 => write!(f, "{}us", ns / 1_000),
            Watchdog::AfterNs(ns) => write!(f, "{ns}ns"),
        }
    }
}

impl Kernel {
    pub fn param(&self, id: ParamId) -> &Param {
        &self.parts.params[id.0 as usize]
    }
    pub fn alloc(&self, id: AllocId) -> &SharedAlloc {
        &self.parts.shared[id.0 as usize]
    }

    /// Dynamic shared memory the kernel's tiles need (0 without tiles): what a launch that
    /// gives no explicit size gets.
    pub fn declared_dynamic_bytes(&self) -> u32 {
        u32::try_from(self.dynamic().iter().map(DynamicAlloc::end).max().unwrap_or(0)).unwrap_or(u32::MAX)
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
