//! Blackwell's 5th-generation tensor-core family (`tcgen05.*`, sm_100a): tensor memory
//! (TMEM) allocation, loads and stores between TMEM and registers, copies from shared memory,
//! the asynchronous MMA with its instruction and shared-memory descriptors, and the commit and
//! fences that order all of it.
//!
//! Semantics (PTX ISA 9.7.16, quoted where subtle):
//! - TMEM is "a two-dimensional structure of 512 columns and 128 rows per CTA, with each cell
//!   being 32-bits in size"; an address is `lane << 16 | column`.
//! - "`tcgen05.mma` has single thread semantics": one thread issues the whole MMA, which runs
//!   asynchronously; `tcgen05.commit` "makes the mbarrier object track the completion of all
//!   prior async-tcgen05 operations initiated by the executing thread".
//! - `tcgen05.ld`/`st` are warp-collective and asynchronous; `tcgen05.wait::ld`/`::st` waits
//!   for the executing thread's earlier ones.
//! - "All `tcgen05` instructions within a kernel must specify the same value for the
//!   `.cta_group` qualifier" (checked per kernel by `arch::tcgen05`).

use super::layout::{Major, MatrixDescriptor, Swizzle};
use super::value::{Reg, Value};

/// `.cta_group::1` (this CTA's tensor memory) or `::2` (the CTA pair: this CTA and its peer,
/// whose `%cluster_ctarank` differs in the last bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CtaGroup {
    One,
    Two,
}

impl CtaGroup {
    pub fn ptx(self) -> &'static str {
        match self {
            CtaGroup::One => ".cta_group::1",
            CtaGroup::Two => ".cta_group::2",
        }
    }
    /// CTAs whose tensor memory one instruction touches.
    pub fn ctas(self) -> u32 {
        match self {
            CtaGroup::One => 1,
            CtaGroup::Two => 2,
        }
    }
}

/// The element types of the multiplicands (`atype`/`btype` of the instruction descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UmmaElem {
    F16,
    BF16,
    /// TensorFloat-32: f32 storage, "the lower 13 bits [of the mantissa] are ignored".
    TF32,
    /// FP8 `e4m3` (`.kind::f8f6f4`).
    E4M3,
    /// FP8 `e5m2` (`.kind::f8f6f4`).
    E5M2,
}

impl UmmaElem {
    pub const ALL: [UmmaElem; 5] = [UmmaElem::F16, UmmaElem::BF16, UmmaElem::TF32, UmmaElem::E4M3, UmmaElem::E5M2];

    pub fn name(self) -> &'static str {
        match self {
            UmmaElem::F16 => "f16",
            UmmaElem::BF16 => "bf16",
            UmmaElem::TF32 => "tf32",
            UmmaElem::E4M3 => "e4m3",
            UmmaElem::E5M2 => "e5m2",
        }
    }
    /// Bytes of one element in shared memory.
    pub fn bytes(self) -> u32 {
        match self {
            UmmaElem::F16 | UmmaElem::BF16 => 2,
            UmmaElem::TF32 => 4,
            UmmaElem::E4M3 | UmmaElem::E5M2 => 1,
        }
    }
    /// The MMA kind these operands need.
    pub fn kind(self) -> MmaKind {
        match self {
            UmmaElem::F16 | UmmaElem::BF16 => MmaKind::F16,
            UmmaElem::TF32 => MmaKind::Tf32,
            UmmaElem::E4M3 | UmmaElem::E5M2 => MmaKind::F8f6f4,
        }
    }
}

/// `.kind::f16`, `.kind::tf32`, `.kind::f8f6f4` (the dense floating-point kinds without block
/// scaling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaKind {
    F16,
    Tf32,
    F8f6f4,
}

impl MmaKind {
    pub fn ptx(self) -> &'static str {
        match self {
            MmaKind::F16 => ".kind::f16",
            MmaKind::Tf32 => ".kind::tf32",
            MmaKind::F8f6f4 => ".kind::f8f6f4",
        }
    }
}

/// The type of the accumulator `D` in tensor memory (`dtype`: F16 = 0, F32 = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UmmaAcc {
    F16,
    F32,
}

