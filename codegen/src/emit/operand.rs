//! How registers, immediates and types are spelled in PTX.

use crate::ir::{Reg, Type, Value};

/// Register name prefix for a type's register class.
pub fn reg_prefix(ty: Type) -> &'static str {
    match ty {
        Type::Pred => "%p",
        // FP8 registers are refused by `check_kernel`; their bits would be a b16's.
        Type::B16 | Type::U16 | Type::S16 | Type::F16 | Type::BF16 | Type::E4M3 | Type::E5M2 => "%rs",
        Type::B32 | Type::U32 | Type::S32 => "%r",
        Type::B64 | Type::U64 | Type::S64 => "%rd",
        Type::F32 => "%f",
        Type::F64 => "%fd",
    }
}

/// Register classes as declared at the top of each entry: (prefix, declared type).
pub const REG_CLASSES: [(&str, &str); 6] =
    [("%p", "pred"), ("%rs", "b16"), ("%r", "b32"), ("%rd", "b64"), ("%f", "f32"), ("%fd", "f64")];

pub fn reg(r: Reg) -> String {
    format!("{}{}", reg_prefix(r.ty), r.id)
}

pub fn value(v: &Value) -> String {
    match *v {
        Value::Reg(r) => reg(r),
        Value::Imm { bits, ty } => imm(bits, ty),
    }
}

pub fn imm(bits: u64, ty: Type) -> String {
    match ty {
        Type::F32 => format!("0f{:08X}", bits as u32),
        Type::F64 => format!("0d{bits:016X}"),
        Type::F16 | Type::BF16 | Type::B16 => format!("0x{:04X}", bits as u16),
        t if t.is_signed() => {
            let sh = 64 - t.bits();
            format!("{}", ((bits << sh) as i64) >> sh)
        }
        _ => format!("{bits}"),
    }
}

/// Type suffix for integer arithmetic (`b` types become `u`).
pub fn arith_ty(ty: Type) -> &'static str {
    match ty {
        Type::B16 => "u16",
        Type::B32 => "u32",
        Type::B64 => "u64",
        t => t.ptx(),
    }
}

/// Type suffix for moves and bitwise ops.
pub fn bits_ty(ty: Type) -> &'static str {
    match ty {
        Type::Pred => "pred",
        Type::F32 => "f32",
        Type::F64 => "f64",
        t => t.bit_type().ptx(),
    }
}

/// Type suffix for loads/stores/params (half types move as `b16`).
pub fn mem_ty(ty: Type) -> &'static str {
    match ty {
        Type::F16 | Type::BF16 => "b16",
        t => t.ptx(),
    }
}
