//! The value of every operation as the GPU computes it, on register bits: one function per
//! operation and type (the simulator picks them once, when it lowers the IR).
//!
//! Registers hold raw bits zero-extended to 64 (integers masked to their width, `f32` bits
//! in the low half, predicates 0/1). Integer `add`/`sub`/`mul.lo`/`mad.lo` wrap; shift amounts
//! are clamped to the width (PTX ISA, `shl`/`shr`: "Shift amounts greater than the register
//! width N are clamped to N"), so `shl` and `shr.u` give 0 and `shr.s` the sign fill; division
//! by zero gives all ones and the remainder the dividend (what the GPU computes; folding
//! refuses it, `super::fold`).

use crate::ir::{BinOp, CmpOp, Rounding, Type, UnOp};

pub type BinFn = fn(u64, u64) -> u64;
pub type UnFn = fn(u64) -> u64;
pub type MadFn = fn(u64, u64, u64) -> u64;
pub type CmpFn = fn(u64, u64) -> bool;

/// The canonical NaN the GPU produces for `f32` arithmetic.
pub(super) const NAN32: u32 = 0x7FFF_FFFF;

#[inline]
pub(super) fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
/// An f32 result's bits: NaN is canonical.
#[inline]
pub(super) fn fb(x: f32) -> u64 {
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
        // No FP8 register passes `check_kernel`: nothing computes on FP8 values.
        E4M3 | E5M2 => |a, _| a,
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
        (_, E4M3 | E5M2) => |a| a, // no FP8 register passes `check_kernel`
        (UnOp::Not, Pred) => |a| (a == 0) as u64,
        (UnOp::Not, U16 | S16 | B16 | F16 | BF16) => |a| !a & 0xFFFF,
        (UnOp::Not, U32 | S32 | B32 | F32) => |a| !a & 0xFFFF_FFFF,
        (UnOp::Not, _) => |a| !a,
        (UnOp::Neg, U16 | S16 | B16) => |a| (a as u16).wrapping_neg() as u64,
        (UnOp::Neg, U32 | S32 | B32) => |a| (a as u32).wrapping_neg() as u64,
        (UnOp::Neg, U64 | S64 | B64) => |a| a.wrapping_neg(),
        // f32 `neg`/`abs` run as float operations: a NaN comes out canonical (measured on
        // the H200, `bench/gpu-runs.md` run 11); f64 ones flip or clear the sign bit only.
        (UnOp::Neg, F32) => |a| fb(-f(a)),
        (UnOp::Neg, F16 | BF16) => |a| (a as u16 ^ 0x8000) as u64,
        (UnOp::Neg, F64) => |a| a ^ (1 << 63),
        (UnOp::Neg, Pred) => |a| a,
        (UnOp::Abs, U16 | S16 | B16) => |a| (a as u16 as i16).wrapping_abs() as u16 as u64,
        (UnOp::Abs, U32 | S32 | B32) => |a| (a as u32 as i32).wrapping_abs() as u32 as u64,
        (UnOp::Abs, U64 | S64 | B64) => |a| (a as i64).wrapping_abs() as u64,
        (UnOp::Abs, F32) => |a| fb(f(a).abs()),
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
        E4M3 | E5M2 => |a, _, _| a, // no FP8 register passes `check_kernel`
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

/// `x` rounded to odd at f64's 53 bits: exact below 2^53, otherwise the last kept bit is
/// sticky, so one more rounding to a format of at most 25 bits (f16, bf16) rounds as if from
/// `x` itself (`x as f64` would round twice: a 64-bit integer just above a bf16 midpoint
/// first lands on the midpoint, then ties to even).
fn to_f64_odd(x: i128) -> f64 {
    let mag = x.unsigned_abs();
    let n = 128 - mag.leading_zeros();
    let r = if n <= 53 {
        mag as f64
    } else {
        let shift = n - 53;
        let kept = (mag >> shift) | u128::from(mag & ((1u128 << shift) - 1) != 0);
        kept as f64 * 2f64.powi(shift as i32)
    };
    if x < 0 {
        -r
    } else {
        r
    }
}

/// `x` rounded to odd at f32's 24 bits: truncated toward zero, with the last bit set when
/// that was inexact. One more rounding to f16 (11 bits) or bf16 (8 bits) then rounds as if
/// from `x` (24 >= 2 x 11 + 2); `half`'s own `from_f64` drops the low 32 bits of the f64
/// mantissa first and so ties some values that lie just above a midpoint.
fn to_f32_odd(x: f64) -> f32 {
    let t = x as f32;
    if t as f64 == x || x.is_nan() {
        return t;
    }
    // Bit patterns of one sign are ordered by magnitude: one step toward zero truncates.
    let toward_zero = if (t as f64).abs() > x.abs() { f32::from_bits(t.to_bits() - 1) } else { t };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// `cvt.rn.f16.*` of `x`: one rounding to nearest even; NaN is the canonical `0x7FFF`.
fn to_f16(x: f64) -> u64 {
    if x.is_nan() {
        return 0x7FFF;
    }
    half::f16::from_f32(to_f32_odd(x)).to_bits() as u64
}

/// `cvt.rn.bf16.*` of `x`: one rounding to nearest even; NaN is the canonical `0x7FFF`.
fn to_bf16(x: f64) -> u64 {
    if x.is_nan() {
        return 0x7FFF;
    }
    half::bf16::from_f32(to_f32_odd(x)).to_bits() as u64
}

/// The quiet NaN of a format with the sign of `x` (what the GPU's `cvt.f32.f64` and
/// `cvt.bf16.f64` give for a NaN, measured on the H200: `bench/gpu-runs.md` run 11).
fn signed_quiet_nan(x: f64, dt: Type) -> u64 {
    let neg = x.is_sign_negative() as u64;
    match dt {
        Type::F32 => neg << 31 | 0x7FC0_0000,
        _ => neg << 15 | 0x7FC0,
    }
}

/// `cvt` as a plain `as` conversion: the rounding of [`Rounding::of_cast`] (`.rn` into
/// floats, `.rzi` from floats into integers), exact widening.
pub fn cvt(v: u64, st: Type, dt: Type) -> u64 {
    cvt_rounded(v, st, dt, Rounding::of_cast(st, dt))
}

/// One step of a float format's bits toward minus (`down`) or plus infinity.
fn step(bits: u64, down: bool, sign_bit: u64) -> u64 {
    let neg = bits & sign_bit != 0;
    let mag = bits & (sign_bit - 1);
    match (neg, down) {
        // +0 down: the smallest negative subnormal; -0 up: the smallest positive one.
        (false, true) if mag == 0 => sign_bit | 1,
        (true, false) if mag == 0 => 1,
        (false, true) | (true, false) => bits - 1,
        (false, false) | (true, true) => bits + 1,
    }
}

/// A float result's value (bits of `dt`) as f64, exactly.
fn float_value(bits: u64, dt: Type) -> f64 {
    match dt {
        Type::F32 => f32::from_bits(bits as u32) as f64,
        Type::F16 => half::f16::from_bits(bits as u16).to_f64(),
        Type::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        _ => f64::from_bits(bits),
    }
}

/// `cvt` with a rounding (`None`: the conversion is exact). A directed rounding into a float
/// is the nearest result moved one step where it lies on the wrong side of the exact value
/// (`x`, or for an integer its value rounded to odd at 53 bits, which orders the same against
/// every float of at most 53 bits); into an integer it rounds the float to an integral value,
/// then saturates. NaN into an integer: see `float_to_int` (the rule, with the H200 measurement as its reason).
pub fn cvt_rounded(v: u64, st: Type, dt: Type, rounding: Option<Rounding>) -> u64 {
    use Type::*;
    if st == dt && !(st.is_float() && rounding.is_some()) {
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
        E4M3 | E5M2 => Num::F(fp8_value(st, v as u8)),
    };
    let nearest = match n {
        Num::I(x) => cvt_nearest(Num::I(x), st, dt, v),
        Num::F(x) if dt.is_int() => return float_to_int(x, st, dt, rounding.unwrap_or(Rounding::Zero)),
        Num::F(x) if st == dt => return round_integral(x, dt, rounding.unwrap_or(Rounding::Nearest)),
        Num::F(x) => cvt_nearest(Num::F(x), st, dt, v),
    };
    let exact = match n {
        Num::I(x) => to_f64_odd(x),
        Num::F(x) => x,
    };
    let sign_bit = match dt {
        F32 => 1 << 31,
        F64 => 1 << 63,
        F16 | BF16 => 1 << 15,
        _ => return nearest,
    };
    let r = float_value(nearest, dt);
    if exact.is_nan() || r == exact {
        return nearest;
    }
    let away = r.abs() > exact.abs();
    match rounding {
        None | Some(Rounding::Nearest) => nearest,
        Some(Rounding::Zero) if away => step(nearest, r > 0.0, sign_bit),
        Some(Rounding::Down) if r > exact => step(nearest, true, sign_bit),
        Some(Rounding::Up) if r < exact => step(nearest, false, sign_bit),
        Some(Rounding::Zero | Rounding::Down | Rounding::Up) => nearest,
    }
}

/// A float rounded to an integral value of its own type (`cvt.rni.f32.f32` and friends).
fn round_integral(x: f64, dt: Type, rounding: Rounding) -> u64 {
    let r = match rounding {
        Rounding::Nearest => x.round_ties_even(),
        Rounding::Zero => x.trunc(),
        Rounding::Down => x.floor(),
        Rounding::Up => x.ceil(),
    };
    match dt {
        Type::F32 => fb(r as f32),
        Type::F64 => r.to_bits(),
        Type::F16 => to_f16(r),
        _ => to_bf16(r),
    }
}

/// A float into an integer type: rounded to an integral value, then saturated.
///
/// NaN (the one rule, with every rounding), measured on the H200 with loaded operands
/// (`tests/gpu_eval.rs`, `tests/gpu_math.rs`, runs 12 and 13 of `bench/gpu-runs.md`):
/// - from f16/bf16/f32: **0** into a 16- or 32-bit integer;
/// - from f64: the integer's minimum, **`0x8000_0000`** into s32/u32 and **`0x8000`** into s16
///   (u16 from f64 was not drawn: modelled as 0, like the other sources);
/// - into a 64-bit integer, from any source: **`0x8000_0000_0000_0000`**.
///
/// An older note of `0x80..0` for every width came from ptxas folding constant operands, which
/// the builder no longer hands it (it folds every all-constant float op with this evaluator).
fn float_to_int(x: f64, st: Type, dt: Type, rounding: Rounding) -> u64 {
    use Type::*;
    if x.is_nan() {
        return match (st, dt) {
            (_, S64 | U64 | B64) => 1 << 63,
            (F64, S32 | U32 | B32) => 1 << 31,
            (F64, S16) => 1 << 15,
            _ => 0,
        };
    }
    let x = match rounding {
        Rounding::Nearest => x.round_ties_even(),
        Rounding::Zero => x.trunc(),
        Rounding::Down => x.floor(),
        Rounding::Up => x.ceil(),
    };
    match dt {
        S16 => (x as i16) as u16 as u64,
        S32 => (x as i32) as u32 as u64,
        S64 => (x as i64) as u64,
        U16 | B16 => (x as u16) as u64,
        U32 | B32 => (x as u32) as u64,
        Pred => (x != 0.0) as u64,
        _ => x as u64,
    }
}

/// The nearest-even conversion of an integer or a float (not into an integer).
fn cvt_nearest(n: Num, st: Type, dt: Type, v: u64) -> u64 {
    use Type::*;
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
        (Num::I(x), F16) => to_f16(to_f64_odd(x)),
        (Num::I(x), BF16) => to_bf16(to_f64_odd(x)),
        (Num::F(x), F32) if x.is_nan() && st == F64 => signed_quiet_nan(x, F32),
        (Num::F(x), BF16) if x.is_nan() && st == F64 => signed_quiet_nan(x, BF16),
        (Num::F(x), F32) => fb(x as f32),
        (Num::F(x), F64) => x.to_bits(),
        (Num::F(x), F16) => to_f16(x),
        (Num::F(x), BF16) => to_bf16(x),
        (_, _) => v,
    }
}

/// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` of one f32 (`bits`) to an FP8 code (`to` is
/// [`Type::E4M3`] or [`Type::E5M2`]): the nearest value, ties to the even code; finite values
/// beyond the largest, and infinities, saturate to it; every NaN becomes 0x7F, whatever its
/// sign and payload, in both formats (the H200's `cvt`, measured in `tests/gpu_math.rs`, GPU run
/// 21: CUDA's host `__nv_cvt_float_to_fp8`, and so the `float8` crate, keep the sign and E5M2 two
/// payload bits instead). It rounds at the format's quantum, a method of its own: the host's
/// `float8` conversion (CUDA's bit-level one) is held to it over the non-NaN f32 bit patterns.
pub fn f32_to_fp8(bits: u32, to: Type) -> u8 {
    // Mantissa bits, the smallest normal exponent (the bias is 1 minus it), the largest finite value.
    let (mant_bits, min_exp, max_finite): (i32, i32, f64) = match to {
        Type::E4M3 => (3, -6, 448.0),
        _ => (2, -14, 57344.0),
    };
    let sign = ((bits >> 31) as u8) << 7;
    let x = f32::from_bits(bits & 0x7FFF_FFFF) as f64;
    if x.is_nan() {
        return 0x7F;
    }
    // floor(log2 v) of a positive finite f64 (every f32 is a normal f64).
    let binade = |v: f64| ((v.to_bits() >> 52) as i32) - 1023;
    let floor_exp = if x == 0.0 || x.is_infinite() { min_exp } else { binade(x).max(min_exp) };
    let quantum = 2f64.powi(floor_exp - mant_bits);
    let r = if x.is_infinite() { max_finite } else { ((x / quantum).round_ties_even() * quantum).min(max_finite) };
    let code = if r < 2f64.powi(min_exp) {
        // Zero or subnormal: a count of the smallest quantum.
        (r / 2f64.powi(min_exp - mant_bits)) as u8
    } else {
        let e = binade(r);
        let m = ((r / 2f64.powi(e) - 1.0) * 2f64.powi(mant_bits)) as i32;
        (((e + 1 - min_exp) << mant_bits) | m) as u8
    };
    sign | code
}

/// The value of an OCP FP8 element (`ty` is [`Type::E4M3`] or [`Type::E5M2`]; every other
/// type reads as NaN). E4M3 (`e4m3fn`): bias 7, no infinities, S.1111.111 is NaN; E5M2: the
/// upper byte of an IEEE f16. Every FP8 value is exact in f32.
pub fn fp8_value(ty: Type, b: u8) -> f64 {
    match ty {
        Type::E4M3 => {
            let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
            let (e, m) = ((b >> 3) & 0xF, b & 7);
            if e == 0xF && m == 7 {
                return f64::NAN;
            }
            let v = if e == 0 { m as f64 / 8.0 * 2f64.powi(-6) } else { (1.0 + m as f64 / 8.0) * 2f64.powi(e as i32 - 7) };
            sign * v
        }
        Type::E5M2 => half::f16::from_bits((b as u16) << 8).to_f64(),
        _ => f64::NAN,
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
    fn integers_round_once_into_half_types() {
        // 2^63 + 2^55 + 1 lies just above the midpoint of the bf16 neighbours 2^63 and
        // 2^63 + 2^56: it rounds up; through f64 it would land on the midpoint and tie down.
        let x = (1u64 << 63) + (1 << 55) + 1;
        let up = half::bf16::from_f64(((1u64 << 63) + (1 << 56)) as f64).to_bits() as u64;
        assert_eq!(cvt(x, Type::U64, Type::BF16), up);
        assert_eq!(cvt(1 << 63, Type::U64, Type::BF16), half::bf16::from_f64(2f64.powi(63)).to_bits() as u64);
        // The same from f64: 1 + 2^-8 + 2^-40 is just above the bf16 midpoint 1 + 2^-8.
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(cvt(y.to_bits(), Type::F64, Type::BF16), half::bf16::from_f32(1.0 + 2f32.powi(-7)).to_bits() as u64);
        let z = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(cvt(z.to_bits(), Type::F64, Type::F16), half::f16::from_f32(1.0 + 2f32.powi(-10)).to_bits() as u64);
        assert_eq!(cvt(f64::NAN.to_bits(), Type::F64, Type::F16), 0x7FFF);
        assert_eq!(cvt(1e300f64.to_bits(), Type::F64, Type::BF16), 0x7F80, "beyond the range: infinity");
        assert_eq!(cvt((-1e-300f64).to_bits(), Type::F64, Type::F16), 0x8000, "below the range: signed zero");
        assert_eq!(cvt(-3i32 as u32 as u64, Type::S32, Type::F16), half::f16::from_f32(-3.0).to_bits() as u64);
    }

    #[test]
    fn float_ops_round_once_and_convert_like_ptx() {
        let (a, b, c) = (1.0f32 + f32::EPSILON, 1.0f32 - f32::EPSILON, -1.0f32);
        let fused = mad_fn(Type::F32)(a.to_bits() as u64, b.to_bits() as u64, c.to_bits() as u64);
        assert_eq!(f32::from_bits(fused as u32), a.mul_add(b, c));
        assert_ne!(f32::from_bits(fused as u32), a * b + c, "fma.rn must not round twice");
        let nan = f32::NAN.to_bits() as u64;
        for dt in [Type::S16, Type::U16, Type::S32, Type::U32] {
            assert_eq!(cvt(nan, Type::F32, dt), 0, "NaN into a {dt:?}: the H200's 0");
        }
        for dt in [Type::S64, Type::U64] {
            assert_eq!(cvt(nan, Type::F32, dt), 1 << 63, "NaN into a {dt:?}: the H200's 0x80..0");
            assert_eq!(cvt(f64::NAN.to_bits(), Type::F64, dt), 1 << 63, "f64 NaN into a {dt:?}");
        }
        // From f64 the H200 gives the integer's minimum (run 13): 0x8000_0000 and 0x8000.
        let dnan = f64::NAN.to_bits();
        assert_eq!(cvt(dnan, Type::F64, Type::S32), 0x8000_0000);
        assert_eq!(cvt(dnan, Type::F64, Type::U32), 0x8000_0000);
        assert_eq!(cvt(dnan, Type::F64, Type::S16), 0x8000);
        assert_eq!(cvt(f64::NAN.to_bits() | 1 << 63, Type::F64, Type::F32), 0xFFC0_0000, "the sign is kept");
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

    proptest::proptest! {
        /// A directed rounding into f32 brackets the exact value: down <= x <= up, the two
        /// equal or adjacent, toward zero the one of smaller magnitude, to nearest Rust's `as`.
        #[test]
        fn directed_roundings_bracket_the_exact_value(bits: u64, int: i64) {
            use std::cmp::Ordering;
            let x = f64::from_bits(bits);
            // (source bits, type, how a result compares with the exact value)
            let from_f64 = move |a: f32| (a as f64).partial_cmp(&x);
            let from_i64 = move |a: f32| Some((a as i128).cmp(&(int as i128)));
            let cases: [(u64, Type, &dyn Fn(f32) -> Option<Ordering>); 2] =
                [(bits, Type::F64, &from_f64), (int as u64, Type::S64, &from_i64)];
            for (v, st, cmp) in cases {
                if st == Type::F64 && (x.is_nan() || x.abs() > f32::MAX as f64) {
                    continue;
                }
                let r = |m| f32::from_bits(cvt_rounded(v, st, Type::F32, Some(m)) as u32);
                let (down, up, zero) = (r(Rounding::Down), r(Rounding::Up), r(Rounding::Zero));
                proptest::prop_assert!(cmp(down) != Some(Ordering::Greater), "down {} above the value", down);
                proptest::prop_assert!(cmp(up) != Some(Ordering::Less), "up {} below the value", up);
                let neighbours = down == up || down.next_up() == up;
                proptest::prop_assert!(neighbours, "{} and {} are not neighbours", down, up);
                let toward_zero = if cmp(0.0) == Some(Ordering::Greater) { up } else { down };
                proptest::prop_assert_eq!(zero.to_bits(), toward_zero.to_bits());
                if st == Type::F64 {
                    proptest::prop_assert_eq!(r(Rounding::Nearest).to_bits(), (x as f32).to_bits());
                }
            }
        }

        /// Into an integer, each rounding is Rust's integral rounding, then saturation.
        #[test]
        fn roundings_into_integers_are_floor_ceil_trunc_and_ties_even(bits: u32) {
            let x = f32::from_bits(bits);
            proptest::prop_assume!(!x.is_nan());
            let r = |m| cvt_rounded(bits as u64, Type::F32, Type::S32, Some(m)) as u32 as i32;
            proptest::prop_assert_eq!(r(Rounding::Down), x.floor() as i32);
            proptest::prop_assert_eq!(r(Rounding::Up), x.ceil() as i32);
            proptest::prop_assert_eq!(r(Rounding::Zero), x.trunc() as i32);
            proptest::prop_assert_eq!(r(Rounding::Nearest), x.round_ties_even() as i32);
        }
    }
}
