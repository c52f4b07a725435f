//! The bit layouts of the 64-bit shared-memory matrix descriptors: Hopper's wgmma descriptor
//! (PTX ISA "Matrix Descriptor Format"; CUTLASS `cute::GMMA::GmmaDescriptor`) and the sm100
//! descriptor of `tcgen05.mma`/`tcgen05.cp` (PTX ISA Table 40; CUTLASS `UMMA::SmemDescriptor`).
//!
//! Both hold the same fields at the same bits: bits 0-13 the start address, 16-29 the leading
//! byte offset and 32-45 the stride byte offset (each `(x & 0x3FFFF) >> 4`), 49-51 the base
//! offset. They differ in the rest: wgmma puts a 2-bit layout type at bits 62-63; sm100 has
//! the "fixed constant value of 0b001" at bits 46-48, the leading-dimension mode at bit 52
//! (0: relative) and a 3-bit layout type at bits 61-63. The layout codes are
//! [`Swizzle::wgmma_layout_type`] and [`Swizzle::umma_layout_type`].
//!
//! Here too: the 32-bit instruction descriptor of `tcgen05.mma` (PTX ISA Table 42; CUTLASS
//! `UMMA::InstrDescriptor`) and its type codes.

use crate::ir::{InstrDesc, Major, MatrixDescriptor, MmaKind, Swizzle, UmmaAcc, UmmaDescriptor, UmmaElem};

/// `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`: a byte address or offset as its 14-bit
/// field.
pub const fn encode14(x: u32) -> u64 {
    ((x & 0x3FFFF) >> 4) as u64
}

/// The byte address or offset a 14-bit field at bit `lo` of `bits` holds.
const fn decode14(bits: u64, lo: u32) -> u32 {
    (((bits >> lo) & 0x3FFF) << 4) as u32
}

/// Bits 16-29 (leading byte offset), 32-45 (stride byte offset) and 49-51 (base offset):
/// the constant fields both descriptors share.
const fn shared_constant_bits(lbo: u32, sbo: u32, base_offset: u8) -> u64 {
    (encode14(lbo) << 16) | (encode14(sbo) << 32) | (((base_offset & 7) as u64) << 49)
}

/// The shared fields of `bits`: (start address, leading byte offset, stride byte offset,
/// base offset).
const fn shared_fields(bits: u64) -> (u32, u32, u32, u8) {
    (decode14(bits, 0), decode14(bits, 16), decode14(bits, 32), ((bits >> 49) & 7) as u8)
}

/// Bits 46-48 of every sm100 shared-memory descriptor ("Fixed constant value of 0b001").
pub const UMMA_DESC_VERSION: u64 = 1 << 46;

impl MatrixDescriptor {
    /// Every bit but the start address (what a kernel ORs a runtime address into).
    pub fn constant_bits(&self) -> u64 {
        shared_constant_bits(self.lbo, self.sbo, self.base_offset) | (self.swizzle.wgmma_layout_type() << 62)
    }

    pub fn encode(&self) -> u64 {
        self.constant_bits() | encode14(self.start_address)
    }

    pub fn decode(bits: u64) -> MatrixDescriptor {
        let (start_address, lbo, sbo, base_offset) = shared_fields(bits);
        MatrixDescriptor { start_address, lbo, sbo, base_offset, swizzle: Swizzle::from_wgmma_layout_type(bits >> 62) }
    }
}

impl UmmaDescriptor {
    /// Every bit but the start address (what a kernel ORs a runtime address into).
    pub fn constant_bits(&self) -> u64 {
        shared_constant_bits(self.lbo, self.sbo, self.base_offset)
            | UMMA_DESC_VERSION
            | (self.swizzle.umma_layout_type() << 61)
    }

    pub fn encode(&self) -> u64 {
        self.constant_bits() | encode14(self.start_address)
    }

