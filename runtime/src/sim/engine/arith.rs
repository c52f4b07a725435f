//! PTX arithmetic with GPU-exact results, one function per operation and type (chosen once
//! when the IR is lowered).
//!
//! Registers hold raw bits zero-extended to 64 (integers masked to their width, `f32` bits
//! in the low half, predicates 0/1).

use phaser_codegen::ir::{BinOp, CmpOp, Type, UnOp};

pub type BinFn = fn(u64, u64) -> u64;
pub type UnFn = fn(u64) -> u64;
pub type MadFn = fn(u64, u64, u64) -> u64;
pub type CmpFn = fn(u64, u64) -> bool;

/// The canonical NaN the GPU produces for `f32` arithmetic.
const NAN32: u32 = 0x7FFF_FFFF;

#[inline]
fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
#[inline]
fn fb(x: f32) -> u64 {
    if x.is_nan() {
        NAN32 as u64
    } else {
        x.to_bits() as u64
    }
}
#[inline]
fn d(x: u64) -> f64 {
    f64::from_bits(x)
}
#[inline]
fn db(x: f64) -> u64 {
    x.to_bits()
}

/// PTX `min.f32`/`max.f32`: a NaN operand yields the other one; -0 orders below +0.
fn fmin32(a: u64, b: u64) -> u64 {
    let (x, y) = (f(a), f(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => NAN32 as u64,
        (true, false) => b,
        (false, true) => a,
        _ if x == y => (a as u32 | b as u32) as u64 & 0xFFFF_FFFF, // -0 wins for min
        _ if x < y => a,
        _ => b,
    }
}
fn fmax32(a: u64, b: u64) -> u64 {
    let (x, y) = (f(a), f(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => NAN32 as u64,
        (true, false) => b,
        (false, true) => a,
        _ if x == y => (a as u32 & b as u32) as u64, // +0 wins for max
        _ if x > y => a,
        _ => b,
    }
}
fn fmin64(a: u64, b: u64) -> u64 {
    let (x, y) = (d(a), d(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => db(f64::NAN),
        (true, false) => b,
        (false, true) => a,
        _ if x == y => a | b,
        _ if x < y => a,
        _ => b,
    }
}
fn fmax64(a: u64, b: u64) -> u64 {
    let (x, y) = (d(a), d(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => db(f64::NAN),
        (true, false) => b,
        (false, true) => a,
        _ if x == y => a & b,
        _ if x > y => a,
        _ => b,
    }
}

macro_rules! int_bins {
    ($op:expr, $u:ty, $s:ty, $signed:expr, $bits:expr) => {{
        let f: BinFn = match ($op, $signed) {
            (BinOp::Add, _) => |a, b| (a as $u).wrapping_add(b as $u) as u64,
            (BinOp::Sub, _) => |a, b| (a as $u).wrapping_sub(b as $u) as u64,
            (BinOp::Mul, _) => |a, b| (a as $u).wrapping_mul(b as $u) as u64,
            // Division by zero: all ones (as the GPU computes it); remainder by zero: the dividend.
            (BinOp::Div, false) => |a, b| if b as $u == 0 { <$u>::MAX as u64 } else { ((a as $u) / (b as $u)) as u64 },
            (BinOp::Div, true) => |a, b| {
                if b as $u == 0 {
                    <$u>::MAX as u64
                } else {
                    ((a as $u as $s).wrapping_div(b as $u as $s)) as $u as u64
                }
            },
            (BinOp::Rem, false) => |a, b| if b as $u == 0 { a } else { ((a as $u) % (b as $u)) as u64 },
            (BinOp::Rem, true) => |a, b| {
                if b as $u == 0 {
                    a
                } else {
                    ((a as $u as $s).wrapping_rem(b as $u as $s)) as $u as u64
                }
            },
            (BinOp::Min, false) => |a, b| (a as $u).min(b as $u) as u64,
            (BinOp::Max, false) => |a, b| (a as $u).max(b as $u) as u64,
            (BinOp::Min, true) => |a, b| (a as $u as $s).min(b as $u as $s) as $u as u64,
            (BinOp::Max, true) => |a, b| (a as $u as $s).max(b as $u as $s) as $u as u64,
            (BinOp::And, _) => |a, b| a & b,
            (BinOp::Or, _) => |a, b| a | b,
            (BinOp::Xor, _) => |a, b| a ^ b,
            // Shift amounts are clamped to the width, as PTX specifies.
            (BinOp::Shl, _) => |a, b| if (b as u32) >= $bits { 0 } else { ((a as $u) << (b as u32)) as u64 },
            (BinOp::Shr, false) => |a, b| if (b as u32) >= $bits { 0 } else { ((a as $u) >> (b as u32)) as u64 },
            (BinOp::Shr, true) => |a, b| ((a as $u as $s) >> (b as u32).min($bits - 1)) as $u as u64,
        };
        f
    }};
}

pub fn bin_fn(op: BinOp, ty: Type) -> BinFn {
    use Type::*;
    match ty {
        Pred => match op {
            BinOp::And | BinOp::Min => |a, b| a & b,
            BinOp::Or | BinOp::Max => |a, b| a | b,
            _ => |a, b| a ^ b,
        },
        U16 | B16 => int_bins!(op, u16, i16, false, 16),
        S16 => int_bins!(op, u16, i16, true, 16),
        U32 | B32 => int_bins!(op, u32, i32, false, 32),
        S32 => int_bins!(op, u32, i32, true, 32),
        U64 | B64 => int_bins!(op, u64, i64, false, 64),
        S64 => int_bins!(op, u64, i64, true, 64),
        F32 | F16 | BF16 => match op {
            BinOp::Add => |a, b| fb(f(a) + f(b)),
            BinOp::Sub => |a, b| fb(f(a) - f(b)),
            BinOp::Mul => |a, b| fb(f(a) * f(b)),
            BinOp::Div => |a, b| fb(f(a) / f(b)),
            BinOp::Min => fmin32,
            BinOp::Max => fmax32,
            BinOp::Rem => |a, b| fb(f(a) % f(b)),
            BinOp::And => |a, b| a & b,
            BinOp::Or => |a, b| a | b,
            BinOp::Xor => |a, b| a ^ b,
            BinOp::Shl | BinOp::Shr => |a, _| a,
        },
        F64 => match op {
            BinOp::Add => |a, b| db(d(a) + d(b)),
            BinOp::Sub => |a, b| db(d(a) - d(b)),
            BinOp::Mul => |a, b| db(d(a) * d(b)),
            BinOp::Div => |a, b| db(d(a) / d(b)),
            BinOp::Min => fmin64,
            BinOp::Max => fmax64,
            BinOp::Rem => |a, b| db(d(a) % d(b)),
            BinOp::And => |a, b| a & b,
            BinOp::Or => |a, b| a | b,
            BinOp::Xor => |a, b| a ^ b,
            BinOp::Shl | BinOp::Shr => |a, _| a,
        },
    }
}

pub fn un_fn(op: UnOp, ty: Type) -> UnFn {
    use Type::*;
    match (op, ty) {
        (UnOp::Not, Pred) => |a| (a == 0) as u64,
        (UnOp::Not, U16 | S16 | B16 | F16 | BF16) => |a| !a & 0xFFFF,
        (UnOp::Not, U32 | S32 | B32 | F32) => |a| !a & 0xFFFF_FFFF,
        (UnOp::Not, _) => |a| !a,
        (UnOp::Neg, U16 | S16 | B16) => |a| (a as u16).wrapping_neg() as u64,
        (UnOp::Neg, U32 | S32 | B32) => |a| (a as u32).wrapping_neg() as u64,
        (UnOp::Neg, U64 | S64 | B64) => |a| a.wrapping_neg(),
        (UnOp::Neg, F32) => |a| (a as u32 ^ 0x8000_0000) as u64,
        (UnOp::Neg, F16 | BF16) => |a| (a as u16 ^ 0x8000) as u64,
        (UnOp::Neg, F64) => |a| a ^ (1 << 63),
        (UnOp::Neg, Pred) => |a| a,
        (UnOp::Abs, U16 | S16 | B16) => |a| (a as u16 as i16).wrapping_abs() as u16 as u64,
        (UnOp::Abs, U32 | S32 | B32) => |a| (a as u32 as i32).wrapping_abs() as u32 as u64,
        (UnOp::Abs, U64 | S64 | B64) => |a| (a as i64).wrapping_abs() as u64,
        (UnOp::Abs, F32) => |a| (a as u32 & 0x7FFF_FFFF) as u64,
        (UnOp::Abs, F16 | BF16) => |a| (a as u16 & 0x7FFF) as u64,
        (UnOp::Abs, F64) => |a| a & !(1 << 63),
        (UnOp::Abs, Pred) => |a| a,
    }
}

pub fn mad_fn(ty: Type) -> MadFn {
    use Type::*;
    match ty {
        U16 | S16 | B16 => |a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u64,
        U32 | S32 | B32 => |a, b, c| (a as u32).wrapping_mul(b as u32).wrapping_add(c as u32) as u64,
        U64 | S64 | B64 => |a, b, c| a.wrapping_mul(b).wrapping_add(c),
        // fma.rn: one rounding.
        F32 | F16 | BF16 => |a, b, c| fb(f(a).mul_add(f(b), f(c))),
        F64 => |a, b, c| db(d(a).mul_add(d(b), d(c))),
        Pred => |a, b, c| (a & b) ^ c,
    }
}

macro_rules! cmps {
    ($cmp:expr, $conv:expr) => {{
        let f: CmpFn = match $cmp {
            CmpOp::Eq => |a, b| $conv(a) == $conv(b),
            CmpOp::Ne => |a, b| $conv(a) != $conv(b),
            CmpOp::Lt => |a, b| $conv(a) < $conv(b),
            CmpOp::Le => |a, b| $conv(a) <= $conv(b),
            CmpOp::Gt => |a, b| $conv(a) > $conv(b),
            CmpOp::Ge => |a, b| $conv(a) >= $conv(b),
        };
        f
    }};
}

/// `setp`: signed/unsigned integer compares; float compares are ordered except `ne`
/// (printed `neu`, true on NaN — what Rust's `!=` does too).
pub fn cmp_fn(cmp: CmpOp, ty: Type) -> CmpFn {
    use Type::*;
    match ty {
        S16 => cmps!(cmp, |x: u64| x as u16 as i16),
        S32 => cmps!(cmp, |x: u64| x as u32 as i32),
        S64 => cmps!(cmp, |x: u64| x as i64),
        F32 => cmps!(cmp, |x: u64| f32::from_bits(x as u32)),
        F64 => cmps!(cmp, |x: u64| f64::from_bits(x)),
        F16 => cmps!(cmp, |x: u64| half::f16::from_bits(x as u16).to_f32()),
        BF16 => cmps!(cmp, |x: u64| half::bf16::from_bits(x as u16).to_f32()),
        _ => cmps!(cmp, |x: u64| x),
    }
}

fn mask(v: u64, ty: Type) -> u64 {
    match ty.size() {
        0 => (v != 0) as u64,
        2 => v & 0xFFFF,
        4 => v & 0xFFFF_FFFF,
        _ => v,
    }
}

enum Num {
    I(i128),
    F(f64),
}

/// `cvt` as the PTX printer emits it: `.rn` into floats, `.rzi` (truncating, saturating,
/// NaN → 0) from floats into integers, exact widening, `.rn` narrowing.
pub fn cvt(v: u64, st: Type, dt: Type) -> u64 {
    use Type::*;
    if st == dt {
        return v;
    }
    let n = match st {
        Pred => Num::I((v != 0) as i128),
        S16 => Num::I(v as u16 as i16 as i128),
        S32 => Num::I(v as u32 as i32 as i128),
        S64 => Num::I(v as i64 as i128),
        U16 | B16 => Num::I((v & 0xFFFF) as i128),
        U32 | B32 => Num::I((v & 0xFFFF_FFFF) as i128),
        U64 | B64 => Num::I(v as i128),
        F32 => Num::F(f32::from_bits(v as u32) as f64),
        F64 => Num::F(f64::from_bits(v)),
        F16 => Num::F(half::f16::from_bits(v as u16).to_f64()),
        BF16 => Num::F(half::bf16::from_bits(v as u16).to_f64()),
    };
    match (n, dt) {
        (Num::I(x), Pred) => (x != 0) as u64,
        (Num::F(x), Pred) => (x != 0.0) as u64,
        (Num::I(x), t) if t.is_int() => mask(x as u64, t),
        (Num::I(x), F32) => {
            // One rounding: from the exact integer.
            let r = if st.is_signed() { (x as i64) as f32 } else { (x as u64) as f32 };
            r.to_bits() as u64
        }
        (Num::I(x), F64) => (if st.is_signed() { (x as i64) as f64 } else { (x as u64) as f64 }).to_bits(),
        (Num::I(x), F16) => half::f16::from_f64(x as f64).to_bits() as u64,
        (Num::I(x), BF16) => half::bf16::from_f64(x as f64).to_bits() as u64,
        (Num::F(x), t) if t.is_int() => match t {
            S16 => (x as i16) as u16 as u64,
            S32 => (x as i32) as u32 as u64,
            S64 => (x as i64) as u64,
            U16 | B16 => (x as u16) as u64,
            U32 | B32 => (x as u32) as u64,
            _ => x as u64,
        },
        (Num::F(x), F32) => fb(x as f32),
        (Num::F(x), F64) => x.to_bits(),
        (Num::F(x), F16) => {
            if x.is_nan() {
                0x7FFF
            } else {
                half::f16::from_f64(x).to_bits() as u64
            }
        }
        (Num::F(x), BF16) => {
            if x.is_nan() {
                0x7FFF
            } else {
                half::bf16::from_f64(x).to_bits() as u64
            }
        }
        (_, _) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ops_wrap_and_divide_like_the_gpu() {
        assert_eq!(bin_fn(BinOp::Add, Type::U32)(0xFFFF_FFFF, 2), 1);
        assert_eq!(bin_fn(BinOp::Div, Type::U32)(7, 0), 0xFFFF_FFFF);
        assert_eq!(bin_fn(BinOp::Div, Type::S32)(-7i32 as u32 as u64, 2), -3i32 as u32 as u64);
        assert_eq!(bin_fn(BinOp::Rem, Type::S32)(-7i32 as u32 as u64, 2), -1i32 as u32 as u64);
        assert_eq!(bin_fn(BinOp::Shr, Type::S32)(-8i32 as u32 as u64, 40), 0xFFFF_FFFF);
        assert_eq!(bin_fn(BinOp::Shl, Type::U32)(1, 32), 0);
        assert_eq!(bin_fn(BinOp::Min, Type::S32)(-1i32 as u32 as u64, 3), -1i32 as u32 as u64);
        assert_eq!(bin_fn(BinOp::Min, Type::U32)(-1i32 as u32 as u64, 3), 3);
        assert_eq!(mad_fn(Type::U32)(0x1_0000, 0x1_0000, 5), 5);
    }

    #[test]
    fn float_ops_round_once_and_convert_like_ptx() {
        let (a, b, c) = (1.0f32 + f32::EPSILON, 1.0f32 - f32::EPSILON, -1.0f32);
        let fused = mad_fn(Type::F32)(a.to_bits() as u64, b.to_bits() as u64, c.to_bits() as u64);
        assert_eq!(f32::from_bits(fused as u32), a.mul_add(b, c));
        assert_ne!(f32::from_bits(fused as u32), a * b + c, "fma.rn must not round twice");
        let nan = f32::NAN.to_bits() as u64;
        assert_eq!(cvt(nan, Type::F32, Type::S32), 0);
        assert_eq!(cvt(3.0e10f32.to_bits() as u64, Type::F32, Type::S32), i32::MAX as u32 as u64);
        assert_eq!(cvt((-2.7f32).to_bits() as u64, Type::F32, Type::S32), -2i32 as u32 as u64);
        assert_eq!(cvt(-1i32 as u32 as u64, Type::S32, Type::S64), u64::MAX);
        assert_eq!(cvt(16_777_217, Type::U32, Type::F32), 16_777_216f32.to_bits() as u64);
        assert_eq!(bin_fn(BinOp::Min, Type::F32)(nan, 2f32.to_bits() as u64), 2f32.to_bits() as u64);
        let inf = f32::INFINITY.to_bits() as u64;
        assert_eq!(bin_fn(BinOp::Sub, Type::F32)(inf, inf), 0x7FFF_FFFF, "canonical NaN");
        assert!(cmp_fn(CmpOp::Ne, Type::F32)(nan, nan));
        assert!(!cmp_fn(CmpOp::Eq, Type::F32)(nan, nan));
    }
}
