//! Arithmetic, comparisons, conversions and variables.

use super::kernel_builder::KernelBuilder;
use crate::eval;
use crate::ir::*;

impl KernelBuilder {
    /// Make two operands agree on a type: an immediate takes the other side's type;
    /// two registers of different types are an error (cast with `cvt`).
    #[track_caller]
    pub(crate) fn unify(&mut self, what: &str, a: Value, b: Value) -> (Value, Value, Type) {
        let (ta, tb) = (a.ty(), b.ty());
        if ta == tb {
            return (a, b, ta);
        }
        match (a, b) {
            (Value::Imm { .. }, Value::Reg(_)) => (self.imm_as(what, a, tb), b, tb),
            (Value::Reg(_), Value::Imm { .. }) => (a, self.imm_as(what, b, ta), ta),
            _ => {
                self.error(format!("mismatched types in {what}: {ta} and {tb}; convert one side with `as`"));
                (a, b, ta)
            }
        }
    }

    /// The immediate `v` as a `ty`, or a build error naming the value when `ty` cannot hold it
    /// (a constant is never truncated silently: `u32 + (1 << 32)` is refused, as in Rust).
    #[track_caller]
    pub(crate) fn imm_as(&mut self, what: &str, v: Value, ty: Type) -> Value {
        match fit_imm(v, ty) {
            Ok(x) => x,
            Err(x) => {
                self.error(format!("the constant {x} in {what} does not fit in {ty}"));
                retype_imm(v, ty)
            }
        }
    }

    /// An operand as a register (PTX forbids immediates in some positions).
    #[track_caller]
    pub fn materialize(&mut self, v: Value) -> Value {
        match v {
            Value::Reg(_) => v,
            Value::Imm { ty, .. } => {
                let dst = self.new_reg(ty);
                self.push(ArithOp::Mov { dst, src: v });
                Value::Reg(dst)
            }
        }
    }

    /// A new mutable variable (`let mut x = v`).
    #[track_caller]
    pub fn var(&mut self, init: Value) -> Reg {
        let dst = self.new_reg(init.ty());
        self.push(ArithOp::Mov { dst, src: init });
        dst
    }

    /// `var = v` (an immediate takes the variable's type).
    #[track_caller]
    pub fn assign(&mut self, var: Reg, v: Value) {
        let v = if v.ty() != var.ty {
            match v {
                Value::Imm { .. } => self.imm_as("an assignment", v, var.ty),
                _ => {
                    self.error(format!("cannot assign a {} to a variable of type {}", v.ty(), var.ty));
                    v
                }
            }
        } else {
            v
        };
        self.push(ArithOp::Mov { dst: var, src: v });
    }

