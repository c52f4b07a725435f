//! Float functions (`ex2`, `lg2`, `rcp`, `rsqrt`, `sqrt`), `min.NaN`/`max.NaN`, `copysign`,
//! `abs`, and bitcasts between types of one width. The DSL's method syntax (`x.exp2()`,
//! `x.recip()`, `f32::from_bits(u)`) lowers to these through the registry.

use super::arith::folds;
use super::kernel_builder::KernelBuilder;
use crate::eval;
use crate::ir::*;

impl KernelBuilder {
    /// `fun(a)` on an f32 (or f64 where PTX has the f64 form); a constant is folded to the
    /// evaluator's value.
    #[track_caller]
    pub fn math(&mut self, fun: MathFn, a: Value) -> Value {
        let a = match a {
            // A literal with no type of its own is an f32 here (`T.ex2(1.5)`).
            Value::Imm { ty, .. } if ty.is_int() => super::arith::retype_imm(a, Type::F32),
            _ => a,
        };
        let ty = a.ty();
        let Some(f) = eval::math_fn(fun, ty) else {
            let types = if fun.has_f64() { "f32 and f64" } else { "f32 only" };
            self.error(format!(
                "`{}` is defined on {types}, not on {ty}; convert with `as f32`",
                fun.ptx()
            ));
            return a;
        };
        if let Value::Imm { bits, .. } = a {
            return Value::Imm { bits: f(bits), ty };
        }
        let dst = self.new_reg(ty);
        self.push(ArithOp::Math { fun, dst, a });
        Value::Reg(dst)
    }

    /// `fun` on each half of a pair of `half`s (f16 or bf16) packed in a 32-bit integer
    /// (what `T.pack.f16x2` gives, the low half element 0): `ex2.approx.f16x2`,
    /// `ex2.approx.ftz.bf16x2`. Returns the packed pair as a `u32`; a constant is folded to
    /// the evaluator's value.
    #[track_caller]
    pub fn math_half2(&mut self, fun: MathFn, a: Value, half: Type) -> Value {
        let Some(f) = eval::math_half2_fn(fun, half) else {
            self.error(format!(
                "`{}` has no packed form on {half}x2 (PTX has `ex2.approx.f16x2` and `ex2.approx.ftz.bf16x2` only)",
                fun.ptx()
            ));
            return a;
        };
        let ty = a.ty();
        if ty.is_float() || ty.size() != 4 {
            self.error(format!(
                "a packed {half}x2 pair is a 32-bit integer (`T.pack.{half}x2(lo, hi)`), not {ty}; pack it first"
            ));
            return a;
        }
        if let Value::Imm { bits, .. } = a {
            return Value::Imm { bits: f(bits & 0xFFFF_FFFF), ty: Type::U32 };
        }
        // PTX takes the pair in a `.b32` register, never an immediate (folded above); every
        // 32-bit integer register is declared `.b32`.
        let packed = self.new_reg(Type::B32);
        self.push(ArithOp::MathHalf2 { fun, half, dst: packed, a });
        let dst = self.new_reg(Type::U32);
        self.push(ArithOp::Mov { dst, src: Value::Reg(packed) });
        Value::Reg(dst)
    }

    /// 2^a, `ex2.approx.ftz.f32` (Rust's `a.exp2()`).
    #[track_caller]
    pub fn exp2(&mut self, a: Value) -> Value {
        self.math(MathFn::Ex2Approx, a)
    }
    /// log2(a), `lg2.approx.ftz.f32` (Rust's `a.log2()`).
    #[track_caller]
    pub fn log2(&mut self, a: Value) -> Value {
        self.math(MathFn::Lg2Approx, a)
    }
    /// 1/a correctly rounded, `rcp.rn` (Rust's `a.recip()`).
    #[track_caller]
    pub fn recip(&mut self, a: Value) -> Value {
        self.math(MathFn::RcpRn, a)
    }
    /// The square root correctly rounded, `sqrt.rn` (Rust's `a.sqrt()`).
    #[track_caller]
    pub fn sqrt(&mut self, a: Value) -> Value {
        self.math(MathFn::SqrtRn, a)
    }

