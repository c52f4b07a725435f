//! The float functions PTX computes by its own rules (`ex2`, `lg2`, `rcp`, `rsqrt`, `sqrt`,
//! `min.NaN`, `max.NaN`, `copysign`), on register bits, as [`super::exec`]'s other ops.
//!
//! The `.rn` forms are correctly rounded (IEEE 754), so they are exact here. The `.approx`
//! forms are not defined bit for bit by the PTX ISA; the model is **the correctly rounded
//! value** (computed in f64 and rounded once to f32), with `.ftz` flushing a subnormal input
//! to a zero of its sign and a subnormal result to a zero of its sign. The hardware lies within
//! the ISA's stated error of that value ([`approx_bound`]); `tests/gpu_math.rs` measures the
//! GPU against the model and asserts the bound. A NaN result is the canonical `0x7FFFFFFF`,
//! as every other f32 operation of the GPU.

// f32 bits in and out, NaN canonical: the one definition is exec.rs's.
use super::exec::{f, fb, BinFn, UnFn, NAN32};
use crate::ir::{FloatBinOp, MathFn, Type};

/// `.ftz`: a subnormal becomes a zero of its sign.
#[inline]
fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// An `.approx.ftz.f32` function: `g` in f64 of the flushed input, rounded once, flushed.
#[inline]
fn approx(a: u64, g: fn(f64) -> f64) -> u64 {
    fb(ftz(g(ftz(f(a)) as f64) as f32))
}

/// The function `fun` computes on a `ty` register (f32, and f64 where [`MathFn::has_f64`]);
/// `None` for a type PTX does not have it on (the builder refuses those).
pub fn math_fn(fun: MathFn, ty: Type) -> Option<UnFn> {
    let f32_fn: UnFn = match fun {
        MathFn::Ex2Approx => |a| approx(a, f64::exp2),
        MathFn::Lg2Approx => |a| approx(a, f64::log2),
        MathFn::RcpApprox => |a| approx(a, |x| 1.0 / x),
        MathFn::RsqrtApprox => |a| approx(a, |x| 1.0 / x.sqrt()),
        MathFn::SqrtApprox => |a| approx(a, f64::sqrt),
        // Correctly rounded, subnormals kept (no `.ftz`).
        MathFn::RcpRn => |a| fb(1.0 / f(a)),
        MathFn::SqrtRn => |a| fb(f(a).sqrt()),
    };
    let f64_fn: Option<UnFn> = match fun {
        MathFn::RcpRn => Some(|a| (1.0 / f64::from_bits(a)).to_bits()),
        MathFn::SqrtRn => Some(|a| f64::from_bits(a).sqrt().to_bits()),
        MathFn::Ex2Approx | MathFn::Lg2Approx | MathFn::RcpApprox | MathFn::RsqrtApprox | MathFn::SqrtApprox => None,
    };
    match ty {
        Type::F32 => Some(f32_fn),
        Type::F64 => f64_fn,
        _ => None,
    }
}

/// A packed form on two `half`s in one `b32` ([`MathFn::half2_ptx`]), `None` where PTX has
/// none. Each 16-bit half is the model of the function in that type: `g` in f64 of the half
/// input, rounded once to `half` (nearest even). The f16 form keeps subnormals; the bf16
/// form (`.ftz`) flushes a subnormal input and a subnormal result to a zero of its sign.
/// A NaN result is the canonical `0x7FFF`.
pub fn math_half2_fn(fun: MathFn, half: Type) -> Option<UnFn> {
    fun.half2_ptx(half)?;
    // `half2_ptx` has only ex2 on f16 and bf16; a `fn` pointer cannot capture the type.
    match (fun, half) {
        (MathFn::Ex2Approx, Type::BF16) => {
            Some(|a| on_halves(a, |x| approx_half(x, Type::BF16, exact(MathFn::Ex2Approx))))
        }
        (MathFn::Ex2Approx, _) => Some(|a| on_halves(a, |x| approx_half(x, Type::F16, exact(MathFn::Ex2Approx)))),
        (
            MathFn::Lg2Approx
            | MathFn::RcpApprox
            | MathFn::RcpRn
            | MathFn::RsqrtApprox
            | MathFn::SqrtApprox
            | MathFn::SqrtRn,
            _,
        ) => None,
    }
}

