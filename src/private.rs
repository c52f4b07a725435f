//! What the `#[phaser::kernel]` / `#[phaser::device]` expansions refer to. Not a public API:
//! the names may change with the macro. Semantics stay in codegen; this is glue.

pub use crate::registry::KernelEntry;
pub use half;
pub use inventory;
pub use phaser_codegen::builder::{
    Barrier, BarrierArray, GlobalPtr, KernelBuilder, Pipeline, PipelineState, RegisterArray, RemoteBarrier,
    RemoteShared, SharedArray, SharedTile, TensorMapRef,
};
pub use phaser_codegen::ir::{BinOp, Reg, SourceLoc, Swizzle, TensorMapSpec, Type, Value};
/// Every `T.*` op expands to `call_op(__k, "path", [args], elem, let_name)`: the registry
/// entry's lowering, its result as the handle the macro's checker typed.
pub use phaser_codegen::registry::{call_as as call_op, OpArg};
pub use phaser_codegen::{emit_kernel, CodegenError, Kernel, Target};
pub use phaser_runtime::elem::{F8E4M3, F8E5M2};
pub use phaser_runtime::{Arg, Buffer, Device, Launch, LaunchConfig, LaunchReport, RuntimeError, Stream, TensorMap};

#[path = "private/steps.rs"]
pub mod steps;
pub use steps::{run, Slot, Slots};

use std::collections::HashMap;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

/// Kernels built once per distinct `#[comptime]` values (errors are cached too).
pub struct KernelCache<K> {
    map: OnceLock<Mutex<HashMap<K, Result<Kernel, CodegenError>>>>,
}

