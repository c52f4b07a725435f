//! Typed shared-memory tiles and the wgmma matrix descriptors derived from them.
//!
//! A [`SmemTile`] is a `rows x cols` tile of `elem_bytes`-byte elements, `cols` being the
//! contiguous (inner) dimension, stored the way TMA writes it with a given [`Swizzle`]: the
//! columns are cut into *blocks* one swizzle row wide (`row_bytes / elem_bytes` elements, 64
//! bf16 for 128-byte swizzling); block `b` holds `rows` rows of `row_bytes` bytes at byte
//! `b * rows * row_bytes` of the tile; the swizzle permutes 16-byte chunks inside each group of
//! 8 rows. Each block is one TMA box `{block_cols, rows}`.
//!
//! A wgmma operand ([`MmaOperand`]) views a tile as K-major (rows = M or N, cols = K: K
//! contiguous) or MN-major (rows = K, cols = M or N). The descriptor's leading/stride byte
//! offsets and start address follow from the tile (PTX ISA "Shared Memory Matrix Layout",
//! canonical layouts), so they are never typed by hand.

pub use super::swizzle::Swizzle;

/// Which dimension of a multiplicand is contiguous in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Major {
    /// K contiguous (`imm-trans = 0`): A row-major M x K, or B stored N x K.
    K,
    /// M or N contiguous (`imm-trans = 1`): A stored K x M, or B row-major K x N.
    MN,
}

impl Major {
    /// How users write it: the `major` choice of the MMA ops and `#[tma(major = ..)]`.
    pub fn name(self) -> &'static str {
        match self {
            Major::K => "k",
            Major::MN => "mn",
        }
    }
    pub fn from_name(name: &str) -> Option<Major> {
        [Major::K, Major::MN].into_iter().find(|m| m.name() == name)
    }
}

/// A 2-D tile in shared memory, laid out as TMA writes it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmemTile {
    pub elem_bytes: u32,
    /// Extent of the strided dimension.
    pub rows: u32,
    /// Extent of the contiguous dimension (elements).
    pub cols: u32,
    pub swizzle: Swizzle,
}

impl SmemTile {
    pub fn new(elem_bytes: u32, rows: u32, cols: u32, swizzle: Swizzle) -> SmemTile {
        SmemTile { elem_bytes, rows, cols, swizzle }
    }

    /// Why this tile cannot be laid out, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if ![1, 2, 4].contains(&self.elem_bytes) {
            return Some(format!("tile elements of {} bytes: 1, 2 or 4 bytes are supported", self.elem_bytes));
        }
        if self.rows == 0 || !self.rows.is_multiple_of(8) {
            return Some(format!(
                "a tile of {} rows: rows come in groups of 8 (the swizzle and core-matrix height)",
                self.rows
            ));
        }
        let bc = self.block_cols();
        if self.cols == 0 || !self.cols.is_multiple_of(bc) {
            return Some(format!(
                "a tile of {} columns of {}-byte elements: with {} the columns come in blocks of {bc}",
                self.cols,
                self.elem_bytes,
                self.swizzle.name()
            ));
        }
        None
    }

    /// Bytes of one row of a block (the swizzle's row width).
    pub fn row_bytes(&self) -> u32 {
        self.swizzle.row_bytes()
    }
    /// Elements per block row.
    pub fn block_cols(&self) -> u32 {
        self.row_bytes() / self.elem_bytes.max(1)
    }
    pub fn blocks(&self) -> u32 {
        self.cols / self.block_cols().max(1)
    }
    pub fn block_bytes(&self) -> u32 {
        self.rows * self.row_bytes()
    }
    pub fn bytes(&self) -> u32 {
        self.blocks() * self.block_bytes()
    }
    /// The alignment the tile's start address needs: the swizzle's repeat (1024 bytes for
    /// 128-byte swizzling, so descriptors carry base offset 0), and at least the 128 bytes a
    /// TMA shared operand needs.
    pub fn align(&self) -> u32 {
        self.swizzle.repeat_bytes().max(128)
    }

    /// Byte offset of element (`row`, `col`) before swizzling.
    pub fn linear_offset(&self, row: u32, col: u32) -> u32 {
        let bc = self.block_cols();
        (col / bc) * self.block_bytes() + row * self.row_bytes() + (col % bc) * self.elem_bytes
    }

    /// Byte offset of element (`row`, `col`) from the tile start: where TMA puts it, and
    /// where `ld/st.shared`/`stmatrix` must address it.
    pub fn offset(&self, row: u32, col: u32) -> u32 {
        self.swizzle.apply(self.linear_offset(row, col))
    }

    /// The TMA box of one block, innermost first: `{block_cols, rows}`.
    pub fn tma_box(&self) -> [u32; 2] {
        [self.block_cols(), self.rows]
    }
}