/// The exact function an op approximates (or rounds), in f64.
fn exact(fun: MathFn) -> fn(f64) -> f64 {
    match fun {
        MathFn::Ex2Approx => f64::exp2,
        MathFn::Lg2Approx => f64::log2,
        MathFn::RcpApprox | MathFn::RcpRn => |x| 1.0 / x,
        MathFn::RsqrtApprox => |x| 1.0 / x.sqrt(),
        MathFn::SqrtApprox | MathFn::SqrtRn => f64::sqrt,
    }
}

/// `lane` on each 16-bit half of a `b32`'s bits.
#[inline]
fn on_halves(a: u64, lane: fn(u16) -> u16) -> u64 {
    let (lo, hi) = (a as u16, (a >> 16) as u16);
    (lane(lo) as u64) | (lane(hi) as u64) << 16
}

/// Whether `half` (f16 or bf16) flushes subnormals in its `.approx` forms (bf16's exist
/// only as `.ftz`; f16's have no `.ftz`).
fn half_flushes(half: Type) -> bool {
    half == Type::BF16
}

/// A half value's bits as an f64 (exact).
fn half_value(bits: u16, half: Type) -> f64 {
    match half {
        Type::BF16 => half::bf16::from_bits(bits).to_f64(),
        _ => half::f16::from_bits(bits).to_f64(),
    }
}

/// Whether half bits are a subnormal (exponent field 0, fraction not 0).
fn half_is_subnormal(bits: u16, half: Type) -> bool {
    let exp_mask: u16 = if half == Type::BF16 { 0x7F80 } else { 0x7C00 };
    bits & exp_mask == 0 && bits & 0x7FFF != 0
}

/// The input a half `.approx` form computes on: flushed to a zero of its sign where the
/// form flushes.
fn half_input(bits: u16, half: Type) -> f64 {
    if half_flushes(half) && half_is_subnormal(bits, half) {
        half_value(bits & 0x8000, half)
    } else {
        half_value(bits, half)
    }
}

/// A half `.approx` function: `g` in f64 of the (flushed) input, rounded once to `half`,
/// flushed where the form flushes; NaN canonical.
fn approx_half(x: u16, half: Type, g: fn(f64) -> f64) -> u16 {
    let r = g(half_input(x, half));
    if r.is_nan() {
        return 0x7FFF;
    }
    let bits = super::exec::cvt(r.to_bits(), Type::F64, half) as u16;
    if half_flushes(half) && half_is_subnormal(bits, half) {
        bits & 0x8000
    } else {
        bits
    }
}

/// The documented error of a half-precision `.approx` form (`ex2.approx.f16x2`), relative
/// to the exact value (the f32 forms' bounds, in ulps of the rounded model, are
/// [`ApproxBound`]'s). Judge a result with [`HalfApproxBound::admits`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfApproxBound {
    pub fun: MathFn,
    pub half: Type,
    /// Maximum relative error against the exact value (the PTX ISA's figure).
    pub rel: f64,
    /// An absolute error allowed besides, at the bottom of the type's range, where a
    /// relative bound cannot hold: f16's subnormal spacing (2^-24: a subnormal result
    /// has fewer than 11 bits), bf16's smallest normal (2^-126: a result there may be
    /// flushed to zero).
    pub floor: f64,
}