impl<K: Eq + Hash + Clone> KernelCache<K> {
    pub const fn new() -> Self {
        KernelCache { map: OnceLock::new() }
    }
    pub fn get_or_build(
        &self,
        key: K,
        build: impl FnOnce() -> Result<Kernel, CodegenError>,
    ) -> Result<Kernel, CodegenError> {
        let map = self.map.get_or_init(|| Mutex::new(HashMap::new()));
        let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(key).or_insert_with(build).clone()
    }
    /// How many specializations were built (tests check that the cache works).
    pub fn len(&self) -> usize {
        self.map.get().map(|m| m.lock().unwrap_or_else(|p| p.into_inner()).len()).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Eq + Hash + Clone> Default for KernelCache<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// A compile-time `a op b` on `u32` values (`#[comptime]`, `const` items, literals), by the
/// constant evaluator: its value, or a build error naming the operands when it overflows
/// `u32` or divides by zero (0 stands in; the build fails).
#[track_caller]
pub fn konst(k: &mut KernelBuilder, a: u32, op: BinOp, b: u32) -> u32 {
    phaser_codegen::eval::fold_u32(op, a, b).unwrap_or_else(|e| {
        k.error(format!("the compile-time value {e}"));
        0
    })
}

/// A `const` item's value as an immediate of its Rust type (the expansion has rustc check that
/// type at the use, `let t: f32 = SCALE;`). Arithmetic on it is the builder's, so constants
/// fold with the one evaluator. A half constant is converted exactly from f32 (half types
/// have no PTX immediates).
pub trait ConstScalar {
    fn value(self, k: &mut KernelBuilder) -> Value;
}
macro_rules! const_scalar {
    ($($t:ty => |$x:ident, $k:ident| $v:expr),* $(,)?) => {$(
        impl ConstScalar for $t {
            fn value(self, $k: &mut KernelBuilder) -> Value {
                let $x = self;
                let _ = &$k;
                $v
            }
        }
    )*};
}
const_scalar!(
    u16 => |x, k| Value::imm_u(x as u64, Type::U16),
    i16 => |x, k| Value::imm_i(x as i64, Type::S16),
    u32 => |x, k| Value::u32(x),
    i32 => |x, k| Value::imm_i(x as i64, Type::S32),
    u64 => |x, k| Value::imm_u(x, Type::U64),
    i64 => |x, k| Value::imm_i(x, Type::S64),
    f32 => |x, k| Value::f32(x),
    f64 => |x, k| Value::f64(x),
    bool => |x, k| Value::pred(x),
    half::f16 => |x, k| k.cvt(Value::f32(x.to_f32()), Type::F16),
    half::bf16 => |x, k| k.cvt(Value::f32(x.to_f32()), Type::BF16),
);

/// A compile-time `ITEM as u32` of any scalar item: the evaluator's `cvt` (truncating and
/// saturating as Rust's `as`; NaN gives what the GPU gives).
pub fn konst_u32_of<C: ConstScalar>(k: &mut KernelBuilder, item: C) -> u32 {
    match item.value(k) {
        Value::Imm { bits, ty } => phaser_codegen::eval::fold_convert(bits, ty, Type::U32) as u32,
        Value::Reg(_) => {
            k.error("a half-precision `const` item cannot size or count anything; convert it to u32 in Rust");
            0
        }
    }
}

/// A run of a long block's statements (`CHUNK_STATEMENTS` in the macro's expansion), built by
/// the closure: a function of its own, called here, never inlined into the kernel's `build`,
/// so the release build's work stays linear in the kernel's length. Returns the chunk's `let`
/// bindings.
#[inline(never)]
pub fn chunk<R>(k: &mut KernelBuilder, statements: &mut dyn FnMut(&mut KernelBuilder) -> R) -> R {
    statements(k)
}

/// A DSL scalar type as seen by Rust at a device-function boundary.
pub trait DslScalar {
    const TYPE: Type;
}
macro_rules! dsl_scalar {
    ($($t:ty => $v:ident),*) => {$( impl DslScalar for $t { const TYPE: Type = Type::$v; } )*};
}
dsl_scalar!(u16 => U16, i16 => S16, u32 => U32, i32 => S32, u64 => U64, i64 => S64, f32 => F32, f64 => F64,
    half::f16 => F16, half::bf16 => BF16, bool => Pred, StateTy => B64);

/// The marker type of an mbarrier state token (`State` in device-function signatures).
pub struct StateTy;

/// A value of DSL type `T` passed to or returned from a device function: rustc checks that
/// the caller's type matches the helper's signature.
pub struct Scalar<T>(Value, PhantomData<T>);

impl<T: DslScalar> Scalar<T> {
    pub fn new(v: Value) -> Self {
        Scalar(v, PhantomData)
    }
    /// An unsuffixed literal takes the parameter's type.
    pub fn lit(v: Value) -> Self {
        let x = match v {
            Value::Imm { ty, bits } if ty.is_float() => {
                let f = if ty == Type::F64 { f64::from_bits(bits) } else { f32::from_bits(bits as u32) as f64 };
                if T::TYPE == Type::F64 {
                    Value::f64(f)
                } else {
                    Value::f32(f as f32)
                }
            }
            Value::Imm { .. } if T::TYPE.is_float() => Value::f32(v.as_imm_i128().unwrap_or(0) as f32),
            Value::Imm { .. } => Value::imm_i(v.as_imm_i128().unwrap_or(0) as i64, T::TYPE),
            r => r,
        };
        Scalar(x, PhantomData)
    }
    pub fn value(&self) -> Value {
        self.0
    }
}

/// Convert a value whose DSL type only rustc knows (another device function's result).
pub trait IntoArg<P> {
    fn into_arg(self, k: &mut KernelBuilder) -> P;
}
impl<T: DslScalar> IntoArg<Scalar<T>> for Value {
    #[track_caller]
    fn into_arg(self, k: &mut KernelBuilder) -> Scalar<T> {
        if self.ty() != T::TYPE {
            k.error(format!("device function argument: expected {}, found {}; convert with `as`", T::TYPE, self.ty()));
        }
        Scalar::new(self)
    }
}
macro_rules! same_arg {
    ($($t:ty),*) => {$( impl IntoArg<$t> for $t { fn into_arg(self, _: &mut KernelBuilder) -> $t { self } } )*};
}
same_arg!(
    Barrier,
    RemoteBarrier,
    BarrierArray,
    SharedArray,
    RemoteShared,
    GlobalPtr,
    TensorMapRef,
    SharedTile,
    RegisterArray
);

pub fn into_arg<P, V: IntoArg<P>>(k: &mut KernelBuilder, v: V) -> P {
    v.into_arg(k)
}

/// A `#[phaser::device]` function (its unit struct implements this). A kernel calls it as
/// `<f as DeviceFn>::bind(k).call(args..)`: the builder is bound first, so rustc counts and
/// types the function's own arguments, and a callee that is no device function gets this
/// message, not one about the expansion's internals.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `#[phaser::device]` function",
    label = "called in a kernel",
    note = "a kernel calls `T.*` ops and functions marked `#[phaser::device]`; mark this one, or compute the \
            value on the host and pass it as a kernel argument"
)]
pub trait DeviceFn {
    type Bound<'k>;
    fn bind(k: &mut KernelBuilder) -> Self::Bound<'_>;
}

/// A device function's result as the kernel holds it.
pub trait DeviceRet {
    type Out;
    fn into_dsl(self) -> Self::Out;
}
impl<T> DeviceRet for Scalar<T> {
    type Out = Value;
    fn into_dsl(self) -> Value {
        self.0
    }
}
macro_rules! same_ret {
    ($($t:ty),*) => {$( impl DeviceRet for $t { type Out = $t; fn into_dsl(self) -> $t { self } } )*};
}
same_ret!(
    (),
    Barrier,
    RemoteBarrier,
    BarrierArray,
    SharedArray,
    RemoteShared,
    GlobalPtr,
    TensorMapRef,
    SharedTile,
    RegisterArray
);