/// A wgmma multiplicand viewed in a tile: K-major (rows = M/N, cols = K) or MN-major
/// (rows = K, cols = M/N).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmaOperand {
    pub tile: SmemTile,
    pub major: Major,
}

impl MmaOperand {
    pub fn new(tile: SmemTile, major: Major) -> MmaOperand {
        MmaOperand { tile, major }
    }
    /// Extent of M (or N).
    pub fn mn(&self) -> u32 {
        match self.major {
            Major::K => self.tile.rows,
            Major::MN => self.tile.cols,
        }
    }
    /// Extent of K.
    pub fn k(&self) -> u32 {
        match self.major {
            Major::K => self.tile.cols,
            Major::MN => self.tile.rows,
        }
    }
    /// Byte offset (unswizzled) of element (`mn`, `k`).
    pub fn linear_offset(&self, mn: u32, k: u32) -> u32 {
        match self.major {
            Major::K => self.tile.linear_offset(mn, k),
            Major::MN => self.tile.linear_offset(k, mn),
        }
    }
    /// Byte offset (swizzled) of element (`mn`, `k`): where it lies in shared memory.
    pub fn offset(&self, mn: u32, k: u32) -> u32 {
        match self.major {
            Major::K => self.tile.offset(mn, k),
            Major::MN => self.tile.offset(k, mn),
        }
    }

    /// (leading, stride) byte offsets of the descriptor, from the canonical layouts:
    /// K-major: stride = 8 rows; leading = next K block (no swizzle) or unused (encoded 1).
    /// MN-major: swizzled: leading = next MN block, stride = 8 K rows; no swizzle: leading
    /// = 8 K rows, stride = next MN block.
    pub fn byte_offsets(&self) -> (u32, u32) {
        let t = &self.tile;
        let eight_rows = 8 * t.row_bytes();
        match (self.major, t.swizzle) {
            (Major::K, Swizzle::None) => (t.block_bytes(), eight_rows),
            (Major::K, _) => (16, eight_rows),
            (Major::MN, Swizzle::None) => (eight_rows, t.block_bytes()),
            (Major::MN, _) => (t.block_bytes(), eight_rows),
        }
    }

    /// The descriptor of the sub-matrix `[mn0, mn0 + mn_extent) x [k0, k0 + k_extent)` of
    /// this operand in a tile starting at shared address `tile_addr` (aligned to
    /// [`SmemTile::align`]), or why that sub-matrix cannot be described.
    pub fn descriptor(
        &self,
        tile_addr: u32,
        mn0: u32,
        k0: u32,
        mn_extent: u32,
        k_extent: u32,
    ) -> Result<MatrixDescriptor, String> {
        let start = self.start_offset(mn0, k0, mn_extent, k_extent)?;
        if !tile_addr.is_multiple_of(self.tile.align()) {
            return Err(format!(
                "the tile at shared address {tile_addr:#x} is not {}-byte aligned ({})",
                self.tile.align(),
                self.tile.swizzle.name()
            ));
        }
        let (lbo, sbo) = self.byte_offsets();
        Ok(MatrixDescriptor { start_address: tile_addr + start, lbo, sbo, base_offset: 0, swizzle: self.tile.swizzle })
    }