    /// `min.NaN`, `max.NaN` (f32) or `copysign` (f32, f64): `a` and `b` share a type.
    #[track_caller]
    pub fn float_binary(&mut self, op: FloatBinOp, a: Value, b: Value) -> Value {
        let what = match op {
            FloatBinOp::MinNaN => "min.NaN",
            FloatBinOp::MaxNaN => "max.NaN",
            FloatBinOp::Copysign => "copysign",
        };
        let retype = |v: Value| match v {
            Value::Imm { ty, .. } if ty.is_int() => super::arith::retype_imm(v, Type::F32),
            _ => v,
        };
        let (a, b) = match (a, b) {
            (Value::Imm { .. }, Value::Imm { .. }) => (retype(a), retype(b)),
            _ => (a, b),
        };
        let (a, b, ty) = self.unify(what, a, b);
        let Some(f) = eval::float_bin_fn(op, ty) else {
            let types = if op == FloatBinOp::Copysign { "f32 and f64" } else { "f32 only" };
            self.error(format!("`{what}` is defined on {types}, not on {ty}"));
            return a;
        };
        if let (Value::Imm { bits: x, .. }, Value::Imm { bits: y, .. }) = (a, b) {
            return Value::Imm { bits: f(x, y), ty };
        }
        // PTX takes an immediate only as the second source of `min`/`max`; `copysign`
        // takes registers.
        let (a, b) = match (op, a, b) {
            (FloatBinOp::MinNaN | FloatBinOp::MaxNaN, Value::Imm { .. }, Value::Reg(_)) => (b, a),
            (FloatBinOp::Copysign, _, _) => (self.materialize(a), self.materialize(b)),
            _ => (a, b),
        };
        let dst = self.new_reg(ty);
        self.push(ArithOp::FloatBinary { op, dst, a, b });
        Value::Reg(dst)
    }

    /// `a`'s magnitude with `b`'s sign (Rust's `a.copysign(b)`).
    #[track_caller]
    pub fn copysign(&mut self, a: Value, b: Value) -> Value {
        self.float_binary(FloatBinOp::Copysign, a, b)
    }

    /// |a| (`abs`; a signed integer or a float).
    #[track_caller]
    pub fn abs(&mut self, a: Value) -> Value {
        self.unary(UnOp::Abs, a)
    }

    /// The bits of `v` as a `ty` of the same width (`mov.b32`; `f32::from_bits(u)`,
    /// `x.to_bits()`). A constant keeps its bits.
    #[track_caller]
    pub fn bitcast(&mut self, v: Value, ty: Type) -> Value {
        let from = v.ty();
        let v = match v {
            // An untyped integer literal takes the width of the result.
            Value::Imm { ty: t, .. } if t.is_int() && from.size() != ty.size() && ty.is_float() => {
                let int = match ty.size() {
                    2 => Type::U16,
                    8 => Type::U64,
                    _ => Type::U32,
                };
                self.imm_as("a bitcast", v, int)
            }
            _ => v,
        };
        let from = v.ty();
        if from == Type::Pred || ty == Type::Pred || from.size() != ty.size() {
            self.error(format!(
                "a bitcast keeps the width: {from} ({} bits) and {ty} ({} bits) differ; convert with `as`",
                from.bits(),
                ty.bits()
            ));
            return v;
        }
        if from == ty {
            return v;
        }
        if let Value::Imm { bits, .. } = v {
            if folds(ty) && folds(from) {
                return Value::Imm { bits, ty };
            }
        }
        let dst = self.new_reg(ty);
        self.push(ArithOp::Bitcast { dst, src: v });
        Value::Reg(dst)
    }