    #[track_caller]
    pub fn binary(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        // Shift amounts are always u32 in PTX, whatever the shifted type.
        let (a, b, ty) = if matches!(op, BinOp::Shl | BinOp::Shr) {
            let amount = match b {
                Value::Imm { .. } => self.imm_as("a shift amount", b, Type::U32),
                _ if b.ty().is_int() => self.cvt(b, Type::U32),
                _ => b,
            };
            (a, amount, a.ty())
        } else {
            self.unify(op.symbol(), a, b)
        };
        if ty == Type::Pred && !matches!(op, BinOp::And | BinOp::Or | BinOp::Xor) {
            self.error(format!("`{}` is not defined on booleans", op.symbol()));
        }
        if ty.is_half() {
            self.error(format!("{ty} arithmetic: convert to f32 first (`as f32`); half types are for storage"));
        }
        if ty.is_float() && matches!(op, BinOp::Rem | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr) {
            self.error(format!("`{}` is not defined on {ty}", op.symbol()));
        }
        if let (Value::Imm { bits: x, .. }, Value::Imm { bits: y, .. }) = (a, b) {
            if folds(ty) {
                // The value the instruction would compute, or refused as Rust refuses the
                // same constant expression (never a wrapped count or size). Floats are
                // folded too: ptxas folds constant float operations by its own rules (a
                // NaN's payload kept where the GPU gives the canonical NaN), so the
                // evaluator's run-time value is what the PTX must hold.
                match eval::fold_binary(op, ty, x, y) {
                    Ok(bits) => return Value::Imm { bits, ty },
                    Err(e @ eval::FoldError::DivisionByZero { .. }) => {
                        self.error(format!("division by a constant zero: {e}"))
                    }
                    Err(e @ eval::FoldError::Overflow { .. }) => self.error(format!("the constant expression {e}")),
                }
            }
        }
        // Identities keep the PTX readable (`x + 0`, `x * 1`, `x << 0`).
        if let Some(y) = b.as_imm_i128() {
            let identity = match op {
                BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr => y == 0,
                BinOp::Mul | BinOp::Div => y == 1,
                _ => false,
            };
            if identity && ty.is_int() {
                return a;
            }
        }
        // PTX takes an immediate only as the second source: swap or materialize.
        let (a, b) = match (a, b) {
            (Value::Imm { .. }, Value::Reg(_)) if op.is_commutative() => (b, a),
            (Value::Imm { .. }, _) => (self.materialize(a), b),
            _ => (a, b),
        };
        let dst = self.new_reg(ty);
        self.push(ArithOp::Binary { op, dst, a, b });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Add, a, b)
    }
    #[track_caller]
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Sub, a, b)
    }
    #[track_caller]
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Mul, a, b)
    }
    #[track_caller]
    pub fn div(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Div, a, b)
    }
    #[track_caller]
    pub fn rem(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Rem, a, b)
    }
    #[track_caller]
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::And, a, b)
    }
    #[track_caller]
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Or, a, b)
    }
    #[track_caller]
    pub fn xor(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Xor, a, b)
    }
    #[track_caller]
    pub fn shl(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Shl, a, b)
    }
    #[track_caller]
    pub fn shr(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Shr, a, b)
    }
    #[track_caller]
    pub fn min(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Min, a, b)
    }
    #[track_caller]
    pub fn max(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinOp::Max, a, b)
    }

    #[track_caller]
    pub fn unary(&mut self, op: UnOp, a: Value) -> Value {
        let ty = a.ty();
        if ty == Type::Pred && op != UnOp::Not {
            self.error("only `!` is defined on booleans");
        }
        let unsigned_sign_op = !ty.is_signed() && !ty.is_float() && matches!(op, UnOp::Neg | UnOp::Abs);
        if unsigned_sign_op && ty != Type::Pred {
            self.error(format!("`{op:?}` needs a signed or float type, not {ty}"));
        }
        if let Value::Imm { bits, .. } = a {
            if folds(ty) {
                match eval::fold_unary(op, ty, bits) {
                    Ok(bits) => return Value::Imm { bits, ty },
                    // An unsigned operand is reported above, by its type.
                    Err(_) if unsigned_sign_op => return a,
                    Err(e) => self.error(format!("the constant expression {e}")),
                }
            }
        }
        let a = self.materialize(a);
        let dst = self.new_reg(ty);
        self.push(ArithOp::Unary { op, dst, a });
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn neg(&mut self, a: Value) -> Value {
        self.unary(UnOp::Neg, a)
    }
    #[track_caller]
    pub fn not(&mut self, a: Value) -> Value {
        self.unary(UnOp::Not, a)
    }

    /// `a * b + c`.
    #[track_caller]
    pub fn mad(&mut self, a: Value, b: Value, c: Value) -> Value {
        let (a, b, ty) = self.unify("mad", a, b);
        let c = match c {
            Value::Imm { .. } if c.ty() != ty => self.imm_as("mad", c, ty),
            _ if c.ty() != ty => {
                self.error(format!("mismatched types in mad: the addend is {} but the product is {ty}", c.ty()));
                c
            }
            _ => c,
        };
        if let (Value::Imm { bits: x, .. }, Value::Imm { bits: y, .. }, Value::Imm { bits: z, .. }) = (a, b, c) {
            if ty.is_float() && folds(ty) {
                return Value::Imm { bits: eval::mad_fn(ty)(x, y, z), ty };
            }
        }
        let a = self.materialize(a);
        let dst = self.new_reg(ty);
        self.push(ArithOp::Mad { dst, a, b, c });
        Value::Reg(dst)
    }

    /// A comparison, producing a predicate.
    #[track_caller]
    pub fn cmp(&mut self, cmp: CmpOp, a: Value, b: Value) -> Value {
        let (a, b, ty) = self.unify("comparison", a, b);
        if let (Value::Imm { bits: x, .. }, Value::Imm { bits: y, .. }) = (a, b) {
            if folds(ty) {
                return Value::pred(eval::fold_compare(cmp, ty, x, y));
            }
        }
        if ty.is_half() {
            self.error(format!("{ty} comparison: convert to f32 first"));
        }
        let (a, b, cmp) = match a {
            Value::Imm { .. } => (b, a, swap_cmp(cmp)),
            _ => (a, b, cmp),
        };
        let dst = self.new_reg(Type::Pred);
        if ty == Type::Pred {
            // PTX has no setp on predicates: compare as u32.
            let (a32, b32) =
                (self.select(a, Value::u32(1), Value::u32(0)), self.select(b, Value::u32(1), Value::u32(0)));
            self.push(ArithOp::Setp { cmp, dst, a: a32, b: b32 });
        } else {
            self.push(ArithOp::Setp { cmp, dst, a, b });
        }
        Value::Reg(dst)
    }

    #[track_caller]
    pub fn eq(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Eq, a, b)
    }
    #[track_caller]
    pub fn ne(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ne, a, b)
    }
    #[track_caller]
    pub fn lt(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Lt, a, b)
    }
    #[track_caller]
    pub fn le(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Le, a, b)
    }
    #[track_caller]
    pub fn gt(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Gt, a, b)
    }
    #[track_caller]
    pub fn ge(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ge, a, b)
    }

    /// `cond ? a : b`.
    #[track_caller]
    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        if cond.ty() != Type::Pred {
            self.error(format!("select condition must be a bool, found {}", cond.ty()));
        }
        let (a, b, ty) = self.unify("select", a, b);
        if let Some(c) = cond.as_imm_i128() {
            return if c != 0 { a } else { b };
        }
        if ty == Type::Pred {
            let (x, y) = (self.select(a, Value::u32(1), Value::u32(0)), self.select(b, Value::u32(1), Value::u32(0)));
            let s = self.select(cond, x, y);
            return self.ne(s, Value::u32(0));
        }
        let a = self.materialize(a);
        let dst = self.new_reg(ty);
        self.push(ArithOp::Selp { dst, cond, a, b });
        Value::Reg(dst)
    }

    /// `v as ty`.
    #[track_caller]
    pub fn cvt(&mut self, v: Value, ty: Type) -> Value {
        self.convert(v, ty, None)
    }

    /// `v` converted to `ty` with `rounding` (`cvt.rz.f16.f32`, `cvt.rmi.s32.f32`, and
    /// `cvt.rni.f32.f32` for a float rounded to an integral value of its own type).
    #[track_caller]
    pub fn cvt_rounded(&mut self, v: Value, ty: Type, rounding: Rounding) -> Value {
        let from = v.ty();
        if !Rounding::applies(from, ty) {
            self.error(format!(
                "a rounding mode on a conversion from {from} to {ty}: it is exact (a rounding applies into or from a float, and to a float rounded to an integral value); use `as`"
            ));
            return self.cvt(v, ty);
        }
        self.convert(v, ty, Some(rounding))
    }

    #[track_caller]
    fn convert(&mut self, v: Value, ty: Type, rounding: Option<Rounding>) -> Value {
        if v.ty() == ty && rounding.is_none() {
            return v;
        }
        if ty == Type::Pred {
            return self.ne(v, Value::imm_u(0, v.ty()));
        }
        if v.ty() == Type::Pred {
            let one = if ty.is_float() { float_imm(1.0, ty) } else { Value::imm_u(1, ty) };
            let zero = if ty.is_float() { float_imm(0.0, ty) } else { Value::imm_u(0, ty) };
            return self.select(v, one, zero);
        }
        if let Value::Imm { bits, ty: from } = v {
            // Constants convert as `cvt` would (one rounding into a float), always with the
            // evaluator; half types are not PTX immediates.
            if folds(from) {
                let bits = eval::cvt_rounded(bits, from, ty, rounding.or(Rounding::of_cast(from, ty)));
                if folds(ty) {
                    return Value::Imm { bits, ty };
                }
                // Into a half type: the evaluator's bits moved into the register
                // (`mov.b16 %rs1, 0x7FC0`), never `cvt.rn.bf16.f64 %rs1, 0d7FF0..01`: ptxas
                // folds a constant conversion by its own NaN rules (`0x7FFF` for that one,
                // measured on the H200, where the GPU at run time gives the signed quiet NaN).
                return self.materialize(Value::Imm { bits, ty });
            }
        }
        let dst = self.new_reg(ty);
        self.push(ArithOp::Cvt { dst, src: v, rounding });
        Value::Reg(dst)
    }
}

