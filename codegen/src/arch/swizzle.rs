//! Shared-memory swizzling: the address function the Hopper TMA applies when it writes a box
//! into shared memory with `CU_TENSOR_MAP_SWIZZLE_{32,64,128}B`, and that wgmma matrix
//! descriptors name in their layout-type bits. One place for the function: typed tiles, the
//! descriptor derivation, the epilogue's `stmatrix` addresses and (later) the simulator use it.
//!
//! A swizzled layout stores rows of `row_bytes` (32, 64 or 128) bytes; within every group of
//! 8 such rows the 16-byte chunk index is XORed with the row index (CuTe's `Swizzle<B,4,3>`
//! on byte addresses: bits `[4, 4+B)` ^= bits `[7, 7+B)`). The pattern repeats every
//! `8 * row_bytes` bytes of *address*, so a tile must start on that boundary.

pub use crate::ir::swizzle::Swizzle;

impl Swizzle {
    pub const ALL: [Swizzle; 4] = [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128];

    /// Bytes of one row of the swizzle atom: 16 (no swizzle), 32, 64 or 128. A TMA box loaded
    /// with this swizzle has an inner row of at most this many bytes.
    pub fn row_bytes(self) -> u32 {
        match self {
            Swizzle::None => 16,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The swizzle span of a TMA tensor map in bytes (the widest inner box row it allows);
    /// `None` without swizzling.
    pub fn span_bytes(self) -> Option<u32> {
        (self != Swizzle::None).then(|| self.row_bytes())
    }

    /// `B` of `Swizzle<B,4,3>`: how many address bits take part in the XOR.
    pub fn xor_bits(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }

    /// Bytes after which the pattern repeats (8 atom rows): the alignment a swizzled tile's
    /// start address needs (1024 for 128-byte swizzling). 128 for no swizzle (a core matrix).
    pub fn repeat_bytes(self) -> u32 {
        8 * self.row_bytes()
    }

    /// The swizzled shared address of the byte at unswizzled address `addr`. Applied to
    /// absolute addresses (that is what the hardware does), or to offsets from a base that is
    /// aligned to [`Swizzle::repeat_bytes`].
    pub fn apply(self, addr: u32) -> u32 {
        let mask = ((1u32 << self.xor_bits()) - 1) << 4;
        addr ^ ((addr >> 3) & mask)
    }

    /// The 2-bit layout type of a wgmma matrix descriptor (bits 62-63): 0 none, 1 128B,
    /// 2 64B, 3 32B (PTX ISA "Matrix Descriptor Format").
    pub fn descriptor_layout_type(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        }
    }

    /// The mode a descriptor's layout-type bits name.
    pub fn from_descriptor_layout_type(bits: u64) -> Swizzle {
        match bits & 3 {
            0 => Swizzle::None,
            1 => Swizzle::B128,
            2 => Swizzle::B64,
            _ => Swizzle::B32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Swizzle::None => "no swizzle",
            Swizzle::B32 => "32-byte swizzle",
            Swizzle::B64 => "64-byte swizzle",
            Swizzle::B128 => "128-byte swizzle",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 128-byte pattern as the CUDA programming guide draws it: in row r (128 bytes),
    /// 16-byte chunk c lands at chunk c ^ (r % 8).
    #[test]
    fn b128_chunk_permutation() {
        for row in 0..16u32 {
            for chunk in 0..8u32 {
                for byte in [0u32, 5, 15] {
                    let a = row * 128 + chunk * 16 + byte;
                    assert_eq!(Swizzle::B128.apply(a), row * 128 + ((chunk ^ (row % 8)) * 16) + byte);
                }
            }
        }
    }

    #[test]
    fn narrower_patterns() {
        // 64-byte rows: 4 chunks, XOR with (row / 2) % 4 (address bits 7-8).
        for row in 0..16u32 {
            for chunk in 0..4u32 {
                let a = row * 64 + chunk * 16;
                let swz = (a >> 7) & 3;
                assert_eq!(Swizzle::B64.apply(a), row * 64 + (chunk ^ swz) * 16);
            }
        }
        // 32-byte rows: 2 chunks, XOR with address bit 7.
        for a in (0..1024u32).step_by(16) {
            assert_eq!(Swizzle::B32.apply(a), a ^ (((a >> 7) & 1) << 4));
        }
        for a in 0..4096 {
            assert_eq!(Swizzle::None.apply(a), a);
        }
    }

    #[test]
    fn permutation_within_each_repeat() {
        for s in Swizzle::ALL {
            let n = s.repeat_bytes();
            let mut seen = vec![false; n as usize];
            for a in 0..n {
                let b = s.apply(a);
                assert!(b < n, "{s:?} moves {a} out of its repeat");
                assert!(!seen[b as usize], "{s:?} maps two bytes to {b}");
                seen[b as usize] = true;
                // Chunks stay whole: the low 4 bits never change.
                assert_eq!(b & 15, a & 15);
                // Involution.
                assert_eq!(s.apply(b), a);
            }
        }
    }

    #[test]
    fn descriptor_codes_round_trip() {
        for s in Swizzle::ALL {
            assert_eq!(Swizzle::from_descriptor_layout_type(s.descriptor_layout_type()), s);
        }
        assert_eq!(Swizzle::B128.descriptor_layout_type(), 1);
        assert_eq!(Swizzle::B32.descriptor_layout_type(), 3);
    }
}
