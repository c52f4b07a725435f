//! Warpgroup MMA (`wgmma`, sm_90a): matrix descriptors built from typed shared tiles, and the
//! `mma_async` / fence / commit / wait ops.
//!
//! ```
//! use phaser_codegen::builder::{Accumulator, KernelBuilder};
//! use phaser_codegen::ir::{Major, MmaElem, MmaOperand, SmemTile, Swizzle, Type, Value};
//! use phaser_codegen::Target;
//!
//! let mut k = KernelBuilder::new("mma", Target::Sm90a);
//! k.require_block(128, 1, 1);
//! // A: 64 x 64 bf16 (K-major), B: 128 x 64 bf16 (K-major), both 128-byte swizzled.
//! let a_tile = SmemTile::new(2, 64, 64, Swizzle::B128);
//! let b_tile = SmemTile::new(2, 128, 64, Swizzle::B128);
//! let smem = k.alloc_shared_aligned("ab", Type::BF16, (a_tile.bytes() + b_tile.bytes()) / 2, 1024);
//! let base = k.shared_base_addr(smem);
//! let b_addr = k.add(base, Value::u32(a_tile.bytes()));
//! let a = k.matrix_desc(MmaElem::BF16, MmaOperand::new(a_tile, Major::K), base);
//! let b = k.matrix_desc(MmaElem::BF16, MmaOperand::new(b_tile, Major::K), b_addr);
//! let acc = Accumulator::new(&mut k, 128);
//! k.wgmma_fence();
//! for step in 0..4 {
//!     // The first k-step overwrites the accumulator (scale-d = false), the rest accumulate.
//!     k.wgmma(&acc, &a, 0, &b, 0, 16 * step, Value::pred(step > 0));
//! }
//! k.wgmma_commit_group();
//! k.wgmma_wait_group(0);
//! let ptx = phaser_codegen::emit_kernel(&k.finish().unwrap()).unwrap();
//! let mma = "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16";
//! assert_eq!(phaser_codegen::ptx_text::count(&ptx, mma), 4);
//! ```

use super::fragment::Accumulator;
use super::kernel_builder::KernelBuilder;
use super::registers::RegisterArray;
use super::tile::{SharedTile, TileLayout};
use crate::arch::wgmma::{self, Arg};
use crate::ir::*;

/// The immediates of `wgmma.mma_async` a DSL call chooses: how each multiplicand lies in its
/// tile (`imm-trans-a/-b`) and whether it is negated (`imm-scale-a/-b = -1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaOptions {
    /// K-major: the tile is `[M, K]` (K contiguous); MN-major: `[K, M]`.
    pub a_major: Major,
    /// K-major: the tile is `[N, K]`; MN-major: `[K, N]` (B row-major, the "NN" GEMM).
    pub b_major: Major,
    pub negate_a: bool,
    pub negate_b: bool,
}

impl Default for MmaOptions {
    fn default() -> MmaOptions {
        MmaOptions { a_major: Major::K, b_major: Major::K, negate_a: false, negate_b: false }
    }
}

/// Which multiplicands a DSL `negate` option negates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Negate {
    None,
    A,
    B,
    Both,
}

impl Negate {
    /// (negate A, negate B).
    pub fn flags(self) -> (bool, bool) {
        match self {
            Negate::None => (false, false),
            Negate::A => (true, false),
            Negate::B => (false, true),
            Negate::Both => (true, true),
        }
    }
}

/// A wgmma multiplicand in shared memory: the typed operand view of its tile and the 64-bit
/// descriptor (a `u64` register) of the tile's element (0, 0). Sub-matrices (k-steps,
/// warpgroup slices) add a compile-time offset to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatrixDesc {
    pub elem: MmaElem,
    pub operand: MmaOperand,
    pub desc: Value,
}

impl MatrixDesc {
    /// The descriptor of the `mn_extent x k_extent` sub-matrix at (`mn0`, `k0`): the base
    /// descriptor plus the sub-matrix's start offset (in 16-byte units; the start-address
    /// field cannot carry over for addresses inside the 228 KiB of shared memory).
    #[track_caller]
    pub fn slice(&self, k: &mut KernelBuilder, mn0: u32, k0: u32, mn_extent: u32, k_extent: u32) -> Value {
        match self.operand.start_offset(mn0, k0, mn_extent, k_extent) {
            Ok(off) => k.add(self.desc, Value::u64((off >> 4) as u64)),
            Err(msg) => {
                k.error(format!("wgmma operand: {msg}"));
                self.desc
            }
        }
    }
}