/// The 32-bit instruction descriptor of `.kind::{tf32,f16,f8f6f4}` (PTX ISA Table 42),
/// built from types and shape: bits 4-5 dtype, 7-9 atype, 10-12 btype, 13/14 negate A/B,
/// 15/16 transpose (MN-major) A/B, 17-22 `N >> 3`, 24-28 `M >> 4`; dense, no `.ws` shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstrDesc {
    pub a: UmmaElem,
    pub b: UmmaElem,
    pub d: UmmaAcc,
    /// M of the whole instruction (for `.cta_group::2`: both CTAs' rows).
    pub m: u32,
    pub n: u32,
    pub a_major: Major,
    pub b_major: Major,
    pub negate_a: bool,
    pub negate_b: bool,
}

impl InstrDesc {
    /// `M x N` with K-major A and B and an f32 accumulator.
    pub fn new(a: UmmaElem, b: UmmaElem, m: u32, n: u32) -> InstrDesc {
        InstrDesc {
            a,
            b,
            d: UmmaAcc::F32,
            m,
            n,
            a_major: Major::K,
            b_major: Major::K,
            negate_a: false,
            negate_b: false,
        }
    }
    pub fn with_majors(self, a_major: Major, b_major: Major) -> InstrDesc {
        InstrDesc { a_major, b_major, ..self }
    }
    pub fn with_acc(self, d: UmmaAcc) -> InstrDesc {
        InstrDesc { d, ..self }
    }
    pub fn kind(&self) -> MmaKind {
        self.a.kind()
    }
    /// K of one instruction.
    pub fn k(&self) -> u32 {
        self.a.k()
    }
}

/// The fields of the 64-bit shared-memory descriptor of `tcgen05.mma`/`tcgen05.cp` (PTX ISA
/// Table 40), as plain values. It describes the same canonical layouts as wgmma's (so
/// [`super::MmaOperand`] derives its strides), but is encoded differently (`arch::descriptor`
/// holds both bit layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UmmaDescriptor {
    pub start_address: u32,
    /// Leading-dimension byte offset (relative mode).
    pub lbo: u32,
    pub sbo: u32,
    /// "`base offset = (pattern start addr >> 0x7) & 0x7`" when the swizzle pattern does not
    /// start on its boundary; 0 for the 1024-byte aligned tiles Phaser lays out.
    pub base_offset: u8,
    pub swizzle: Swizzle,
}

impl UmmaDescriptor {
    /// The same matrix as the wgmma descriptor describes it: both name the PTX ISA's canonical
    /// layouts (9.7.16.3.3 is 9.7.15.5.1.2's table), only the bit encodings differ.
    pub fn layout(&self) -> MatrixDescriptor {
        MatrixDescriptor {
            start_address: self.start_address,
            lbo: self.lbo,
            sbo: self.sbo,
            base_offset: self.base_offset,
            swizzle: self.swizzle,
        }
    }

    /// The shared address of element (`mn`, `k`) of the matrix this descriptor describes, as
    /// the hardware computes it from the descriptor alone: the one definition,
    /// [`MatrixDescriptor::element_address`] (canonical layout, then the swizzle applied to the
    /// absolute byte address).
    pub fn element_address(&self, major: Major, elem_bytes: u32, mn: u32, k: u32) -> u32 {
        self.layout().element_address(major, elem_bytes, mn, k)
    }
}

/// The data-movement shapes of `tcgen05.ld`/`st` (PTX ISA 9.7.16.2.3): lanes x bits per lane
/// per repetition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LdStShape {
    S32x32b,
    S16x64b,
    S16x128b,
    S16x256b,
    /// Two `16x32b` accesses, the second `split` columns after the first (`immHalfSplitoff`).
    S16x32bx2 {
        split: u32,
    },
}

