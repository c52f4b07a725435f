//! PTX text of the tcgen05 family (PTX ISA 9.7.16), spelled as the ISA's syntax blocks do.

use super::inst::InstCtx;
use super::operand::*;
use crate::ir::*;

/// Registers per printed line of a long `tcgen05.ld/st` vector.
const REGS_PER_LINE: usize = 8;

fn vector(items: &[String]) -> String {
    let lines: Vec<String> = items.chunks(REGS_PER_LINE).map(|c| c.join(", ")).collect();
    if lines.len() <= 1 {
        format!("{{{}}}", lines.join(""))
    } else {
        format!("{{\n\t\t{}}}", lines.join(",\n\t\t"))
    }
}

/// `, split` of the `16x32bx2` shape.
fn split(shape: LdStShape) -> String {
    match shape {
        LdStShape::S16x32bx2 { split } => format!(", {split}"),
        _ => String::new(),
    }
}

pub fn tcgen05(op: &Tcgen05Op, cx: &InstCtx) -> String {
    match op {
        Tcgen05Op::Alloc { cta_group, dst, ncols } => {
            format!("tcgen05.alloc{}.sync.aligned{}.b32 [{}], {};", cta_group.ptx(), cx.cta(), value(dst), value(ncols))
        }
        Tcgen05Op::Dealloc { cta_group, taddr, ncols } => {
            format!("tcgen05.dealloc{}.sync.aligned.b32 {}, {};", cta_group.ptx(), value(taddr), value(ncols))
        }
        Tcgen05Op::RelinquishAllocPermit { cta_group } => {
            format!("tcgen05.relinquish_alloc_permit{}.sync.aligned;", cta_group.ptx())
        }
        Tcgen05Op::Ld { shape, num, pack16, dst, taddr } => {
            let regs: Vec<String> = dst.iter().map(|r| reg(*r)).collect();
            format!(
                "tcgen05.ld.sync.aligned{}.x{num}{}.b32 {}, [{}]{};",
                shape.ptx(),
                if *pack16 { ".pack::16b" } else { "" },
                vector(&regs),
                value(taddr),
                split(*shape)
            )
        }
        Tcgen05Op::St { shape, num, unpack16, taddr, src } => {
            let regs: Vec<String> = src.iter().map(value).collect();
            format!(
                "tcgen05.st.sync.aligned{}.x{num}{}.b32 [{}]{}, {};",
                shape.ptx(),
                if *unpack16 { ".unpack::16b" } else { "" },
                value(taddr),
                split(*shape),
                vector(&regs)
            )
        }
        Tcgen05Op::Wait { st } => format!("tcgen05.wait::{}.sync.aligned;", if *st { "st" } else { "ld" }),
        Tcgen05Op::Cp { cta_group, shape, taddr, s_desc } => {
            format!("tcgen05.cp{}{} [{}], {};", cta_group.ptx(), shape.ptx(), value(taddr), value(s_desc))
        }
        Tcgen05Op::Shift { cta_group, taddr } => format!("tcgen05.shift{}.down [{}];", cta_group.ptx(), value(taddr)),
        Tcgen05Op::Mma(m) => {
            let a = match &m.a {
                MmaA::Desc(v) => value(v),
                MmaA::Tmem(v) => format!("[{}]", value(v)),
            };
            format!(
                "tcgen05.mma{}{} [{}], {a}, {}, {}, {};",
                m.cta_group.ptx(),
                m.kind.ptx(),
                value(&m.d_tmem),
                value(&m.b_desc),
                value(&m.idesc),
                value(&m.enable_input_d)
            )
        }
        Tcgen05Op::Commit { cta_group, bar, multicast } => match multicast {
            None => {
                format!("tcgen05.commit{}.mbarrier::arrive::one.shared::cluster.b64 [{}];", cta_group.ptx(), value(bar))
            }
            Some(mask) => format!(
                "tcgen05.commit{}.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{}], {};",
                cta_group.ptx(),
                value(bar),
                value(mask)
            ),
        },
        Tcgen05Op::Fence { after } => {
            format!("tcgen05.fence::{}_thread_sync;", if *after { "after" } else { "before" })
        }
    }
}