impl HalfApproxBound {
    /// Whether `got` (half bits) is within the bound of the exact function of the input
    /// `x` (half bits, flushed where the form flushes). NaN must give NaN (any NaN). An
    /// infinite result stands for 2^(emax+1), the first power of two past the type's
    /// maximum, and an exact value past it is taken as that power: a correctly rounded
    /// value that overflows is infinite, and the approximation may give the maximum or
    /// infinity where the exact value is within its error of the top.
    pub fn admits(&self, x: u16, got: u16) -> bool {
        let exact = exact(self.fun)(half_input(x, self.half));
        let got_v = half_value(got, self.half);
        if exact.is_nan() || got_v.is_nan() {
            return exact.is_nan() && got_v.is_nan();
        }
        // An infinite exact value (of an infinite input) must give that infinity; a
        // finite one may err to infinity only near the top (judged below).
        if exact.is_infinite() {
            return got_v == exact;
        }
        let past_max = if self.half == Type::BF16 { 2f64.powi(128) } else { 2f64.powi(16) };
        let clamp = |v: f64| v.clamp(-past_max, past_max);
        let (g, e) = (clamp(got_v), clamp(exact));
        (g - e).abs() <= self.rel * e.abs() + self.floor
    }
}

/// The error bound of a half-precision `.approx` form against the exact value, `None`
/// where PTX has no such form. The PTX ISA ("Half Precision Floating Point Instructions:
/// ex2") states a maximum relative error of 2^-9.9 for `.f16` (about 2.1 ulp at the top
/// of a binade, where an ulp is 2^-10 of the value's power of two) and 2^-7 for `.bf16`
/// (2 ulp); CUDA's `h2exp2` (`cuda_fp16.hpp`) is `ex2.approx.f16x2`. On sm_90 ptxas
/// lowers each packed form to one `MUFU.EX2.F16` (`.BF16`) per half. The model (the
/// rounded value) is within these bounds by construction (half an ulp, 2^-11 or 2^-8
/// relative); `tests/gpu_math.rs` measures the GPU.
pub fn half_approx_bound(fun: MathFn, half: Type) -> Option<HalfApproxBound> {
    fun.half2_ptx(half)?;
    let (rel, floor) = match half {
        Type::F16 => (2f64.powf(-9.9), 2f64.powi(-24)),
        _ => (2f64.powi(-7), 2f64.powi(-126)),
    };
    Some(HalfApproxBound { fun, half, rel, floor })
}

/// How far the hardware may be from the model: a bound in ulps of the result, and for `lg2`
/// an absolute bound on an input interval (where the result is near zero and ulps mean
/// nothing). `None` for exact functions. Judge a result with [`ApproxBound::admits`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApproxBound {
    /// Maximum error in units in the last place of the f32 result (outside `abs`'s inputs).
    pub ulps: f64,
    /// Where the bound is absolute instead.
    pub abs: Option<AbsBound>,
}

/// An absolute error bound on the inputs `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbsBound {
    pub lo: f32,
    pub hi: f32,
    /// Maximum absolute error against the exact value; against the rounded model
    /// [`ApproxBound::admits`] allows half an ulp of the model's result more.
    pub max: f64,
}

impl ApproxBound {
    /// Whether `got` (f32 bits) lies within the bound of the model's `want` for the input `x`:
    /// absolute error on `abs`'s inputs, ulps elsewhere.
    pub fn admits(&self, x: u32, got: u32, want: u32) -> bool {
        let x = f32::from_bits(x);
        match self.abs {
            Some(a) if x >= a.lo && x <= a.hi => {
                let (g, w) = (f32::from_bits(got) as f64, f32::from_bits(want) as f64);
                (g - w).abs() <= a.max + ulp_of(f32::from_bits(want)) / 2.0
            }
            _ => ulp_error(got, want) <= self.ulps,
        }
    }
}

