//! Folding: an operation on constants gives exactly what [`super::exec`] computes at run time,
//! or is refused where Rust refuses the same constant expression: an integer result its type
//! cannot hold (the GPU would wrap it; a wrapped count or size is a wrong answer) and a
//! division by zero. Shifts are not checked: amounts of the width or more are clamped, as PTX
//! defines (`-8i32 >> 40` is -1, `1u32 << 40` is 0).

use super::exec::{bin_fn, cmp_fn, cvt, un_fn};
use crate::ir::{BinOp, CmpOp, Type, UnOp};

/// Why a constant expression is refused; the message names the operands and the type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FoldError {
    /// The exact result does not fit the type.
    #[error("{expr} overflows {ty} (its value is {exact}; at run time it would wrap to {wrapped})")]
    Overflow { expr: String, ty: Type, exact: String, wrapped: i128 },
    /// A division or remainder by zero.
    #[error("{expr} divides by zero")]
    DivisionByZero { expr: String },
}

/// The integer that the bits `bits` of `ty` stand for (sign-extended for signed types).
pub fn int_value(bits: u64, ty: Type) -> i128 {
    let width = ty.bits().max(1);
    let masked = if width >= 64 { bits } else { bits & ((1u64 << width) - 1) };
    if ty.is_signed() {
        let sh = 64 - width;
        (((masked << sh) as i64) >> sh) as i128
    } else {
        masked as i128
    }
}

/// Whether `ty` holds the integer `v` (its signed range for signed types, else unsigned).
fn fits(v: i128, ty: Type) -> bool {
    let width = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (width - 1))..(1i128 << (width - 1))).contains(&v)
    } else {
        (0..(1i128 << width)).contains(&v)
    }
}

/// `a op b` on constants of `ty` (`b` of a shift is a `u32` amount), as register bits.
pub fn fold_binary(op: BinOp, ty: Type, a: u64, b: u64) -> Result<u64, FoldError> {
    let run_time = bin_fn(op, ty)(a, b);
    if !ty.is_int() {
        return Ok(run_time);
    }
    let x = int_value(a, ty);
    let y = match op {
        BinOp::Shl | BinOp::Shr => int_value(b, Type::U32),
        _ => int_value(b, ty),
    };
    let expr = || format!("{x} {} {y}", op.symbol());
    let exact = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        BinOp::Div | BinOp::Rem if y == 0 => return Err(FoldError::DivisionByZero { expr: expr() }),
        BinOp::Div => Some(x / y),
        BinOp::Rem => Some(x % y),
        BinOp::Min | BinOp::Max | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr => return Ok(run_time),
    };
    match exact {
        Some(v) if fits(v, ty) => {
            debug_assert_eq!(int_value(run_time, ty), v, "the run-time result of an exact fold");
            Ok(run_time)
        }
        // Only a 64-bit product can leave i128 (u64::MAX^2 > i128::MAX).
        exact => Err(FoldError::Overflow {
            expr: expr(),
            ty,
            exact: exact.map_or_else(|| "beyond 2^127".to_string(), |v| v.to_string()),
            wrapped: int_value(run_time, ty),
        }),
    }
}

/// `op a` on a constant of `ty`, as register bits; the negation or absolute value of an
/// integer its type cannot hold (`-i32::MIN`, `-5u32`) is refused.
pub fn fold_unary(op: UnOp, ty: Type, a: u64) -> Result<u64, FoldError> {
    let run_time = un_fn(op, ty)(a);
    if !ty.is_int() {
        return Ok(run_time);
    }
    let x = int_value(a, ty);
    let (exact, expr) = match op {
        UnOp::Neg => (-x, format!("-({x})")),
        UnOp::Abs => (x.abs(), format!("abs({x})")),
        UnOp::Not => return Ok(run_time),
    };
    if fits(exact, ty) {
        Ok(run_time)
    } else {
        Err(FoldError::Overflow { expr, ty, exact: exact.to_string(), wrapped: int_value(run_time, ty) })
    }
}

/// `a as to` for a constant of `from`: `cvt` exactly (Rust's `as` truncates and saturates the
/// same way, so nothing is refused).
pub fn fold_convert(a: u64, from: Type, to: Type) -> u64 {
    cvt(a, from, to)
}

/// A comparison of two constants of `ty`.
pub fn fold_compare(cmp: CmpOp, ty: Type, a: u64, b: u64) -> bool {
    cmp_fn(cmp, ty)(a, b)
}