impl KernelBuilder {
    /// The descriptor of `operand`'s tile starting at the 32-bit shared address `tile_addr`,
    /// which must be aligned to [`SmemTile::align`] (checked here when it is a constant; the
    /// allocation's alignment guarantees it otherwise). Emits `and`, `shr`, `cvt` and `or`
    /// with the compile-time leading/stride/swizzle bits.
    #[track_caller]
    pub fn matrix_desc(&mut self, elem: MmaElem, operand: MmaOperand, tile_addr: Value) -> MatrixDesc {
        let tile = operand.tile;
        let (lbo, sbo) = operand.byte_offsets();
        let constant =
            MatrixDescriptor { start_address: 0, lbo, sbo, base_offset: 0, swizzle: tile.swizzle }.constant_bits();
        let transposed_fp8 = wgmma::major_problem(elem, operand.major);
        let desc =
            self.shared_descriptor("wgmma", operand, (elem.bytes(), elem.ptx()), transposed_fp8, tile_addr, constant);
        MatrixDesc { elem, operand, desc }
    }

    /// What wgmma's and tcgen05's shared-memory descriptors share: the operand tile's checks
    /// (its own problems, the element size, `extra`, a 32-bit tile address aligned to
    /// [`SmemTile::align`] when it is a constant; `what` names the instruction) and the
    /// register: the address's bits 4..18 as the start-address field (both layouts put it at
    /// bits 0..14), OR'ed with the layout's compile-time bits `constant`.
    #[track_caller]
    pub(super) fn shared_descriptor(
        &mut self,
        what: &str,
        operand: MmaOperand,
        (elem_bytes, elem_name): (u32, &str),
        extra: Option<&str>,
        tile_addr: Value,
        constant: u64,
    ) -> Value {
        let tile = operand.tile;
        if let Some(p) = tile.problem() {
            self.error(format!("{what} operand tile: {p}"));
        }
        if tile.elem_bytes != elem_bytes {
            self.error(format!(
                "a tile of {}-byte elements cannot hold {elem_name} ({elem_bytes} bytes)",
                tile.elem_bytes
            ));
        }
        if let Some(problem) = extra {
            self.error(problem);
        }
        if !matches!(tile_addr.ty(), Type::U32 | Type::B32) {
            self.error(format!("a tile address must be a 32-bit shared address, found {}", tile_addr.ty()));
        }
        if let Some(a) = tile_addr.as_imm_i128() {
            if a % tile.align() as i128 != 0 {
                self.error(format!(
                    "tile address {a:#x} is not {}-byte aligned ({})",
                    tile.align(),
                    tile.swizzle.name()
                ));
            }
        }
        self.at_caller(|k| {
            let masked = k.and(tile_addr, Value::u32(0x3FFFF));
            let field = k.shr(masked, Value::u32(4));
            let wide = k.cvt(field, Type::U64);
            k.or(wide, Value::u64(constant))
        })
    }

    /// `wgmma.fence.sync.aligned`: order this warpgroup's register accesses (accumulator, A
    /// fragment) before the following `mma_async`s. Needed before the first wgmma and after
    /// any other instruction touched the accumulator.
    #[track_caller]
    pub fn wgmma_fence(&mut self) {
        self.push(WgmmaOp::Fence);
    }

    /// `wgmma.commit_group.sync.aligned`: close the pending `mma_async`s into a group.
    #[track_caller]
    pub fn wgmma_commit_group(&mut self) {
        self.push(WgmmaOp::CommitGroup);
    }

    /// `wgmma.wait_group.sync.aligned n`: wait until at most `n` groups are in flight. Only
    /// then may the accumulators of the retired groups be read and their operands' shared
    /// memory be released.
    #[track_caller]
    pub fn wgmma_wait_group(&mut self, n: u32) {
        self.push(WgmmaOp::WaitGroup { n });
    }

