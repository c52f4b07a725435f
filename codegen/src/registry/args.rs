//! Evaluated arguments going into an op's lowering, and its result coming out.
//!
//! The DSL expansion evaluates each argument to the handle the checker typed it as and wraps
//! it in an [`OpArg`]; the lowering takes them back in parameter order. A mismatch (which the
//! checker rules out) is recorded as a build error, never a panic.

use super::def::{Choice, Kind};
use crate::builder::{ArrayRef, Barrier, BarrierArray, GlobalPtr, Pipeline, PipelineState, RemoteBarrier};
use crate::builder::{KernelBuilder, RegisterArray, SharedBase, SharedTile, TensorMapRef, TileLayout, TileShape};
use crate::builder::{RemoteShared, SharedArray};
use crate::ir::{AllocId, Reg, Type, Value};

/// One evaluated argument.
#[derive(Clone, Debug, PartialEq)]
pub enum OpArg {
    Value(Value),
    Barrier(Barrier),
    Barriers(BarrierArray),
    RemoteBarrier(RemoteBarrier),
    Shared(SharedArray),
    Global(GlobalPtr),
    RemoteShared(RemoteShared),
    TensorMap(TensorMapRef),
    Pipeline(Pipeline),
    PipelineState(PipelineState),
    /// A compile-time `u32` (`Const`).
    Const(u32),
    /// A shape of compile-time `u32`s (`Dims`), outermost first.
    Dims(Vec<u32>),
    Tile(SharedTile),
    Registers(RegisterArray),
    /// The chosen option of a `Choice`, by name.
    Choice(&'static str),
    /// `Coords`, `Values` and `Places` (registers).
    Values(Vec<Value>),
    Tag(&'static str),
    /// An omitted optional argument.
    Absent,
}

macro_rules! from_handle {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for OpArg {
            fn from(x: $t) -> OpArg {
                OpArg::$v(x)
            }
        }
    )*};
}
from_handle!(Value => Value, Barrier => Barrier, BarrierArray => Barriers, RemoteBarrier => RemoteBarrier,
    SharedArray => Shared, GlobalPtr => Global, RemoteShared => RemoteShared, TensorMapRef => TensorMap,
    Pipeline => Pipeline, PipelineState => PipelineState, SharedTile => Tile, RegisterArray => Registers);

impl OpArg {
    fn what(&self) -> &'static str {
        match self {
            OpArg::Value(_) => "a value",
            OpArg::Barrier(_) => "a barrier",
            OpArg::Barriers(_) => "a barrier array",
            OpArg::RemoteBarrier(_) => "a remote barrier",
            OpArg::Shared(_) => "a shared array",
            OpArg::Global(_) => "a global buffer",
            OpArg::RemoteShared(_) => "a cluster shared array",
            OpArg::TensorMap(_) => "a tensor map",
            OpArg::Pipeline(_) => "a pipeline",
            OpArg::PipelineState(_) => "a pipeline state",
            OpArg::Const(_) => "a constant",
            OpArg::Dims(_) => "a shape",
            OpArg::Tile(_) => "a tile",
            OpArg::Registers(_) => "a register array",
            OpArg::Choice(_) => "an option",
            OpArg::Values(_) => "a list of values",
            OpArg::Tag(_) => "a tag",
            OpArg::Absent => "nothing",
        }
    }

    /// Whether this argument fits a parameter of `kind` (`optional`: it may be absent).
    pub fn fits(&self, kind: Kind, optional: bool) -> bool {
        match (kind, self) {
            (_, OpArg::Absent) => optional,
            (Kind::Barrier, OpArg::Barrier(_))
            | (Kind::RemoteBarrier, OpArg::RemoteBarrier(_))
            | (Kind::Pipeline, OpArg::Pipeline(_))
            | (Kind::PipelineState, OpArg::PipelineState(_))
            | (Kind::Shared, OpArg::Shared(_) | OpArg::Tile(_))
            | (Kind::Tile | Kind::MmaTile, OpArg::Tile(_))
            | (Kind::Dims, OpArg::Dims(_))
            | (Kind::Global, OpArg::Global(_))
            | (Kind::TensorMap, OpArg::TensorMap(_))
            | (Kind::Const, OpArg::Const(_))
            | (Kind::Coords | Kind::Values, OpArg::Values(_))
            | (Kind::Tag, OpArg::Tag(_)) => true,
            (Kind::GlobalMut, OpArg::Global(g)) => g.mutable,
            (Kind::Registers(_), OpArg::Registers(_)) => true,
            (Kind::RemoteShared, OpArg::RemoteShared(_)) => true,
            (Kind::Array, OpArg::Global(_) | OpArg::Shared(_) | OpArg::RemoteShared(_)) => true,
            (Kind::ArrayMut, OpArg::Global(g)) => g.mutable,
            (Kind::ArrayMut, OpArg::Shared(_) | OpArg::RemoteShared(_)) => true,
            (Kind::Places, OpArg::Values(v)) => v.iter().all(|x| x.as_reg().is_some()),
            (Kind::Choice(names), OpArg::Choice(c)) => names.contains(c),
            (k, OpArg::Value(_)) => k.is_value(),
            _ => false,
        }
    }
}

