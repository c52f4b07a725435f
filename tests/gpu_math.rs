//! The float functions on the GPU against the evaluator's model (`phaser::codegen::eval::math`):
//! the correctly rounded forms (`rcp.rn`, `sqrt.rn`), the bit-defined ones (`min.NaN`,
//! `max.NaN`, `copysign`) and `cvt` with each rounding (into s32, u32, f16, bf16, and f32
//! rounded to an integral value) must equal it bit for bit; the `.approx` forms must lie within the
//! documented bound of it (`approx_bound`, judged by `ApproxBound::admits`: for `lg2` the
//! absolute error on inputs in [0.5, 2], ulps elsewhere), and the measured maximum error is
//! printed (for `lg2` also the maximum absolute error on [0.5, 2]). Inputs: edge
//! values (zeros, subnormals, infinities, NaNs, powers of two, the ends of the range) over-
//! represented, plus random bits. The packed half forms (`ex2.approx.f16x2`,
//! `ex2.approx.ftz.bf16x2`) run on every 16-bit input and must lie within the PTX ISA's
//! relative bound of the exact 2^x (`half_approx_bound`, `HalfApproxBound::admits`); the
//! maximum relative error is printed. Run by `.ci/gpu-bundle`; without a GPU the simulator half runs.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::eval::{
    approx_bound, cvt, cvt_rounded, f32_to_fp8, float_bin_fn, half_approx_bound, math_fn, math_half2_fn, ulp_error,
};
use phaser::codegen::ir::{Dim, FloatBinOp, MathFn, Rounding, Type, Value};
use phaser::codegen::Target;
use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig};

/// f32 inputs: the edges first, then a fixed-seed stream of random bits (xorshift).
fn inputs(n: usize) -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007F_FFFF,
        0x0080_0000,
        0x8080_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x3F80_0001,
        0x3F7F_FFFF,
        0x4000_0000,
        0x3F00_0000,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7F80_0001,
        0xFFC0_0001,
        0x42FE_0000, // 127
        0x4300_0000, // 128
        0xC2FC_0000, // -126
        0xC315_0000, // -149
        0xC316_0000, // -150
    ];
    let mut s = 0x9E37_79B9u32;
    while v.len() < n {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        // Half of the random inputs in a moderate range, where exp2 and friends are finite.
        let x = if v.len() % 2 == 0 { s } else { (s & 0x807F_FFFF) | (((s >> 23) % 16 + 120) << 23) };
        v.push(x);
    }
    v
}

#[derive(Clone, Copy, Debug)]
enum Form {
    Math(MathFn),
    Bin(FloatBinOp),
    /// `cvt` of the f32 input into this type with this rounding (ISA-defined: bit for bit);
    /// into f32 itself it is the rounding to an integral value (`cvt.rni.f32.f32`).
    Cvt(Type, Rounding),
}

/// Every form: the float functions, then each conversion out of f32 with each rounding.
fn forms() -> Vec<Form> {
    let mut v = FORMS.to_vec();
    for to in [Type::S32, Type::U32, Type::F16, Type::BF16, Type::F32] {
        v.extend(Rounding::ALL.iter().map(|&r| Form::Cvt(to, r)));
    }
    v
}

const FORMS: [Form; 10] = [
    Form::Math(MathFn::Ex2Approx),
    Form::Math(MathFn::Lg2Approx),
    Form::Math(MathFn::RcpApprox),
    Form::Math(MathFn::RcpRn),
    Form::Math(MathFn::RsqrtApprox),
    Form::Math(MathFn::SqrtApprox),
    Form::Math(MathFn::SqrtRn),
    Form::Bin(FloatBinOp::MinNaN),
    Form::Bin(FloatBinOp::MaxNaN),
    Form::Bin(FloatBinOp::Copysign),
];

/// What the model says form `f` gives on `a` (and `b` for the binary forms).
fn model(f: Form, a: u32, b: u32) -> u32 {
    match f {
        Form::Math(m) => math_fn(m, Type::F32).expect("f32")(a as u64) as u32,
        Form::Bin(op) => float_bin_fn(op, Type::F32).expect("f32")(a as u64, b as u64) as u32,
        Form::Cvt(to, r) => cvt_rounded(a as u64, Type::F32, to, Some(r)) as u32,
    }
}