/// Whether constants of `ty` are folded: every type with PTX immediates (f16 and bf16 have
/// none: their constants stay instructions).
pub(crate) fn folds(ty: Type) -> bool {
    !ty.is_half()
}

pub(crate) fn float_imm(x: f64, ty: Type) -> Value {
    match ty {
        Type::F64 => Value::f64(x),
        _ => Value::f32(x as f32),
    }
}

/// An integer immediate as `ty` when `ty` holds its value, as an unsigned number or as a
/// two's complement one of `ty`'s width (so `-1` may become `u32::MAX`, as PTX reads it);
/// `Err(value)` when converting would change it. Other conversions are [`retype_imm`]'s.
pub(crate) fn fit_imm(v: Value, ty: Type) -> Result<Value, i128> {
    if let (Some(x), true) = (v.as_imm_i128(), ty.is_int() && v.ty().is_int()) {
        let bits = ty.bits();
        let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << bits) - 1);
        if x < lo || x > hi {
            return Err(x);
        }
    }
    Ok(retype_imm(v, ty))
}

/// Reinterpret an immediate as another type (integer value kept; int→float converts).
pub(crate) fn retype_imm(v: Value, ty: Type) -> Value {
    match v {
        Value::Imm { bits, ty: from } => {
            if from.is_int() && ty.is_float() {
                let x = v.as_imm_i128().unwrap_or(0) as f64;
                return float_imm(x, ty);
            }
            if from == Type::F32 && ty == Type::F64 {
                return Value::f64(f32::from_bits(bits as u32) as f64);
            }
            if from == Type::F64 && ty == Type::F32 {
                return Value::f32(f64::from_bits(bits) as f32);
            }
            if from.is_signed() {
                Value::imm_i(v.as_imm_i128().unwrap_or(0) as i64, ty)
            } else {
                Value::imm_u(bits, ty)
            }
        }
        r => r,
    }
}

fn swap_cmp(c: CmpOp) -> CmpOp {
    match c {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}
