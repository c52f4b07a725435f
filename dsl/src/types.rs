//! DSL types: what the checker infers for every expression, and how each maps to the
//! codegen `Type` and to the Rust type the expansion holds at IR-build time.

use phaser_codegen::builder::TileLayout;
use phaser_codegen::ir::{Swizzle, Type};
use proc_macro2::TokenStream;
use quote::quote;
use std::fmt;

/// A numeric scalar type of the DSL (Rust spelling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    BF16,
    F32,
    F64,
    /// OCP FP8 storage types: elements of tiles, tensor maps and buffers that wgmma reads;
    /// never a value (`Checker::refuse_fp8_value`).
    E4M3,
    E5M2,
}

impl Scalar {
    pub const ALL: [Scalar; 12] = [
        Scalar::U16,
        Scalar::I16,
        Scalar::U32,
        Scalar::I32,
        Scalar::U64,
        Scalar::I64,
        Scalar::F16,
        Scalar::BF16,
        Scalar::F32,
        Scalar::F64,
        Scalar::E4M3,
        Scalar::E5M2,
    ];

    pub fn from_name(s: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|t| t.name() == s)
    }
    pub fn name(self) -> &'static str {
        match self {
            Scalar::U16 => "u16",
            Scalar::I16 => "i16",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::E4M3 => "e4m3",
            Scalar::E5M2 => "e5m2",
        }
    }
    /// FP8: held in memory only, no register holds one.
    pub fn is_fp8(self) -> bool {
        matches!(self, Scalar::E4M3 | Scalar::E5M2)
    }
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 | Scalar::E4M3 | Scalar::E5M2)
    }
    pub fn is_int(self) -> bool {
        !self.is_float()
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Scalar::I16 | Scalar::I32 | Scalar::I64)
    }
    pub fn bits(self) -> u32 {
        match self {
            Scalar::E4M3 | Scalar::E5M2 => 8,
            Scalar::U16 | Scalar::I16 | Scalar::F16 | Scalar::BF16 => 16,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 32,
            Scalar::U64 | Scalar::I64 | Scalar::F64 => 64,
        }
    }
    /// Whether the integer literal `v` (already negated when `neg`) fits.
    pub fn fits(self, v: u128, neg: bool) -> bool {
        if self.is_float() {
            return true;
        }
        let bits = self.bits();
        if self.is_signed() {
            if neg {
                v <= 1u128 << (bits - 1)
            } else {
                v < 1u128 << (bits - 1)
            }
        } else {
            !neg && v < 1u128 << bits
        }
    }
    /// The codegen `Type` variant, as tokens under `__p::codegen::ir::Type`.
    pub fn codegen_type(self) -> TokenStream {
        let v = match self {
            Scalar::U16 => quote!(U16),
            Scalar::I16 => quote!(S16),
            Scalar::U32 => quote!(U32),
            Scalar::I32 => quote!(S32),
            Scalar::U64 => quote!(U64),
            Scalar::I64 => quote!(S64),
            Scalar::F16 => quote!(F16),
            Scalar::BF16 => quote!(BF16),
            Scalar::F32 => quote!(F32),
            Scalar::F64 => quote!(F64),
            Scalar::E4M3 => quote!(E4M3),
            Scalar::E5M2 => quote!(E5M2),
        };
        quote!(__p::Type::#v)
    }
    /// The codegen `Type` (what the macro's compile-time checks build with).
    pub fn ir_type(self) -> Type {
        match self {
            Scalar::U16 => Type::U16,
            Scalar::I16 => Type::S16,
            Scalar::U32 => Type::U32,
            Scalar::I32 => Type::S32,
            Scalar::U64 => Type::U64,
            Scalar::I64 => Type::S64,
            Scalar::F16 => Type::F16,
            Scalar::BF16 => Type::BF16,
            Scalar::F32 => Type::F32,
            Scalar::F64 => Type::F64,
            Scalar::E4M3 => Type::E4M3,
            Scalar::E5M2 => Type::E5M2,
        }
    }
    /// The DSL scalar of a codegen type (`b32` reads as `u32`); `None` for predicates.
    pub fn from_ir(t: Type) -> Option<Scalar> {
        Some(match t {
            Type::U16 | Type::B16 => Scalar::U16,
            Type::S16 => Scalar::I16,
            Type::U32 | Type::B32 => Scalar::U32,
            Type::S32 => Scalar::I32,
            Type::U64 | Type::B64 => Scalar::U64,
            Type::S64 => Scalar::I64,
            Type::F16 => Scalar::F16,
            Type::BF16 => Scalar::BF16,
            Type::F32 => Scalar::F32,
            Type::F64 => Scalar::F64,
            Type::E4M3 => Scalar::E4M3,
            Type::E5M2 => Scalar::E5M2,
            Type::Pred => return None,
        })
    }
    /// The host Rust type (launch arguments, device-function boundaries).
    pub fn rust_type(self) -> TokenStream {
        match self {
            Scalar::U16 => quote!(u16),
            Scalar::I16 => quote!(i16),
            Scalar::U32 => quote!(u32),
            Scalar::I32 => quote!(i32),
            Scalar::U64 => quote!(u64),
            Scalar::I64 => quote!(i64),
            Scalar::F16 => quote!(::phaser::__private::half::f16),
            Scalar::BF16 => quote!(::phaser::__private::half::bf16),
            Scalar::F32 => quote!(f32),
            Scalar::F64 => quote!(f64),
            Scalar::E4M3 => quote!(::phaser::__private::F8E4M3),
            Scalar::E5M2 => quote!(::phaser::__private::F8E5M2),
        }
    }
}