/// An immutable `let` of a `let mut` variable copies it (`let waited = phase;` must not change
/// when `phase` does): the builder knows the `let mut` registers (`KernelBuilder::mut_var`).
pub trait Snapshot: Sized {
    fn snapshot(self, k: &mut KernelBuilder) -> Self {
        let _ = k;
        self
    }
}
impl Snapshot for Value {
    fn snapshot(self, k: &mut KernelBuilder) -> Value {
        k.snapshot(self)
    }
}
impl Snapshot for Barrier {}
impl Snapshot for RemoteBarrier {}
impl Snapshot for BarrierArray {}
impl Snapshot for SharedArray {}
impl Snapshot for RemoteShared {}
/// A vector load's values are fresh registers, never a `let mut`'s.
impl<const N: usize> Snapshot for [Value; N] {}

/// `v[i]` of a vector (`T.ld.v4(..)`); an index past its end (a `#[comptime]` one, which the
/// macro cannot check) is a build error, not a panic.
#[track_caller]
pub fn vector_elem<const N: usize>(k: &mut KernelBuilder, v: &[Value; N], i: u32) -> Value {
    match v.get(i as usize) {
        Some(x) => *x,
        None => {
            k.error(format!("index {i} is out of bounds for a vector of {N} values"));
            Value::u32(0)
        }
    }
}
impl Snapshot for GlobalPtr {}
impl Snapshot for TensorMapRef {}
impl Snapshot for SharedTile {}
impl Snapshot for RegisterArray {}
// A pipeline state's registers are the state itself (`T.pipeline.advance` updates them).
impl Snapshot for Pipeline {}
impl Snapshot for PipelineState {}

/// What a device function call yields when it cannot be expanded (recursion, reported as a
/// build error): a stand-in of the result type. The kernel fails to build, so the stand-in
/// is never printed or run.
pub trait Placeholder {
    fn placeholder() -> Self;
}
impl Placeholder for () {
    fn placeholder() {}
}
impl<T: DslScalar> Placeholder for Scalar<T> {
    fn placeholder() -> Self {
        let v = match T::TYPE {
            Type::Pred => Value::pred(false),
            t if t.is_float() => Value::Imm { bits: 0, ty: t },
            t => Value::imm_u(0, t),
        };
        Scalar::new(v)
    }
}
macro_rules! placeholder {
    ($($t:ty => $e:expr),* $(,)?) => {$( impl Placeholder for $t { fn placeholder() -> $t { $e } } )*};
}
placeholder!(
    Barrier => Barrier { addr: Value::u32(0) },
    RemoteBarrier => RemoteBarrier { addr: Value::u32(0) },
    BarrierArray => BarrierArray { alloc: phaser_codegen::ir::AllocId(0), len: 1 },
    SharedArray => SharedArray {
        base: phaser_codegen::builder::SharedBase::Dynamic { offset: 0 },
        elem: Type::U32,
        len: Some(1),
    },
    RemoteShared => RemoteShared { addr: Value::u32(0), elem: Type::U32, len: Some(1) },
    GlobalPtr => GlobalPtr { addr: Value::u64(0), elem: Type::U32, mutable: false },
    TensorMapRef => TensorMapRef { addr: Value::u64(0), rank: 1 },
    Pipeline => Pipeline {
        full: BarrierArray { alloc: phaser_codegen::ir::AllocId(0), len: 1 },
        empty: BarrierArray { alloc: phaser_codegen::ir::AllocId(0), len: 1 },
        cfg: phaser_codegen::builder::PipelineConfig::tma(1, phaser_codegen::builder::Arrivals::Threads(1)),
        cluster_sync: Default::default(),
        release_to: Default::default(),
    },
    PipelineState => PipelineState {
        index: Reg { id: 0, ty: Type::U32 },
        phase: Reg { id: 0, ty: Type::U32 },
        stages: 1,
    },
);

impl Placeholder for SharedTile {
    fn placeholder() -> Self {
        let shape =
            phaser_codegen::builder::TileShape::new(Type::U32, &[1], phaser_codegen::builder::TileLayout::RowMajor);
        KernelBuilder::new("placeholder", Target::Sm90a).alloc_tile("placeholder", &shape)
    }
}
impl Placeholder for RegisterArray {
    fn placeholder() -> Self {
        KernelBuilder::new("placeholder", Target::Sm90a).alloc_registers(Type::U32, &[1])
    }
}
