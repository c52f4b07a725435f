//! What an op entry says: its name, its parameters and their kinds, its result, and how it
//! lowers to the builder.

use super::args::{OpArgs, OpOut};
use crate::arch::check::{MAX_ARRIVALS, MAX_TX_BYTES};
use crate::builder::KernelBuilder;
use crate::ir::Type;

/// What an argument must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Barrier,
    RemoteBarrier,
    Pipeline,
    PipelineState,
    Shared,
    Global,
    GlobalMut,
    /// A shared array of some CTA of the cluster (`T.ptx.mapa_shared(arr, cta)`).
    RemoteShared,
    /// Any array: a global buffer, a shared array, or another CTA's shared array.
    Array,
    /// A writable array: a `&mut [T]` buffer, a shared array, or another CTA's shared array.
    ArrayMut,
    TensorMap,
    State,
    /// A 32-bit integer arrival count; a literal must be in 1..=MAX_ARRIVALS.
    Count,
    /// A 32-bit integer tx byte count; a literal must be in 0..=MAX_TX_BYTES.
    TxBytes,
    /// A phase parity: a 32-bit integer or a bool; a literal must be 0 or 1.
    Parity,
    /// Any 32-bit integer (u32 or i32).
    U32,
    /// A pair of this half type (f16 or bf16) packed in a 32-bit integer, as
    /// `T.pack.f16x2(lo, hi)` gives it.
    Half2(Type),
    /// A 64-bit integer (addresses, cache policies).
    U64,
    /// Any integer.
    Int,
    /// Any numeric scalar; all `Scalar` and `Float` arguments of one op share one type.
    Scalar,
    /// An f32 or f64 (sharing one type with the op's other `Scalar`/`Float` arguments).
    Float,
    /// An f32 (the `.approx` float functions have no other type).
    F32,
    /// A value of the element type of argument N (a buffer).
    ElemOf(u8),
    Bool,
    /// A compile-time `u32`: literals and `#[comptime]` parameters (arithmetic allowed).
    Const,
    /// `[d0, d1, ..]`: a shape of compile-time `u32`s, outermost first (shared arrays, tiles,
    /// register arrays). A sample `n` stands for the shape `[8, n]`.
    Dims,
    /// A typed shared tile (`T.alloc_shared::<T>([rows, cols], "128B")`) or a sub-tile of one.
    Tile,
    /// A matrix-multiply operand in shared memory: a 32/64/128-byte swizzled bf16/f16 tile of
    /// rank 2 or more (a ring's stage, a warpgroup's slab), read through a descriptor.
    MmaTile,
    /// A register array (`T.registers::<T>([n])`) of this element type, or a row of one.
    /// A sample `n` is the sample's length.
    Registers(Type),
    /// `[c0, c1, ..]`: 32-bit integer tensor coordinates.
    Coords,
    /// `[v0, v1, ..]`: any scalars.
    Values,
    /// `[x, y, ..]`: `let mut` variables the op writes (inline PTX outputs).
    Places,
    /// A string literal from a fixed set (a [`Choice`]'s names). An omitted optional choice
    /// takes the first option.
    Choice(&'static [&'static str]),
    /// A string literal used as a tag.
    Tag,
}

