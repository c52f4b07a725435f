//! Blackwell's tcgen05 family (sm_100a): tensor-memory allocation, `tcgen05.ld/st/wait`,
//! `tcgen05.cp/shift`, the asynchronous `tcgen05.mma` with descriptors derived from typed
//! shared tiles and an instruction descriptor built from types and shape, `tcgen05.commit`
//! and the fences; plus the pipeline steps whose arrival is a commit (an MMA consumer
//! releasing a shared stage, an MMA producer publishing an accumulator).
//!
//! ```
//! use phaser_codegen::builder::{KernelBuilder, UmmaDesc};
//! use phaser_codegen::ir::{CtaGroup, InstrDesc, Major, MmaOperand, SmemTile, Swizzle, Type, UmmaElem, Value};
//! use phaser_codegen::Target;
//!
//! let mut k = KernelBuilder::new("umma", Target::Sm100a);
//! k.require_block(128, 1, 1);
//! let g = CtaGroup::One;
//! // A: 128 x 64 bf16, B: 128 x 64 bf16, both K-major and 128-byte swizzled.
//! let a_tile = SmemTile::new(2, 128, 64, Swizzle::B128);
//! let b_tile = SmemTile::new(2, 128, 64, Swizzle::B128);
//! let smem = k.alloc_shared_aligned("ab", Type::BF16, (a_tile.bytes() + b_tile.bytes()) / 2, 1024);
//! let slot = k.alloc_shared("tmem_slot", Type::U32, 1);
//! let bars = k.alloc_barriers("done", 1);
//! let base = k.shared_base_addr(smem);
//! let b_addr = k.add(base, Value::u32(a_tile.bytes()));
//! let slot_addr = k.shared_base_addr(slot);
//! k.tcgen05_alloc(g, slot_addr, Value::u32(128)); // the whole warp allocates 128 columns
//! let d = k.ld_shared(slot, Value::u32(0));
//! let a = k.umma_desc(UmmaElem::BF16, MmaOperand::new(a_tile, Major::K), base);
//! let b = k.umma_desc(UmmaElem::BF16, MmaOperand::new(b_tile, Major::K), b_addr);
//! let idesc = k.instr_desc(InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 128), g);
//! let bar = k.barrier_at(bars, Value::u32(0));
//! k.elect_one(|k| {
//!     for step in 0..4 {
//!         // The first k-step overwrites D, the others accumulate.
//!         k.tcgen05_mma(&idesc, d, &a, 0, &b, 0, 16 * step, Value::pred(step > 0));
//!     }
//!     k.tcgen05_commit(bar); // arrives once the four MMAs are done
//! });
//! let ptx = phaser_codegen::emit_kernel(&k.finish().unwrap()).unwrap();
//! assert_eq!(phaser_codegen::ptx_text::count(&ptx, "tcgen05.mma.cta_group::1.kind::f16"), 4);
//! ```

use super::handles::{Barrier, SharedArray};
use super::kernel_builder::KernelBuilder;
use super::pipeline::{Pipeline, PipelineState};
use crate::arch::tcgen05::alloc_columns_problem;
use crate::ir::*;

/// A tcgen05 multiplicand in shared memory: the typed operand view of its tile and the sm100
/// shared-memory descriptor (a `u64` register) of the tile's element (0, 0). Sub-matrices
/// (k-steps, slices) add a compile-time offset to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UmmaDesc {
    pub elem: UmmaElem,
    pub operand: MmaOperand,
    pub desc: Value,
}

impl UmmaDesc {
    /// The descriptor of the `mn_extent x k_extent` sub-matrix at (`mn0`, `k0`): the base
    /// descriptor plus the sub-matrix's start offset in 16-byte units (the 14-bit start field
    /// cannot carry over for addresses inside the 228 KiB of shared memory).
    #[track_caller]
    pub fn slice(&self, k: &mut KernelBuilder, mn0: u32, k0: u32, mn_extent: u32, k_extent: u32) -> Value {
        match self.operand.start_offset(mn0, k0, mn_extent, k_extent) {
            Ok(0) => self.desc,
            Ok(off) => k.add(self.desc, Value::u64((off >> 4) as u64)),
            Err(msg) => {
                k.error(format!("tcgen05.mma operand: {msg}"));
                self.desc
            }
        }
    }
}