impl LdStShape {
    pub fn ptx(self) -> &'static str {
        match self {
            LdStShape::S32x32b => ".32x32b",
            LdStShape::S16x64b => ".16x64b",
            LdStShape::S16x128b => ".16x128b",
            LdStShape::S16x256b => ".16x256b",
            LdStShape::S16x32bx2 { .. } => ".16x32bx2",
        }
    }
    /// Registers per thread for `.x1` (Table 47): 1, 1, 2, 4, 1.
    pub fn regs_per_num(self) -> u32 {
        match self {
            LdStShape::S16x128b => 2,
            LdStShape::S16x256b => 4,
            _ => 1,
        }
    }
    /// Tensor-memory lanes one warp access covers.
    pub fn lanes(self) -> u32 {
        match self {
            LdStShape::S32x32b => 32,
            _ => 16,
        }
    }
    /// Largest `.num` (Table 47: `.x128` for the 32-bit shapes, `.x64` for `16x128b`,
    /// `.x32` for `16x256b`).
    pub fn max_num(self) -> u32 {
        match self {
            LdStShape::S16x128b => 64,
            LdStShape::S16x256b => 32,
            _ => 128,
        }
    }
    /// (TMEM lane offset from the base, TMEM column offset) of register `i` of lane `t` of
    /// the warp, from the shape's fragment layout (PTX ISA Figures 183-187, as CUTLASS's
    /// `SM100_TMEM_LOAD_*` copy traits spell them):
    /// - `32x32b`: lane `t`, column `i`;
    /// - `16x64b`: lane `8 (t % 2) + t / 4`, column `(t / 2) % 2 + 2 i`;
    /// - `16x128b`: lane `t / 4 + 8 (i % 2)`, column `t % 4 + 4 (i / 2)`;
    /// - `16x256b`: lane `t / 4 + 8 ((i / 2) % 2)`, column `2 (t % 4) + i % 2 + 8 (i / 4)`;
    /// - `16x32bx2`: lane `t % 16`, column `i + (t / 16) * split`.
    pub fn cell(self, t: u32, i: u32) -> (u32, u32) {
        match self {
            LdStShape::S32x32b => (t, i),
            LdStShape::S16x64b => (8 * (t % 2) + t / 4, (t / 2) % 2 + 2 * i),
            LdStShape::S16x128b => (t / 4 + 8 * (i % 2), t % 4 + 4 * (i / 2)),
            LdStShape::S16x256b => (t / 4 + 8 * ((i / 2) % 2), 2 * (t % 4) + i % 2 + 8 * (i / 4)),
            LdStShape::S16x32bx2 { split } => (t % 16, i + (t / 16) * split),
        }
    }
}

/// The shapes of `tcgen05.cp` (PTX ISA 9.7.16.9.2), with the warp multicast some need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpShape {
    S128x256b,
    S4x256b,
    S128x128b,
    /// `.64x128b.warpx2::02_13`
    S64x128bWarpx2_02_13,
    /// `.64x128b.warpx2::01_23`
    S64x128bWarpx2_01_23,
    /// `.32x128b.warpx4`
    S32x128bWarpx4,
}

impl CpShape {
    pub fn ptx(self) -> &'static str {
        match self {
            CpShape::S128x256b => ".128x256b",
            CpShape::S4x256b => ".4x256b",
            CpShape::S128x128b => ".128x128b",
            CpShape::S64x128bWarpx2_02_13 => ".64x128b.warpx2::02_13",
            CpShape::S64x128bWarpx2_01_23 => ".64x128b.warpx2::01_23",
            CpShape::S32x128bWarpx4 => ".32x128b.warpx4",
        }
    }
    /// (rows, bytes per row) of the source matrix.
    pub fn rows_bytes(self) -> (u32, u32) {
        match self {
            CpShape::S128x256b => (128, 32),
            CpShape::S4x256b => (4, 32),
            CpShape::S128x128b => (128, 16),
            CpShape::S64x128bWarpx2_02_13 | CpShape::S64x128bWarpx2_01_23 => (64, 16),
            CpShape::S32x128bWarpx4 => (32, 16),
        }
    }
}

/// Where `A` of a `tcgen05.mma` comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MmaA {
    /// A 64-bit shared-memory descriptor (`a-desc`).
    Desc(Value),
    /// A tensor-memory address (`[a-tmem]`).
    Tmem(Value),
}

