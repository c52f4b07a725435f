//! The tensor core's arithmetic for `wgmma.mma_async` (64 x N x K per warpgroup): reading the
//! shared-memory operands through their matrix descriptors (the one descriptor definition,
//! `codegen::ir::MatrixDescriptor::element_address`, swizzle included), the register operands
//! and accumulator in their fragment layouts (`codegen::builder::Accumulator`), and the
//! multiply-accumulate.
//!
//! What is exact and what is not: products of bf16/f16 (and FP8) elements are exact in f32
//! (8- or 11-bit significands), as on the hardware. The sum is f32 with round-to-nearest-even
//! after every product, in k order (`d += a[k] * b[k]` for k = 0, 1, ...), starting from the
//! accumulator; that is deterministic but not the tensor core's documented behaviour, which
//! NVIDIA does not specify (measurements of earlier tensor cores found multi-term adders that
//! align to the largest exponent and truncate). So f32 results agree with the GPU's to a few
//! ulps, not bit for bit; after rounding to bf16 they agree within bf16 tolerance (the
//! simulator-vs-GPU GEMM test, `examples/tests/gpu_gemm.rs`, measures how many are
//! bit-identical).

use phaser_codegen::eval::exec::fp8_value;
use phaser_codegen::ir::{Major, MatrixDescriptor, MmaElem, Type};

/// Rows of a wgmma's A and D (a warpgroup's tile height), as `arch::wgmma` states it.
pub const M: usize = phaser_codegen::arch::wgmma::M as usize;

/// The value of an element of type `ty` stored in the low `ty.bytes()` bytes of `bits`.
pub fn element(ty: MmaElem, bits: u32) -> f32 {
    match ty {
        MmaElem::BF16 => half::bf16::from_bits(bits as u16).to_f32(),
        MmaElem::F16 => half::f16::from_bits(bits as u16).to_f32(),
        MmaElem::E4M3 => e4m3(bits as u8),
        MmaElem::E5M2 => e5m2(bits as u8),
    }
}

/// FP8 values: the one decoding, `codegen::eval::exec::fp8_value` (every FP8 value is exact in f32).
fn e4m3(b: u8) -> f32 {
    fp8_value(Type::E4M3, b) as f32
}

fn e5m2(b: u8) -> f32 {
    fp8_value(Type::E5M2, b) as f32
}

/// One shared-memory operand of a wgmma: `rows` (M of A, N of B) x `k` elements read through
/// `desc`, row-major (`v[row * k + kk]`), and the 16-byte chunks it read (offsets, sorted).
#[derive(Debug)]
pub struct Operand {
    pub values: Vec<f32>,
    pub chunks: Vec<u32>,
}

/// Read an operand through its descriptor from a CTA's shared memory `smem`; `major` is the
/// operand's (K-major unless transposed). Errors say what the hardware would not accept.
pub fn read_operand(
    smem: &[u8],
    desc_bits: u64,
    major: Major,
    ty: MmaElem,
    rows: u32,
    k: u32,
    negate: bool,
) -> Result<Operand, String> {
    let d = MatrixDescriptor::decode(desc_bits);
    if d.base_offset != 0 {
        return Err(format!(
            "matrix descriptor {desc_bits:#x} has base offset {} (the simulator models tiles aligned to the swizzle repeat \
             only)",
            d.base_offset
        ));
    }
    if major == Major::MN && ty.is_fp8() {
        return Err("an MN-major (transposed) operand of FP8 elements: wgmma has none".into());
    }
    let bytes = ty.bytes();
    let sign = if negate { -1.0 } else { 1.0 };
    let mut values = Vec::with_capacity((rows * k) as usize);
    let mut chunks = Vec::with_capacity((rows * k) as usize / 8);
    for r in 0..rows {
        for kk in 0..k {
            let a = d.element_address(major, bytes, r, kk) as usize;
            let Some(raw) = smem.get(a..a + bytes as usize) else {
                return Err(format!(
                    "matrix descriptor {desc_bits:#x} (start {:#x}, leading {} B, stride {} B, {}) addresses element \
                     ({r}, {kk}) at shared offset {a:#x}, outside the CTA's {} bytes of shared memory",
                    d.start_address,
                    d.lbo,
                    d.sbo,
                    d.swizzle.name(),
                    smem.len()
                ));
            };
            let mut b = [0u8; 4];
            b[..raw.len()].copy_from_slice(raw);
            values.push(sign * element(ty, u32::from_le_bytes(b)));
            chunks.push(a as u32 / 16);
        }
    }
    chunks.sort_unstable();
    chunks.dedup();
    Ok(Operand { values, chunks })
}