    /// `acc (64 x N) = A[a_m0.., k0..k0+K] * B[b_n0.., k0..k0+K] (+ acc if scale_d)`, both
    /// operands from shared memory. N is the accumulator's; K the instruction's (16, or 32 for
    /// FP8); the transposes follow from each operand's major-ness.
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn wgmma(
        &mut self,
        acc: &Accumulator,
        a: &MatrixDesc,
        a_m0: u32,
        b: &MatrixDesc,
        b_n0: u32,
        k0: u32,
        scale_d: Value,
    ) {
        let kk = a.elem.k();
        let (a_desc, b_desc) =
            self.at_caller(|k| (a.slice(k, a_m0, k0, wgmma::M, kk), b.slice(k, b_n0, k0, acc.n, kk)));
        self.push_mma(MmaAsync {
            n: acc.n,
            a_ty: a.elem,
            b_ty: b.elem,
            d: acc.regs.clone(),
            a: WgmmaA::Desc(a_desc),
            b_desc,
            scale_d,
            negate_a: false,
            negate_b: false,
            trans_a: a.operand.major == Major::MN,
            trans_b: b.operand.major == Major::MN,
        });
    }

    /// Like [`KernelBuilder::wgmma`] with A from registers: four `b32` per thread in the
    /// PTX ISA's A-fragment layout (two 16-bit or four FP8 elements each).
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn wgmma_reg_a(
        &mut self,
        acc: &Accumulator,
        a: [Value; 4],
        a_ty: MmaElem,
        b: &MatrixDesc,
        b_n0: u32,
        k0: u32,
        scale_d: Value,
    ) {
        let b_desc = self.at_caller(|k| b.slice(k, b_n0, k0, acc.n, a_ty.k()));
        self.push_mma(MmaAsync {
            n: acc.n,
            a_ty,
            b_ty: b.elem,
            d: acc.regs.clone(),
            a: WgmmaA::Regs(a),
            b_desc,
            scale_d,
            negate_a: false,
            negate_b: false,
            trans_a: false,
            trans_b: b.operand.major == Major::MN,
        });
    }

    /// `T.ptx.wgmma.mma_async(acc, a, b, k, scale_d)`: k-step `k_step` (16 elements of K for
    /// bf16/f16) of `acc (64 x N) = A * B (+ acc if scale_d)` with both multiplicands read from
    /// typed swizzled tiles through descriptors built here from the tiles' layouts. N is the
    /// accumulator's (`2 * len`); `a` holds the warpgroup's 64 rows, `b` exactly N (or their
    /// transposes, as `opts` says). A K loop over a `[.., 64]` stage is `k_step` 0..4.
    #[track_caller]
    pub fn wgmma_tiles(
        &mut self,
        acc: RegisterArray,
        a: SharedTile,
        b: SharedTile,
        k_step: u32,
        scale_d: Value,
        opts: MmaOptions,
    ) {
        self.at_caller(|k| {
            let acc = k.mma_accumulator(acc);
            let a_elem = k.mma_elem(Arg::A, a.elem());
            let b_elem = k.mma_elem(Arg::B, b.elem());
            if let Some(p) = a_elem.zip(b_elem).and_then(|(x, y)| wgmma::types_problem(x, y)) {
                k.arg_error(Arg::B.name(), p);
            }
            let elem = a_elem.or(b_elem).unwrap_or(MmaElem::BF16);
            let a_op = k.mma_operand(Arg::A, &a, opts.a_major, elem);
            let b_op = k.mma_operand(Arg::B, &b, opts.b_major, elem);
            let Some(acc) = acc else { return };
            let a_view = a_op.map(|(op, _)| operand(op, format!("the A tile {}", shape_words(&a))));
            if !k.shape_fits(&acc, a_view, b_op.as_ref(), &b, k_step, elem) {
                return;
            }
            let kk = elem.k();
            let a_desc = match a_op {
                Some((op, addr)) => {
                    let d = k.matrix_desc(elem, op, addr);
                    k.quiet_slice(&d, 0, k_step * kk, wgmma::M, kk)
                }
                None => Value::u64(0),
            };
            let b_desc = k.b_desc(b_op, elem, acc.n, k_step);
            // e4m3 and e5m2 pair with each other (`types_problem`): each operand keeps its own.
            k.push_mma(MmaAsync {
                n: acc.n,
                a_ty: a_elem.unwrap_or(elem),
                b_ty: b_elem.unwrap_or(elem),
                d: acc.regs.clone(),
                a: WgmmaA::Desc(a_desc),
                b_desc,
                scale_d,
                negate_a: opts.negate_a,
                negate_b: opts.negate_b,
                trans_a: opts.a_major == Major::MN,
                trans_b: opts.b_major == Major::MN,
            });
        })
    }