/// One kernel: thread `i` computes every form on `xs[i]` (and `xs[n - 1 - i]`), each at
/// loaded operands, into `out[form * n + i]`.
fn kernel(n: u32) -> phaser::codegen::Kernel {
    let mut k = KernelBuilder::new("gpu_math", Target::Sm90a);
    let xs = k.param_global("xs", Type::F32, false);
    let out = k.param_global("out", Type::F32, true);
    let tid = k.thread_idx(Dim::X);
    let bid = k.block_idx(Dim::X);
    let base = k.mul(bid, Value::u32(256));
    let i = k.add(base, tid);
    let inside = k.lt(i, Value::u32(n));
    k.if_then(inside, |k| {
        let a = k.ld_global(xs, i);
        let j = k.sub(Value::u32(n - 1), i);
        let b = k.ld_global(xs, j);
        for (slot, f) in forms().iter().enumerate() {
            let r = match *f {
                Form::Math(m) => k.math(m, a),
                Form::Bin(op) => k.float_binary(op, a, b),
                // The result's bits, zero-extended to 32, stored as an f32's bits.
                Form::Cvt(to, r) => {
                    let c = k.cvt_rounded(a, to, r);
                    let bits = match to {
                        Type::F16 | Type::BF16 => {
                            let h = k.bitcast(c, Type::U16);
                            k.cvt(h, Type::U32)
                        }
                        Type::F32 => c,
                        _ => k.bitcast(c, Type::U32),
                    };
                    k.bitcast(bits, Type::F32)
                }
            };
            let off = k.add(i, Value::u32(slot as u32 * n));
            k.st_global(out, off, r);
        }
    });
    k.finish().unwrap_or_else(|e| panic!("the math kernel builds: {e}"))
}

/// One form's measurement: the maximum error in ulps (outside an absolute bound's inputs),
/// the maximum absolute error on them (`None` where the bound has none), the failures.
struct Measured {
    worst_ulps: f64,
    worst_abs: Option<f64>,
    bad: Vec<String>,
}

/// Per form, on `dev`.
fn measure(dev: &Device, xs: &[u32]) -> Vec<Measured> {
    let n = xs.len();
    let k = kernel(n as u32);
    let floats: Vec<f32> = xs.iter().map(|&b| f32::from_bits(b)).collect();
    let xb = dev.upload(&floats).expect("upload");
    let all = forms();
    let ob = dev.upload(&vec![0f32; n * all.len()]).expect("upload");
    let blocks = n.div_ceil(256) as u32;
    dev.launch(&k, LaunchConfig::linear(blocks, 256), &[Arg::buffer(&xb), Arg::buffer(&ob)])
        .unwrap_or_else(|e| panic!("the math kernel runs: {e}"));
    let got = dev.download(&ob).expect("download");
    all.iter()
        .enumerate()
        .map(|(slot, f)| {
            let bound = match f {
                Form::Math(m) => approx_bound(*m),
                Form::Bin(_) | Form::Cvt(..) => None,
            };
            let abs_inputs = bound.and_then(|bd| bd.abs);
            let mut m = Measured { worst_ulps: 0.0, worst_abs: abs_inputs.map(|_| 0.0), bad: Vec::new() };
            for i in 0..n {
                let (a, b) = (xs[i], xs[n - 1 - i]);
                let (g, w) = (got[slot * n + i].to_bits(), model(*f, a, b));
                // A conversion's result is not an f32: it is right or wrong.
                let err = match f {
                    Form::Cvt(..) => if g == w { 0.0 } else { f64::INFINITY },
                    _ => ulp_error(g, w),
                };
                let x = f32::from_bits(a);
                let abs = (f32::from_bits(g) as f64 - f32::from_bits(w) as f64).abs();
                let what = match abs_inputs {
                    Some(ab) if x >= ab.lo && x <= ab.hi => {
                        m.worst_abs = m.worst_abs.map(|w| w.max(if abs.is_nan() { f64::INFINITY } else { abs }));
                        format!("absolute error 2^{:.2}", abs.log2())
                    }
                    _ => {
                        m.worst_ulps = m.worst_ulps.max(err);
                        format!("{err} ulp")
                    }
                };
                let ok = match bound {
                    None => g == w,
                    Some(bd) => bd.admits(a, g, w),
                };
                if !ok {
                    m.bad.push(format!("{f:?}({a:#010x}, {b:#010x}): got {g:#010x}, the model says {w:#010x} ({what})"));
                }
            }
            m
        })
        .collect()
}

