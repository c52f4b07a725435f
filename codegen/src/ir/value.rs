//! Virtual registers, immediates and the values built from them; the ids that name a
//! kernel's parameters and shared allocations.

use super::types::Type;

/// A static shared allocation: its index in the kernel's `shared`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AllocId(pub u32);

/// A kernel parameter: its index in the kernel's `params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);

/// A virtual register. The IR is not SSA: a register may be assigned many times
/// (a `let mut phase` is one register), exactly like PTX registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    pub id: u32,
    pub ty: Type,
}

/// An operand: a register or an immediate. Immediates keep their raw bits
/// (two's complement for integers, IEEE bits for floats) so both are `Copy + Eq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Reg(Reg),
    Imm { bits: u64, ty: Type },
}

impl Value {
    pub fn ty(&self) -> Type {
        match self {
            Value::Reg(r) => r.ty,
            Value::Imm { ty, .. } => *ty,
        }
    }
    pub fn imm_u(v: u64, ty: Type) -> Value {
        Value::Imm { bits: mask(v, ty), ty }
    }
    pub fn imm_i(v: i64, ty: Type) -> Value {
        Value::Imm { bits: mask(v as u64, ty), ty }
    }
    pub fn u32(v: u32) -> Value {
        Value::imm_u(v as u64, Type::U32)
    }
    pub fn s32(v: i32) -> Value {
        Value::imm_i(v as i64, Type::S32)
    }
    pub fn u64(v: u64) -> Value {
        Value::imm_u(v, Type::U64)
    }
    pub fn f32(v: f32) -> Value {
        Value::Imm { bits: v.to_bits() as u64, ty: Type::F32 }
    }
    pub fn f64(v: f64) -> Value {
        Value::Imm { bits: v.to_bits(), ty: Type::F64 }
    }
    pub fn pred(v: bool) -> Value {
        Value::Imm { bits: v as u64, ty: Type::Pred }
    }
    pub fn as_reg(&self) -> Option<Reg> {
        match self {
            Value::Reg(r) => Some(*r),
            _ => None,
        }
    }
    /// The immediate as an integer, sign-extended for signed types.
    pub fn as_imm_i128(&self) -> Option<i128> {
        match *self {
            Value::Imm { bits, ty } if ty.is_int() || ty == Type::Pred => Some(if ty.is_signed() {
                let sh = 64 - ty.bits();
                (((bits << sh) as i64) >> sh) as i128
            } else {
                bits as i128
            }),
            _ => None,
        }
    }
}

impl From<Reg> for Value {
    fn from(r: Reg) -> Value {
        Value::Reg(r)
    }
}

/// Keep only the bits that fit the type (integers); floats are stored as given.
pub fn mask(v: u64, ty: Type) -> u64 {
    match ty {
        Type::Pred => (v != 0) as u64,
        t if t.is_int() && t.bits() < 64 => v & ((1u64 << t.bits()) - 1),
        _ => v,
    }
}