/// An instruction descriptor held in a register, with the types and shape it encodes and the
/// `.cta_group` it was checked for. Made once (outside loops) by [`KernelBuilder::instr_desc`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdescReg {
    pub desc: InstrDesc,
    pub cta_group: CtaGroup,
    pub reg: Value,
}

impl KernelBuilder {
    // ---- tensor memory --------------------------------------------------------------------

    /// `tcgen05.alloc`: the executing warp (all 32 lanes; with `.cta_group::2` one warp in each
    /// CTA of the pair) allocates `ncols` columns and writes the address to the shared `u32`
    /// at `dst`. It blocks while the columns are not free. Read the address back after a
    /// barrier (`bar.sync`) with `ld.shared`.
    #[track_caller]
    pub fn tcgen05_alloc(&mut self, cta_group: CtaGroup, dst: Value, ncols: Value) {
        let ncols = super::arith::retype_imm(ncols, Type::U32);
        self.push(Tcgen05Op::Alloc { cta_group, dst, ncols });
    }

    /// [`KernelBuilder::tcgen05_alloc`] into element 0 of the shared array `slot`.
    #[track_caller]
    pub fn tcgen05_alloc_into(&mut self, cta_group: CtaGroup, slot: SharedArray, ncols: u32) {
        let dst = self.at_caller(|k| k.shared_base_addr(slot));
        self.tcgen05_alloc(cta_group, dst, Value::u32(ncols));
    }

    /// `tcgen05.dealloc`: the warp frees the allocation at `taddr` (every lane the same).
    #[track_caller]
    pub fn tcgen05_dealloc(&mut self, cta_group: CtaGroup, taddr: Value, ncols: Value) {
        let ncols = super::arith::retype_imm(ncols, Type::U32);
        self.push(Tcgen05Op::Dealloc { cta_group, taddr, ncols });
    }

    /// `tcgen05.relinquish_alloc_permit`: this CTA allocates no more (other CTAs waiting in
    /// `tcgen05.alloc` on the SM may go on).
    #[track_caller]
    pub fn tcgen05_relinquish_alloc_permit(&mut self, cta_group: CtaGroup) {
        self.push(Tcgen05Op::RelinquishAllocPermit { cta_group });
    }

    /// `tcgen05.ld.sync.aligned.shape.num.b32`: the warp loads from tensor memory at `taddr`
    /// into `shape.regs_per_num() * num` fresh registers of `ty` (32-bit) per thread. Uses of
    /// the registers wait for the data ("an intra-thread ordering through true register
    /// dependency will be respected", PTX ISA 9.7.16.6.4.5), but the read of tensor memory is
    /// ordered before later tcgen05 writes, a dealloc or a thread sync only by
    /// [`KernelBuilder::tcgen05_wait_ld`].
    #[track_caller]
    pub fn tcgen05_ld(&mut self, shape: LdStShape, num: u32, taddr: Value, ty: Type) -> Vec<Value> {
        if ty.size() != 4 {
            self.error(format!("tcgen05.ld loads 32-bit registers, not {ty}"));
        }
        let n = shape.regs_per_num() * num.clamp(1, 128);
        let dst: Vec<Reg> = (0..n).map(|_| self.new_reg(ty)).collect();
        let out = dst.iter().map(|r| Value::Reg(*r)).collect();
        self.push(Tcgen05Op::Ld { shape, num, pack16: false, dst, taddr });
        out
    }

    /// `tcgen05.st.sync.aligned.shape.num.b32`: the warp stores `src` (32-bit values, one
    /// vector per thread) to tensor memory at `taddr`; complete after `tcgen05_wait_st`.
    #[track_caller]
    pub fn tcgen05_st(&mut self, shape: LdStShape, num: u32, taddr: Value, src: &[Value]) {
        let src = src.iter().map(|&v| self.materialize(v)).collect();
        self.push(Tcgen05Op::St { shape, num, unpack16: false, taddr, src });
    }

    /// `tcgen05.wait::ld`: this thread's earlier `tcgen05.ld`s are complete (their registers
    /// hold the data).
    #[track_caller]
    pub fn tcgen05_wait_ld(&mut self) {
        self.push(Tcgen05Op::Wait { st: false });
    }