fn report(dev: &Device, name: &str) -> Vec<String> {
    let xs = inputs(1 << 16);
    let mut all = Vec::new();
    for (f, m) in forms().iter().zip(measure(dev, &xs)) {
        let abs = match (m.worst_abs, approx_bound_abs(f)) {
            (Some(w), Some(ab)) => format!(" (outside [{}, {}]), max absolute error 2^{:.2} in it", ab.lo, ab.hi, w.log2()),
            _ => String::new(),
        };
        println!(
            "{name}: {f:?}: max error {} ulp{abs} over {} inputs, {} outside the bound",
            m.worst_ulps,
            xs.len(),
            m.bad.len()
        );
        all.extend(m.bad.into_iter().take(20));
    }
    all
}

/// The absolute bound of a form, if it has one (for the report).
fn approx_bound_abs(f: &Form) -> Option<phaser::codegen::eval::AbsBound> {
    match f {
        Form::Math(m) => approx_bound(*m).and_then(|b| b.abs),
        _ => None,
    }
}

/// The packed forms, by the half type of the pair.
const HALF2_TYPES: [Type; 2] = [Type::F16, Type::BF16];

/// Word `k` holds the pair (2k, 2k + 1): 32,768 words hold every 16-bit pattern once.
fn half2_words() -> Vec<u32> {
    (0..1u32 << 15).map(|k| 2 * k | (2 * k + 1) << 16).collect()
}

/// Thread `i` computes each packed form on `ws[i]` into `out[form * n + i]`.
fn half2_kernel(n: u32) -> phaser::codegen::Kernel {
    let mut k = KernelBuilder::new("gpu_math_half2", Target::Sm90a);
    let ws = k.param_global("ws", Type::U32, false);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let bid = k.block_idx(Dim::X);
    let base = k.mul(bid, Value::u32(256));
    let i = k.add(base, tid);
    let inside = k.lt(i, Value::u32(n));
    k.if_then(inside, |k| {
        let w = k.ld_global(ws, i);
        for (slot, &half) in HALF2_TYPES.iter().enumerate() {
            let r = k.math_half2(MathFn::Ex2Approx, w, half);
            let off = k.add(i, Value::u32(slot as u32 * n));
            k.st_global(out, off, r);
        }
    });
    k.finish().unwrap_or_else(|e| panic!("the packed math kernel builds: {e}"))
}

/// One packed form's measurement: the maximum relative error against the exact 2^x where
/// that is a normal number of the type, how many lanes differ from the model, the failures.
struct HalfMeasured {
    worst_rel: f64,
    differ: usize,
    bad: Vec<String>,
}

/// Per packed form, on `dev`, over every 16-bit input.
fn measure_half2(dev: &Device) -> Vec<HalfMeasured> {
    let ws = half2_words();
    let n = ws.len();
    let k = half2_kernel(n as u32);
    let wb = dev.upload(&ws).expect("upload");
    let ob = dev.upload(&vec![0u32; n * HALF2_TYPES.len()]).expect("upload");
    dev.launch(&k, LaunchConfig::linear(n.div_ceil(256) as u32, 256), &[Arg::buffer(&wb), Arg::buffer(&ob)])
        .unwrap_or_else(|e| panic!("the packed math kernel runs: {e}"));
    let got = dev.download(&ob).expect("download");
    HALF2_TYPES
        .iter()
        .enumerate()
        .map(|(slot, &half)| {
            let bound = half_approx_bound(MathFn::Ex2Approx, half).expect("ex2 has packed forms");
            let model = math_half2_fn(MathFn::Ex2Approx, half).expect("ex2 has packed forms");
            let value = |h: u16| f64::from_bits(cvt(h as u64, half, Type::F64));
            // Where the exact value is a normal number of the type (the relative bound's domain).
            let (min_normal, max) = match half {
                Type::BF16 => (2f64.powi(-126), value(0x7F7F)),
                _ => (2f64.powi(-14), value(0x7BFF)),
            };
            let mut m = HalfMeasured { worst_rel: 0.0, differ: 0, bad: Vec::new() };
            for (i, &w) in ws.iter().enumerate() {
                let (g, want) = (got[slot * n + i], model(w as u64) as u32);
                for lane in 0..2 {
                    let half_of = |word: u32| (word >> (16 * lane)) as u16;
                    let (x, gl, wl) = (half_of(w), half_of(g), half_of(want));
                    m.differ += (gl != wl) as usize;
                    let exact = value(x).exp2();
                    if exact >= min_normal && exact <= max {
                        m.worst_rel = m.worst_rel.max((value(gl) - exact).abs() / exact);
                    }
                    if !bound.admits(x, gl) {
                        m.bad.push(format!(
                            "ex2 {half}x2 lane {lane} of {x:#06x} ({}): got {gl:#06x} ({}), the model says {wl:#06x}",
                            value(x),
                            value(gl)
                        ));
                    }
                }
            }
            m
        })
        .collect()
}