/// `a op b` on `u32` compile-time values (the macro's `#[comptime]`, `const` and literal
/// arithmetic).
pub fn fold_u32(op: BinOp, a: u32, b: u32) -> Result<u32, FoldError> {
    fold_binary(op, Type::U32, a as u64, b as u64).map(|v| v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s32(v: i32) -> u64 {
        v as u32 as u64
    }

    #[test]
    fn signed_shifts_past_the_width_fill_with_the_sign() {
        assert_eq!(fold_binary(BinOp::Shr, Type::S32, s32(-8), 40), Ok(s32(-1)));
        assert_eq!(fold_binary(BinOp::Shr, Type::S64, u64::MAX, 70), Ok(u64::MAX));
        assert_eq!(fold_binary(BinOp::Shr, Type::U32, 0xFFFF_FFFF, 40), Ok(0));
        assert_eq!(fold_binary(BinOp::Shl, Type::U32, 1, 32), Ok(0));
        assert_eq!(fold_binary(BinOp::Shl, Type::S16, 1, 15), Ok(0x8000), "bits shifted out are not an overflow");
    }

    #[test]
    fn results_the_type_cannot_hold_are_refused() {
        let e = fold_binary(BinOp::Mul, Type::U32, 65536, 65536).unwrap_err();
        assert_eq!(
            e.to_string(),
            "65536 * 65536 overflows u32 (its value is 4294967296; at run time it would wrap to 0)"
        );
        assert!(fold_binary(BinOp::Sub, Type::U32, 0, 1).is_err());
        assert_eq!(fold_binary(BinOp::Sub, Type::S32, 0, 1), Ok(s32(-1)));
        assert!(fold_binary(BinOp::Add, Type::S32, s32(i32::MAX), 1).is_err());
        assert!(fold_binary(BinOp::Div, Type::S32, s32(i32::MIN), s32(-1)).is_err());
        assert_eq!(fold_binary(BinOp::Rem, Type::S32, s32(i32::MIN), s32(-1)), Ok(0));
        let e = fold_binary(BinOp::Mul, Type::U64, u64::MAX, u64::MAX).unwrap_err().to_string();
        assert!(e.contains("its value is beyond 2^127"), "{e}");
        assert_eq!(fold_binary(BinOp::Div, Type::U32, 7, 0).unwrap_err().to_string(), "7 / 0 divides by zero");
        assert!(fold_unary(UnOp::Neg, Type::S32, s32(i32::MIN)).is_err());
        assert!(fold_unary(UnOp::Abs, Type::S64, i64::MIN as u64).is_err());
        assert!(fold_unary(UnOp::Neg, Type::U32, 5).is_err());
        assert_eq!(fold_unary(UnOp::Neg, Type::U32, 0), Ok(0));
        assert_eq!(fold_unary(UnOp::Not, Type::U16, 0), Ok(0xFFFF));
        assert_eq!(fold_u32(BinOp::Add, u32::MAX, 0), Ok(u32::MAX));
    }

    proptest::proptest! {
        /// Wherever a fold is accepted it equals the run-time value; where it is refused
        /// the exact result lies outside the type.
        #[test]
        fn a_fold_is_the_run_time_value_or_refused(a: u64, b: u64, op in 0usize..12, ty in 0usize..9) {
            let op = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem, BinOp::Min, BinOp::Max,
                BinOp::And, BinOp::Or, BinOp::Xor, BinOp::Shl, BinOp::Shr][op];
            let ty = [Type::U16, Type::S16, Type::B16, Type::U32, Type::S32, Type::B32, Type::U64, Type::S64,
                Type::B64][ty];
            let width_mask = if ty.bits() == 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
            let (a, b) = (a & width_mask, if matches!(op, BinOp::Shl | BinOp::Shr) { b % 80 } else { b & width_mask });
            match fold_binary(op, ty, a, b) {
                Ok(v) => proptest::prop_assert_eq!(v, bin_fn(op, ty)(a, b)),
                Err(FoldError::DivisionByZero { .. }) => proptest::prop_assert_eq!(b, 0),
                Err(FoldError::Overflow { exact, .. }) => {
                    if let Ok(exact) = exact.parse::<i128>() {
                        proptest::prop_assert!(!fits(exact, ty));
                    }
                }
            }
        }
    }
}