impl Kind {
    pub fn describe(self) -> String {
        match self {
            Kind::Barrier => "a barrier (`bars.ptr_to([i])`)".into(),
            Kind::RemoteBarrier => "a remote barrier (`T.ptx.mapa(bar, cta)`)".into(),
            Kind::Pipeline => "a pipeline (`T.pipeline.new(stages, consumer_warps)`)".into(),
            Kind::PipelineState => "a pipeline state (`T.pipeline.producer_state(p)` / `consumer_state(p)`)".into(),
            Kind::Shared => "a shared array (`T.alloc_shared::<T>([n])`)".into(),
            Kind::Global => "a global buffer parameter (`&[T]` or `&mut [T]`)".into(),
            Kind::GlobalMut => "a writable global buffer parameter (`&mut [T]`)".into(),
            Kind::RemoteShared => "a cluster shared array (`T.ptx.mapa_shared(arr, cta)`)".into(),
            Kind::Array => "an array (a buffer parameter, a shared array or a cluster shared array)".into(),
            Kind::ArrayMut => "a writable array (a `&mut [T]` buffer, a shared array or a cluster shared array)".into(),
            Kind::TensorMap => "a tensor map parameter (`TensorMap<RANK>`)".into(),
            Kind::State => "an mbarrier state (the result of an arrive)".into(),
            Kind::Count => "an arrival count (u32)".into(),
            Kind::TxBytes => "a tx byte count (u32)".into(),
            Kind::Parity => format!("{} ({})", crate::arch::parity::WHAT, crate::arch::parity::FORMS),
            Kind::U32 => "a 32-bit integer".into(),
            Kind::Half2(t) => {
                let name = scalar_name(t);
                format!("a packed {name}x2 pair (a 32-bit integer: `T.pack.{name}x2(lo, hi)`)")
            }
            Kind::U64 => "a 64-bit integer".into(),
            Kind::Int => "an integer".into(),
            Kind::Scalar => "a number".into(),
            Kind::Float => "an f32 or f64".into(),
            Kind::F32 => "an f32".into(),
            Kind::ElemOf(n) => format!("a value of argument {n}'s element type"),
            Kind::Bool => "a bool".into(),
            Kind::Const => "a compile-time u32 (a literal or a `#[comptime]` parameter)".into(),
            Kind::Dims => "a shape `[d0, d1, ..]` of compile-time u32s".into(),
            Kind::Tile => "a shared tile (`T.alloc_shared::<T>([rows, cols], layout)`)".into(),
            Kind::MmaTile => {
                "a swizzled bf16/f16 shared tile (`T.alloc_shared::<bf16>([rows, cols], \"128B\")`, or a stage of a ring)"
                    .into()
            }
            Kind::Registers(t) => {
                let name = scalar_name(t);
                format!("a 1-dimensional {name} register array (`T.registers::<{name}>([n])`, or a row `regs[i]`)")
            }
            Kind::Coords => "coordinates `[c0, c1, ..]` (32-bit integers)".into(),
            Kind::Values => "values `[v0, v1, ..]`".into(),
            Kind::Places => "`let mut` variables `[x, y, ..]`".into(),
            Kind::Choice(names) => {
                let names: Vec<String> = names.iter().map(|c| format!("\"{c}\"")).collect();
                format!("one of {}", names.join(", "))
            }
            Kind::Tag => "a string literal".into(),
        }
    }

    /// The range a literal of this kind must lie in, and what the value is called.
    pub fn literal_range(self) -> Option<(i128, i128, &'static str)> {
        match self {
            Kind::Count => Some((1, MAX_ARRIVALS, "an mbarrier arrival count")),
            Kind::TxBytes => Some((0, MAX_TX_BYTES, "a tx byte count")),
            Kind::Parity => {
                Some((crate::arch::parity::RANGE.0, crate::arch::parity::RANGE.1, crate::arch::parity::WHAT))
            }
            _ => None,
        }
    }

    /// Whether the argument is a runtime value held in a register (or an immediate).
    pub fn is_value(self) -> bool {
        matches!(
            self,
            Kind::State
                | Kind::Count
                | Kind::TxBytes
                | Kind::Parity
                | Kind::U32
                | Kind::Half2(_)
                | Kind::U64
                | Kind::Int
                | Kind::Scalar
                | Kind::Float
                | Kind::F32
                | Kind::ElemOf(_)
                | Kind::Bool
        )
    }

    /// The IR type of a value of this kind when nothing else decides it.
    pub fn default_type(self) -> Type {
        match self {
            Kind::State => Type::B64,
            Kind::U64 => Type::U64,
            Kind::Bool => Type::Pred,
            Kind::Float | Kind::F32 => Type::F32,
            _ => Type::U32,
        }
    }
}

/// What an op returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Bool,
    U16,
    U32,
    U64,
    State,
    Barrier,
    RemoteBarrier,
    Barriers,
    Pipeline,
    PipelineState,
    /// `Shared(T)` of the turbofish type.
    SharedOfTurbofish,
    /// A shared array of the turbofish type for a 1-dimensional unswizzled shape, a tile
    /// (in the dynamic window) for more dimensions or a swizzle.
    SharedOrTile,
    /// A register array of the turbofish type.
    RegistersOfTurbofish,
    /// A scalar of the turbofish type.
    Turbofish,
    /// The (shared) type of the op's `Scalar` and `Float` arguments.
    ScalarArgs,
    /// The unsigned integer of the width of the op's `Scalar`/`Float` arguments (`to_bits`).
    BitsOfArgs,
    F32,
    /// The element type of argument N (a buffer, shared array, tile or register array).
    ElemOf(u8),
    /// `N` values of the element type of argument `.0` (a vector load).
    VecOf(u8, u8),
    /// `N` values of a fixed type.
    Vec(Type, u8),
    /// A cluster shared array of argument N's element type.
    RemoteSharedOf(u8),
}

