//! What the `#[phaser::kernel]` / `#[phaser::device]` expansions refer to. Not a public API:
//! the names may change with the macro. Semantics stay in codegen; this is glue.

pub use half;
pub use phaser_codegen::builder::{
    Barrier, BarrierArray, GlobalPtr, KernelBuilder, Pipeline, PipelineState, RegisterArray, RemoteBarrier,
    SharedArray, SharedTile, TensorMapRef,
};
pub use phaser_codegen::ir::{Reg, SourceLoc, Swizzle, TensorMapSpec, Type, Value};
/// Every `T.*` op expands to `call_op(__k, "path", args, elem, let_name)`: the registry
/// entry's lowering, its result as the handle the macro's checker typed.
pub use phaser_codegen::registry::{call_as as call_op, OpArg};
pub use phaser_codegen::{emit_kernel, CodegenError, Kernel, Target};
pub use phaser_runtime::{Arg, Buffer, Device, LaunchConfig, LaunchReport, RuntimeError, TensorMap};

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
same_arg!(Barrier, RemoteBarrier, BarrierArray, SharedArray, GlobalPtr, TensorMapRef, SharedTile, RegisterArray);

pub fn into_arg<P, V: IntoArg<P>>(k: &mut KernelBuilder, v: V) -> P {
    v.into_arg(k)
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
same_ret!((), Barrier, RemoteBarrier, BarrierArray, SharedArray, GlobalPtr, TensorMapRef, SharedTile, RegisterArray);

/// An immutable `let` of a `let mut` variable copies it (`let waited = phase;` must not change
/// when `phase` does): a value that is one of the in-scope mutable registers gets a new one.
pub trait Snapshot: Sized {
    fn snapshot(self, k: &mut KernelBuilder, muts: &[Reg]) -> Self {
        let _ = (k, muts);
        self
    }
}
impl Snapshot for Value {
    fn snapshot(self, k: &mut KernelBuilder, muts: &[Reg]) -> Value {
        match self {
            Value::Reg(r) if muts.contains(&r) => Value::Reg(k.var(self)),
            v => v,
        }
    }
}
impl Snapshot for Barrier {}
impl Snapshot for RemoteBarrier {}
impl Snapshot for BarrierArray {}
impl Snapshot for SharedArray {}
impl Snapshot for GlobalPtr {}
impl Snapshot for TensorMapRef {}
impl Snapshot for SharedTile {}
impl Snapshot for RegisterArray {}

/// `a / b` of compile-time values: a zero `b` is a build error at this line (0 stands in).
#[track_caller]
pub fn const_div(k: &mut KernelBuilder, a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or_else(|| {
        k.error(format!("compile-time division {a} / 0"));
        0
    })
}

/// `a % b` of compile-time values: a zero `b` is a build error at this line.
#[track_caller]
pub fn const_rem(k: &mut KernelBuilder, a: u32, b: u32) -> u32 {
    a.checked_rem(b).unwrap_or_else(|| {
        k.error(format!("compile-time remainder {a} % 0"));
        0
    })
}
