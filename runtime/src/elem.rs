//! Element types that can live in buffers and be passed as scalars.

use phaser_codegen::Type;

/// A plain-old-data element with a PTX type; cudarc's marker traits let the CUDA backend
/// hold it in a typed `CudaSlice<T>`.
pub trait Elem:
    Copy + Default + Send + Sync + 'static + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits
{
    const TYPE: Type;
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! elem_int {
    ($($t:ty => $ty:ident),*) => {$(
        impl Elem for $t {
            const TYPE: Type = Type::$ty;
            fn to_bits(self) -> u64 { self as u64 }
            fn from_bits(bits: u64) -> Self { bits as $t }
        }
    )*};
}
elem_int!(u16 => U16, u32 => U32, u64 => U64, i16 => S16, i32 => S32, i64 => S64);

impl Elem for f32 {
    const TYPE: Type = Type::F32;
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}
impl Elem for f64 {
    const TYPE: Type = Type::F64;
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
impl Elem for half::f16 {
    const TYPE: Type = Type::F16;
    fn to_bits(self) -> u64 {
        half::f16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        half::f16::from_bits(bits as u16)
    }
}
impl Elem for half::bf16 {
    const TYPE: Type = Type::BF16;
    fn to_bits(self) -> u64 {
        half::bf16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        half::bf16::from_bits(bits as u16)
    }
}

/// The OCP FP8 host elements are `float8`'s (a port of CUDA's `cuda_fp8.hpp` conversions:
/// `from_f32` rounds to nearest even and saturates to the largest finite value, as
/// `cvt.rn.satfinite` does; `to_f32` is exact). Their decoding agrees with the evaluator's
/// [`phaser_codegen::eval::exec::fp8_value`] on every byte and their rounding with the nearest
/// value of that decoding (the tests below): the evaluator stays the one statement of the values.
pub use float8::{F8E4M3, F8E5M2};

macro_rules! elem_fp8 {
    ($($t:ty => $ty:ident),*) => {$(
        impl Elem for $t {
            const TYPE: Type = Type::$ty;
            fn to_bits(self) -> u64 { <$t>::to_bits(&self) as u64 }
            fn from_bits(bits: u64) -> Self { <$t>::from_bits(bits as u8) }
        }
    )*};
}
elem_fp8!(F8E4M3 => E4M3, F8E5M2 => E5M2);

/// Little-endian bytes of a slice of elements.
pub fn to_bytes<T: Elem>(data: &[T]) -> Vec<u8> {
    let size = T::TYPE.size() as usize;
    let mut out = Vec::with_capacity(data.len() * size);
    for &x in data {
        out.extend_from_slice(&x.to_bits().to_le_bytes()[..size]);
    }
    out
}

/// Elements from little-endian bytes.
pub fn from_bytes<T: Elem>(bytes: &[u8]) -> Vec<T> {
    let size = T::TYPE.size() as usize;
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            T::from_bits(u64::from_le_bytes(b))
        })
        .collect()
}

#[cfg(test)]
mod fp8_tests {
    use super::*;
    use phaser_codegen::eval::exec::fp8_value;
    use phaser_codegen::eval::f32_to_fp8;
    use proptest::prelude::*;

    /// The evaluator's nearest finite FP8 value to `x` (a finite f32) among the codes of `x`'s
    /// sign, ties to the even code: round-to-nearest-even with satfinite, from the decoding alone.
    fn nearest(ty: Type, x: f32) -> u8 {
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        // Past the largest finite value every code is farther than it (satfinite); clamping
        // first keeps the distances exact in f64.
        let max = (0..0x80u8).map(|b| fp8_value(ty, b)).filter(|v| v.is_finite()).fold(0.0, f64::max);
        let x = (x as f64).clamp(-max, max);
        let mut best: Option<(f64, u8)> = None;
        for low in 0..0x80u8 {
            let code = sign | low;
            let v = fp8_value(ty, code);
            if !v.is_finite() {
                continue;
            }
            let d = (v - x).abs();
            best = match best {
                Some((bd, bc)) if bd < d || (bd == d && bc & 1 == 0) => Some((bd, bc)),
                _ => Some((d, code)),
            };
        }
        best.expect("finite codes").1
    }

    fn encode(ty: Type, x: f32) -> u8 {
        match ty {
            Type::E4M3 => F8E4M3::to_bits(&F8E4M3::from_f32(x)),
            _ => F8E5M2::to_bits(&F8E5M2::from_f32(x)),
        }
    }

    fn decode(ty: Type, b: u8) -> f32 {
        match ty {
            Type::E4M3 => F8E4M3::from_bits(b).to_f32(),
            _ => F8E5M2::from_bits(b).to_f32(),
        }
    }

    #[test]
    fn every_fp8_byte_decodes_to_the_evaluators_value() {
        for ty in [Type::E4M3, Type::E5M2] {
            for b in 0..=255u8 {
                let (ours, theirs) = (fp8_value(ty, b), decode(ty, b));
                if ours.is_nan() {
                    assert!(theirs.is_nan(), "{ty} {b:#04x}: {theirs}, want NaN");
                } else {
                    // Exact, and the same zero (the sign of -0 kept).
                    assert_eq!(theirs as f64, ours, "{ty} {b:#04x}");
                    assert_eq!(theirs.is_sign_negative(), ours.is_sign_negative(), "{ty} {b:#04x}");
                }
            }
        }
    }