/// The error bound of an `.approx` function against the model, `None` for the correctly
/// rounded ones. The documented figures are against the exact value, so against the
/// rounded model each ulp bound is half an ulp more (and the absolute bound half an ulp of
/// the result more). Each figure, with the H200's maximum measured by `tests/gpu_math.rs`
/// (65,536 inputs, `bench/gpu-runs.md`):
/// - `ex2.approx.ftz.f32`: 2 ulp over the full range (the PTX ISA; CUDA's `exp2f`, which is
///   this instruction under `-use_fast_math`, also 2 ulp). Measured: 2 ulp.
/// - `lg2.approx.ftz.f32`: for x in [0.5, 2] the maximum *absolute* error is 2^-22, otherwise
///   the maximum error is 2 ulp: CUDA Programming Guide, "Intrinsic Functions", for
///   `__log2f`, which is this instruction. Measured: 53 of 65,536 results outside the earlier
///   bound (2 ulp, or an absolute 2^-22.6 anywhere): every one the log lists is 3 ulp at x in
///   [0.5, 0.71] (e.g. x = 0x3f078820, about 0.53: 3 ulp of a result near -0.92 is
///   2^-22.4, within 2^-22), and the maximum, 10,437,180 ulp, is at a result near 0, where
///   only the absolute error means anything.
/// - `rcp.approx.ftz.f32`: 1 ulp over the full range (the PTX ISA). Measured: 1 ulp.
/// - `rsqrt.approx.ftz.f32`: 2 ulp (CUDA's `rsqrtf`, full range; the PTX ISA states a
///   relative error of 2^-22.9, at most 2.14 ulp, within 2 + 0.5). Measured: 1 ulp.
/// - `sqrt.approx.ftz.f32`: 1 ulp (CUDA's `sqrtf` without `-prec-sqrt`, which is this
///   instruction, on compute capability 5.2 and later). Measured: 1 ulp.
pub fn approx_bound(fun: MathFn) -> Option<ApproxBound> {
    let ulps = |ulps: f64| Some(ApproxBound { ulps: ulps + 0.5, abs: None });
    match fun {
        MathFn::Ex2Approx => ulps(2.0),
        MathFn::Lg2Approx => Some(ApproxBound {
            ulps: 2.0 + 0.5,
            abs: Some(AbsBound { lo: 0.5, hi: 2.0, max: 2f64.powi(-22) }),
        }),
        MathFn::RcpApprox => ulps(1.0),
        MathFn::RsqrtApprox => ulps(2.0),
        MathFn::SqrtApprox => ulps(1.0),
        MathFn::RcpRn | MathFn::SqrtRn => None,
    }
}

/// PTX `min.f32`/`max.f32` order: -0 below +0.
fn ordered_min(a: u64, b: u64) -> u64 {
    let (x, y) = (f(a), f(b));
    if x == y {
        (a as u32 | b as u32) as u64
    } else if x < y {
        a
    } else {
        b
    }
}
fn ordered_max(a: u64, b: u64) -> u64 {
    let (x, y) = (f(a), f(b));
    if x == y {
        (a as u32 & b as u32) as u64
    } else if x > y {
        a
    } else {
        b
    }
}

/// The function `op` computes on `ty` registers; `None` where PTX lacks it (`min.NaN` is
/// f32 only; `copysign` has f32 and f64).
pub fn float_bin_fn(op: FloatBinOp, ty: Type) -> Option<BinFn> {
    match (op, ty) {
        (FloatBinOp::MinNaN, Type::F32) => {
            Some(|a, b| if f(a).is_nan() || f(b).is_nan() { NAN32 as u64 } else { ordered_min(a, b) })
        }
        (FloatBinOp::MaxNaN, Type::F32) => {
            Some(|a, b| if f(a).is_nan() || f(b).is_nan() { NAN32 as u64 } else { ordered_max(a, b) })
        }
        // The sign bit moves; the magnitude (a NaN's payload too) is kept.
        (FloatBinOp::Copysign, Type::F32) => Some(|a, b| (a & 0x7FFF_FFFF) | (b & 0x8000_0000)),
        (FloatBinOp::Copysign, Type::F64) => Some(|a, b| (a & !(1 << 63)) | (b & (1 << 63))),
        _ => None,
    }
}

/// The distance from `got` to `want` in ulps of `want` (f32 bits), for the GPU measurement.
/// Both NaN: 0; one NaN or differing infinities: infinite.
pub fn ulp_error(got: u32, want: u32) -> f64 {
    let (g, w) = (f32::from_bits(got), f32::from_bits(want));
    if g.is_nan() && w.is_nan() {
        return 0.0;
    }
    if g.is_nan() || w.is_nan() || g.is_infinite() || w.is_infinite() {
        return if g == w { 0.0 } else { f64::INFINITY };
    }
    ((g as f64) - (w as f64)).abs() / ulp_of(w)
}