    /// `T.ptx.wgmma.mma_async_rs(acc, a, b, k, scale_d)`: like [`Self::wgmma_tiles`] with A
    /// from registers: `a` is the warpgroup's A fragment of this k-step, 4 `u32` per thread
    /// (two bf16/f16 each, in the PTX ISA's A-fragment layout; `arch::fragment::a_element`).
    /// A in registers is K-major by definition (`opts.a_major` must be K).
    #[track_caller]
    pub fn wgmma_tiles_reg_a(
        &mut self,
        acc: RegisterArray,
        a: RegisterArray,
        b: SharedTile,
        k_step: u32,
        scale_d: Value,
        opts: MmaOptions,
    ) {
        self.at_caller(|k| {
            let acc = k.mma_accumulator(acc);
            let elem = k.mma_elem(Arg::B, b.elem()).unwrap_or(MmaElem::BF16);
            let frag = a.dims() == [4] && matches!(a.elem(), Type::U32 | Type::B32 | Type::S32);
            if !frag {
                k.arg_error(
                    Arg::A.name(),
                    format!(
                        "wgmma: the A fragment of a register-A wgmma is 4 u32 registers per thread (two {} each): \
                         `T.registers::<u32>([4])`, found {:?} of {}",
                        elem.ptx(),
                        a.dims(),
                        a.elem()
                    ),
                );
            }
            if let Some(p) = wgmma::register_a_major_problem(opts.a_major) {
                k.arg_error(Arg::A.name(), format!("wgmma: {p}"));
            }
            let b_op = k.mma_operand(Arg::B, &b, opts.b_major, elem);
            let Some(acc) = acc else { return };
            if !k.shape_fits(&acc, None, b_op.as_ref(), &b, k_step, elem) {
                return;
            }
            let b_desc = k.b_desc(b_op, elem, acc.n, k_step);
            let regs = a.regs();
            let r = |i: usize| regs.get(i).map(|&r| Value::Reg(r)).unwrap_or(Value::imm_u(0, Type::B32));
            k.push_mma(MmaAsync {
                n: acc.n,
                a_ty: elem,
                b_ty: elem,
                d: acc.regs.clone(),
                a: WgmmaA::Regs([r(0), r(1), r(2), r(3)]),
                b_desc,
                scale_d,
                negate_a: opts.negate_a,
                negate_b: opts.negate_b,
                trans_a: false,
                trans_b: opts.b_major == Major::MN,
            });
        })
    }

    /// The accumulator view of a register array, or why it is none (its N is judged with the
    /// rest of the shape, [`wgmma::shape_problems`]).
    pub(crate) fn mma_accumulator(&mut self, acc: RegisterArray) -> Option<Accumulator> {
        let view = acc.as_accumulator();
        if view.is_none() {
            self.arg_error(
                Arg::Acc.name(),
                format!(
                    "wgmma: the accumulator is a 1-dimensional f32 register array (`T.registers::<f32>([N / 2])`, or \
                     one row `acc[j]` of a 2-dimensional one), found {:?} of {}",
                    acc.dims(),
                    acc.elem()
                ),
            );
        }
        view
    }

    fn mma_elem(&mut self, which: Arg, t: Type) -> Option<MmaElem> {
        let elem = wgmma::tile_elem(t);
        if elem.is_none() {
            self.arg_error(
                which.name(),
                format!("wgmma: {} holds {t}, but wgmma multiplies {} tiles", arg_word(which), wgmma::TILE_ELEMS),
            );
        }
        elem
    }