/// The arguments of one op call, taken in parameter order by its lowering; plus the
/// turbofish type and the name of the `let` it is bound to.
#[derive(Debug)]
pub struct OpArgs {
    args: Vec<OpArg>,
    next: usize,
    elem: Option<Type>,
    name: String,
    /// Mismatches found while taking arguments (a bug in an entry, reported by `call`).
    pub(crate) problems: Vec<String>,
}

macro_rules! take {
    ($(#[$doc:meta])* $f:ident -> $t:ty, $v:ident, $placeholder:expr) => {
        $(#[$doc])*
        pub fn $f(&mut self) -> $t {
            match self.take() {
                OpArg::$v(x) => x,
                other => self.mismatch(stringify!($v), &other, $placeholder),
            }
        }
    };
}

impl OpArgs {
    pub fn new(args: Vec<OpArg>, elem: Option<Type>, name: impl Into<String>) -> OpArgs {
        OpArgs { args, next: 0, elem, name: name.into(), problems: Vec::new() }
    }

    pub fn args(&self) -> &[OpArg] {
        &self.args
    }

    fn take(&mut self) -> OpArg {
        let i = self.next;
        self.next += 1;
        match self.args.get_mut(i) {
            Some(a) => std::mem::replace(a, OpArg::Absent),
            None => OpArg::Absent,
        }
    }

    fn mismatch<T>(&mut self, want: &str, got: &OpArg, placeholder: T) -> T {
        self.problems.push(format!("argument {} should be {want}, but is {}", self.next, got.what()));
        placeholder
    }

    take!(value -> Value, Value, Value::u32(0));
    take!(barrier -> Barrier, Barrier, Barrier { addr: Value::u32(0) });
    take!(barriers -> BarrierArray, Barriers, BarrierArray { alloc: AllocId(0), len: 1 });
    take!(remote_barrier -> RemoteBarrier, RemoteBarrier, RemoteBarrier { addr: Value::u32(0) });
    take!(tile -> SharedTile, Tile, placeholder_tile());
    take!(registers -> RegisterArray, Registers, placeholder_registers());
    take!(dims -> Vec<u32>, Dims, vec![1]);

    /// A shared array; a tile passed where an array is expected is its allocation's raw
    /// bytes from the (sub-)tile's start (its `elem`s in physical order).
    pub fn shared(&mut self) -> SharedArray {
        match self.take() {
            OpArg::Shared(a) => a,
            OpArg::Tile(t) => match (t.base.base, t.offset.as_imm_i128()) {
                (SharedBase::Dynamic { offset }, Some(o)) => SharedArray {
                    base: SharedBase::Dynamic { offset: offset + o as u32 },
                    elem: t.elem(),
                    len: Some(t.len()),
                },
                _ if t.offset.as_imm_i128() == Some(0) => t.base,
                _ => {
                    self.problems.push("a sub-tile at a runtime index has no static start: use `T.tile_addr`".into());
                    t.base
                }
            },
            other => self.mismatch("Shared", &other, placeholder_shared()),
        }
    }
    take!(global -> GlobalPtr, Global, GlobalPtr { addr: Value::u64(0), elem: Type::U32, mutable: true });
    take!(tensor_map -> TensorMapRef, TensorMap, TensorMapRef { addr: Value::u64(0), rank: 1 });
    take!(remote_shared -> RemoteShared, RemoteShared, placeholder_remote());
    take!(pipeline -> Pipeline, Pipeline, placeholder_pipeline());
    take!(pipeline_state -> PipelineState, PipelineState, placeholder_state());
    take!(konst -> u32, Const, 1);
    take!(values -> Vec<Value>, Values, Vec::new());
    take!(tag -> &'static str, Tag, "tag");

    /// A buffer, a shared array or a cluster shared array.
    pub fn array(&mut self) -> ArrayRef {
        match self.take() {
            OpArg::Global(g) => ArrayRef::Global(g),
            OpArg::Shared(s) => ArrayRef::Shared(s),
            OpArg::RemoteShared(r) => ArrayRef::Remote(r),
            other => self.mismatch("an array", &other, ArrayRef::Remote(placeholder_remote())),
        }
    }

    /// `let mut` variables (registers) an op writes.
    pub fn places(&mut self) -> Vec<Reg> {
        match self.take() {
            OpArg::Values(v) if v.iter().all(|x| x.as_reg().is_some()) => v.iter().filter_map(|x| x.as_reg()).collect(),
            other => self.mismatch("registers", &other, Vec::new()),
        }
    }

    /// An optional compile-time `u32`: `None` when omitted.
    pub fn opt_konst(&mut self) -> Option<u32> {
        match self.take() {
            OpArg::Const(c) => Some(c),
            OpArg::Absent => None,
            other => self.mismatch("Const", &other, None),
        }
    }

    /// Optional `[v0, v1, ..]`: `None` when omitted.
    pub fn opt_values(&mut self) -> Option<Vec<Value>> {
        match self.take() {
            OpArg::Values(v) => Some(v),
            OpArg::Absent => None,
            other => self.mismatch("Values", &other, None),
        }
    }

    /// An optional value: `None` when omitted.
    pub fn opt_value(&mut self) -> Option<Value> {
        match self.take() {
            OpArg::Value(v) => Some(v),
            OpArg::Absent => None,
            other => self.mismatch("Value", &other, None),
        }
    }

    /// The chosen option's IR value; an omitted optional choice is the first option.
    pub fn choice<T: Copy>(&mut self, options: &Choice<T>) -> T {
        match self.take() {
            OpArg::Choice(name) => match options.get(name) {
                Some(v) => v,
                None => {
                    self.problems.push(format!("\"{name}\" is not one of {:?}", options.names));
                    options.first()
                }
            },
            OpArg::Absent => options.first(),
            other => self.mismatch("Choice", &other, options.first()),
        }
    }

    /// The turbofish type (`T.alloc_shared::<f32>`); `call` checks it is there.
    pub fn elem(&self) -> Type {
        self.elem.unwrap_or(Type::U32)
    }

    /// The name of the `let` the result is bound to (shared allocations are named after it).
    pub fn name(&self) -> &str {
        &self.name
    }
}

fn placeholder_shared() -> SharedArray {
    SharedArray { base: SharedBase::Dynamic { offset: 0 }, elem: Type::U32, len: None }
}

fn placeholder_remote() -> RemoteShared {
    RemoteShared { addr: Value::u32(0), elem: Type::U32, len: None }
}

fn placeholder_tile() -> SharedTile {
    let mut k = KernelBuilder::new("placeholder", crate::arch::Target::Sm90a);
    k.alloc_tile("t", &TileShape::new(Type::U32, &[1], TileLayout::RowMajor))
}

fn placeholder_pipeline() -> Pipeline {
    let bars = BarrierArray { alloc: AllocId(0), len: 1 };
    Pipeline {
        full: bars,
        empty: bars,
        cfg: crate::builder::PipelineConfig::tma(1, crate::builder::Arrivals::Threads(1)),
        cluster_sync: Default::default(),
        release_to: Default::default(),
    }
}

fn placeholder_registers() -> RegisterArray {
    KernelBuilder::new("placeholder", crate::arch::Target::Sm90a).alloc_registers(Type::U32, &[1])
}

fn placeholder_state() -> PipelineState {
    let r = Reg { id: 0, ty: Type::U32 };
    PipelineState { index: r, phase: r, stages: 1 }
}

/// What a lowering returns.
#[derive(Clone, Debug, PartialEq)]
pub enum OpOut {
    Unit,
    Value(Value),
    Barrier(Barrier),
    Barriers(BarrierArray),
    RemoteBarrier(RemoteBarrier),
    Shared(SharedArray),
    Tile(SharedTile),
    Registers(RegisterArray),
    Pipeline(Pipeline),
    PipelineState(PipelineState),
    RemoteShared(RemoteShared),
    /// Several values (a vector load): the handle is `[Value; N]`.
    Values(Vec<Value>),
    /// The call was rejected (the error is already recorded).
    Invalid,
}

impl From<()> for OpOut {
    fn from(_: ()) -> OpOut {
        OpOut::Unit
    }
}

/// The handle a caller expects back from an op (the type the DSL checker gave the call).
pub trait FromOpOut: Sized {
    const WHAT: &'static str;
    fn from_out(out: OpOut) -> Result<Self, OpOut>;
    /// A stand-in after a reported error (the kernel will not finish).
    fn placeholder() -> Self;
}

impl FromOpOut for () {
    const WHAT: &'static str = "nothing";
    fn from_out(out: OpOut) -> Result<(), OpOut> {
        match out {
            OpOut::Unit => Ok(()),
            o => Err(o),
        }
    }
    fn placeholder() {}
}

macro_rules! out_handle {
    ($($t:ty => $v:ident, $what:literal, $placeholder:expr;)*) => {$(
        impl From<$t> for OpOut {
            fn from(x: $t) -> OpOut {
                OpOut::$v(x)
            }
        }
        impl FromOpOut for $t {
            const WHAT: &'static str = $what;
            fn from_out(out: OpOut) -> Result<$t, OpOut> {
                match out {
                    OpOut::$v(x) => Ok(x),
                    o => Err(o),
                }
            }
            fn placeholder() -> $t {
                $placeholder
            }
        }
    )*};
}
out_handle! {
    Value => Value, "a value", Value::u32(0);
    Barrier => Barrier, "a barrier", Barrier { addr: Value::u32(0) };
    BarrierArray => Barriers, "a barrier array", BarrierArray { alloc: AllocId(0), len: 1 };
    RemoteBarrier => RemoteBarrier, "a remote barrier", RemoteBarrier { addr: Value::u32(0) };
    SharedArray => Shared, "a shared array", placeholder_shared();
    SharedTile => Tile, "a shared tile", placeholder_tile();
    RegisterArray => Registers, "a register array", placeholder_registers();
    Pipeline => Pipeline, "a pipeline", placeholder_pipeline();
    PipelineState => PipelineState, "a pipeline state", placeholder_state();
    RemoteShared => RemoteShared, "a cluster shared array", placeholder_remote();
}

impl From<Vec<Value>> for OpOut {
    fn from(v: Vec<Value>) -> OpOut {
        OpOut::Values(v)
    }
}
impl<const N: usize> From<[Value; N]> for OpOut {
    fn from(v: [Value; N]) -> OpOut {
        OpOut::Values(v.to_vec())
    }
}

impl<const N: usize> FromOpOut for [Value; N] {
    const WHAT: &'static str = "values";
    fn from_out(out: OpOut) -> Result<[Value; N], OpOut> {
        match out {
            OpOut::Values(v) => <[Value; N]>::try_from(v).map_err(OpOut::Values),
            o => Err(o),
        }
    }
    fn placeholder() -> [Value; N] {
        [Value::u32(0); N]
    }
}

impl OpOut {
    /// The result as the handle `R`; a mismatch is recorded on `k` (never a panic).
    #[track_caller]
    pub fn into_handle<R: FromOpOut>(self, k: &mut KernelBuilder, path: &str) -> R {
        match R::from_out(self) {
            Ok(r) => r,
            Err(OpOut::Invalid) => R::placeholder(),
            Err(other) => {
                k.error(format!("internal error: `T.{path}` returned {other:?}, but {} was expected", R::WHAT));
                R::placeholder()
            }
        }
    }
}
