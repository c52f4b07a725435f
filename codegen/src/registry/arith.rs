//! Arithmetic helpers that are calls rather than operators, the float math functions, and
//! simulator probes. An entry with `.method` is also Rust's method of that name
//! (`x.exp2()` is `T.ex2(x)`); `dsl/README.md` ("Float math") says what each lowers to.

use crate::ir::{FloatBinOp, MathFn, Rounding, Type};

const ROUNDING: super::Choice<Rounding> = choice![
    "rn" => Rounding::Nearest,
    "rz" => Rounding::Zero,
    "rm" => Rounding::Down,
    "rp" => Rounding::Up,
];

ops! {
    /// `cond ? a : b` (`selp`)
    "select" (cond: Bool, a: Scalar, b: Scalar) -> ScalarArgs = |k, call| k.select(cond, a, b);
    /// `min` (a NaN operand gives the other one)
    "min" .min (a: Scalar, b: Scalar) -> ScalarArgs = |k, call| k.min(a, b);
    /// `max` (a NaN operand gives the other one)
    "max" .max (a: Scalar, b: Scalar) -> ScalarArgs = |k, call| k.max(a, b);
    /// `a * b + c` (`mad.lo` for integers, `fma.rn` for floats)
    "mad" (a: Scalar, b: Scalar, c: Scalar) -> ScalarArgs = |k, call| k.mad(a, b, c);
    /// `a * b + c` rounded once, `fma.rn` (Rust's `mul_add`)
    "fma" .mul_add (a: Float, b: Float, c: Float) -> ScalarArgs = |k, call| k.mad(a, b, c);
    /// 2^x, `ex2.approx.ftz.f32`: approximate (2 ulp), subnormals flushed; Rust's `exp2` is exact
    "ex2" .exp2 (x: F32) -> F32 = |k, call| k.math(MathFn::Ex2Approx, x);
    /// 2^x of each f16 of a packed pair (a u32 from `T.pack.f16x2`), `ex2.approx.f16x2`: relative error 2^-9.9, subnormals kept
    "ex2.f16x2" ["cuda:h2exp2"] (x: Half2(Type::F16)) -> U32 = |k, call| k.math_half2(MathFn::Ex2Approx, x, Type::F16);
    /// 2^x of each bf16 of a packed pair (a u32 from `T.pack.bf16x2`), `ex2.approx.ftz.bf16x2`: relative error 2^-7, subnormals flushed
    "ex2.bf16x2" (x: Half2(Type::BF16)) -> U32 = |k, call| k.math_half2(MathFn::Ex2Approx, x, Type::BF16);
    /// log2(x), `lg2.approx.ftz.f32`: approximate, subnormals flushed; Rust's `log2` is exact
    "lg2" .log2 (x: F32) -> F32 = |k, call| k.math(MathFn::Lg2Approx, x);
    /// 1/x correctly rounded, `rcp.rn` (f32, f64)
    "rcp" .recip (x: Float) -> ScalarArgs = |k, call| k.math(MathFn::RcpRn, x);
    /// 1/x, `rcp.approx.ftz.f32` (1 ulp, subnormals flushed)
    "rcp_approx" (x: F32) -> F32 = |k, call| k.math(MathFn::RcpApprox, x);
    /// 1/sqrt(x), `rsqrt.approx.ftz.f32` (relative error 2^-22.9, subnormals flushed)
    "rsqrt" (x: F32) -> F32 = |k, call| k.math(MathFn::RsqrtApprox, x);
    /// the square root correctly rounded, `sqrt.rn` (f32, f64)
    "sqrt" .sqrt (x: Float) -> ScalarArgs = |k, call| k.math(MathFn::SqrtRn, x);
    /// the square root, `sqrt.approx.ftz.f32` (relative error 2^-23, subnormals flushed)
    "sqrt_approx" (x: F32) -> F32 = |k, call| k.math(MathFn::SqrtApprox, x);
    /// the smaller, NaN if either is NaN, `min.NaN.f32` (Rust's unstable `minimum`)
    "min_nan" .minimum (a: F32, b: F32) -> F32 = |k, call| k.float_binary(FloatBinOp::MinNaN, a, b);
    /// the larger, NaN if either is NaN, `max.NaN.f32` (Rust's unstable `maximum`)
    "max_nan" .maximum (a: F32, b: F32) -> F32 = |k, call| k.float_binary(FloatBinOp::MaxNaN, a, b);
    /// `a`'s magnitude with `b`'s sign, `copysign` (f32, f64)
    "copysign" .copysign (a: Float, b: Float) -> ScalarArgs = |k, call| k.copysign(a, b);
    /// |x| (`abs`; a signed integer or a float; an f32 NaN gives the canonical NaN)
    "abs" .abs (x: Scalar) as F32 -> ScalarArgs = |k, call| k.abs(x);
    /// the same bits as `T`, `mov.b32`/`.b64`/`.b16` (`T::from_bits(x)`: `f32::from_bits(u)`)
    "bitcast" ::<T> (x: Scalar) -> Turbofish = |k, call| k.bitcast(x, call.elem());
    /// the float's bits as an unsigned integer of its width, `mov.b32` (Rust's `to_bits`)
    "to_bits" .to_bits (x: Float) -> BitsOfArgs = |k, call| k.to_bits(x);
    /// `x` converted to `T` with a rounding: to nearest, toward zero, down, up (`cvt.rz.f16.f32`; into an integer `.rni .rzi .rmi .rpi`)
    "cvt" ::<T> (x: Scalar, rounding: Choice(ROUNDING)) -> Turbofish = |k, call| k.cvt_rounded(x, call.elem(), rounding);
    /// record values in the simulator's trace (a PTX comment)
    "probe" (tag: Tag, values: Values) -> Unit = |k, call| k.probe(tag, &values);
}