impl Ret {
    pub fn describe(self) -> String {
        match self {
            Ret::Unit => "—".into(),
            Ret::Bool => "bool".into(),
            Ret::U16 => "u16".into(),
            Ret::U32 => "u32".into(),
            Ret::U64 => "u64".into(),
            Ret::State => "State".into(),
            Ret::Barrier => "Barrier".into(),
            Ret::RemoteBarrier => "RemoteBarrier".into(),
            Ret::Barriers => "Barriers".into(),
            Ret::Pipeline => "Pipeline".into(),
            Ret::PipelineState => "PipelineState".into(),
            Ret::SharedOfTurbofish => "Shared<T>".into(),
            Ret::SharedOrTile => "Shared<T> (1-D) or Tile<T, RANK>".into(),
            Ret::RegistersOfTurbofish => "Registers<T, RANK>".into(),
            Ret::Turbofish => "T".into(),
            Ret::ScalarArgs => "type of the args".into(),
            Ret::BitsOfArgs => "unsigned integer of the args' width".into(),
            Ret::F32 => "f32".into(),
            Ret::ElemOf(n) => format!("element type of arg {n}"),
            Ret::VecOf(a, n) => format!("[element type of arg {a}; {n}]"),
            Ret::Vec(t, n) => format!("[{}; {n}]", scalar_name(t)),
            Ret::RemoteSharedOf(_) => "RemoteShared<T>".into(),
        }
    }
}

/// The DSL's (Rust's) name of an IR type.
pub fn scalar_name(t: Type) -> &'static str {
    match t {
        Type::U16 => "u16",
        Type::S16 => "i16",
        Type::U32 | Type::B32 => "u32",
        Type::S32 => "i32",
        Type::U64 | Type::B64 => "u64",
        Type::S64 => "i64",
        Type::F16 => "f16",
        Type::BF16 => "bf16",
        Type::F32 => "f32",
        Type::F64 => "f64",
        _ => "bool",
    }
}

/// The options of a [`Kind::Choice`] argument: the names users write and the IR value each
/// selects, in the same order (the first is the default of an omitted optional choice).
pub struct Choice<T: 'static> {
    pub names: &'static [&'static str],
    pub values: &'static [T],
}

impl<T: Copy> Choice<T> {
    pub fn get(&self, name: &str) -> Option<T> {
        self.names.iter().position(|n| *n == name).map(|i| self.values[i])
    }
    pub fn first(&self) -> T {
        self.values[0]
    }
}

/// One parameter of an op.
#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    pub name: &'static str,
    pub kind: Kind,
    /// A valid literal for tests and docs (the ptxas matrix), where the kind's default
    /// (1 for counts and constants, 0 for parities) would not be.
    pub sample: Option<i128>,
    /// A valid string for a `Tag` (a printf format, an inline PTX template).
    pub sample_str: Option<&'static str>,
}

/// How an op is built: the evaluated arguments go to one builder call.
pub type Lower = fn(&mut KernelBuilder, &mut OpArgs) -> OpOut;

/// One op of the registry.
pub struct OpDef {
    /// The name after `T.`, e.g. `ptx.mbarrier.try_wait`.
    pub path: &'static str,
    /// The op's names in other libraries (`cute:wait_barrier`, `gluon:mbarrier.wait`), for
    /// "did you mean" help: `library:name`.
    pub aliases: &'static [&'static str],
    /// Rust's method of the same meaning (`exp2` for `T.ex2`): `x.exp2()` is `T.ex2(x)`.
    pub method: Option<&'static str>,
    pub params: &'static [ParamDef],
    /// How many trailing parameters may be omitted.
    pub optional: u8,
    /// Whether it takes `::<T>` (a scalar type).
    pub turbofish: bool,
    /// The element type samples use (arrays, `::<T>`) when f32 would not be valid (`atomic.min`).
    pub sample_elem: Option<Type>,
    pub ret: Ret,
    /// One line for users.
    pub doc: &'static str,
    /// The lowering's source (the builder call), for the docs.
    pub builder: &'static str,
    pub lower: Lower,
}

impl OpDef {
    /// `T.path::<T>(a, b, [c])`.
    pub fn signature(&self) -> String {
        let tf = if self.turbofish { "::<T>" } else { "" };
        let args: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| if self.is_optional(i) { format!("[{}]", p.name) } else { p.name.to_string() })
            .collect();
        format!("T.{}{tf}({})", self.path, args.join(", "))
    }

    /// `a.method(b, c)` for an op with a Rust method, its first parameter the receiver.
    pub fn method_signature(&self) -> Option<String> {
        let m = self.method?;
        let (recv, rest) = self.params.split_first()?;
        let rest: Vec<&str> = rest.iter().map(|p| p.name).collect();
        Some(format!("{}.{m}({})", recv.name, rest.join(", ")))
    }

    pub fn required(&self) -> usize {
        self.params.len() - self.optional as usize
    }

    pub fn is_optional(&self, i: usize) -> bool {
        i >= self.required()
    }
}

impl std::fmt::Debug for OpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.signature())
    }
}