    /// `tcgen05.wait::st`: this thread's earlier `tcgen05.st`s are complete.
    #[track_caller]
    pub fn tcgen05_wait_st(&mut self) {
        self.push(Tcgen05Op::Wait { st: true });
    }

    /// `tcgen05.cp.cta_group.shape [taddr], s-desc`: copy a matrix from shared memory into
    /// tensor memory, asynchronously (track it with `tcgen05.commit`).
    #[track_caller]
    pub fn tcgen05_cp(&mut self, cta_group: CtaGroup, shape: CpShape, taddr: Value, s_desc: Value) {
        self.push(Tcgen05Op::Cp { cta_group, shape, taddr, s_desc });
    }

    /// `tcgen05.shift.cta_group.down [taddr]`: shift the 32 lanes at `taddr` (lane aligned to
    /// 32) down by one row, asynchronously.
    #[track_caller]
    pub fn tcgen05_shift(&mut self, cta_group: CtaGroup, taddr: Value) {
        self.push(Tcgen05Op::Shift { cta_group, taddr });
    }

    // ---- ordering -------------------------------------------------------------------------

    /// `tcgen05.commit.cta_group::1.mbarrier::arrive::one`: one arrival on `bar` once every
    /// earlier asynchronous tcgen05 op of this thread completed (CUTLASS `umma_arrive`). It
    /// implies `tcgen05.fence::before_thread_sync` for them.
    #[track_caller]
    pub fn tcgen05_commit(&mut self, bar: Barrier) {
        self.tcgen05_commit_with(CtaGroup::One, bar, None);
    }

    /// `tcgen05.commit` with a `.cta_group` and, with `multicast: Some(mask)`, the arrival on
    /// the same barrier offset in every CTA of the 16-bit cluster `mask`
    /// (`.multicast::cluster`; CUTLASS `umma_arrive_multicast{_2x1SM}`).
    #[track_caller]
    pub fn tcgen05_commit_with(&mut self, cta_group: CtaGroup, bar: Barrier, multicast: Option<Value>) {
        let multicast = multicast.map(|m| match m {
            Value::Imm { .. } => super::arith::retype_imm(m, Type::U16),
            Value::Reg(r) if r.ty.size() == 2 => m,
            _ => self.cvt(m, Type::U16),
        });
        self.push(Tcgen05Op::Commit { cta_group, bar: bar.addr, multicast });
    }

    /// `tcgen05.fence::before_thread_sync`: this thread's earlier asynchronous tcgen05 ops are
    /// ordered before its following thread synchronization (arrive, `bar.sync`, ...). Needed
    /// before handing tensor memory that it loaded or stored to another thread.
    #[track_caller]
    pub fn tcgen05_fence_before_thread_sync(&mut self) {
        self.push(Tcgen05Op::Fence { after: false });
    }

    /// `tcgen05.fence::after_thread_sync`: this thread's following asynchronous tcgen05 ops are
    /// ordered after its earlier thread synchronization (a wait). Needed after a wait that hands
    /// it tensor memory another thread (or a committed MMA) wrote.
    #[track_caller]
    pub fn tcgen05_fence_after_thread_sync(&mut self) {
        self.push(Tcgen05Op::Fence { after: true });
    }

    // ---- MMA ------------------------------------------------------------------------------

    /// The sm100 descriptor of `operand`'s tile starting at the 32-bit shared address
    /// `tile_addr` (aligned to [`SmemTile::align`]: 1024 bytes for 128-byte swizzling, so the
    /// base offset is 0). Emits `and`, `shr`, `cvt` and `or` with the compile-time bits (the
    /// strides come from the tile, the version bits and layout code from PTX ISA Table 40).
    #[track_caller]
    pub fn umma_desc(&mut self, elem: UmmaElem, operand: MmaOperand, tile_addr: Value) -> UmmaDesc {
        let tile = operand.tile;
        let (lbo, sbo) = operand.byte_offsets();
        let constant =
            UmmaDescriptor { start_address: 0, lbo, sbo, base_offset: 0, swizzle: tile.swizzle }.constant_bits();
        let desc =
            self.shared_descriptor("tcgen05.mma", operand, (elem.bytes(), elem.name()), None, tile_addr, constant);
        UmmaDesc { elem, operand, desc }
    }

