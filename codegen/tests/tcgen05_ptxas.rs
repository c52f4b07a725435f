//! Every tcgen05 form the builder can emit assembles with `ptxas -arch=sm_100a`: each
//! `tcgen05.ld/st` shape at its smallest and largest `.num`, every `tcgen05.cp` shape, every
//! MMA kind with A from shared and from tensor memory, M = 64 and 128, `.cta_group::2` with
//! M = 256 (a kernel of its own: one `.cta_group` per kernel), commits with and without
//! multicast. The registry's matrix (`registry_ptxas.rs`) covers the DSL's forms.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::*;
use phaser_codegen::{emit_kernel, ptx_text, ptxas, Kernel, Target};

fn kernel(group: CtaGroup) -> Kernel {
    let mut k = KernelBuilder::new(format!("tcgen05_forms_{}", group.ctas()), Target::Sm100a);
    k.require_block(128, 1, 1);
    if group == CtaGroup::Two {
        k.cluster(2, 1, 1);
    }
    let slot = k.alloc_shared("slot", Type::U32, 1);
    let bars = k.alloc_barriers("b", 1);
    let sa = k.shared_base_addr(slot);
    k.tcgen05_alloc(group, sa, Value::u32(512));
    k.tcgen05_relinquish_alloc_permit(group);
    let t = k.ld_shared(slot, Value::u32(0));
    let desc = k.param("desc", Type::U64);
    let bar = k.barrier_at(bars, Value::u32(0));
    let ms: &[u32] = if group == CtaGroup::One { &[64, 128] } else { &[256] };
    for &m in ms {
        for (a, b) in [
            (UmmaElem::BF16, UmmaElem::BF16),
            (UmmaElem::F16, UmmaElem::F16),
            (UmmaElem::TF32, UmmaElem::TF32),
            (UmmaElem::E4M3, UmmaElem::E5M2),
        ] {
            let mut descs = vec![InstrDesc::new(a, b, m, 256)];
            if a == UmmaElem::F16 {
                descs.push(InstrDesc::new(a, b, m, 64).with_acc(UmmaAcc::F16).with_majors(Major::MN, Major::MN));
            }
            for d in descs {
                let id = k.instr_desc(d, group);
                k.push_tcgen05_mma(&id, t, MmaA::Desc(desc), desc, Value::pred(true));
                if d.a_major == Major::K {
                    k.push_tcgen05_mma(&id, t, MmaA::Tmem(t), desc, Value::pred(false));
                }
            }
        }
    }
    k.tcgen05_commit_with(group, bar, None);
    k.tcgen05_commit_with(group, bar, Some(Value::u32(3)));
    k.tcgen05_fence_after_thread_sync();
    for shape in [
        LdStShape::S32x32b,
        LdStShape::S16x64b,
        LdStShape::S16x128b,
        LdStShape::S16x256b,
        LdStShape::S16x32bx2 { split: 8 },
    ] {
        for num in [1, shape.max_num()] {
            let v = k.tcgen05_ld(shape, num, t, Type::B32);
            k.tcgen05_st(shape, num, t, &v);
        }
    }
    k.tcgen05_wait_ld();
    k.tcgen05_wait_st();
    for shape in [
        CpShape::S128x256b,
        CpShape::S4x256b,
        CpShape::S128x128b,
        CpShape::S64x128bWarpx2_02_13,
        CpShape::S64x128bWarpx2_01_23,
        CpShape::S32x128bWarpx4,
    ] {
        k.tcgen05_cp(group, shape, t, desc);
    }
    k.tcgen05_shift(group, t);
    k.tcgen05_fence_before_thread_sync();
    k.tcgen05_dealloc(group, t, Value::u32(512));
    k.finish().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_builder_form_assembles_for_sm100a() {
    let ptxas = ptxas::require();
    for group in [CtaGroup::One, CtaGroup::Two] {
        let ptx = emit_kernel(&kernel(group)).unwrap();
        assert!(
            ptx_text::has(&ptx, "tcgen05.ld.*.x128.b32") && ptx_text::has(&ptx, "tcgen05.cp.*.32x128b.warpx4*"),
            "{ptx}"
        );
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, "sm_100a") {
            panic!("{group:?}:\n{msg}\n{ptx}");
        }
    }
}
