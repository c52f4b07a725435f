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

use crate::ir::{MatrixDescriptor, Swizzle, UmmaDescriptor};

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