    /// The instruction descriptor of `desc` for `cta_group` in a register (`mov.b32`). Make it
    /// once, outside loops. Types and shape are checked against PTX ISA Table 39 at each MMA
    /// that uses it (`arch::tcgen05::value_problems`, so the DSL reports them at compile time).
    #[track_caller]
    pub fn instr_desc(&mut self, desc: InstrDesc, cta_group: CtaGroup) -> IdescReg {
        let reg = self.materialize(Value::imm_u(desc.encode() as u64, Type::B32));
        IdescReg { desc, cta_group, reg }
    }

    /// `D (M x N, in tensor memory at d_tmem) = A[a_m0.., k0..k0+K] * B[b_n0.., k0..k0+K]
    /// (+ D if accumulate)`, both operands from shared memory, issued by this one thread. M, N
    /// and the types are `idesc`'s; with `.cta_group::2` each CTA of the pair holds `M / 2` rows
    /// of A and `N / 2` rows of B at the same shared addresses, and `D` is written to both
    /// CTAs' tensor memory (`M = 256`: rows 128-255 in the peer's).
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn tcgen05_mma(
        &mut self,
        idesc: &IdescReg,
        d_tmem: Value,
        a: &UmmaDesc,
        a_m0: u32,
        b: &UmmaDesc,
        b_n0: u32,
        k0: u32,
        accumulate: Value,
    ) {
        let d = idesc.desc;
        let ctas = idesc.cta_group.ctas();
        self.check_operand("A", a, d.a, d.a_major);
        self.check_operand("B", b, d.b, d.b_major);
        let (a_desc, b_desc) =
            self.at_caller(|k| (a.slice(k, a_m0, k0, d.m / ctas, d.k()), b.slice(k, b_n0, k0, d.n / ctas, d.k())));
        self.push_tcgen05_mma(idesc, d_tmem, MmaA::Desc(a_desc), b_desc, accumulate);
    }

    /// Like [`KernelBuilder::tcgen05_mma`] with `A` in tensor memory at `a_tmem` (lane = row;
    /// the K elements of one instruction packed into 8 columns, as `tcgen05.cp`/`st` put them).
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn tcgen05_mma_tmem_a(
        &mut self,
        idesc: &IdescReg,
        d_tmem: Value,
        a_tmem: Value,
        b: &UmmaDesc,
        b_n0: u32,
        k0: u32,
        accumulate: Value,
    ) {
        let d = idesc.desc;
        if d.a_major != Major::K {
            self.error("an A operand in tensor memory is K-major (rows are lanes)");
        }
        self.check_operand("B", b, d.b, d.b_major);
        let b_desc = self.at_caller(|k| b.slice(k, b_n0, k0, d.n / idesc.cta_group.ctas(), d.k()));
        self.push_tcgen05_mma(idesc, d_tmem, MmaA::Tmem(a_tmem), b_desc, accumulate);
    }

    #[track_caller]
    fn check_operand(&mut self, which: &str, op: &UmmaDesc, elem: UmmaElem, major: Major) {
        if op.elem != elem {
            self.error(format!(
                "{which} is a {} operand but the instruction descriptor says {}",
                op.elem.name(),
                elem.name()
            ));
        }
        if op.operand.major != major {
            self.error(format!(
                "{which}'s tile is {:?}-major but the instruction descriptor says {:?}-major",
                op.operand.major, major
            ));
        }
    }

    /// A `tcgen05.mma` of `desc` from raw operands (its instruction descriptor moved into a
    /// register for this one MMA): what the DSL's `T.ptx.tcgen05.mma` lowers to.
    #[track_caller]
    pub fn tcgen05_mma_raw(
        &mut self,
        desc: InstrDesc,
        cta_group: CtaGroup,
        d_tmem: Value,
        a: MmaA,
        b_desc: Value,
        accumulate: Value,
    ) {
        let idesc = self.at_caller(|k| k.instr_desc(desc, cta_group));
        self.push_tcgen05_mma(&idesc, d_tmem, a, b_desc, accumulate);
    }

