//! Blackwell's tensor core (UMMA): what an asynchronous `tcgen05.mma`, `tcgen05.cp` or
//! `tcgen05.shift` does to tensor memory when it runs, with operands read from shared memory
//! through sm100 descriptors (the canonical layouts of PTX ISA 9.7.16.3.3, which wgmma shares)
//! and from tensor memory in the data-path layouts of 9.7.16.10.5.
//!
//! Numerics: products of the input types are exact in f32 (bf16, f16, tf32 and FP8 have at
//! most 11 significant bits), and each MMA adds its K products to `D` one after the other in
//! f32 (or, for an f16 `D`, in f32 then rounded to f16). The hardware's internal accumulation
//! order and width are not documented; results can differ from silicon in the last bits.

use crate::sim::tensor::mma::element;
use phaser_codegen::ir::{CpShape, InstrDesc, Major, MmaElem, UmmaAcc, UmmaDescriptor, UmmaElem};

/// Where `A` of an MMA comes from.
#[derive(Clone, Debug)]
pub enum ASource {
    Smem(UmmaDescriptor),
    /// Tensor memory at (lane, column): row `r` at the data-path lane of `r`, the K elements
    /// packed little-endian into 32-bit cells (8 columns per instruction).
    Tmem {
        lane: u32,
        col: u32,
    },
}

/// One MMA, decoded at issue from its operands' run-time values.
#[derive(Clone, Debug)]
pub struct MmaJob {
    pub desc: InstrDesc,
    pub a: ASource,
    pub b: UmmaDescriptor,
    pub d_lane: u32,
    pub d_col: u32,
    pub accumulate: bool,
}

/// Work the tensor core does asynchronously.
#[derive(Clone, Debug)]
pub enum TcKind {
    Mma(MmaJob),
    Cp { shape: CpShape, desc: UmmaDescriptor, lane: u32, col: u32 },
    Shift { lane: u32, col: u32 },
}

/// An asynchronous tcgen05 op in flight (`AsyncKind::Tcgen05`).
#[derive(Clone, Debug)]
pub struct TcWork {
    /// The issuing CTA (ops of one CTA's tensor core run in issue order).
    pub cta: usize,
    /// The CTAs whose tensor memory (and, for an MMA, shared memory) it uses, pair order.
    pub ctas: Vec<usize>,
    /// The checker's access id.
    pub access: u32,
    pub kind: TcKind,
}

impl TcWork {
    pub fn what(&self) -> &'static str {
        match self.kind {
            TcKind::Mma(_) => "tcgen05.mma",
            TcKind::Cp { .. } => "tcgen05.cp",
            TcKind::Shift { .. } => "tcgen05.shift",
        }
    }
}

/// The tensor-memory lane of row `r` of a CTA's `rows` rows of `D` (or `A`): Layout D
/// (M = 128 per CTA) maps row `r` to lane `r`; Layout F (M = 64, "4x1, 1/2 datapath
/// utilized") puts rows in 16-lane slices of each warp's 32 lanes: `32 (r / 16) + r % 16`,
/// plus the lane alignment 0 or 16 of the address.
pub fn row_lane(rows: u32, base: u32, r: u32) -> u32 {
    if rows == 64 {
        base + 32 * (r / 16) + r % 16
    } else {
        base + r
    }
}

/// The value of an element of `ty` from its bytes (little endian): the wgmma datapath's
/// decoding (`tensor_core::element`) for the types both tensor cores have, and TF32, whose
/// "lower 13 bits are ignored".
pub fn decode(ty: UmmaElem, bytes: &[u8]) -> f32 {
    let mut word = [0u8; 4];
    let n = (ty.bytes() as usize).min(bytes.len());
    word[..n].copy_from_slice(&bytes[..n]);
    let bits = u32::from_le_bytes(word);
    match ty {
        UmmaElem::BF16 => element(MmaElem::BF16, bits),
        UmmaElem::F16 => element(MmaElem::F16, bits),
        UmmaElem::E4M3 => element(MmaElem::E4M3, bits),
        UmmaElem::E5M2 => element(MmaElem::E5M2, bits),
        UmmaElem::TF32 => f32::from_bits(bits & 0xFFFF_E000),
    }
}