/// `chunks` (16-byte chunk indices, sorted) as byte ranges `(offset, len)`.
pub fn chunk_ranges(chunks: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &c in chunks {
        match out.last_mut() {
            Some((off, len)) if *off + *len == c * 16 => *len += 16,
            _ => out.push((c * 16, 16)),
        }
    }
    out
}

/// `d (M x n) = a (M x k) * b^T (n x k) + (scale_d ? d : 0)`, row-major, f32 in k order (see
/// the module docs).
pub fn mma(a: &[f32], b: &[f32], d: &mut [f32], n: usize, k: usize, scale_d: bool) {
    debug_assert_eq!((a.len(), b.len(), d.len()), (M * k, n * k, M * n));
    for row in 0..M {
        let ar = &a[row * k..(row + 1) * k];
        for col in 0..n {
            let br = &b[col * k..(col + 1) * k];
            let mut acc = if scale_d { d[row * n + col] } else { 0.0 };
            for (x, y) in ar.iter().zip(br) {
                acc += x * y;
            }
            d[row * n + col] = acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::ir::{MmaOperand, SmemTile, Swizzle};
    use proptest::prelude::*;

    #[test]
    fn fp8_elements_decode_as_ocp_formats() {
        assert_eq!(e4m3(0x38), 1.0); // 0.0111.000: 2^(7-7)
        assert_eq!(e4m3(0xB8), -1.0);
        assert_eq!(e4m3(0x7E), 448.0); // the largest finite
        assert!(e4m3(0x7F).is_nan());
        assert_eq!(e4m3(0x01), 2f32.powi(-9)); // the smallest subnormal
        assert_eq!(e5m2(0x3C), 1.0);
        assert_eq!(e5m2(0x7B), 57344.0);
        assert!(e5m2(0x7C).is_infinite());
    }

    #[test]
    fn accumulation_is_f32_in_k_order() {
        // 1 + 2^-24 + 2^-24 in k order rounds each step back to 1 (ties to even); the f64 sum
        // would be 1 + 2^-23.
        let (n, k) = (1, 3);
        let mut a = vec![0.0f32; M * k];
        let b = vec![1.0f32; n * k];
        a[..3].copy_from_slice(&[1.0, 2f32.powi(-24), 2f32.powi(-24)]);
        let mut d = vec![0.0; M * n];
        mma(&a, &b, &mut d, n, k, false);
        assert_eq!(d[0], 1.0);
        // scale-d keeps the accumulator; without it the old value is ignored.
        let mut d = vec![5.0; M * n];
        mma(&a, &b, &mut d, n, k, true);
        assert_eq!(d[0], 6.0);
    }

    #[test]
    fn chunks_merge_into_ranges() {
        assert_eq!(chunk_ranges(&[0, 1, 2, 5, 7, 8]), vec![(0, 48), (80, 16), (112, 32)]);
        assert!(chunk_ranges(&[]).is_empty());
    }

    proptest! {
        /// An operand read through the descriptor of a typed tile equals the tile's elements
        /// where TMA (SmemTile::offset) put them, for every swizzle and major-ness.
        #[test]
        fn operands_read_where_the_tile_stored_them(
            swz in prop_oneof![Just(Swizzle::None), Just(Swizzle::B32), Just(Swizzle::B64), Just(Swizzle::B128)],
            mn_major in any::<bool>(),
            k_step in 0u32..4,
            seed in any::<u64>(),
        ) {
            let block = swz.row_bytes() / 2;
            // 64 rows (M/N of a K-major tile, K of an MN-major one) by whole 64-element columns.
            let (rows, cols) = (64, block.max(64));
            let tile = SmemTile::new(2, rows, cols, swz);
            let op = MmaOperand::new(tile, if mn_major { Major::MN } else { Major::K });
            let base = tile.align();
            let mut smem = vec![0u8; (base + tile.bytes()) as usize];
            let val = |mn: u32, k: u32| ((mn * 131 + k * 7) as u64 ^ seed) as u16 & 0x3FFF; // finite bf16
            for mn in 0..op.mn() {
                for k in 0..op.k() {
                    let at = (base + op.offset(mn, k)) as usize;
                    smem[at..at + 2].copy_from_slice(&val(mn, k).to_le_bytes());
                }
            }
            let k0 = 16 * k_step % op.k();
            let Ok(desc) = op.descriptor(base, 0, k0, 64, 16) else { return Ok(()) };
            let got = read_operand(&smem, desc.encode(), op.major, MmaElem::BF16, 64, 16, false).unwrap();
            for r in 0..64 {
                for k in 0..16 {
                    let want = half::bf16::from_bits(val(r, k0 + k)).to_f32();
                    prop_assert_eq!(got.values[(r * 16 + k) as usize], want, "({}, {})", r, k);
                }
            }
        }
    }
}