/// `tcgen05.mma.cta_group.kind [d-tmem], a, b-desc, idesc, enable-input-d`:
/// `D = A * B + (enable-input-d ? D : 0)`, issued by one thread, completing asynchronously.
#[derive(Clone, Debug, PartialEq)]
pub struct Mma {
    pub cta_group: CtaGroup,
    pub kind: MmaKind,
    /// Tensor-memory address of `D` (32-bit).
    pub d_tmem: Value,
    pub a: MmaA,
    pub b_desc: Value,
    /// The 32-bit register holding the instruction descriptor (the builder moves the
    /// encoding of an [`InstrDesc`] into it).
    pub idesc: Value,
    /// The descriptor the builder encoded into `idesc`, when it made it: what the target
    /// check validates against Table 39 (the hardware, and the simulator, read the register).
    pub desc: Option<InstrDesc>,
    /// A predicate: false computes `D = A * B`.
    pub enable_input_d: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Tcgen05Op {
    /// `tcgen05.alloc.cta_group.sync.aligned.shared::cta.b32 [dst], ncols`: the warp allocates
    /// `ncols` columns (a power of two in 32..=512) and the address is written to `dst`.
    Alloc {
        cta_group: CtaGroup,
        dst: Value,
        ncols: Value,
    },
    /// `tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, ncols`.
    Dealloc {
        cta_group: CtaGroup,
        taddr: Value,
        ncols: Value,
    },
    /// `tcgen05.relinquish_alloc_permit.cta_group.sync.aligned`: no more allocations by this CTA.
    RelinquishAllocPermit {
        cta_group: CtaGroup,
    },
    /// `tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32 {dst}, [taddr]{, split}`.
    Ld {
        shape: LdStShape,
        num: u32,
        pack16: bool,
        dst: Vec<Reg>,
        taddr: Value,
    },
    /// `tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32 [taddr]{, split}, {src}`.
    St {
        shape: LdStShape,
        num: u32,
        unpack16: bool,
        taddr: Value,
        src: Vec<Value>,
    },
    /// `tcgen05.wait::ld.sync.aligned` (`st`: `wait::st`).
    Wait {
        st: bool,
    },
    /// `tcgen05.cp.cta_group.shape [taddr], s-desc`.
    Cp {
        cta_group: CtaGroup,
        shape: CpShape,
        taddr: Value,
        s_desc: Value,
    },
    /// `tcgen05.shift.cta_group.down [taddr]`: rows 0..30 of the warp's 32 lanes move down one.
    Shift {
        cta_group: CtaGroup,
        taddr: Value,
    },
    Mma(Box<Mma>),
    /// `tcgen05.commit.cta_group.mbarrier::arrive::one.shared::cluster{.multicast::cluster}.b64
    /// [bar]{, ctaMask}`: one arrival on `bar` (in every CTA of the 16-bit `ctaMask`) once every
    /// prior async tcgen05 op of this thread finished.
    Commit {
        cta_group: CtaGroup,
        bar: Value,
        multicast: Option<Value>,
    },
    /// `tcgen05.fence::before_thread_sync` / `::after_thread_sync`.
    Fence {
        after: bool,
    },
}

impl Tcgen05Op {
    /// The `.cta_group` the op names, if it names one.
    pub fn cta_group(&self) -> Option<CtaGroup> {
        match self {
            Tcgen05Op::Alloc { cta_group, .. }
            | Tcgen05Op::Dealloc { cta_group, .. }
            | Tcgen05Op::RelinquishAllocPermit { cta_group }
            | Tcgen05Op::Cp { cta_group, .. }
            | Tcgen05Op::Shift { cta_group, .. }
            | Tcgen05Op::Commit { cta_group, .. } => Some(*cta_group),
            Tcgen05Op::Mma(m) => Some(m.cta_group),
            Tcgen05Op::Ld { .. } | Tcgen05Op::St { .. } | Tcgen05Op::Wait { .. } | Tcgen05Op::Fence { .. } => None,
        }
    }

    /// The PTX mnemonic, for messages.
    pub fn mnemonic(&self) -> String {
        match self {
            Tcgen05Op::Alloc { .. } => "tcgen05.alloc".into(),
            Tcgen05Op::Dealloc { .. } => "tcgen05.dealloc".into(),
            Tcgen05Op::RelinquishAllocPermit { .. } => "tcgen05.relinquish_alloc_permit".into(),
            Tcgen05Op::Ld { shape, num, .. } => format!("tcgen05.ld{}.x{num}", shape.ptx()),
            Tcgen05Op::St { shape, num, .. } => format!("tcgen05.st{}.x{num}", shape.ptx()),
            Tcgen05Op::Wait { st } => format!("tcgen05.wait::{}", if *st { "st" } else { "ld" }),
            Tcgen05Op::Cp { shape, .. } => format!("tcgen05.cp{}", shape.ptx()),
            Tcgen05Op::Shift { .. } => "tcgen05.shift".into(),
            Tcgen05Op::Mma(m) => format!("tcgen05.mma{}", m.kind.ptx()),
            Tcgen05Op::Commit { multicast: Some(_), .. } => "tcgen05.commit.multicast::cluster".into(),
            Tcgen05Op::Commit { .. } => "tcgen05.commit".into(),
            Tcgen05Op::Fence { after } => {
                format!("tcgen05.fence::{}_thread_sync", if *after { "after" } else { "before" })
            }
        }
    }