    /// The unsigned integer of `v`'s width holding its bits (Rust's `x.to_bits()`).
    #[track_caller]
    pub fn to_bits(&mut self, v: Value) -> Value {
        let ty = match v.ty().size() {
            2 => Type::U16,
            8 => Type::U64,
            _ => Type::U32,
        };
        if !v.ty().is_float() {
            self.error(format!("`to_bits` takes a float, not a {}", v.ty()));
            return v;
        }
        self.bitcast(v, ty)
    }
}

#[cfg(test)]
mod tests {
    use crate::arch::Target;
    use crate::builder::KernelBuilder;
    use crate::ir::*;

    /// The build error of `f` on a fresh kernel with an f32, an f64 and a u32 parameter.
    fn refusal(f: impl FnOnce(&mut KernelBuilder, Value, Value, Value)) -> String {
        let mut k = KernelBuilder::new("k", Target::Sm90a);
        let (x, d, u) = (k.param("x", Type::F32), k.param("d", Type::F64), k.param("u", Type::U32));
        f(&mut k, x, d, u);
        k.finish().expect_err("refused").to_string()
    }

    #[test]
    fn types_ptx_lacks_are_refused_with_the_rust_line() {
        let e = refusal(|k, _, d, _| {
            k.exp2(d);
        });
        assert!(e.contains("`ex2.approx.ftz` is defined on f32 only, not on f64") && e.contains("math.rs"), "{e}");
        let e = refusal(|k, _, _, u| {
            k.recip(u);
        });
        assert!(e.contains("`rcp.rn` is defined on f32 and f64, not on u32"), "{e}");
        let e = refusal(|k, _, d, _| {
            k.float_binary(FloatBinOp::MinNaN, d, d);
        });
        assert!(e.contains("`min.NaN` is defined on f32 only, not on f64"), "{e}");
        let e = refusal(|k, x, _, _| {
            k.bitcast(x, Type::U64);
        });
        assert!(e.contains("a bitcast keeps the width: f32 (32 bits) and u64 (64 bits) differ"), "{e}");
        let e = refusal(|k, _, _, u| {
            k.cvt_rounded(u, Type::U64, Rounding::Zero);
        });
        assert!(e.contains("a rounding mode on a conversion from u32 to u64: it is exact"), "{e}");
        let e = refusal(|k, x, _, _| {
            k.cvt_rounded(x, Type::F64, Rounding::Up);
        });
        assert!(e.contains("from f32 to f64: it is exact"), "{e}");
    }

    /// The packed forms take a 32-bit integer holding the pair and exist for ex2 only; the
    /// pair is a `.b32` register (ptxas refuses a `.u32` one and an immediate), a constant
    /// pair is folded.
    #[test]
    fn packed_forms_take_a_b32_pair_and_fold_constants() {
        let e = refusal(|k, x, _, _| {
            k.math_half2(MathFn::Ex2Approx, x, Type::F16);
        });
        assert!(e.contains("a packed f16x2 pair is a 32-bit integer") && e.contains("math.rs"), "{e}");
        let e = refusal(|k, _, _, u| {
            k.math_half2(MathFn::Lg2Approx, u, Type::BF16);
        });
        assert!(e.contains("`lg2.approx.ftz` has no packed form on bf16x2"), "{e}");
        let e = refusal(|k, _, _, u| {
            k.math_half2(MathFn::Ex2Approx, u, Type::F32);
        });
        assert!(e.contains("no packed form on f32x2"), "{e}");

        let mut k = KernelBuilder::new("k", Target::Sm90a);
        // The pair (0, 1.0): 2^0 = 1.0 in the low half, 2^1 = 2.0 in the high.
        assert_eq!(k.math_half2(MathFn::Ex2Approx, Value::u32(0x3C00_0000), Type::F16), Value::u32(0x4000_3C00));
        assert_eq!(k.math_half2(MathFn::Ex2Approx, Value::u32(0x3F80_0000), Type::BF16), Value::u32(0x4000_3F80));
        let u = k.param("u", Type::U32);
        let out = k.param_global("out", Type::U32, true);
        let r = k.math_half2(MathFn::Ex2Approx, u, Type::BF16);
        assert_eq!(r.ty(), Type::U32, "the DSL's type of a packed pair");
        k.st_global(out, Value::u32(0), r);
        let kernel = k.finish().expect("builds");
        let ptx = crate::emit::emit_kernel(&kernel).expect("emits");
        let ex2 = crate::ptx_text::find_all(&ptx, "ex2.approx.ftz.bf16x2");
        assert_eq!(ex2.len(), 1, "{ptx}");
        assert!(ex2[0].matches("ex2.approx.ftz.bf16x2 %r*, %r*"), "b32 registers: {}", ex2[0]);
    }