    /// Any `tcgen05.mma` form from raw operands; `accumulate` becomes the predicate
    /// `enable-input-d` (an integer immediate: nonzero).
    #[track_caller]
    pub fn push_tcgen05_mma(&mut self, idesc: &IdescReg, d_tmem: Value, a: MmaA, b_desc: Value, accumulate: Value) {
        let enable_input_d = match accumulate {
            Value::Imm { .. } => Value::pred(accumulate.as_imm_i128().unwrap_or(1) != 0),
            v if v.ty() == Type::Pred => v,
            v => self.cvt(v, Type::Pred),
        };
        let kind = idesc.desc.kind();
        let m = Mma {
            cta_group: idesc.cta_group,
            kind,
            d_tmem,
            a,
            b_desc,
            idesc: idesc.reg,
            desc: Some(idesc.desc),
            enable_input_d,
        };
        self.push(Tcgen05Op::Mma(Box::new(m)));
    }
}

/// Tensor-memory allocation as a value: the column count checked once, the address read back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TmemAlloc {
    pub cta_group: CtaGroup,
    pub ncols: u32,
}

impl TmemAlloc {
    /// `ncols` columns (a power of two in 32..=512; an error at the caller's line otherwise).
    #[track_caller]
    pub fn new(k: &mut KernelBuilder, cta_group: CtaGroup, ncols: u32) -> TmemAlloc {
        if let Some(p) = alloc_columns_problem(ncols) {
            k.error(p);
        }
        TmemAlloc { cta_group, ncols }
    }

    /// The allocating warp's part: `tcgen05.alloc` into `slot` (a shared `u32`), then
    /// `tcgen05.relinquish_alloc_permit` (this CTA allocates nothing else).
    #[track_caller]
    pub fn allocate(&self, k: &mut KernelBuilder, slot_addr: Value) {
        let this = *self;
        k.at_caller(|k| {
            k.tcgen05_alloc(this.cta_group, slot_addr, Value::u32(this.ncols));
            k.tcgen05_relinquish_alloc_permit(this.cta_group);
        })
    }

    /// The allocating warp frees the columns at `taddr`.
    #[track_caller]
    pub fn free(&self, k: &mut KernelBuilder, taddr: Value) {
        k.tcgen05_dealloc(self.cta_group, taddr, Value::u32(self.ncols));
    }
}

impl Pipeline {
    /// The MMA thread hands stage `st` back to the producer: `tcgen05.commit` on `empty[i]`,
    /// which arrives once the MMAs reading the stage (every earlier one of this thread) are
    /// done (CUTLASS `PipelineTmaUmmaAsync::consumer_release`). `multicast`: the CTAs whose
    /// `empty[i]` it arrives on (a 2-CTA MMA frees both CTAs' stages). Count one consumer
    /// thread per CTA for it.
    #[track_caller]
    pub fn consumer_release_mma(
        &self,
        k: &mut KernelBuilder,
        st: &PipelineState,
        cta_group: CtaGroup,
        multicast: Option<Value>,
    ) {
        let this = *self;
        k.at_caller(|k| {
            let bar = this.empty_barrier(k, st);
            k.tcgen05_commit_with(cta_group, bar, multicast);
        })
    }