/// One ulp of a finite `w`: the gap to the next float away from zero (2^-149 at the bottom).
fn ulp_of(w: f32) -> f64 {
    let mag = w.abs();
    (f32::from_bits(mag.to_bits() + 1) as f64 - mag as f64).max(2f64.powi(-149))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(fun: MathFn, x: f32) -> f32 {
        f32::from_bits(math_fn(fun, Type::F32).expect("f32")(x.to_bits() as u64) as u32)
    }

    #[test]
    fn approx_functions_are_the_rounded_value_with_ftz() {
        assert_eq!(run(MathFn::Ex2Approx, 3.0), 8.0);
        assert_eq!(run(MathFn::Ex2Approx, f32::NEG_INFINITY), 0.0);
        assert_eq!(run(MathFn::Ex2Approx, f32::from_bits(1)), 1.0, "a subnormal input is flushed: 2^0");
        assert_eq!(run(MathFn::Ex2Approx, -130.0), 0.0, "a subnormal result is flushed");
        assert_eq!(run(MathFn::Lg2Approx, 0.0), f32::NEG_INFINITY);
        assert_eq!(run(MathFn::Lg2Approx, f32::from_bits(5)), f32::NEG_INFINITY);
        assert_eq!(run(MathFn::Lg2Approx, -1.0).to_bits(), NAN32);
        assert_eq!(run(MathFn::RcpApprox, -0.0), f32::NEG_INFINITY);
        assert_eq!(run(MathFn::RsqrtApprox, 4.0), 0.5);
        assert_eq!(run(MathFn::RsqrtApprox, -0.0), f32::NEG_INFINITY);
        assert_eq!(run(MathFn::SqrtApprox, -0.0).to_bits(), 0x8000_0000);
        assert_eq!(run(MathFn::RcpRn, 3.0), 1.0 / 3.0);
        assert_eq!(run(MathFn::RcpRn, f32::from_bits(0x0040_0000)), 2f32.powi(127), "rn keeps subnormals");
        assert_eq!(run(MathFn::SqrtRn, 2.0), 2f32.sqrt());
        assert!(math_fn(MathFn::Ex2Approx, Type::F64).is_none());
    }

    #[test]
    fn nan_forms_of_min_and_max_propagate_nan() {
        let (nan, two) = (f32::NAN.to_bits() as u64, 2f32.to_bits() as u64);
        assert_eq!(float_bin_fn(FloatBinOp::MinNaN, Type::F32).unwrap()(nan, two), NAN32 as u64);
        assert_eq!(float_bin_fn(FloatBinOp::MaxNaN, Type::F32).unwrap()(two, nan), NAN32 as u64);
        let neg0 = (-0f32).to_bits() as u64;
        assert_eq!(float_bin_fn(FloatBinOp::MinNaN, Type::F32).unwrap()(0, neg0), neg0);
        let cs = float_bin_fn(FloatBinOp::Copysign, Type::F32).unwrap();
        assert_eq!(f(cs(3f32.to_bits() as u64, (-1f32).to_bits() as u64)), -3.0);
        assert!(float_bin_fn(FloatBinOp::MinNaN, Type::F64).is_none());
    }

    #[test]
    fn ulp_error_counts_representable_steps() {
        let one = 1f32.to_bits();
        assert_eq!(ulp_error(one, one), 0.0);
        assert_eq!(ulp_error(one + 2, one), 2.0);
        assert_eq!(ulp_error(NAN32, 0x7FC0_0000), 0.0);
        assert_eq!(ulp_error(one, NAN32), f64::INFINITY);
    }

    fn ex2_half(half: Type, x: u16) -> u16 {
        // Each lane is independent: the scalar's result is the low half whatever the high.
        math_half2_fn(MathFn::Ex2Approx, half).expect("ex2 has packed forms")(x as u64 | 0x7C01 << 16) as u16
    }

    const F16_ONE: u16 = 0x3C00;
    const BF16_ONE: u16 = 0x3F80;

    /// The PTX ISA's corner cases, and the ranges' edges: f16 keeps subnormals (in and
    /// out), bf16 flushes them; past the maximum is infinity.
    #[test]
    fn packed_ex2_corner_cases_are_the_isas() {
        use half::{bf16, f16};
        let h = |v: f32| f16::from_f32(v).to_bits();
        let b = |v: f32| bf16::from_f32(v).to_bits();
        for (half, one, inf, ninf) in [(Type::F16, F16_ONE, 0x7C00, 0xFC00), (Type::BF16, BF16_ONE, 0x7F80, 0xFF80)] {
            assert_eq!(ex2_half(half, ninf), 0, "{half}: -inf gives +0");
            assert_eq!(ex2_half(half, 0x8000), one, "{half}: -0 gives 1");
            assert_eq!(ex2_half(half, 0), one, "{half}: +0 gives 1");
            assert_eq!(ex2_half(half, inf), inf, "{half}: +inf gives +inf");
            assert_eq!(ex2_half(half, inf | 1), 0x7FFF, "{half}: NaN gives the canonical NaN");
        }
        // bf16: a subnormal input of either sign is a zero: 2^0.
        assert_eq!(ex2_half(Type::BF16, 0x0001), BF16_ONE);
        assert_eq!(ex2_half(Type::BF16, 0x8001), BF16_ONE);
        // f16 keeps a subnormal input: 2^(2^-24) rounds to 1 anyway, so look at the result:
        // 2^-24 (x = -24) is f16's smallest subnormal, kept; bf16 flushes 2^-130.
        assert_eq!(ex2_half(Type::F16, h(-24.0)), 0x0001);
        assert_eq!(ex2_half(Type::F16, h(-20.0)), h(2f32.powi(-20)));
        assert_eq!(ex2_half(Type::F16, h(-26.0)), 0, "below half the smallest subnormal: 0");
        assert_eq!(ex2_half(Type::BF16, b(-130.0)), 0, "a subnormal result is flushed");
        assert_eq!(ex2_half(Type::BF16, b(-126.0)), b(2f32.powi(-126)), "the smallest normal is kept");
        // The top: f16's largest input below 16 is finite, 16 overflows; bf16's at 128.
        assert_eq!(ex2_half(Type::F16, h(15.0)), h(32768.0));
        assert_eq!(ex2_half(Type::F16, h(16.0)), 0x7C00);
        assert_eq!(ex2_half(Type::BF16, b(127.0)), b(2f32.powi(127)));
        assert_eq!(ex2_half(Type::BF16, b(128.0)), 0x7F80);
        assert_eq!(ex2_half(Type::F16, h(3.0)), h(8.0));
        assert!(math_half2_fn(MathFn::Lg2Approx, Type::F16).is_none(), "only ex2 has packed forms");
        assert!(half_approx_bound(MathFn::Ex2Approx, Type::F32).is_none());
    }

    /// Every input of both types: the model's result is within the stated bound of the
    /// exact 2^x (the simulator computes the model, so this is its error bound).
    #[test]
    fn packed_ex2_model_is_within_the_isa_bound_for_every_input() {
        for half in [Type::F16, Type::BF16] {
            let bound = half_approx_bound(MathFn::Ex2Approx, half).unwrap();
            for x in 0..=u16::MAX {
                let got = ex2_half(half, x);
                assert!(bound.admits(x, got), "{half} 2^{:?}: model {got:#06x}", half_value(x, half));
            }
        }
    }

    /// The bound is not vacuous: 3 ulp off at the top of a binade, infinity for a finite
    /// value away from the top, a number for NaN and a NaN for a number are all refused;
    /// the maximum or infinity where the exact value is past the top is admitted.
    #[test]
    fn half_bound_refuses_what_lies_outside_it() {
        use half::{bf16, f16};
        let f = half_approx_bound(MathFn::Ex2Approx, Type::F16).unwrap();
        let x = f16::from_f64(0.99).to_bits(); // 2^x near 1.99: an ulp is 2^-10 of 1
        let want = ex2_half(Type::F16, x);
        assert!(f.admits(x, want + 2), "2 ulp at the top of the binade is within 2^-9.9");
        assert!(!f.admits(x, want + 3) && !f.admits(x, want - 3), "3 ulp is not");
        assert!(!f.admits(x, 0x7C00) && !f.admits(x, 0x7FFF));
        assert!(!f.admits(0x7E00, F16_ONE), "NaN must give NaN");
        assert!(f.admits(0x7E00, 0xFE01), "any NaN");
        let sixteen = f16::from_f32(16.0).to_bits();
        assert!(f.admits(sixteen, 0x7C00) && f.admits(sixteen, 0x7BFF), "65504 is within 2^-9.9 of 2^16");
        assert!(!f.admits(f16::from_f32(15.0).to_bits(), 0x7C00));
        assert!(!f.admits(0x7C00, 0x7BFF), "+inf gives +inf");
        // Subnormal results: one subnormal step is allowed, two are not.
        let x = f16::from_f32(-23.0).to_bits(); // 2^-23: two steps of 2^-24
        assert!(f.admits(x, 1) && f.admits(x, 3) && !f.admits(x, 5));
        let b = half_approx_bound(MathFn::Ex2Approx, Type::BF16).unwrap();
        let x = bf16::from_f64(0.99).to_bits();
        let want = ex2_half(Type::BF16, x);
        assert!(b.admits(x, want - 2) && !b.admits(x, want - 3), "2^-7 of a value near 2: 2 ulp");
        assert!(b.admits(bf16::from_f32(-126.0).to_bits(), 0), "the smallest normal may flush");
        assert!(!b.admits(bf16::from_f32(-125.0).to_bits(), 0), "twice it may not");
    }

    proptest::proptest! {
        /// A packed pair is two independent lanes: each half of the result is the scalar
        /// model of that half of the input.
        #[test]
        fn packed_ex2_lanes_are_independent(pair: u32) {
            for half in [Type::F16, Type::BF16] {
                let got = math_half2_fn(MathFn::Ex2Approx, half).unwrap()(pair as u64);
                proptest::prop_assert!(got >> 32 == 0, "{half}: the result is 32 bits");
                proptest::prop_assert_eq!(got as u16, ex2_half(half, pair as u16));
                proptest::prop_assert_eq!((got >> 16) as u16, ex2_half(half, (pair >> 16) as u16));
            }
        }
    }

    /// lg2's bound is absolute on [0.5, 2] and in ulps elsewhere: the H200's results the
    /// old bound rejected are admitted, and 3 ulp outside [0.5, 2] is not.
    #[test]
    fn lg2_is_judged_by_absolute_error_on_half_to_two() {
        let b = approx_bound(MathFn::Lg2Approx).unwrap();
        // Measured on the H200: x = 0x3f078820 (~0.53), 3 ulp from the model.
        assert!(b.admits(0x3f07_8820, 0xbf6a_e220, 0xbf6a_e223));
        // A result near zero (x just above 1): millions of ulps, a tiny absolute error.
        let (x, want) = (1f32.next_up(), (1f32.next_up() as f64).log2() as f32);
        assert!(b.admits(x.to_bits(), 0, want.to_bits()));
        assert!(!b.admits(x.to_bits(), 2f32.powi(-21).to_bits(), want.to_bits()), "2^-21 is too far");
        // Outside [0.5, 2] the bound is 2 ulp (+ half an ulp for the rounded model).
        let (x, want) = (4.5f32.to_bits(), 4.5f32.log2().to_bits());
        assert!(b.admits(x, want + 2, want));
        assert!(!b.admits(x, want + 3, want));
        // NaN results: equal NaNs are admitted, a number for a NaN is not.
        assert!(b.admits((-1f32).to_bits(), NAN32, NAN32));
        assert!(!approx_bound(MathFn::Ex2Approx).unwrap().admits(0, 0, NAN32));
    }
}
