//! The tcgen05 facts, each in one place: tensor-memory geometry and allocation rules, the MMA
//! shapes and type combinations of PTX ISA Table 39 (dense, without `.ws`), the `tcgen05.ld/st`
//! repeat counts of Table 47, and the checks the builder, `check_kernel` and the DSL's target
//! probe run on tcgen05 instructions.

use crate::ir::*;

/// Lanes (rows) of one CTA's tensor memory ("512 columns and 128 rows per CTA").
pub const TMEM_LANES: u32 = 128;
/// Columns of one CTA's tensor memory, each cell 32 bits.
pub const TMEM_COLUMNS: u32 = 512;
/// "The unit of allocation is 32 columns and the number of columns being allocated must be a
/// power of 2" (`nCols` in [32, 512]).
pub const TMEM_ALLOC_UNIT: u32 = 32;
/// Lanes one warp of a warpgroup may access with `tcgen05.ld/st`: warp `w % 4` accesses lanes
/// `32 (w % 4) .. 32 (w % 4) + 31` ("Access restrictions").
pub const TMEM_LANES_PER_WARP: u32 = 32;

impl UmmaElem {
    /// K of one dense MMA (PTX ISA Table 39): 32 bytes of K, whatever the type.
    pub fn k(self) -> u32 {
        32 / self.bytes()
    }
}

/// Why `ncols` cannot be allocated or deallocated, if it cannot.
pub fn alloc_columns_problem(ncols: u32) -> Option<String> {
    if ncols.is_power_of_two() && (TMEM_ALLOC_UNIT..=TMEM_COLUMNS).contains(&ncols) {
        None
    } else {
        Some(format!(
            "tensor memory is allocated in powers of two of {TMEM_ALLOC_UNIT} to {TMEM_COLUMNS} columns, not {ncols}"
        ))
    }
}

/// Why `M x N` is not a shape of a dense `tcgen05.mma` with `cta_group` (Table 39), if it is
/// not: `.cta_group::1` takes M = 64 or 128 and N in 8..=256 in steps of 8; `.cta_group::2`
/// takes M = 128 or 256 and N in 16..=256 in steps of 16 (the same for `.kind::f16`,
/// `.kind::tf32` and `.kind::f8f6f4`).
pub fn mma_shape_problem(cta_group: CtaGroup, m: u32, n: u32) -> Option<String> {
    let (ms, step) = match cta_group {
        CtaGroup::One => ([64, 128], 8),
        CtaGroup::Two => ([128, 256], 16),
    };
    if !ms.contains(&m) {
        return Some(format!("tcgen05.mma{} has M = {} or {}, not {m}", cta_group.ptx(), ms[0], ms[1]));
    }
    if !(step..=256).contains(&n) || !n.is_multiple_of(step) {
        return Some(format!("tcgen05.mma{} has N in {step}..=256 in steps of {step}, not {n}", cta_group.ptx()));
    }
    None
}

/// Why an instruction descriptor is not valid for `cta_group`, if it is not: types of one
/// kind (`.kind::f16` and `.kind::tf32` take equal A and B types), an f16 accumulator only
/// for f16 or FP8 inputs, the shape (Table 39), and the transposes Phaser can lay out (TF32
/// transposes need 128-byte swizzling with 32-byte atoms, which Phaser's tiles do not use;
/// an FP8 MN-major B needs N in steps of 16, or 32 with `.cta_group::2` (Table 50)).
pub fn instr_desc_problem(d: &InstrDesc, cta_group: CtaGroup) -> Option<String> {
    if d.a.kind() != d.b.kind() {
        return Some(format!("A is {} but B is {}: both must be of one MMA kind", d.a.name(), d.b.name()));
    }
    if d.kind() != MmaKind::F8f6f4 && d.a != d.b {
        return Some(format!(
            "{} multiplies equal types, not {} by {}",
            d.kind().ptx().trim_start_matches('.'),
            d.a.name(),
            d.b.name()
        ));
    }
    if d.d == UmmaAcc::F16 && !matches!(d.a, UmmaElem::F16 | UmmaElem::E4M3 | UmmaElem::E5M2) {
        return Some(format!("an f16 accumulator takes f16 or FP8 inputs, not {}", d.a.name()));
    }
    if let Some(p) = mma_shape_problem(cta_group, d.m, d.n) {
        return Some(p);
    }
    if d.kind() == MmaKind::Tf32 && (d.a_major == Major::MN || d.b_major == Major::MN) {
        return Some(
            "MN-major (transposed) tf32 operands need 128-byte swizzling with 32-byte atoms, which Phaser's tiles \
             do not use"
                .into(),
        );
    }
    if d.kind() == MmaKind::F8f6f4 && d.b_major == Major::MN {
        let step = 16 * cta_group.ctas();
        if !d.n.is_multiple_of(step) || d.n < step {
            return Some(format!(
                "an MN-major 8-bit B needs N in {step}..=256 in steps of {step} (Table 50), not {}",
                d.n
            ));
        }
    }
    None
}