fn report_half2(dev: &Device, name: &str) -> Vec<String> {
    let mut all = Vec::new();
    for (&half, m) in HALF2_TYPES.iter().zip(measure_half2(dev)) {
        let bound = half_approx_bound(MathFn::Ex2Approx, half).unwrap();
        println!(
            "{name}: ex2 {half}x2: max relative error 2^{:.2} (the bound: 2^{:.2}) over every {half} input, {} lanes differ from the model, {} outside the bound",
            m.worst_rel.log2(),
            bound.rel.log2(),
            m.differ,
            m.bad.len()
        );
        all.extend(m.bad.into_iter().take(20));
    }
    all
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn the_gpu_packed_ex2_lies_within_the_isa_bound_of_the_exact_value() {
    assert_gpu_within_bounds(report_half2);
}

/// The simulator computes the packed model on every 16-bit input, bit for bit, and the
/// builder folds a constant pair to the same value.
#[test]
fn the_simulator_computes_the_packed_model() {
    let sim = Device::sim(SimConfig::fast());
    for (&half, m) in HALF2_TYPES.iter().zip(measure_half2(&sim)) {
        assert!(m.bad.is_empty(), "{half}: {:?}", m.bad);
        assert_eq!(m.differ, 0, "{half}: the simulator differs from the model");
    }
    let mut k = KernelBuilder::new("fold", Target::Sm90a);
    for w in half2_words().into_iter().step_by(997) {
        for half in HALF2_TYPES {
            let v = k.math_half2(MathFn::Ex2Approx, Value::u32(w), half);
            let want = math_half2_fn(MathFn::Ex2Approx, half).unwrap()(w as u64);
            assert_eq!(v, Value::Imm { bits: want, ty: Type::U32 }, "{half}x2 of {w:#010x}");
        }
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn the_gpu_math_lies_within_the_isa_bound_of_the_model() {
    assert_gpu_within_bounds(report);
}

/// Run one of the reports on GPU 0: every result it lists lies outside its bound.
fn assert_gpu_within_bounds(report: fn(&Device, &str) -> Vec<String>) {
    let gpu = Device::cuda(0).expect("needs a CUDA GPU");
    let bad = report(&gpu, "GPU");
    assert!(bad.is_empty(), "{} results outside the bound:\n{}", bad.len(), bad.join("\n"));
}

/// The simulator computes the model itself: every form within 0 ulp (this half runs everywhere).
#[test]
fn the_simulator_computes_the_model() {
    let sim = Device::sim(SimConfig::fast());
    let xs = inputs(2048);
    for (f, m) in forms().iter().zip(measure(&sim, &xs)) {
        assert!(m.bad.is_empty(), "{f:?}: {:?}", m.bad);
        assert!(m.worst_ulps == 0.0, "{f:?}: the simulator is {} ulp from the model", m.worst_ulps);
        assert!(m.worst_abs.unwrap_or(0.0) == 0.0, "{f:?}: the simulator is {:?} from the model", m.worst_abs);
    }
    // And the builder folds a constant operand to the same value.
    let mut k = KernelBuilder::new("fold", Target::Sm90a);
    for &x in &xs[..64] {
        let v = k.math(MathFn::Ex2Approx, Value::Imm { bits: x as u64, ty: Type::F32 });
        assert_eq!(v, Value::Imm { bits: model(FORMS[0], x, 0) as u64, ty: Type::F32 });
    }
}

/// The FP8 packs (`cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`): thread `i` packs `xs[2i]` (low
/// byte) and `xs[2i + 1]` into `out[slot * n + i]`, one slot per format.
const FP8_TYPES: [Type; 2] = [Type::E4M3, Type::E5M2];

fn fp8_kernel(n: u32) -> phaser::codegen::Kernel {
    let mut k = KernelBuilder::new("gpu_math_fp8", Target::Sm90a);
    let xs = k.param_global("xs", Type::F32, false);
    let out = k.param_global("out", Type::U16, true);
    let tid = k.thread_idx(Dim::X);
    let bid = k.block_idx(Dim::X);
    let base = k.mul(bid, Value::u32(256));
    let i = k.add(base, tid);
    let inside = k.lt(i, Value::u32(n));
    k.if_then(inside, |k| {
        let lo_at = k.mul(i, Value::u32(2));
        let hi_at = k.add(lo_at, Value::u32(1));
        let (lo, hi) = (k.ld_global(xs, lo_at), k.ld_global(xs, hi_at));
        for (slot, &to) in FP8_TYPES.iter().enumerate() {
            let packed = k.pack_fp8x2_u16(lo, hi, to);
            let off = k.add(i, Value::u32(slot as u32 * n));
            k.st_global(out, off, packed);
        }
    });
    k.finish().unwrap_or_else(|e| panic!("the FP8 pack kernel builds: {e}"))
}

/// f32 inputs for the FP8 packs: the edges and random bits of `inputs`, then (with `sweep`)
/// every upper 16 bits with lower halves below, at and above the half-way points (every FP8
/// rounding position, the saturation points, NaN payloads).
fn fp8_inputs(sweep: bool) -> Vec<u32> {
    let mut v = inputs(2048);
    if sweep {
        v.extend((0..=0xFFFFu32).flat_map(|u| [0, 0x7FFF, 0x8000, 0x8001].map(|l| u << 16 | l)));
    }
    if v.len() % 2 == 1 {
        v.push(0x3F80_0000);
    }
    v
}

/// Per format: how many bytes differ from the model (`eval::f32_to_fp8`, which the runtime's
/// tests hold to the host's `float8`), NaN inputs counted apart, and the first differences.
fn measure_fp8(dev: &Device, xs: &[u32]) -> Vec<(usize, usize, Vec<String>)> {
    let n = xs.len() / 2;
    let k = fp8_kernel(n as u32);
    let fx: Vec<f32> = xs.iter().map(|&b| f32::from_bits(b)).collect();
    let xb = dev.upload(&fx).expect("upload");
    let ob = dev.upload(&vec![0u16; n * FP8_TYPES.len()]).expect("upload");
    dev.launch(&k, LaunchConfig::linear(n.div_ceil(256) as u32, 256), &[Arg::buffer(&xb), Arg::buffer(&ob)])
        .unwrap_or_else(|e| panic!("the FP8 pack kernel runs: {e}"));
    let got = dev.download(&ob).expect("download");
    FP8_TYPES
        .iter()
        .enumerate()
        .map(|(slot, &to)| {
            let (mut differ, mut nan_differ, mut bad) = (0, 0, Vec::new());
            for i in 0..n {
                let g = got[slot * n + i];
                for (byte, x) in [xs[2 * i], xs[2 * i + 1]].into_iter().enumerate() {
                    let (gb, want) = ((g >> (8 * byte)) as u8, f32_to_fp8(x, to));
                    if gb != want {
                        if f32::from_bits(x).is_nan() {
                            nan_differ += 1;
                        } else {
                            differ += 1;
                        }
                        if bad.len() < 20 {
                            bad.push(format!("{to} of {x:#010x} ({}): got {gb:#04x}, the model says {want:#04x}", f32::from_bits(x)));
                        }
                    }
                }
            }
            (differ, nan_differ, bad)
        })
        .collect()
}

fn report_fp8(dev: &Device, name: &str, sweep: bool) -> Vec<String> {
    let xs = fp8_inputs(sweep);
    let mut all = Vec::new();
    for (&to, (differ, nan_differ, bad)) in FP8_TYPES.iter().zip(measure_fp8(dev, &xs)) {
        println!(
            "{name}: cvt.rn.satfinite.{to}x2.f32 over {} f32s: {differ} non-NaN and {nan_differ} NaN bytes differ from the model",
            xs.len()
        );
        all.extend(bad);
    }
    all
}

/// The GPU's FP8 packs are the model's byte for byte (`float8`'s for every non-NaN; 0x7F for every NaN).
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn the_gpu_fp8_packs_are_the_model_byte_for_byte() {
    let gpu = Device::cuda(0).expect("needs a CUDA GPU");
    let bad = report_fp8(&gpu, "GPU", true);
    assert!(bad.is_empty(), "FP8 packs differ from the model:\n{}", bad.join("\n"));
}

/// The simulator runs the model itself (the edges and random bits; the sweep is the GPU's).
#[test]
fn the_simulator_packs_fp8_as_the_model() {
    let bad = report_fp8(&Device::sim(SimConfig::fast()), "simulator", false);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
