//! PTX text of the warpgroup-MMA and fragment families.

use super::inst::InstCtx;
use super::operand::*;
use crate::ir::*;

/// Registers per printed line of a long accumulator list, so a 128-register `wgmma` stays
/// readable.
const REGS_PER_LINE: usize = 8;

fn reg_list(regs: &[String]) -> String {
    let lines: Vec<String> = regs.chunks(REGS_PER_LINE).map(|c| c.join(", ")).collect();
    if lines.len() <= 1 {
        format!("{{{}}}", lines.join(""))
    } else {
        format!("{{\n\t\t{}}}", lines.join(",\n\t\t"))
    }
}

fn imm_scale(negate: bool) -> &'static str {
    if negate {
        "-1"
    } else {
        "1"
    }
}

pub fn wgmma(op: &WgmmaOp) -> String {
    match op {
        WgmmaOp::Fence => "wgmma.fence.sync.aligned;".into(),
        WgmmaOp::CommitGroup => "wgmma.commit_group.sync.aligned;".into(),
        WgmmaOp::WaitGroup { n } => format!("wgmma.wait_group.sync.aligned {n};"),
        WgmmaOp::MmaAsync(m) => {
            let d: Vec<String> = m.d.iter().map(|r| reg(*r)).collect();
            let a = match &m.a {
                WgmmaA::Desc(v) => value(v),
                WgmmaA::Regs(rs) => format!("{{{}}}", rs.iter().map(value).collect::<Vec<_>>().join(", ")),
            };
            let mut tail = format!("{}, {}, {}", value(&m.scale_d), imm_scale(m.negate_a), imm_scale(m.negate_b));
            // Transposes exist only for 16-bit types; `imm-trans-a` only with an A descriptor.
            if !m.a_ty.is_fp8() {
                if let WgmmaA::Desc(_) = m.a {
                    tail.push_str(&format!(", {}", m.trans_a as u8));
                }
                tail.push_str(&format!(", {}", m.trans_b as u8));
            }
            format!(
                "wgmma.mma_async.sync.aligned.{}.f32.{}.{} {}, {a}, {}, {tail};",
                m.shape(),
                m.a_ty.ptx(),
                m.b_ty.ptx(),
                reg_list(&d),
                value(&m.b_desc)
            )
        }
    }
}

pub fn fragment(op: &FragmentOp, cx: &InstCtx) -> Vec<String> {
    let t = |trans: bool| if trans { ".trans" } else { "" };
    match op {
        FragmentOp::PackHalf2 { dst, hi, lo, to } => {
            vec![format!("cvt.rn.{to}x2.f32 {}, {}, {};", reg(*dst), value(hi), value(lo))]
        }
        FragmentOp::PackFp8x2 { dst, hi, lo, to } => {
            vec![format!("cvt.rn.satfinite.{to}x2.f32 {}, {}, {};", reg(*dst), value(hi), value(lo))]
        }
        FragmentOp::UnpackHalf2 { lo, hi, src, from } => {
            if *from == Type::BF16 {
                // A bf16 is the high half of the f32 with the same value: shift, no rounding.
                vec![
                    "{".into(),
                    "	.reg .b32 %unpack_w;".into(),
                    format!("	shl.b32 %unpack_w, {}, 16;", value(src)),
                    format!("	mov.b32 {}, %unpack_w;", reg(*lo)),
                    format!("	and.b32 %unpack_w, {}, 0xffff0000;", value(src)),
                    format!("	mov.b32 {}, %unpack_w;", reg(*hi)),
                    "}".into(),
                ]
            } else {
                vec![
                    "{".into(),
                    "	.reg .b16 %unpack_lo, %unpack_hi;".into(),
                    format!("	mov.b32 {{%unpack_lo, %unpack_hi}}, {};", value(src)),
                    format!("	cvt.f32.f16 {}, %unpack_lo;", reg(*lo)),
                    format!("	cvt.f32.f16 {}, %unpack_hi;", reg(*hi)),
                    "}".into(),
                ]
            }
        }
        FragmentOp::StMatrix { addr, regs, trans } => vec![format!(
            "stmatrix.sync.aligned.m8n8.x{}{}{}.b16 [{}], {{{}}};",
            regs.len(),
            t(*trans),
            cx.cta(),
            value(addr),
            regs.iter().map(value).collect::<Vec<_>>().join(", ")
        )],
        FragmentOp::LdMatrix { dsts, addr, trans } => vec![format!(
            "ldmatrix.sync.aligned.m8n8.x{}{}{}.b16 {{{}}}, [{}];",
            dsts.len(),
            t(*trans),
            cx.cta(),
            dsts.iter().map(|r| reg(*r)).collect::<Vec<_>>().join(", "),
            value(addr)
        )],
    }
}
