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
    pub const fn wgmma_layout_type(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        }
    }

    /// The mode a wgmma descriptor's layout-type bits name.
    pub fn from_wgmma_layout_type(bits: u64) -> Swizzle {
        Self::ALL.into_iter().find(|s| s.wgmma_layout_type() == bits & 3).expect("all four 2-bit codes name a mode")
    }

    /// The 3-bit layout type of an sm100 (`tcgen05`) shared-memory descriptor (bits 61-63):
    /// 0 none, 2 128B, 4 64B, 6 32B (PTX ISA Table 40; 1, 128B with 32-byte atoms, has no
    /// `Swizzle` of its own).
    pub const fn umma_layout_type(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B128 => 2,
            Swizzle::B64 => 4,
            Swizzle::B32 => 6,
        }
    }

    /// The mode an sm100 descriptor's layout-type bits name, if one does.
    pub fn from_umma_layout_type(bits: u64) -> Option<Swizzle> {
        Self::ALL.into_iter().find(|s| s.umma_layout_type() == bits)
    }

    /// The `CUtensorMapSwizzle` value `cuTensorMapEncodeTiled` takes for this mode
    /// (`CU_TENSOR_MAP_SWIZZLE_NONE` = 0, `_32B` = 1, `_64B` = 2, `_128B` = 3).
    pub const fn tensor_map_code(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }

    /// How kernels spell the mode (`#[tma(swizzle = "128B")]`, `T.alloc_shared`'s layout,
    /// the tcgen05 descriptor's `swizzle`): "none", "32B", "64B", "128B".
    pub const fn as_str(self) -> &'static str {
        match self {
            Swizzle::None => "none",
            Swizzle::B32 => "32B",
            Swizzle::B64 => "64B",
            Swizzle::B128 => "128B",
        }
    }

    /// [`Swizzle::as_str`] of each of [`Swizzle::ALL`], in that order.
    pub const NAMES: [&'static str; 4] =
        [Swizzle::ALL[0].as_str(), Swizzle::ALL[1].as_str(), Swizzle::ALL[2].as_str(), Swizzle::ALL[3].as_str()];

    /// The mode spelled `name` ([`Swizzle::as_str`]), if any.
    pub fn parse(name: &str) -> Option<Swizzle> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The mode in words, for messages ("128-byte swizzle").
    pub fn name(self) -> &'static str {
        match self {
            Swizzle::None => "no swizzle",
            Swizzle::B32 => "32-byte swizzle",
            Swizzle::B64 => "64-byte swizzle",
            Swizzle::B128 => "128-byte swizzle",
        }
    }
}

/// Why a string names no swizzle mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSwizzle(pub String);

impl std::fmt::Display for UnknownSwizzle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = Swizzle::NAMES.iter().map(|n| format!("\"{n}\"")).collect();
        write!(f, "unknown swizzle \"{}\"; expected one of {}", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownSwizzle {}

impl std::str::FromStr for Swizzle {
    type Err = UnknownSwizzle;
    fn from_str(s: &str) -> Result<Swizzle, UnknownSwizzle> {
        Swizzle::parse(s).ok_or_else(|| UnknownSwizzle(s.to_string()))
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
    fn codes_round_trip() {
        for s in Swizzle::ALL {
            assert_eq!(Swizzle::from_wgmma_layout_type(s.wgmma_layout_type()), s);
            assert_eq!(Swizzle::from_umma_layout_type(s.umma_layout_type()), Some(s));
            assert_eq!(Swizzle::parse(s.as_str()), Some(s));
            assert_eq!(s.as_str().parse::<Swizzle>(), Ok(s));
        }
        assert_eq!(Swizzle::B128.wgmma_layout_type(), 1);
        assert_eq!(Swizzle::B32.wgmma_layout_type(), 3);
        assert_eq!(Swizzle::ALL.map(Swizzle::umma_layout_type), [0, 6, 4, 2]);
        assert_eq!(Swizzle::ALL.map(Swizzle::tensor_map_code), [0, 1, 2, 3]);
        assert_eq!(Swizzle::NAMES, ["none", "32B", "64B", "128B"]);
        for unmodelled in [1, 3, 5, 7] {
            assert_eq!(Swizzle::from_umma_layout_type(unmodelled), None);
        }
        let e = "128".parse::<Swizzle>().unwrap_err();
        assert_eq!(e.to_string(), "unknown swizzle \"128\"; expected one of \"none\", \"32B\", \"64B\", \"128B\"");
    }
}