/// Element (`mn`, `k`) of the matrix `desc` describes in `smem`; `None` outside it.
fn smem_elem(smem: &[u8], desc: &UmmaDescriptor, major: Major, ty: UmmaElem, mn: u32, k: u32) -> Option<f32> {
    let a = desc.element_address(major, ty.bytes(), mn, k) as usize;
    smem.get(a..a + ty.bytes() as usize).map(|b| decode(ty, b))
}

/// The shared bytes `[lo, hi)` an operand of `rows x k` elements spans (for the checker and
/// bounds), from every element's address.
pub fn operand_span(desc: &UmmaDescriptor, major: Major, ty: UmmaElem, rows: u32, k: u32) -> (u32, u32) {
    let (mut lo, mut hi) = (u32::MAX, 0);
    for r in 0..rows {
        for kk in 0..k {
            let a = desc.element_address(major, ty.bytes(), r, kk);
            lo = lo.min(a);
            hi = hi.max(a + ty.bytes());
        }
    }
    (lo, hi)
}

/// Element `k` of row `lane` of an `A` in tensor memory at column `col`.
fn tmem_a_elem(tmem: &[u32], ty: UmmaElem, lane: u32, col: u32, k: u32) -> f32 {
    let byte = k * ty.bytes();
    let word = tmem.get((lane * 512 + col + byte / 4) as usize).copied().unwrap_or(0);
    let bytes = word.to_le_bytes();
    let off = (byte % 4) as usize;
    decode(ty, &bytes[off..])
}

/// Run `job`: `smem[i]` and `tmem[i]` are those of the pair's CTA `i` (one CTA for
/// `.cta_group::1`). With `.cta_group::2` (M = 256, Layout A) CTA `i` holds rows
/// `128 i .. 128 i + 127` of A and D, and rows `N/2 i ..` of B (K-major: columns of B),
/// all at the same addresses in each CTA.
pub fn run_mma(job: &MmaJob, smem: &[&[u8]], tmem: &mut [&mut Vec<u32>]) {
    let d = &job.desc;
    let (m, n, k) = (d.m, d.n, d.k());
    let per = smem.len() as u32;
    let (m_per, n_per) = (m / per, n / per);
    let sign = |neg: bool| if neg { -1.0f32 } else { 1.0 };
    let mut a = vec![0f32; (m * k) as usize];
    for ci in 0..per {
        for r in 0..m_per {
            for kk in 0..k {
                let v = match &job.a {
                    ASource::Smem(desc) => smem_elem(smem[ci as usize], desc, d.a_major, d.a, r, kk).unwrap_or(0.0),
                    ASource::Tmem { lane, col } => {
                        tmem_a_elem(tmem[ci as usize], d.a, row_lane(m_per, *lane, r), *col, kk)
                    }
                };
                a[((ci * m_per + r) * k + kk) as usize] = v * sign(d.negate_a);
            }
        }
    }
    let mut b = vec![0f32; (n * k) as usize];
    for ci in 0..per {
        for c in 0..n_per {
            for kk in 0..k {
                let v = smem_elem(smem[ci as usize], &job.b, d.b_major, d.b, c, kk).unwrap_or(0.0);
                b[((ci * n_per + c) * k + kk) as usize] = v * sign(d.negate_b);
            }
        }
    }
    for ci in 0..per {
        let cells = &mut tmem[ci as usize];
        for r in 0..m_per {
            let lane = row_lane(m_per, job.d_lane, r);
            let arow = &a[((ci * m_per + r) * k) as usize..][..k as usize];
            for c in 0..n {
                let at = (lane * 512 + job.d_col + c) as usize;
                let Some(&old) = cells.get(at) else { continue };
                let mut acc = match (job.accumulate, d.d) {
                    (false, _) => 0.0,
                    (true, UmmaAcc::F32) => f32::from_bits(old),
                    (true, UmmaAcc::F16) => half::f16::from_bits(old as u16).to_f32(),
                };
                let brow = &b[(c * k) as usize..][..k as usize];
                for kk in 0..k as usize {
                    acc += arow[kk] * brow[kk];
                }
                cells[at] = match d.d {
                    UmmaAcc::F32 => acc.to_bits(),
                    // "a Tensor Memory word would contain a single 16-bit element in its lower
                    // 16 bits"
                    UmmaAcc::F16 => half::f16::from_f32(acc).to_bits() as u32,
                };
            }
        }
    }
}