    /// Whether the op runs asynchronously (PTX ISA 9.7.16.6.1: `.mma`, `.cp`, `.shift`, `.ld`,
    /// `.st` are; alloc, dealloc, relinquish, fences, waits and commit are synchronous).
    pub fn is_async(&self) -> bool {
        matches!(
            self,
            Tcgen05Op::Mma(_)
                | Tcgen05Op::Cp { .. }
                | Tcgen05Op::Shift { .. }
                | Tcgen05Op::Ld { .. }
                | Tcgen05Op::St { .. }
        )
    }
}

/// A tensor-memory address: `lane << 16 | column`.
pub fn tmem_addr(lane: u32, column: u32) -> u32 {
    (lane << 16) | (column & 0xFFFF)
}

/// The (lane, column) of a tensor-memory address.
pub fn tmem_lane_col(addr: u32) -> (u32, u32) {
    (addr >> 16, addr & 0xFFFF)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn swizzle() -> impl Strategy<Value = Swizzle> {
        prop_oneof![Just(Swizzle::None), Just(Swizzle::B32), Just(Swizzle::B64), Just(Swizzle::B128)]
    }

    proptest! {
        /// The hardware's view of an sm100 descriptor (its canonical-layout addressing, from
        /// the descriptor alone) finds every element of every instruction slice the builder
        /// accepts exactly where the typed tile (TMA) stored it: K- and MN-major, every
        /// swizzle, 1-, 2- and 4-byte elements.
        #[test]
        fn sm100_descriptors_address_every_element_where_the_tile_has_it(
            sw in swizzle(),
            mn_major in any::<bool>(),
            bytes_pick in 0u32..3,
            row_groups in 1u32..5,
            col_blocks in 1u32..4,
            base_units in 0u32..4,
            pick in any::<u32>(),
        ) {
            use crate::ir::{MmaOperand, SmemTile};
            let elem = [1u32, 2, 4][bytes_pick as usize];
            let kk = 32 / elem; // the instruction's K
            let probe = SmemTile::new(elem, 8, 16, sw);
            let tile = if mn_major {
                SmemTile::new(elem, (row_groups * 8).max(kk).next_multiple_of(8), col_blocks * probe.block_cols(), sw)
            } else {
                let cols = (col_blocks * probe.block_cols()).max(kk).div_ceil(probe.block_cols()) * probe.block_cols();
                SmemTile::new(elem, row_groups * 8, cols, sw)
            };
            let major = if mn_major { Major::MN } else { Major::K };
            let op = MmaOperand::new(tile, major);
            let unit = if mn_major { tile.block_cols() } else { 8 };
            let n_units = op.mn() / unit;
            let ext = 1 + pick % n_units;
            let off = (pick / 3) % (n_units - ext + 1);
            let (mn0, mn_ext) = (off * unit, ext * unit);
            let k0 = (pick / 11 % (op.k() / kk)) * kk;
            if let Ok(start) = op.start_offset(mn0, k0, mn_ext, kk) {
                let base = base_units * tile.align();
                let (lbo, sbo) = op.byte_offsets();
                let d = UmmaDescriptor { start_address: base + start, lbo, sbo, base_offset: 0, swizzle: sw };
                let d = UmmaDescriptor::decode(d.encode()).unwrap();
                for mn in 0..mn_ext {
                    for k in 0..kk {
                        prop_assert_eq!(
                            d.element_address(major, elem, mn, k),
                            base + op.offset(mn0 + mn, k0 + k),
                            "{:?} {:?} element ({}, {})", tile, major, mn, k
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ld_st_fragments_cover_each_cell_once() {
        for (shape, num) in [
            (LdStShape::S32x32b, 4),
            (LdStShape::S16x64b, 2),
            (LdStShape::S16x128b, 2),
            (LdStShape::S16x256b, 4),
            (LdStShape::S16x32bx2 { split: 4 }, 4),
        ] {
            let regs = shape.regs_per_num() * num;
            let mut seen = std::collections::HashSet::new();
            for t in 0..32 {
                for i in 0..regs {
                    let (lane, col) = shape.cell(t, i);
                    assert!(lane < shape.lanes(), "{shape:?}: lane {lane}");
                    assert!(seen.insert((lane, col)), "{shape:?}: ({lane}, {col}) twice");
                }
            }
            assert_eq!(seen.len() as u32, 32 * regs, "{shape:?}");
        }
        // The mma.sync accumulator layout of 16x256b: thread 5 holds row 1, columns 2-3, and
        // rows 9 for its third and fourth registers.
        assert_eq!(LdStShape::S16x256b.cell(5, 0), (1, 2));
        assert_eq!(LdStShape::S16x256b.cell(5, 3), (9, 3));
    }
}