    /// The MMA thread publishes stage `st` of an accumulator pipeline: `tcgen05.commit` on
    /// `full[i]`, which arrives once every MMA of this thread is done (CUTLASS
    /// `PipelineUmmaAsync::producer_commit`). Count one producer thread for it.
    #[track_caller]
    pub fn producer_commit_mma(
        &self,
        k: &mut KernelBuilder,
        st: &PipelineState,
        cta_group: CtaGroup,
        multicast: Option<Value>,
    ) {
        let this = *self;
        k.at_caller(|k| {
            let bar = this.full_barrier(k, st);
            k.tcgen05_commit_with(cta_group, bar, multicast);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Target;
    use crate::emit::emit_kernel;
    use crate::ptx_text::{find_all, has, has_directive};

    fn kernel(target: Target, f: impl FnOnce(&mut KernelBuilder)) -> crate::Result<Kernel> {
        let mut k = KernelBuilder::new("t", target);
        k.require_block(128, 1, 1);
        f(&mut k);
        k.finish()
    }

    fn bf16_tiles(k: &mut KernelBuilder) -> (UmmaDesc, UmmaDesc) {
        let at = SmemTile::new(2, 128, 64, Swizzle::B128);
        let bt = SmemTile::new(2, 64, 64, Swizzle::B128);
        let s = k.alloc_shared_aligned("t", Type::BF16, (at.bytes() + bt.bytes()) / 2, 1024);
        let base = k.shared_base_addr(s);
        let bb = k.add(base, Value::u32(at.bytes()));
        let a = k.umma_desc(UmmaElem::BF16, MmaOperand::new(at, Major::K), base);
        let b = k.umma_desc(UmmaElem::BF16, MmaOperand::new(bt, Major::MN), bb);
        (a, b)
    }

    #[test]
    fn every_form_prints_as_the_isa_spells_it() {
        let k = kernel(Target::Sm100a, |k| {
            let g = CtaGroup::One;
            let slot = k.alloc_shared("slot", Type::U32, 1);
            let bars = k.alloc_barriers("b", 1);
            let sa = k.shared_base_addr(slot);
            k.tcgen05_alloc(g, sa, Value::u32(64));
            k.tcgen05_relinquish_alloc_permit(g);
            let t = k.ld_shared(slot, Value::u32(0));
            let (a, b) = bf16_tiles(k);
            let id = k.instr_desc(
                InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 64).with_majors(Major::K, Major::MN),
                g,
            );
            k.tcgen05_mma(&id, t, &a, 0, &b, 0, 16, Value::pred(true));
            k.tcgen05_mma_tmem_a(&id, t, t, &b, 0, 0, Value::u32(0));
            let bar = k.barrier_at(bars, Value::u32(0));
            k.tcgen05_commit(bar);
            k.tcgen05_commit_with(g, bar, Some(Value::u32(3)));
            k.tcgen05_fence_after_thread_sync();
            let v = k.tcgen05_ld(LdStShape::S32x32b, 4, t, Type::F32);
            let w = k.tcgen05_ld(LdStShape::S16x32bx2 { split: 2 }, 2, t, Type::U32);
            k.tcgen05_wait_ld();
            k.tcgen05_st(LdStShape::S16x256b, 1, t, &v);
            k.tcgen05_st(LdStShape::S16x32bx2 { split: 2 }, 2, t, &w);
            k.tcgen05_wait_st();
            k.tcgen05_cp(g, CpShape::S128x256b, t, a.desc);
            k.tcgen05_shift(g, t);
            k.tcgen05_fence_before_thread_sync();
            k.tcgen05_dealloc(g, t, Value::u32(64));
        })
        .unwrap();
        let ptx = emit_kernel(&k).unwrap();
        assert!(has_directive(&ptx, ".version 8.6") && has_directive(&ptx, ".target sm_100a"), "{ptx}");
        for inst in [
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r*], 64",
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r*]",
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r*], _",
            "tcgen05.fence::after_thread_sync",
            "tcgen05.ld.sync.aligned.32x32b.x4.b32 {%f*}, [%r*]",
            "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r*}, [%r*], 2",
            "tcgen05.wait::ld.sync.aligned",
            "tcgen05.st.sync.aligned.16x256b.x1.b32 [%r*], {%f*}",
            "tcgen05.wait::st.sync.aligned",
            "tcgen05.cp.cta_group::1.128x256b [%r*], %rd*",
            "tcgen05.shift.cta_group::1.down [%r*]",
            "tcgen05.fence::before_thread_sync",
            "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r*, 64",
        ] {
            assert!(has(&ptx, inst), "missing `{inst}` in\n{ptx}");
        }
        let mma = find_all(&ptx, "tcgen05.mma.*");
        assert_eq!(mma.len(), 2, "{ptx}");
        // A and B from shared-memory descriptors, accumulate; then A from tensor memory.
        assert!(mma[0].matches("tcgen05.mma.cta_group::1.kind::f16 [%r*], %rd*, %rd*, %r*, 1"), "{}", mma[0]);
        assert!(mma[1].matches("tcgen05.mma.cta_group::1.kind::f16 [%r*], [%r*], %rd*, %r*, 0"), "{}", mma[1]);
        // The descriptor is a register moved from the encoding: bf16 x bf16 -> f32, B MN-major,
        // N = 64, M = 128.
        let idesc = InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 64).with_majors(Major::K, Major::MN).encode();
        assert!(has(&ptx, &format!("mov.b32 %r*, {idesc}")), "{ptx}");
    }

    #[test]
    fn descriptor_constant_has_the_sm100_version_and_layout_bits() {
        let k = kernel(Target::Sm100a, |k| {
            let (a, _) = bf16_tiles(k);
            let s = a.slice(k, 8, 16, 8, 16);
            k.probe("d", &[a.desc, s]);
        })
        .unwrap();
        let ptx = emit_kernel(&k).unwrap();
        // 128-byte swizzle (code 2 at bit 61), version 1 at bit 46, SBO 1024 (64), LBO 16 (1).
        let constant = (2u64 << 61) | (1u64 << 46) | (64u64 << 32) | (1u64 << 16);
        assert!(has(&ptx, &format!("or.b64 %rd*, %rd*, {constant}")), "{ptx}");
        // (8 rows * 128 + 16 elements * 2) >> 4 = 66
        assert!(has(&ptx, "add.u64 %rd*, %rd*, 66"), "{ptx}");
    }

    #[test]
    fn bad_descriptors_and_shapes_are_build_errors_at_the_callers_line() {
        let e = kernel(Target::Sm100a, |k| {
            let (a, b) = bf16_tiles(k);
            let id = k.instr_desc(InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 64), CtaGroup::One);
            k.tcgen05_mma(&id, Value::u32(0), &a, 0, &b, 0, 0, Value::pred(false));
        })
        .unwrap_err();
        assert!(e.first_message().contains("B's tile is MN-major but the instruction descriptor says K-major"), "{e}");
        assert!(e.diagnostics[0].loc.unwrap().file.ends_with("tcgen05.rs"));

        let e = kernel(Target::Sm100a, |k| {
            let (a, b) = bf16_tiles(k);
            let d = InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 256, 64).with_majors(Major::K, Major::MN);
            let id = k.instr_desc(d, CtaGroup::One);
            k.push_tcgen05_mma(&id, Value::u32(0), MmaA::Desc(a.desc), b.desc, Value::pred(false));
        })
        .unwrap_err();
        assert!(e.first_message().contains("M = 64 or 128, not 256"), "{e}");

        let e = kernel(Target::Sm100a, |k| {
            TmemAlloc::new(k, CtaGroup::One, 96);
        })
        .unwrap_err();
        assert!(e.first_message().contains("powers of two of 32 to 512 columns, not 96"), "{e}");

        let e =
            kernel(Target::Sm100a, |k| k.tcgen05_alloc(CtaGroup::One, Value::u32(0), Value::u32(1024))).unwrap_err();
        assert!(e.first_message().contains("not 1024"), "{e}");
    }

    #[test]
    fn one_cta_group_per_kernel() {
        let e = kernel(Target::Sm100a, |k| {
            k.tcgen05_relinquish_alloc_permit(CtaGroup::One);
            let bars = k.alloc_barriers("b", 1);
            let bar = k.barrier_at(bars, Value::u32(0));
            k.tcgen05_commit_with(CtaGroup::Two, bar, None);
        })
        .unwrap_err();
        let m = e.first_message();
        assert!(m.contains("`tcgen05.commit.cta_group::2` but `tcgen05.relinquish_alloc_permit.cta_group::1`"), "{e}");
        assert!(m.contains("same .cta_group"), "{e}");
    }

    #[test]
    fn tcgen05_is_sm100a_only_with_the_rust_line() {
        for target in [Target::Sm80, Target::Sm90, Target::Sm90a] {
            let mut k = KernelBuilder::new("t", target);
            let line = line!() + 1;
            k.tcgen05_fence_after_thread_sync();
            let e = k.finish().unwrap_err();
            assert!(e.first_message().contains("`tcgen05.fence` needs sm_100a, but the kernel targets"), "{e}");
            let loc = e.diagnostics[0].loc.unwrap();
            assert_eq!((loc.file.ends_with("tcgen05.rs"), loc.line), (true, line), "{e}");
        }
    }
}