/// Run a `tcgen05.cp` of `shape` into `tmem` at (lane, col) from `smem`: row `r` (a lane) gets
/// the row's bytes of the K-major canonical layout `desc` describes (1-byte elements, so a
/// 16-byte core-matrix row per 128-bit column group).
pub fn run_cp(shape: CpShape, desc: &UmmaDescriptor, lane: u32, col: u32, smem: &[u8], tmem: &mut [u32]) {
    let (rows, bytes) = shape.rows_bytes();
    for r in 0..rows {
        let mut word = [0u8; 4];
        for j in 0..bytes {
            let a = desc.element_address(Major::K, 1, r, j) as usize;
            word[(j % 4) as usize] = smem.get(a).copied().unwrap_or(0);
            if j % 4 == 3 {
                if let Some(c) = tmem.get_mut(((lane + r) * 512 + col + j / 4) as usize) {
                    *c = u32::from_le_bytes(word);
                }
            }
        }
    }
}

/// The shared bytes `[lo, hi)` a `tcgen05.cp` of `shape` reads.
pub fn cp_span(shape: CpShape, desc: &UmmaDescriptor) -> (u32, u32) {
    let (rows, bytes) = shape.rows_bytes();
    let (mut lo, mut hi) = (u32::MAX, 0);
    for r in 0..rows {
        for j in 0..bytes {
            let a = desc.element_address(Major::K, 1, r, j);
            lo = lo.min(a);
            hi = hi.max(a + 1);
        }
    }
    (lo, hi)
}

/// `tcgen05.shift.down`: "shifting of 32-byte elements downwards across all the rows, except
/// the last, by one row": rows 0..30 of the 32 lanes at `lane` move to rows 1..31 (8 columns
/// from `col`); row 0 keeps its value.
pub fn run_shift(lane: u32, col: u32, tmem: &mut [u32]) {
    for r in (1..32).rev() {
        for c in 0..8 {
            let from = ((lane + r - 1) * 512 + col + c) as usize;
            let to = ((lane + r) * 512 + col + c) as usize;
            if let (Some(&v), true) = (tmem.get(from), to < tmem.len()) {
                tmem[to] = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_decoding_follows_the_ocp_formats() {
        let e4m3 = |b: u8| decode(UmmaElem::E4M3, &[b]);
        let e5m2 = |b: u8| decode(UmmaElem::E5M2, &[b]);
        assert_eq!(e4m3(0x38), 1.0); // 0.0111.000
        assert_eq!(e4m3(0x7E), 448.0); // largest normal
        assert!(e4m3(0x7F).is_nan());
        assert_eq!(e4m3(0x01), 2f32.powi(-9)); // smallest subnormal
        assert_eq!(e4m3(0xC0), -2.0);
        assert_eq!(e5m2(0x3C), 1.0);
        assert_eq!(e5m2(0x7B), 57344.0);
        assert_eq!(e5m2(0x7C), f32::INFINITY);
        assert!(e5m2(0x7E).is_nan());
        assert_eq!(e5m2(0x01), 2f32.powi(-16));
    }

    #[test]
    fn tf32_drops_the_low_13_mantissa_bits() {
        let x = f32::from_bits(0x3F80_1FFF); // 1 + small
        assert_eq!(decode(UmmaElem::TF32, &x.to_le_bytes()), 1.0);
        assert_eq!(decode(UmmaElem::TF32, &1.5f32.to_le_bytes()), 1.5);
    }

    #[test]
    fn layout_f_rows_use_half_of_each_warps_lanes() {
        assert_eq!((0..64).map(|r| row_lane(64, 0, r)).filter(|l| l % 32 < 16).count(), 64);
        assert_eq!(row_lane(64, 16, 17), 16 + 32 + 1);
        assert_eq!(row_lane(128, 0, 77), 77);
    }
}
