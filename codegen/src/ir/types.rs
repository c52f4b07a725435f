//! PTX value types.

use std::fmt;

/// The type of a virtual register or an immediate, named as PTX names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    Pred,
    B16,
    B32,
    B64,
    U16,
    U32,
    U64,
    S16,
    S32,
    S64,
    F16,
    BF16,
    F32,
    F64,
    /// OCP FP8 `e4m3` (bias 7, no infinities): a storage type of tiles and buffers that wgmma
    /// multiplies; it never lives in a register.
    E4M3,
    /// OCP FP8 `e5m2` (the upper byte of an f16): like [`Type::E4M3`].
    E5M2,
}

impl Type {
    /// Size in bytes as stored in memory (predicates have no memory form: 0).
    pub fn size(self) -> u32 {
        use Type::*;
        match self {
            Pred => 0,
            E4M3 | E5M2 => 1,
            B16 | U16 | S16 | F16 | BF16 => 2,
            B32 | U32 | S32 | F32 => 4,
            B64 | U64 | S64 | F64 => 8,
        }
    }
    pub fn bits(self) -> u32 {
        self.size() * 8
    }
    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::BF16 | Type::F32 | Type::F64 | Type::E4M3 | Type::E5M2)
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Type::S16 | Type::S32 | Type::S64)
    }
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Type::Pred
    }
    /// Half-precision types are storage types here: load, store, convert, move.
    pub fn is_half(self) -> bool {
        matches!(self, Type::F16 | Type::BF16)
    }
    /// FP8 types are storage only: tiles and buffers hold them, wgmma multiplies them, and no
    /// register, load or arithmetic has them.
    pub fn is_fp8(self) -> bool {
        matches!(self, Type::E4M3 | Type::E5M2)
    }
    /// PTX spelling without the dot, e.g. `u32`.
    pub fn ptx(self) -> &'static str {
        use Type::*;
        match self {
            Pred => "pred",
            B16 => "b16",
            B32 => "b32",
            B64 => "b64",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            E4M3 => "e4m3",
            E5M2 => "e5m2",
        }
    }
    /// The untyped bit type of the same width (`b32` for `f32`, ...).
    pub fn bit_type(self) -> Type {
        match self.size() {
            0 => Type::Pred,
            // No 8-bit register type is emitted: FP8 values never reach a register.
            1 | 2 => Type::B16,
            4 => Type::B32,
            _ => Type::B64,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ptx())
    }
}