    /// The fields of a descriptor, or why it is not one Phaser models (a missing version
    /// constant, the absolute leading-dimension mode of sm_103a, 128B swizzling with 32-byte
    /// atoms, or an invalid layout code).
    pub fn decode(bits: u64) -> Result<UmmaDescriptor, String> {
        if (bits >> 46) & 7 != 1 {
            return Err(format!(
                "shared-memory descriptor {bits:#018x}: bits 46-48 must be the fixed constant 0b001 (an sm90 wgmma \
                 descriptor?)"
            ));
        }
        if (bits >> 52) & 1 != 0 {
            return Err("the descriptor uses the absolute leading-dimension mode (bit 52), an sm_103a feature".into());
        }
        let swizzle = match (bits >> 61, Swizzle::from_umma_layout_type(bits >> 61)) {
            (_, Some(s)) => s,
            (1, None) => return Err("128-byte swizzling with 32-byte atoms (layout type 1) is not modelled".into()),
            (x, None) => return Err(format!("layout type {x} in bits 61-63 is invalid (3, 5 and 7 are)")),
        };
        let (start_address, lbo, sbo, base_offset) = shared_fields(bits);
        Ok(UmmaDescriptor { start_address, lbo, sbo, base_offset, swizzle })
    }
}

impl UmmaElem {
    /// The 3-bit `atype`/`btype` code (Table 42: F16 = 0, BF16 = 1, TF32 = 2; E4M3 = 0,
    /// E5M2 = 1).
    pub fn code(self) -> u32 {
        match self {
            UmmaElem::F16 | UmmaElem::E4M3 => 0,
            UmmaElem::BF16 | UmmaElem::E5M2 => 1,
            UmmaElem::TF32 => 2,
        }
    }
    /// The type a `code` names for `kind` (`None`: not one Phaser models).
    pub fn from_code(kind: MmaKind, code: u32) -> Option<UmmaElem> {
        match (kind, code) {
            (MmaKind::F16, 0) => Some(UmmaElem::F16),
            (MmaKind::F16, 1) => Some(UmmaElem::BF16),
            (MmaKind::Tf32, 2) => Some(UmmaElem::TF32),
            (MmaKind::F8f6f4, 0) => Some(UmmaElem::E4M3),
            (MmaKind::F8f6f4, 1) => Some(UmmaElem::E5M2),
            _ => None,
        }
    }
}

impl UmmaAcc {
    pub fn code(self) -> u32 {
        match self {
            UmmaAcc::F16 => 0,
            UmmaAcc::F32 => 1,
        }
    }
}