    #[test]
    fn constants_fold_to_the_evaluators_value() {
        let mut k = KernelBuilder::new("k", Target::Sm90a);
        let imm = |x: f32| Value::f32(x);
        assert_eq!(k.sqrt(imm(2.0)), imm(2f32.sqrt()));
        assert_eq!(k.recip(Value::f64(3.0)), Value::f64(1.0 / 3.0));
        assert_eq!(k.copysign(imm(2.0), imm(-0.0)), imm(-2.0));
        assert_eq!(k.bitcast(Value::u32(0x3F80_0000), Type::F32), imm(1.0));
        assert_eq!(k.to_bits(imm(1.0)), Value::u32(0x3F80_0000));
        assert_eq!(k.cvt_rounded(imm(2.5), Type::S32, Rounding::Nearest), Value::imm_i(2, Type::S32));
        assert_eq!(k.cvt_rounded(imm(-2.5), Type::F32, Rounding::Down), imm(-3.0));
        // A NaN negated at run time is the canonical NaN, and so is its fold.
        assert_eq!(k.neg(Value::Imm { bits: 0x7FC0_0001, ty: Type::F32 }), Value::Imm { bits: 0x7FFF_FFFF, ty: Type::F32 });
        assert_eq!(k.cvt(Value::f32(f32::NAN), Type::S32), Value::imm_i(0, Type::S32), "NaN into s32: the H200's 0");
        assert!(k.finish().is_ok());
    }

    /// A constant converted into a half type (no PTX immediates) is the evaluator's bits
    /// moved into the register, never a `cvt` of an immediate (ptxas folds that by its own
    /// NaN rules: `cvt.rn.bf16.f64` of a NaN gave `0x7fff` on the H200, the run time the
    /// signed quiet NaN); a packed pair of constants likewise.
    #[test]
    fn constants_into_half_types_are_moved_bits_not_cvts() {
        let mut k = KernelBuilder::new("k", Target::Sm90a);
        let out = k.param_global("out", Type::BF16, true);
        let pair = k.param_global("pair", Type::U32, true);
        let nan = Value::Imm { bits: 0xFFF0_0000_0000_0001, ty: Type::F64 };
        let v = k.cvt(nan, Type::BF16);
        k.st_global(out, Value::u32(0), v);
        let p = k.pack_half2_u32(Value::f32(1.0), Value::Imm { bits: 0x7F80_0001, ty: Type::F32 }, Type::BF16);
        k.st_global(pair, Value::u32(0), p);
        let ptx = k.finish().expect("builds").ptx().expect("prints");
        assert!(!crate::ptx_text::has(&ptx, "cvt.*"), "{ptx}");
        assert!(crate::ptx_text::has(&ptx, "mov.b16 _, 0xFFC0"), "the signed quiet NaN: {ptx}");
        // bf16 of an f32 NaN is the canonical 0x7FFF (the evaluator; measured bit for bit).
        assert!(crate::ptx_text::has(&ptx, &format!("mov.b32 _, {}", 0x7FFF_3F80u32)), "{ptx}");
    }
}