    /// The descriptor view of a typed tile and its shared address.
    fn mma_operand(&mut self, arg: Arg, tile: &SharedTile, major: Major, elem: MmaElem) -> Option<(MmaOperand, Value)> {
        let Some(st) = tile.smem_tile() else {
            let why = match tile.layout {
                TileLayout::RowMajor => "which describes 32/64/128-byte swizzled tiles, but this tile is row-major: \
                     allocate it with a swizzle (`T.alloc_shared::<bf16>([rows, cols], \"128B\")`) and fill it through a \
                     TMA map of that swizzle"
                    .to_string(),
                TileLayout::Swizzled(s) if tile.rank() < 2 => {
                    format!("but this is one row of a {} tile: pass the 2-dimensional tile", s.name())
                }
                TileLayout::Swizzled(s) => format!(
                    "but this sub-tile starts at a multiple of {} bytes only; a {} tile's descriptor needs {}-byte \
                     alignment (index the tile by its outermost dimensions only)",
                    tile.offset_align,
                    s.name(),
                    s.repeat_bytes()
                ),
            };
            self.arg_error(
                arg.name(),
                format!("wgmma reads {} through a shared-memory matrix descriptor, {why}", arg_word(arg)),
            );
            return None;
        };
        if st.elem_bytes != elem.bytes() {
            return None; // reported by `mma_elem`
        }
        // Before the shape: an FP8 tile read MN-major has no shape to compare.
        if let Some(p) = wgmma::major_problem(elem, major) {
            self.arg_error(arg.name(), format!("wgmma: {}: {p}", arg_word(arg)));
            return None;
        }
        let op = MmaOperand::new(st, major);
        if let Some(p) = st.problem() {
            self.arg_error(arg.name(), format!("wgmma: {}: {p}", arg_word(arg)));
            return None;
        }
        let addr = self.tile_addr(*tile);
        Some((op, addr))
    }

    /// The shape rules ([`wgmma::shape_problems`]) on what the kernel's build knows: the
    /// accumulator, A's view (none for A from registers), B and the k-step; each problem is
    /// reported at its argument. Whether the shape fits.
    fn shape_fits(
        &mut self,
        acc: &Accumulator,
        a: Option<wgmma::Operand>,
        b_op: Option<&(MmaOperand, Value)>,
        b: &SharedTile,
        k_step: u32,
        elem: MmaElem,
    ) -> bool {
        let b_view = b_op.map(|(op, _)| {
            let major = if op.major == Major::K { "K-major: [N, K]" } else { "MN-major: [K, N]" };
            operand(*op, format!("{} ({major})", shape_words(b)))
        });
        let call = wgmma::Call {
            acc_len: Some(acc.len() as u32),
            acc_name: String::new(),
            a,
            b: b_view,
            k_step: Some(k_step),
            elem: Some(elem),
        };
        let problems = wgmma::shape_problems(&call);
        for (arg, msg, help) in &problems {
            let msg = match help {
                Some(help) => format!("wgmma: {msg}: {help}"),
                None => format!("wgmma: {msg}"),
            };
            self.arg_error(arg.name(), msg);
        }
        problems.is_empty() && b_op.is_some()
    }

    fn b_desc(&mut self, b_op: Option<(MmaOperand, Value)>, elem: MmaElem, n: u32, k_step: u32) -> Value {
        match b_op {
            Some((op, addr)) => {
                let d = self.matrix_desc(elem, op, addr);
                self.quiet_slice(&d, 0, k_step * elem.k(), n, elem.k())
            }
            None => Value::u64(0),
        }
    }

    /// [`MatrixDesc::slice`] where the caller has reported a sub-matrix that does not fit
    /// already (one message per mistake).
    fn quiet_slice(&mut self, d: &MatrixDesc, mn0: u32, k0: u32, mn_extent: u32, k_extent: u32) -> Value {
        match d.operand.start_offset(mn0, k0, mn_extent, k_extent) {
            Ok(off) => self.add(d.desc, Value::u64((off >> 4) as u64)),
            Err(_) => d.desc,
        }
    }

    /// Any `wgmma.mma_async` form (negations included); the target check validates it.
    #[track_caller]
    pub fn push_mma(&mut self, mut m: MmaAsync) {
        if let Value::Imm { .. } = m.scale_d {
            m.scale_d = Value::pred(m.scale_d.as_imm_i128().unwrap_or(1) != 0);
        }
        self.push(WgmmaOp::MmaAsync(Box::new(m)));
    }
}