fn is_32bit(ty: Type) -> bool {
    ty.size() == 4
}

/// Range and type problems of one tcgen05 instruction.
pub fn value_problems(op: &Tcgen05Op, out: &mut Vec<String>) {
    let addr32 = |v: &Value, what: &str, out: &mut Vec<String>| {
        if !is_32bit(v.ty()) || v.ty().is_float() {
            out.push(format!("{what} must be a 32-bit integer, found {}", v.ty()));
        }
    };
    let desc64 = |v: &Value, what: &str, out: &mut Vec<String>| {
        if v.ty().size() != 8 || v.ty().is_float() {
            out.push(format!("{what} must be a 64-bit descriptor, found {}", v.ty()));
        }
    };
    let columns = |ncols: &Value, out: &mut Vec<String>| {
        addr32(ncols, "the column count", out);
        if let Some(n) = ncols.as_imm_i128() {
            if let Some(p) = alloc_columns_problem(u32::try_from(n).unwrap_or(0)) {
                out.push(p);
            }
        }
    };
    match op {
        Tcgen05Op::Alloc { dst, ncols, .. } => {
            addr32(dst, "the shared address the allocation is written to", out);
            columns(ncols, out);
        }
        Tcgen05Op::Dealloc { taddr, ncols, .. } => {
            addr32(taddr, "a tensor-memory address", out);
            columns(ncols, out);
        }
        Tcgen05Op::RelinquishAllocPermit { .. } | Tcgen05Op::Wait { .. } | Tcgen05Op::Fence { .. } => {}
        Tcgen05Op::Ld { shape, num, dst, taddr, .. } => {
            addr32(taddr, "a tensor-memory address", out);
            ld_st_problems(*shape, *num, dst.len(), dst.iter().map(|r| r.ty), out);
        }
        Tcgen05Op::St { shape, num, taddr, src, .. } => {
            addr32(taddr, "a tensor-memory address", out);
            ld_st_problems(*shape, *num, src.len(), src.iter().map(|v| v.ty()), out);
        }
        Tcgen05Op::Cp { taddr, s_desc, .. } => {
            addr32(taddr, "a tensor-memory address", out);
            desc64(s_desc, "the source of tcgen05.cp", out);
        }
        Tcgen05Op::Shift { taddr, .. } => {
            addr32(taddr, "a tensor-memory address", out);
            if let Some(a) = taddr.as_imm_i128() {
                if (a >> 16) % 32 != 0 {
                    out.push(format!("tcgen05.shift: the lane of address {a:#x} must be aligned to 32"));
                }
            }
        }
        Tcgen05Op::Mma(m) => {
            addr32(&m.d_tmem, "the accumulator's tensor-memory address", out);
            match &m.a {
                MmaA::Desc(v) => desc64(v, "A", out),
                MmaA::Tmem(v) => addr32(v, "A's tensor-memory address", out),
            }
            desc64(&m.b_desc, "B", out);
            if matches!(m.idesc, Value::Imm { .. }) || !is_32bit(m.idesc.ty()) || m.idesc.ty().is_float() {
                out.push(format!(
                    "the instruction descriptor is a 32-bit register operand, found {}",
                    if matches!(m.idesc, Value::Imm { .. }) {
                        "an immediate".to_string()
                    } else {
                        m.idesc.ty().to_string()
                    }
                ));
            }
            if m.enable_input_d.ty() != Type::Pred {
                out.push(format!("enable-input-d is a predicate, found {}", m.enable_input_d.ty()));
            }
            if let Some(d) = &m.desc {
                if d.kind() != m.kind {
                    out.push(format!(
                        "the instruction descriptor is for {} but the instruction says {}",
                        d.kind().ptx(),
                        m.kind.ptx()
                    ));
                } else if let Some(p) = instr_desc_problem(d, m.cta_group) {
                    out.push(format!("tcgen05.mma instruction descriptor: {p}"));
                }
            }
        }
        Tcgen05Op::Commit { bar, multicast, .. } => {
            addr32(bar, "an mbarrier address", out);
            if let Some(mask) = multicast {
                match mask.as_imm_i128() {
                    Some(x) if !(0..=0xFFFF).contains(&x) => {
                        out.push(format!("the multicast CTA mask {x:#x} has more than 16 bits"))
                    }
                    Some(_) => {}
                    None if mask.ty().size() != 2 => {
                        out.push(format!("the multicast CTA mask is 16-bit, found {}", mask.ty()))
                    }
                    None => {}
                }
            }
        }
    }
}