/// The type of a DSL expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ty {
    Scalar(Scalar),
    Bool,
    /// An unsuffixed integer literal not yet given a type (defaults to u32).
    IntLit,
    /// An unsuffixed float literal not yet given a type (defaults to f32).
    FloatLit,
    /// One mbarrier (`bars.ptr_to([i])`).
    Barrier,
    /// An mbarrier of another CTA of the cluster (`T.ptx.mapa(bar, cta)`).
    RemoteBarrier,
    /// An array of mbarriers (`T.alloc_barriers(n)`).
    Barriers,
    /// A full/empty pipeline (`T.pipeline.new(stages, consumer_warps)`).
    Pipeline,
    /// A pipeline position: stage index + phase parity (`T.pipeline.producer_state(p)`).
    PipelineState,
    /// A shared-memory array (`T.alloc_shared::<T>([n])`).
    Shared(Scalar),
    /// A shared array of some CTA of the cluster (`T.ptx.mapa_shared(arr, cta)`).
    RemoteShared(Scalar),
    /// `N` values of one type from one instruction (`T.ld.v4(..)`), read as `v[0]`..`v[N-1]`.
    Vector(Scalar, u8),
    /// A typed shared tile (`T.alloc_shared::<T>([rows, cols], "128B")`) or a sub-tile;
    /// `layout` is unknown for a device function's `Tile<T, RANK>` parameter.
    Tile {
        elem: Scalar,
        rank: u8,
        layout: Option<TileLayout>,
    },
    /// A register array (`T.registers::<T>([n])`) or a sub-array.
    Registers {
        elem: Scalar,
        rank: u8,
    },
    /// A global buffer parameter (`&[T]` / `&mut [T]`).
    Global {
        elem: Scalar,
        mutable: bool,
    },
    /// A `TensorMap<RANK>` / `TensorMap<T, RANK>` parameter; what `#[tma(..)]` declares.
    TensorMap {
        rank: u8,
        elem: Option<Scalar>,
        swizzle: Option<Swizzle>,
        boxed: bool,
    },
    /// The 64-bit phase token an arrive returns.
    State,
    #[default]
    Unit,
    /// A value whose type only rustc knows (a device function's result).
    Unknown,
    /// An expression that already failed to check (no follow-up errors).
    Error,
}

impl Ty {
    pub fn is_numeric(self) -> bool {
        matches!(self, Ty::Scalar(_) | Ty::IntLit | Ty::FloatLit)
    }
    pub fn is_int(self) -> bool {
        matches!(self, Ty::IntLit) || matches!(self, Ty::Scalar(s) if s.is_int())
    }
    pub fn is_float(self) -> bool {
        matches!(self, Ty::FloatLit) || matches!(self, Ty::Scalar(s) if s.is_float())
    }
    pub fn is_int32(self) -> bool {
        matches!(self, Ty::IntLit | Ty::Scalar(Scalar::U32) | Ty::Scalar(Scalar::I32))
    }
    /// Unknown or already-wrong: accept silently.
    pub fn is_lenient(self) -> bool {
        matches!(self, Ty::Unknown | Ty::Error)
    }
    /// A value held in a register (what `let mut` may hold).
    pub fn is_register(self) -> bool {
        matches!(self, Ty::Scalar(_) | Ty::Bool | Ty::IntLit | Ty::FloatLit | Ty::State)
    }
    /// The codegen type of a value held in a register, if this is one.
    pub fn ir_type(self) -> Option<Type> {
        match self.defaulted() {
            Ty::Scalar(s) => Some(s.ir_type()),
            Ty::Bool => Some(Type::Pred),
            Ty::State => Some(Type::B64),
            _ => None,
        }
    }
    /// An untyped tensor map of `rank` (`TensorMap<RANK>`).
    pub fn tensor_map(rank: u8) -> Ty {
        Ty::TensorMap { rank, elem: None, swizzle: None, boxed: false }
    }

    /// Literal defaults: `5` is a u32, `1.5` an f32.
    pub fn defaulted(self) -> Ty {
        match self {
            Ty::IntLit => Ty::Scalar(Scalar::U32),
            Ty::FloatLit => Ty::Scalar(Scalar::F32),
            t => t,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => f.write_str(s.name()),
            Ty::Bool => f.write_str("bool"),
            Ty::IntLit => f.write_str("integer literal"),
            Ty::FloatLit => f.write_str("float literal"),
            Ty::Barrier => f.write_str("barrier"),
            Ty::RemoteBarrier => f.write_str("remote barrier"),
            Ty::Barriers => f.write_str("barrier array"),
            Ty::Pipeline => f.write_str("pipeline"),
            Ty::PipelineState => f.write_str("pipeline state"),
            Ty::Shared(s) => write!(f, "shared array of {}", s.name()),
            Ty::RemoteShared(s) => write!(f, "cluster shared array of {}", s.name()),
            Ty::Vector(s, n) => write!(f, "`[{}; {n}]`", s.name()),
            Ty::Tile { elem, rank, .. } => write!(f, "{rank}-dimensional tile of {}", elem.name()),
            Ty::Registers { elem, rank } => write!(f, "{rank}-dimensional register array of {}", elem.name()),
            Ty::Global { elem, mutable: true } => write!(f, "`&mut [{}]`", elem.name()),
            Ty::Global { elem, mutable: false } => write!(f, "`&[{}]`", elem.name()),
            Ty::TensorMap { rank, elem: Some(e), .. } => write!(f, "`TensorMap<{}, {rank}>`", e.name()),
            Ty::TensorMap { rank, elem: None, .. } => write!(f, "`TensorMap<{rank}>`"),
            Ty::State => f.write_str("mbarrier state"),
            Ty::Unit => f.write_str("`()`"),
            Ty::Unknown => f.write_str("device-function result"),
            Ty::Error => f.write_str("{error}"),
        }
    }
}