impl InstrDesc {
    pub fn encode(&self) -> u32 {
        (self.d.code() << 4)
            | (self.a.code() << 7)
            | (self.b.code() << 10)
            | ((self.negate_a as u32) << 13)
            | ((self.negate_b as u32) << 14)
            | (((self.a_major == Major::MN) as u32) << 15)
            | (((self.b_major == Major::MN) as u32) << 16)
            | ((self.n >> 3) << 17)
            | ((self.m >> 4) << 24)
    }
    /// What a descriptor says under `kind`, or why it is not one Phaser models (sparsity,
    /// saturation, `.ws` shifts, integer or sub-byte types).
    pub fn decode(kind: MmaKind, bits: u32) -> Result<InstrDesc, String> {
        let field = |lo: u32, width: u32| (bits >> lo) & ((1 << width) - 1);
        if field(2, 1) != 0 {
            return Err("the instruction descriptor asks for a sparse A (bit 2)".into());
        }
        if field(0, 2) != 0 || field(3, 1) != 0 || field(6, 1) != 0 || field(23, 1) != 0 || field(29, 1) != 0 {
            return Err(format!("instruction descriptor {bits:#010x} sets reserved or sparsity/saturation bits"));
        }
        if field(30, 2) != 0 {
            return Err("the instruction descriptor sets a `.ws` B-reuse shift (bits 30-31)".into());
        }
        let d = match field(4, 2) {
            0 if kind == MmaKind::F16 || kind == MmaKind::F8f6f4 => UmmaAcc::F16,
            1 => UmmaAcc::F32,
            x => return Err(format!("dtype code {x} is not valid for {}", kind.ptx())),
        };
        let ty = |code: u32, which: &str| {
            UmmaElem::from_code(kind, code)
                .ok_or_else(|| format!("{which} type code {code} is not one of {}'s modelled types", kind.ptx()))
        };
        let major = |bit: u32| if field(bit, 1) == 1 { Major::MN } else { Major::K };
        Ok(InstrDesc {
            a: ty(field(7, 3), "A")?,
            b: ty(field(10, 3), "B")?,
            d,
            m: field(24, 5) << 4,
            n: field(17, 6) << 3,
            a_major: major(15),
            b_major: major(16),
            negate_a: field(13, 1) == 1,
            negate_b: field(14, 1) == 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// CUTLASS's `UMMA::InstrDescriptor` bitfields (mma_sm100_desc.hpp), little endian:
    /// `sparse_id2_:2, sparse_flag_:1, saturate_:1, c_format_:2, :1, a_format_:3, b_format_:3,
    /// a_negate_:1, b_negate_:1, a_major_:1 | b_major_:1, n_dim_:6, :1, m_dim_:5, :1, max_shift_:2`.
    #[allow(clippy::too_many_arguments)]
    fn cutlass_idesc(c: u32, a: u32, b: u32, na: u32, nb: u32, am: u32, bm: u32, n: u32, m: u32) -> u32 {
        let lo = (c << 4) | (a << 7) | (b << 10) | (na << 13) | (nb << 14) | (am << 15);
        let hi = bm | ((n >> 3) << 1) | ((m >> 4) << 8);
        lo | (hi << 16)
    }

    #[test]
    fn instruction_descriptor_matches_cutlass_bitfields() {
        let d = InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 256);
        assert_eq!(d.encode(), cutlass_idesc(1, 1, 1, 0, 0, 0, 0, 256, 128));
        // The widely quoted bf16 m128n256 value: dtype f32 (bit 4), a = b = bf16 (bits 7, 10),
        // N >> 3 = 32 at bit 17, M >> 4 = 8 at bit 24.
        assert_eq!(d.encode(), 0x0840_0490);
        let t = InstrDesc::new(UmmaElem::TF32, UmmaElem::TF32, 64, 8).with_majors(Major::MN, Major::MN);
        assert_eq!(t.encode(), cutlass_idesc(1, 2, 2, 0, 0, 1, 1, 8, 64));
        let f8 = InstrDesc { negate_b: true, ..InstrDesc::new(UmmaElem::E4M3, UmmaElem::E5M2, 256, 16) };
        assert_eq!(f8.encode(), cutlass_idesc(1, 0, 1, 0, 1, 0, 0, 16, 256));
    }

    #[test]
    fn sm100_smem_descriptor_matches_cutlass_bitfields() {
        // CUTLASS `UMMA::SmemDescriptor`: start_address_:14, :2 | leading_byte_offset_:14, :2 |
        // stride_byte_offset_:14, version_:2 | :1, base_offset_:3, lbo_mode_:1, :3 | :5, layout_type_:3.
        fn cutlass(start: u64, lbo: u64, sbo: u64, version: u64, base: u64, layout: u64) -> u64 {
            start | (lbo << 16) | (sbo << 32) | (version << 46) | (base << 49) | (layout << 61)
        }
        let d = UmmaDescriptor { start_address: 0x400, lbo: 16, sbo: 1024, base_offset: 0, swizzle: Swizzle::B128 };
        assert_eq!(d.encode(), cutlass(0x40, 1, 64, 1, 0, 2));
        assert_eq!(UmmaDescriptor::decode(d.encode()), Ok(d));
        let n =
            UmmaDescriptor { start_address: 0x3_2f0, lbo: 0x8000, sbo: 0x400, base_offset: 5, swizzle: Swizzle::B32 };
        assert_eq!(n.encode(), cutlass(0x32f, 0x800, 0x40, 1, 5, 6));
        assert_eq!(UmmaDescriptor::decode(n.encode()), Ok(n));
        // A Hopper descriptor (no version bits, 2-bit layout at 62) is refused, not misread.
        let hopper = (1u64 << 62) | (64 << 32) | (1 << 16);
        assert!(UmmaDescriptor::decode(hopper).unwrap_err().contains("0b001"));
    }

    fn elem() -> impl Strategy<Value = UmmaElem> {
        prop_oneof![
            Just(UmmaElem::F16),
            Just(UmmaElem::BF16),
            Just(UmmaElem::TF32),
            Just(UmmaElem::E4M3),
            Just(UmmaElem::E5M2)
        ]
    }

    proptest! {
        /// Every descriptor a kernel can build decodes to itself under its kind.
        #[test]
        fn instruction_descriptors_round_trip(
            (a, b) in elem().prop_flat_map(|a| {
                let same_kind: Vec<UmmaElem> = UmmaElem::ALL.into_iter().filter(|b| b.kind() == a.kind()).collect();
                (Just(a), proptest::sample::select(same_kind))
            }),
            m in prop_oneof![Just(64u32), Just(128), Just(256)],
            n in (1u32..=32).prop_map(|x| x * 8),
            am in any::<bool>(), bm in any::<bool>(), na in any::<bool>(), nb in any::<bool>(), f16acc in any::<bool>(),
        ) {
            let d = if f16acc && a.kind() != MmaKind::Tf32 { UmmaAcc::F16 } else { UmmaAcc::F32 };
            let major = |mn: bool| if mn { Major::MN } else { Major::K };
            let desc = InstrDesc { a, b, d, m, n, a_major: major(am), b_major: major(bm), negate_a: na, negate_b: nb };
            prop_assert_eq!(InstrDesc::decode(a.kind(), desc.encode()), Ok(desc));
        }
    }

    fn swizzle() -> impl Strategy<Value = Swizzle> {
        proptest::sample::select(Swizzle::ALL.to_vec())
    }

    /// Fields a descriptor can hold: 16-byte multiples below 2^18, a 3-bit base offset.
    fn field() -> impl Strategy<Value = u32> {
        (0u32..0x4000).prop_map(|x| x << 4)
    }

    /// The bits both encodings give the shared fields: 0-45 and 49-51.
    const SHARED_MASK: u64 = ((1 << 46) - 1) | (7 << 49);

    proptest! {
        /// Both encoders keep every field, and put the shared ones at the same bits.
        #[test]
        fn fields_round_trip_and_both_encoders_agree(
            start in field(), lbo in field(), sbo in field(), base_offset in 0u8..8, sw in swizzle(),
        ) {
            let w = MatrixDescriptor { start_address: start, lbo, sbo, base_offset, swizzle: sw };
            let u = UmmaDescriptor { start_address: start, lbo, sbo, base_offset, swizzle: sw };
            prop_assert_eq!(MatrixDescriptor::decode(w.encode()), w);
            prop_assert_eq!(UmmaDescriptor::decode(u.encode()), Ok(u));
            prop_assert_eq!(u.layout(), w);
            prop_assert_eq!(w.encode() & SHARED_MASK, u.encode() & SHARED_MASK);
            prop_assert_eq!(w.encode() >> 62, sw.wgmma_layout_type());
            prop_assert_eq!(u.encode() >> 61, sw.umma_layout_type());
            prop_assert_eq!((u.encode() >> 46) & 7, 1);
            prop_assert_eq!(w.constant_bits() | encode14(start), w.encode());
            prop_assert_eq!(u.constant_bits() | encode14(start), u.encode());
            prop_assert_eq!(w.constant_bits() & 0x3FFF, 0);
        }
    }

    #[test]
    fn addresses_wrap_at_the_field_width() {
        // 2^18 and above do not fit the 14-bit field of 16-byte units.
        assert_eq!(encode14(0x4_0010), 1);
        assert_eq!(encode14(0x3_FFF0), 0x3FFF);
    }
}