fn ld_st_problems(shape: LdStShape, num: u32, regs: usize, tys: impl Iterator<Item = Type>, out: &mut Vec<String>) {
    if !num.is_power_of_two() || num > shape.max_num() {
        out.push(format!("{} takes .num = .x1, .x2, .. .x{}, not .x{num}", shape.ptx(), shape.max_num()));
    } else if regs as u32 != shape.regs_per_num() * num {
        out.push(format!(
            "{}.x{num} moves {} registers per thread, {regs} given",
            shape.ptx(),
            shape.regs_per_num() * num
        ));
    }
    for t in tys {
        if !is_32bit(t) {
            out.push(format!("tcgen05.ld/st registers are 32-bit, found {t}"));
            break;
        }
    }
}

/// The `.cta_group` conflicts of a kernel: "All `tcgen05` instructions within a kernel must
/// specify the same value for the `.cta_group` qualifier". Each op that disagrees with the
/// first is reported where it is.
pub fn cta_group_conflicts(k: &Kernel) -> Vec<(Option<SourceLoc>, String)> {
    let mut first: Option<(CtaGroup, String, Option<SourceLoc>)> = None;
    let mut out = Vec::new();
    walk_insts(k.body(), &mut |inst, loc| {
        let Inst::Tcgen05(op) = inst else { return };
        let Some(g) = op.cta_group() else { return };
        match &first {
            None => first = Some((g, op.mnemonic(), loc)),
            Some((g0, what, at)) if *g0 != g => {
                let at = at.map(|l| format!(" at {l}")).unwrap_or_default();
                out.push((
                    loc,
                    format!(
                        "`{}{}` but `{what}{}`{at}: all tcgen05 instructions of a kernel must use the same \
                         .cta_group (PTX ISA 9.7.16)",
                        op.mnemonic(),
                        g.ptx(),
                        g0.ptx()
                    ),
                ));
            }
            Some(_) => {}
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_sizes() {
        for n in [32, 64, 128, 256, 512] {
            assert_eq!(alloc_columns_problem(n), None);
        }
        for n in [0, 1, 16, 48, 96, 1024] {
            assert!(alloc_columns_problem(n).unwrap().contains("powers of two"), "{n}");
        }
    }

    #[test]
    fn mma_shapes_follow_table_39() {
        assert_eq!(mma_shape_problem(CtaGroup::One, 128, 256), None);
        assert_eq!(mma_shape_problem(CtaGroup::One, 64, 8), None);
        assert!(mma_shape_problem(CtaGroup::One, 256, 128).is_some());
        assert!(mma_shape_problem(CtaGroup::One, 128, 12).is_some());
        assert_eq!(mma_shape_problem(CtaGroup::Two, 256, 256), None);
        assert_eq!(mma_shape_problem(CtaGroup::Two, 128, 16), None);
        assert!(mma_shape_problem(CtaGroup::Two, 64, 64).is_some());
        assert!(mma_shape_problem(CtaGroup::Two, 256, 24).unwrap().contains("steps of 16"));
    }

    #[test]
    fn descriptor_combinations() {
        let ok = InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 256);
        assert_eq!(instr_desc_problem(&ok, CtaGroup::One), None);
        let mixed = InstrDesc::new(UmmaElem::F16, UmmaElem::BF16, 128, 256);
        assert!(instr_desc_problem(&mixed, CtaGroup::One).unwrap().contains("equal types"));
        let fp8 = InstrDesc::new(UmmaElem::E4M3, UmmaElem::E5M2, 128, 256);
        assert_eq!(instr_desc_problem(&fp8, CtaGroup::One), None);
        let kinds = InstrDesc::new(UmmaElem::BF16, UmmaElem::E4M3, 128, 256);
        assert!(instr_desc_problem(&kinds, CtaGroup::One).unwrap().contains("one MMA kind"));
        let acc = InstrDesc::new(UmmaElem::BF16, UmmaElem::BF16, 128, 64).with_acc(UmmaAcc::F16);
        assert!(instr_desc_problem(&acc, CtaGroup::One).unwrap().contains("f16 accumulator"));
        let t = InstrDesc::new(UmmaElem::TF32, UmmaElem::TF32, 128, 64).with_majors(Major::K, Major::MN);
        assert!(instr_desc_problem(&t, CtaGroup::One).unwrap().contains("tf32"));
        let f8t = InstrDesc::new(UmmaElem::E4M3, UmmaElem::E4M3, 256, 48).with_majors(Major::K, Major::MN);
        assert!(instr_desc_problem(&f8t, CtaGroup::Two).unwrap().contains("Table 50"));
    }
}