    /// The byte offset from the tile start of the descriptor of a sub-matrix (what a k-step
    /// adds to the tile's base descriptor), after checking that the sub-matrix is one the
    /// hardware can address with this tile's strides.
    pub fn start_offset(&self, mn0: u32, k0: u32, mn_extent: u32, k_extent: u32) -> Result<u32, String> {
        if let Some(p) = self.tile.problem() {
            return Err(p);
        }
        let t = &self.tile;
        let bc = t.block_cols();
        if mn0 + mn_extent > self.mn() || k0 + k_extent > self.k() {
            return Err(format!(
                "the sub-matrix at (mn {mn0}, k {k0}) of {mn_extent} x {k_extent} leaves the {} x {} operand",
                self.mn(),
                self.k()
            ));
        }
        let k_bytes = k_extent * t.elem_bytes;
        match self.major {
            Major::K => {
                if !mn0.is_multiple_of(8) || !mn_extent.is_multiple_of(8) {
                    return Err(format!("K-major: M/N offset {mn0} and extent {mn_extent} must be multiples of 8"));
                }
                match t.swizzle {
                    Swizzle::None => {
                        if !k0.is_multiple_of(bc) || !k_extent.is_multiple_of(bc) {
                            return Err(format!(
                                "K-major without swizzle: K offset {k0} and extent {k_extent} must be multiples of {bc}"
                            ));
                        }
                    }
                    _ => {
                        if (k0 % bc) * t.elem_bytes + k_bytes > t.row_bytes() {
                            return Err(format!(
                                "K-major with {}: the K slice [{k0}, {}) crosses a {}-element block",
                                t.swizzle.name(),
                                k0 + k_extent,
                                bc
                            ));
                        }
                        if !(k0 * t.elem_bytes).is_multiple_of(16) {
                            return Err(format!("K offset {k0} is not a multiple of 16 bytes"));
                        }
                    }
                }
            }
            Major::MN => {
                if !mn0.is_multiple_of(bc) || !mn_extent.is_multiple_of(bc) {
                    return Err(format!(
                        "MN-major with {}: M/N offset {mn0} and extent {mn_extent} must be multiples of {bc}",
                        t.swizzle.name()
                    ));
                }
                if !k0.is_multiple_of(8) || !k_extent.is_multiple_of(8) {
                    return Err(format!("MN-major: K offset {k0} and extent {k_extent} must be multiples of 8"));
                }
            }
        }
        Ok(self.linear_offset(mn0, k0))
    }
}

/// The fields of a 64-bit wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor
/// Format"; CUTLASS `cute::GMMA::GmmaDescriptor`), as plain values: byte addresses and offsets,
/// not yet encoded (`arch::descriptor` holds the bit layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixDescriptor {
    pub start_address: u32,
    pub lbo: u32,
    pub sbo: u32,
    pub base_offset: u8,
    pub swizzle: Swizzle,
}