    #[test]
    fn every_finite_fp8_value_round_trips_and_ties_go_to_the_even_code() {
        for ty in [Type::E4M3, Type::E5M2] {
            let mut values: Vec<(f64, u8)> =
                (0..0x80u8).map(|b| (fp8_value(ty, b), b)).filter(|(v, _)| v.is_finite()).collect();
            values.sort_by(|a, b| a.0.total_cmp(&b.0));
            for &(v, b) in &values {
                assert_eq!(encode(ty, v as f32), b, "{ty} {v}");
                assert_eq!(encode(ty, -(v as f32)), b | 0x80, "{ty} -{v}");
            }
            // Midpoints of neighbours (exact in f32) and the floats either side of them.
            for w in values.windows(2) {
                let mid = ((w[0].0 + w[1].0) / 2.0) as f32;
                assert_eq!(mid as f64, (w[0].0 + w[1].0) / 2.0, "{ty}: midpoint exact");
                let even = if w[0].1 & 1 == 0 { w[0].1 } else { w[1].1 };
                assert_eq!(encode(ty, mid), even, "{ty}: tie at {mid}");
                assert_eq!(encode(ty, mid.next_down()), w[0].1, "{ty}: below {mid}");
                assert_eq!(encode(ty, mid.next_up()), w[1].1, "{ty}: above {mid}");
                for x in [mid, mid.next_down(), mid.next_up()] {
                    assert_eq!(encode(ty, x), nearest(ty, x), "{ty}: {x}");
                }
            }
        }
    }

    #[test]
    fn out_of_range_saturates_and_nan_stays_nan() {
        for (ty, max) in [(Type::E4M3, 448.0f32), (Type::E5M2, 57344.0)] {
            for x in [max * 1.5, 1e30, f32::MAX, f32::INFINITY] {
                assert_eq!(decode(ty, encode(ty, x)), max, "{ty} {x}");
                assert_eq!(decode(ty, encode(ty, -x)), -max, "{ty} -{x}");
            }
            assert!(decode(ty, encode(ty, f32::NAN)).is_nan(), "{ty}");
        }
    }

    /// The device conversion's model (`eval::f32_to_fp8`, what the simulator runs for
    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`) and the host's `float8` agree on the byte of
    /// every non-NaN; a NaN is 0x7F on the device (the H200's, whatever the sign and payload),
    /// a NaN of the same format on the host.
    fn model_matches_host(ty: Type, bits: u32) -> Result<(), String> {
        let (model, host) = (f32_to_fp8(bits, ty), encode(ty, f32::from_bits(bits)));
        if f32::from_bits(bits).is_nan() {
            return if model == 0x7F && decode(ty, host).is_nan() {
                Ok(())
            } else {
                Err(format!("{ty} of NaN {bits:#010x}: model {model:#04x} (want 0x7f), float8 {host:#04x}"))
            };
        }
        if model == host {
            Ok(())
        } else {
            Err(format!("{ty} of {bits:#010x} ({}): model {model:#04x}, float8 {host:#04x}", f32::from_bits(bits)))
        }
    }

    /// Every f32 by its upper 16 bits (sign, exponent, the mantissa's top 7: every FP8
    /// rounding position of both formats, normal and subnormal, and every NaN's sign and
    /// payload), each with lower halves below, at and above the half-way points.
    #[test]
    fn the_device_conversion_model_is_float8s_on_every_upper_half() {
        for ty in [Type::E4M3, Type::E5M2] {
            for upper in 0..=0xFFFFu32 {
                for lower in [0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF] {
                    model_matches_host(ty, upper << 16 | lower).unwrap();
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// Any f32 bit pattern (NaNs and infinities too): the device model's byte is float8's.
        #[test]
        fn any_f32_converts_on_the_device_model_as_float8_does(bits in any::<u32>()) {
            model_matches_host(Type::E4M3, bits).map_err(TestCaseError::fail)?;
            model_matches_host(Type::E5M2, bits).map_err(TestCaseError::fail)?;
        }

        /// Any finite f32 rounds to the evaluator's nearest value (ties to even, satfinite).
        #[test]
        fn any_finite_f32_rounds_to_the_nearest_fp8(bits in any::<u32>(), e5m2 in any::<bool>()) {
            let x = f32::from_bits(bits);
            prop_assume!(x.is_finite());
            let ty = if e5m2 { Type::E5M2 } else { Type::E4M3 };
            prop_assert_eq!(encode(ty, x), nearest(ty, x), "{} {}", ty, x);
        }

        /// Values in FP8's range (where the interesting rounding is), same property.
        #[test]
        fn in_range_f32_rounds_to_the_nearest_fp8(x in -500.0f32..500.0, scale in -12i32..4) {
            let x = x * 2f32.powi(scale);
            prop_assert_eq!(encode(Type::E4M3, x), nearest(Type::E4M3, x), "{}", x);
            prop_assert_eq!(encode(Type::E5M2, x * 64.0), nearest(Type::E5M2, x * 64.0), "{}", x * 64.0);
        }
    }
}