/// An operand's view for the shape rules: its M/N and K extents as the rows and columns of
/// its tile, named `name` in messages.
fn operand(op: MmaOperand, name: String) -> wgmma::Operand {
    wgmma::Operand { shape: vec![Some(op.tile.rows), Some(op.tile.cols)], major: op.major, name }
}

/// "A" or "B" for messages.
fn arg_word(arg: Arg) -> &'static str {
    match arg {
        Arg::A => "A",
        Arg::B => "B",
        Arg::Acc => "the accumulator",
        Arg::KStep => "the k-step",
    }
}

/// `[128, 64] bf16 tile` for messages.
fn shape_words(t: &SharedTile) -> String {
    let dims: Vec<String> = t.dims().iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;
    use crate::ptx_text::{count, find_all, has, has_directive};

    fn kernel(f: impl FnOnce(&mut KernelBuilder)) -> crate::Result<Kernel> {
        let mut k = KernelBuilder::new("w", Target::Sm90a);
        k.require_block(128, 1, 1);
        f(&mut k);
        k.finish()
    }

    #[test]
    fn descriptor_bits_are_ored_in_at_run_time() {
        let k = kernel(|k| {
            let t = SmemTile::new(2, 64, 64, Swizzle::B128);
            let s = k.alloc_shared_aligned("t", Type::BF16, t.bytes() / 2, 1024);
            let base = k.shared_base_addr(s);
            let d = k.matrix_desc(MmaElem::BF16, MmaOperand::new(t, Major::K), base);
            let d2 = d.slice(k, 8, 16, 8, 16);
            k.probe("d", &[d.desc, d2]);
        })
        .unwrap();
        let ptx = emit_kernel(&k).unwrap();
        let constant = (1u64 << 62) | (64u64 << 32) | (1u64 << 16);
        assert!(has(&ptx, &format!("or.b64 %rd*, %rd*, {constant}")), "{ptx}");
        // (8 rows * 128 + 16 elements * 2) >> 4 = 66
        assert!(has(&ptx, "add.u64 %rd*, %rd*, 66"), "{ptx}");
        // The start address field: (address & 0x3ffff) >> 4.
        assert!(has(&ptx, "and.b32 %r*, %r*, 262143") && has(&ptx, "shr.u32 %r*, %r*, 4"), "{ptx}");
    }

    #[test]
    fn wgmma_forms_print_as_the_isa_spells_them() {
        let k = kernel(|k| {
            let at = SmemTile::new(2, 64, 64, Swizzle::B128);
            let bt = SmemTile::new(2, 64, 64, Swizzle::B128);
            let s = k.alloc_shared_aligned("t", Type::BF16, (at.bytes() + bt.bytes()) / 2, 1024);
            let base = k.shared_base_addr(s);
            let bb = k.add(base, Value::u32(at.bytes()));
            let a = k.matrix_desc(MmaElem::BF16, MmaOperand::new(at, Major::K), base);
            let b = k.matrix_desc(MmaElem::BF16, MmaOperand::new(bt, Major::MN), bb);
            let acc = Accumulator::new(k, 64);
            acc.zero(k);
            k.wgmma_fence();
            k.wgmma(&acc, &a, 0, &b, 0, 0, Value::pred(false));
            let r = k.var(Value::imm_u(0, Type::B32));
            k.wgmma_reg_a(&acc, [Value::Reg(r); 4], MmaElem::BF16, &b, 0, 16, Value::pred(true));
            k.wgmma_commit_group();
            k.wgmma_wait_group(1);
        })
        .unwrap();
        let ptx = emit_kernel(&k).unwrap();
        assert!(has_directive(&ptx, ".version 8.0") && has_directive(&ptx, ".target sm_90a"), "{ptx}");
        assert!(has(&ptx, "wgmma.fence.sync.aligned"));
        let mma = find_all(&ptx, "wgmma.mma_async.*");
        assert_eq!(mma.len(), 2);
        // Descriptor form: scale-d, scale-a, scale-b, trans-a, trans-b (B is N-major).
        let shape = "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16";
        assert!(mma[0].matches(&format!("{shape} {{%f*}}, %rd*, %rd*, 0, 1, 1, 0, 1")), "{ptx}");
        // Register-A form: no trans-a.
        assert!(mma[1].matches(&format!("{shape} {{%f*}}, {{%r*}}, %rd*, 1, 1, 1, 1")), "{ptx}");
        assert!(has(&ptx, "wgmma.commit_group.sync.aligned") && has(&ptx, "wgmma.wait_group.sync.aligned 1"));
    }

    #[test]
    fn bad_operands_are_build_errors_at_the_callers_line() {
        let e = kernel(|k| {
            let t = SmemTile::new(2, 64, 64, Swizzle::B128);
            let s = k.alloc_shared_aligned("t", Type::BF16, t.bytes() / 2, 1024);
            let base = k.shared_base_addr(s);
            let a = k.matrix_desc(MmaElem::BF16, MmaOperand::new(t, Major::K), base);
            let acc = Accumulator::new(k, 128); // N = 128 > the 64 rows of B
            k.wgmma(&acc, &a, 0, &a, 0, 0, Value::pred(true));
        })
        .unwrap_err();
        assert!(e.first_message().contains("leaves the 64 x 64 operand"), "{e}");
        assert!(e.diagnostics[0].loc.unwrap().file.ends_with("wgmma.rs"));

        let e = kernel(|k| {
            let t = SmemTile::new(1, 64, 128, Swizzle::B128);
            let a = k.matrix_desc(MmaElem::E4M3, MmaOperand::new(t, Major::MN), Value::u32(1024));
            let _ = a;
        })
        .unwrap_err();
        assert!(e.first_message().contains("exist only for f16/bf16"), "{e}");

        let e = kernel(|k| {
            let t = SmemTile::new(2, 64, 64, Swizzle::B128);
            k.matrix_desc(MmaElem::BF16, MmaOperand::new(t, Major::K), Value::u32(512));
        })
        .unwrap_err();
        assert!(e.first_message().contains("not 1024-byte aligned"), "{e}");
    }

    /// A ring of `stages` stages of `[slabs, 64, 64]` bf16 (128-byte swizzled) and the
    /// accumulator of an N = `n` wgmma.
    fn ring(k: &mut KernelBuilder, name: &str, dims: &[u32]) -> SharedTile {
        use super::super::tile::TileShape;
        k.alloc_tile(name, &TileShape::new(Type::BF16, dims, TileLayout::Swizzled(Swizzle::B128)))
    }

    #[test]
    fn typed_tiles_give_the_builders_descriptors() {
        // A warpgroup's slab of a [stages, 2, 64, 64] A ring and the whole [stages, 2, 128, 64]
        // B stage (a ring stage is its rows: 256 x 64): m64n256k16, the descriptors of
        // `matrix_desc` + the k-step's 32 bytes.
        let k = kernel(|k| {
            let a = ring(k, "a", &[3, 2, 64, 64]);
            let b = ring(k, "b", &[3, 2, 128, 64]);
            let stage = k.param("stage", Type::U32);
            let wg = k.param("wg", Type::U32);
            let a_stage = k.tile_at(a, stage);
            let a_slab = k.tile_at(a_stage, wg);
            let b_stage = k.tile_at(b, stage);
            let acc = k.alloc_registers(Type::F32, &[128]);
            k.wgmma_fence();
            for step in 0..4 {
                k.wgmma_tiles(acc, a_slab, b_stage, step, Value::pred(step > 0), MmaOptions::default());
            }
            k.wgmma_commit_group();
            k.wgmma_wait_group(0);
        })
        .unwrap();
        let ptx = emit_kernel(&k).unwrap();
        let mma = find_all(&ptx, "wgmma.mma_async.*");
        assert_eq!(mma.len(), 4);
        assert!(mma.iter().all(|m| m.opcode == "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"), "{ptx}");
        // SBO 1024 (8 rows of 128 bytes), LBO 16 (encoded 1), 128-byte swizzle.
        let constant = (1u64 << 62) | (64u64 << 32) | (1u64 << 16);
        assert_eq!(count(&ptx, &format!("or.b64 %rd*, %rd*, {constant}")), 8, "{ptx}");
        for off in [2, 4, 6] {
            let adds = count(&ptx, &format!("add.u64 %rd*, %rd*, {off}"));
            assert_eq!(adds, 2, "k-step +{off} (32 bytes per step) on A and B:\n{ptx}");
        }
        // The first k-step overwrites the accumulator (scale-d 0), both operands K-major.
        assert!(mma[0].matches("wgmma.mma_async.* {%f*}, %rd*, %rd*, 0, 1, 1, 0, 0"), "{ptx}");
    }

    #[test]
    fn typed_operand_mistakes_are_build_errors_naming_the_fix() {
        let msg = |f: &dyn Fn(&mut KernelBuilder)| {
            kernel(|k| f(k)).unwrap_err().diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("\n")
        };
        let ok_a = |k: &mut KernelBuilder| ring(k, "a", &[64, 64]);
        let e = msg(&|k| {
            let (a, b) = (ok_a(k), ring(k, "b", &[64, 64]));
            let acc = k.alloc_registers(Type::F32, &[64]);
            k.wgmma_tiles(acc, a, b, 0, Value::pred(false), MmaOptions::default());
        });
        assert!(
            e.contains(
                "the accumulator is 64 x 128 (`T.registers::<f32>([64])`), but B [64, 64] (K-major: [N, K]) is 64 wide \
                 in N"
            ),
            "{e}"
        );
        assert!(e.contains("`T.registers::<f32>([32])`"), "{e}");
        let e = msg(&|k| {
            use super::super::tile::TileShape;
            let a = ok_a(k);
            let b = k.alloc_tile("b", &TileShape::new(Type::BF16, &[64, 64], TileLayout::RowMajor));
            let acc = k.alloc_registers(Type::F32, &[32]);
            k.wgmma_tiles(acc, a, b, 0, Value::pred(false), MmaOptions::default());
        });
        assert!(
            e.contains("wgmma reads B through a shared-memory matrix descriptor") && e.contains("row-major"),
            "{e}"
        );
        let e = msg(&|k| {
            let (a, b) = (ring(k, "a", &[128, 64]), ring(k, "b", &[64, 64]));
            let acc = k.alloc_registers(Type::F32, &[32]);
            k.wgmma_tiles(acc, a, b, 4, Value::pred(false), MmaOptions::default());
        });
        assert!(e.contains("multiplies 64 rows of A, but the A tile [128, 64] has 128"), "{e}");
        assert!(e.contains("k-step 4 is past the tiles' K of 64 (4 steps of 16: 0..4)"), "{e}");
        let e = msg(&|k| {
            let b = ring(k, "b", &[64, 64]);
            let acc = k.alloc_registers(Type::F32, &[2, 32]);
            let frag = k.alloc_registers(Type::U32, &[2]);
            let opts = MmaOptions { a_major: Major::MN, ..MmaOptions::default() };
            k.wgmma_tiles_reg_a(acc, frag, b, 0, Value::pred(false), opts);
        });
        assert!(e.contains("a 1-dimensional f32 register array") && e.contains("found [2, 32] of f32"), "{e}");
        assert!(e.contains("4 u32 registers per thread") && e.contains("A from registers is K-major"), "{e}");
        let e = msg(&|k| {
            let a = ring(k, "a", &[64, 64]);
            let ring3 = ring(k, "b", &[4, 64, 64]);
            let row = k.tile_at(ring3, Value::u32(1));
            let row = k.tile_at(row, Value::u32(3));
            let acc = k.alloc_registers(Type::F32, &[32]);
            k.wgmma_tiles(acc, a, row, 0, Value::pred(false), MmaOptions::default());
        });
        assert!(e.contains("one row of a 128-byte swizzle tile"), "{e}");
    }

    #[test]
    fn wgmma_is_sm90a_only() {
        for target in [Target::Sm90, Target::Sm100a] {
            let mut k = KernelBuilder::new("w", target);
            k.wgmma_fence();
            let e = k.finish().unwrap_err();
            assert!(e.first_message().contains("`wgmma.fence` needs sm_90a, but the kernel targets"), "{e}");
        }
    }
}