impl MatrixDescriptor {
    /// The hardware's view: the shared address of element (`mn`, `k`) of the sub-matrix this
    /// descriptor describes, for an operand of `major`-ness and `elem_bytes`-byte elements,
    /// from the PTX ISA's canonical layouts ("Shared Memory Matrix Layout"; in elements,
    /// `T = 16 / elem_bytes`), the swizzle applied to the absolute byte address. Written from
    /// the ISA's tables, not from [`SmemTile`], so a test can hold the two against each other
    /// (`descriptor_addresses_every_element`); the simulator's tensor core reads operands
    /// through it. Base offset 0 only (tiles aligned to the swizzle repeat).
    pub fn element_address(&self, major: Major, elem_bytes: u32, mn: u32, k: u32) -> u32 {
        let t = 16 / elem_bytes;
        let (lbo, sbo) = (self.lbo / elem_bytes, self.sbo / elem_bytes);
        let w = self.swizzle.row_bytes() / 16; // atom width in 16-byte units: 1, 2, 4, 8
        let e = match (major, self.swizzle) {
            // ((8,m),(T,2k)):((1T,SBO),(1,LBO))
            (Major::K, Swizzle::None) => (mn % 8) * t + (mn / 8) * sbo + (k % t) + (k / t) * lbo,
            // ((8,m),(T,2k)):((wT,SBO),(1,T)): K contiguous inside the atom row.
            (Major::K, _) => (mn % 8) * w * t + (mn / 8) * sbo + k,
            // ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
            (Major::MN, Swizzle::None) => (mn % t) + (mn / t) * sbo + (k % 8) * t + (k / 8) * lbo,
            // ((T,w,m),(8,k)):((1,T,LBO),(wT,SBO))
            (Major::MN, _) => (mn % (w * t)) + (mn / (w * t)) * lbo + (k % 8) * w * t + (k / 8) * sbo,
        };
        self.swizzle.apply(self.start_address + e * elem_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// CUTLASS's `GmmaDescriptor` as a C bitfield union: `uint16_t start_address_ : 14, : 2;
    /// uint16_t leading_byte_offset_ : 14, : 2; uint16_t stride_byte_offset_ : 14, : 2;
    /// uint8_t : 1, base_offset_ : 3, : 4; uint8_t : 6, layout_type_ : 2;` (little endian).
    fn cutlass_bitfield(start: u16, lbo: u16, sbo: u16, base: u8, layout: u8) -> u64 {
        let reg16 = [start & 0x3FFF, lbo & 0x3FFF, sbo & 0x3FFF];
        let byte6 = (base & 7) << 1;
        let byte7 = (layout & 3) << 6;
        (reg16[0] as u64)
            | (reg16[1] as u64) << 16
            | (reg16[2] as u64) << 32
            | (byte6 as u64) << 48
            | (byte7 as u64) << 56
    }

    fn bf16(rows: u32, cols: u32, s: Swizzle) -> SmemTile {
        SmemTile::new(2, rows, cols, s)
    }

    #[test]
    fn k_major_128b_bf16_matches_the_usual_constants() {
        // A 128 x 64 bf16 tile (one 128-byte row per M row), as every Hopper GEMM uses:
        // SBO = 1024 (8 rows of 128 bytes), LBO unused = 1, layout 1 (128B).
        let a = MmaOperand::new(bf16(128, 64, Swizzle::B128), Major::K);
        let d = a.descriptor(0x400, 0, 0, 64, 16).unwrap();
        assert_eq!(d.encode(), cutlass_bitfield(0x40, 1, 64, 0, 1));
        assert_eq!(d.encode(), (1u64 << 62) | (64u64 << 32) | (1u64 << 16) | 0x40);
        // k-step j starts 32 bytes further: +2 in the start field; the second warpgroup's
        // 64 rows start 64 * 128 bytes further.
        for j in 0..4 {
            let dj = a.descriptor(0x400, 64, 16 * j, 64, 16).unwrap();
            assert_eq!(dj.encode() - d.encode(), ((64 * 128 + 32 * j) >> 4) as u64);
        }
        // A slice crossing a 64-element block is refused; the next block is 128 rows on.
        let wide = MmaOperand::new(bf16(128, 128, Swizzle::B128), Major::K);
        assert!(wide.descriptor(0x400, 0, 56, 64, 16).unwrap_err().contains("crosses"));
        assert_eq!(wide.descriptor(0x400, 0, 64, 64, 16).unwrap().start_address, 0x400 + 128 * 128);
    }

    #[test]
    fn mn_major_128b_bf16() {
        // B row-major K x N (N contiguous), 64 K rows x 256 N: 4 blocks of 64 x 128 bytes.
        let b = MmaOperand::new(bf16(64, 256, Swizzle::B128), Major::MN);
        let d = b.descriptor(0x8000, 0, 0, 256, 16).unwrap();
        assert_eq!((d.lbo, d.sbo), (8192, 1024));
        assert_eq!(d.encode(), cutlass_bitfield(0x800, 512, 64, 0, 1));
        // k-step j: 16 K rows of 128 bytes further.
        assert_eq!(b.descriptor(0x8000, 0, 16, 256, 16).unwrap().start_address, 0x8000 + 2048);
        assert!(b.descriptor(0x8000, 8, 0, 64, 16).unwrap_err().contains("multiples of 64"));
    }

    #[test]
    fn unswizzled_and_narrow_layouts() {
        // K-major, no swizzle: 16-byte rows, LBO = next K block (rows * 16), SBO = 128.
        let a = MmaOperand::new(bf16(64, 32, Swizzle::None), Major::K);
        let d = a.descriptor(0, 0, 16, 64, 16).unwrap();
        assert_eq!((d.lbo, d.sbo, d.start_address), (64 * 16, 128, 2 * 64 * 16));
        assert_eq!(d.encode(), cutlass_bitfield(128, 64, 8, 0, 0));
        // The PTX ISA's worked example "MN-major, 64B swizzling, bf16": LBO 256 elements,
        // SBO 512 elements (encoded 32 and 64) for 2 x 2 repeats of the 32 x 8 atom.
        let b = MmaOperand::new(bf16(16, 64, Swizzle::B64), Major::MN);
        let d = b.descriptor(0, 0, 0, 64, 16).unwrap();
        assert_eq!((d.lbo >> 4, d.sbo >> 4), (64, 32));
        // ... the ISA's layout packs the K repeats before the MN ones; ours puts whole K
        // columns per MN block (TMA boxes), so the two strides trade places: both address the
        // same canonical shape, checked element by element in `descriptor_addresses_every_element`.
        let mn32 = MmaOperand::new(bf16(16, 32, Swizzle::B32), Major::MN);
        assert_eq!(mn32.byte_offsets(), (16 * 32, 256));
    }

    #[test]
    fn decode_inverts_encode() {
        let d =
            MatrixDescriptor { start_address: 0x3_2f0, lbo: 0x8000, sbo: 0x400, base_offset: 5, swizzle: Swizzle::B64 };
        assert_eq!(MatrixDescriptor::decode(d.encode()), d);
        assert_eq!(d.encode(), cutlass_bitfield(0x32f, 0x800, 0x40, 5, 2));
    }

    #[test]
    fn bad_tiles_are_explained() {
        assert!(bf16(12, 64, Swizzle::B128).problem().unwrap().contains("groups of 8"));
        assert!(bf16(64, 48, Swizzle::B128).problem().unwrap().contains("blocks of 64"));
        let a = MmaOperand::new(bf16(64, 64, Swizzle::B128), Major::K);
        assert!(a.descriptor(0x200, 0, 0, 64, 16).unwrap_err().contains("1024-byte aligned"));
        assert!(a.descriptor(0, 8, 0, 64, 16).unwrap_err().contains("leaves"));
    }

    fn swizzle_strategy() -> impl Strategy<Value = Swizzle> {
        prop_oneof![Just(Swizzle::None), Just(Swizzle::B32), Just(Swizzle::B64), Just(Swizzle::B128)]
    }

    proptest! {
        /// For every tile shape, swizzle, major-ness and instruction slice the builder accepts,
        /// the descriptor addresses each element exactly where the tile (TMA) stored it.
        #[test]
        fn descriptor_addresses_every_element(
            swizzle in swizzle_strategy(),
            mn_major in any::<bool>(),
            fp8 in any::<bool>(),
            row_groups in 1u32..6,
            col_blocks in 1u32..5,
            base_units in 0u32..8,
            n_pick in 0u32..32,
            pick in any::<u32>(),
        ) {
            let elem = if fp8 && !mn_major { 1 } else { 2 };
            let kk = 32 / elem; // the instruction's K
            let probe = SmemTile::new(elem, 8, 16, swizzle);
            let tile = if mn_major {
                SmemTile::new(elem, (row_groups * 8).max(kk), col_blocks * probe.block_cols(), swizzle)
            } else {
                let cols = (col_blocks * probe.block_cols()).max(kk).div_ceil(probe.block_cols()) * probe.block_cols();
                SmemTile::new(elem, row_groups * 8, cols, swizzle)
            };
            let op = MmaOperand::new(tile, if mn_major { Major::MN } else { Major::K });
            let base = base_units * tile.align();
            // An instruction slice: N extent, M/N offset and K step, drawn from the legal ones.
            let unit = if mn_major { tile.block_cols() } else { 8 };
            let n_units = op.mn() / unit;
            let ext_units = 1 + n_pick % n_units;
            let off_units = pick % (n_units - ext_units + 1);
            let (mn0, mn_ext) = (off_units * unit, ext_units * unit);
            let k_steps = op.k() / kk;
            let k0 = (pick / 7 % k_steps) * kk;
            let d = op.descriptor(base, mn0, k0, mn_ext, kk);
            // Swizzled K-major slices must stay within one block row; others are always fine.
            let legal = mn_major || swizzle == Swizzle::None || (k0 % tile.block_cols()) * elem + kk * elem <= tile.row_bytes();
            prop_assert_eq!(d.is_ok(), legal, "{:?}", d);
            if let Ok(d) = d {
                // The encoding keeps every field.
                prop_assert_eq!(MatrixDescriptor::decode(d.encode()), d);
                for mn in 0..mn_ext {
                    for k in 0..kk {
                        let want = base + op.offset(mn0 + mn, k0 + k);
                        prop_assert_eq!(d.element_address(op.major, elem, mn, k), want,
                            "{:?} {:?} element ({}, {})", tile, op.major, mn, k);
                    }
                }
            }
        }
    }
}
