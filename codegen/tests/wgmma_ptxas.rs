//! Every wgmma and fragment form the printer emits assembles with ptxas for sm_90a: all 32
//! N of m64nNk16 (bf16 and f16), A from a descriptor or registers, MN-major (transposed)
//! operands, negations, scale-d as a predicate register or an immediate, the FP8 k32 forms,
//! packing, `stmatrix` .x1/.x2/.x4 with and without `.trans`, and vector stores.

use phaser_codegen::builder::{Accumulator, KernelBuilder};
use phaser_codegen::ir::*;
use phaser_codegen::{emit_kernel, ptx_text, ptxas, Kernel, Target};

/// One kernel exercising the forms for accumulator width `n`.
fn zoo(n: u32) -> Kernel {
    let mut k = KernelBuilder::new(format!("wgmma_zoo_n{n}"), Target::Sm90a);
    let out = k.param_global("out", Type::F32, true);
    let flag = k.param("flag", Type::U32);
    k.require_block(128, 1, 1);
    // A: 64 x 64 K-major; B: n x 64 K-major and 64 x n MN-major, with the widest swizzle
    // whose block (8, 16, 32 or 64 elements) divides n; FP8 tiles are 64 x 128 bytes.
    let a16 = SmemTile::new(2, 64, 64, Swizzle::B128);
    let b16k = SmemTile::new(2, n, 64, Swizzle::B128);
    let mn_swizzle = [Swizzle::B128, Swizzle::B64, Swizzle::B32, Swizzle::None]
        .into_iter()
        .find(|s| n.is_multiple_of(s.row_bytes() / 2))
        .unwrap();
    let b16mn = SmemTile::new(2, 64, n, mn_swizzle);
    let a8 = SmemTile::new(1, 64, 128, Swizzle::B128);
    let b8 = SmemTile::new(1, n, 128, Swizzle::B128);
    // Dynamic shared memory (1024-byte aligned): the tiles outgrow the 48 KiB static limit.
    let smem = k.dynamic_shared(Type::B16, 0);
    let base = k.shared_base_addr(smem);
    let mut at = 0;
    let mut place = |k: &mut KernelBuilder, t: SmemTile| {
        let a = k.add(base, Value::u32(at));
        at += t.bytes();
        a
    };
    let (pa16, pb16k, pb16mn, pa8, pb8) =
        (place(&mut k, a16), place(&mut k, b16k), place(&mut k, b16mn), place(&mut k, a8), place(&mut k, b8));
    let acc = Accumulator::new(&mut k, n);
    acc.zero(&mut k);
    let p = k.ne(flag, Value::u32(0));
    k.wgmma_fence();
    for (elem, major_b, pb, tb) in [(MmaElem::BF16, Major::K, pb16k, b16k), (MmaElem::F16, Major::MN, pb16mn, b16mn)] {
        let a = k.matrix_desc(elem, MmaOperand::new(a16, Major::K), pa16);
        let b = k.matrix_desc(elem, MmaOperand::new(tb, major_b), pb);
        k.wgmma(&acc, &a, 0, &b, 0, 0, p);
        k.wgmma(&acc, &a, 0, &b, 0, 16, Value::pred(true));
        let r = k.var(Value::imm_u(0x3f80_3f80, Type::B32));
        k.wgmma_reg_a(&acc, [Value::Reg(r); 4], elem, &b, 0, 32, Value::pred(false));
        // Negated operands and a transposed (M-major) A through the raw form.
        let a_mn = k.matrix_desc(elem, MmaOperand::new(SmemTile::new(2, 64, 64, Swizzle::B128), Major::MN), pa16);
        let (ad, bd) = (a_mn.slice(&mut k, 0, 16, 64, 16), b.slice(&mut k, 0, 48, n, 16));
        k.push_mma(MmaAsync {
            n,
            a_ty: elem,
            b_ty: elem,
            d: acc.regs.clone(),
            a: WgmmaA::Desc(ad),
            b_desc: bd,
            scale_d: p,
            negate_a: true,
            negate_b: true,
            trans_a: true,
            trans_b: major_b == Major::MN,
        });
    }
    for (ta, tb) in [(MmaElem::E4M3, MmaElem::E5M2), (MmaElem::E5M2, MmaElem::E4M3)] {
        let a = k.matrix_desc(ta, MmaOperand::new(a8, Major::K), pa8);
        let b = k.matrix_desc(tb, MmaOperand::new(b8, Major::K), pb8);
        k.wgmma(&acc, &a, 0, &b, 0, 32, Value::pred(true));
        let r = k.var(Value::imm_u(0x3838_3838, Type::B32));
        k.wgmma_reg_a(&acc, [Value::Reg(r); 4], ta, &b, 0, 96, p);
    }
    k.wgmma_commit_group();
    k.wgmma_wait_group(0);
    // Fragments out: stmatrix (all widths, both orientations), vector stores, global stores.
    let t = k.thread_idx(Dim::X);
    let c = SmemTile::new(2, 64, 64, Swizzle::B128);
    if n >= 64 {
        acc.store_bf16_stmatrix(&mut k, &c, pa16, t, 0, 0, 0, 64);
    }
    let lane_row = k.mul(t, Value::u32(16));
    let addr = k.add(pa16, lane_row);
    let h0 = acc.pack_bf16(&mut k, 0);
    let h1 = k.pack_half2(acc.get(2), acc.get(3), Type::F16);
    k.stmatrix(addr, &[h0], false);
    k.stmatrix(addr, &[h0, h1], true);
    k.stmatrix(addr, &[h0, h1, h0, h1], true);
    k.st_vec(Space::Shared, addr, 0, &[h0, h1, h0, h1]);
    k.st_vec(Space::Shared, addr, 8, &[acc.get(0), acc.get(1)]);
    let i = k.mul(t, Value::u32(n / 2));
    for r in 0..(n / 2) as usize {
        let at = k.add(i, Value::u32(r as u32));
        k.st_global(out, at, acc.get(r));
    }
    let g = k.global_elem_addr(out, t);
    k.st_vec(Space::Global, g, 0, &[acc.get(0), acc.get(1), acc.get(2), acc.get(3)]);
    k.finish().unwrap_or_else(|e| panic!("n={n}: {e}"))
}

#[test]
fn every_wgmma_form_assembles_for_sm90a() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for n in (8..=256).step_by(8) {
        let k = zoo(n);
        let ptx = emit_kernel(&k).unwrap();
        assert_eq!(ptx_text::count(&ptx, "wgmma.mma_async.*"), 12, "n={n}");
        assert!(
            ptx_text::has(&ptx, &format!("wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16"))
                && ptx_text::has(&ptx, &format!("wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e5m2")),
            "n={n}"
        );
        assert!(ptx_text::has(&ptx, "stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 [%r*], {%r*, %r*}"));
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, "sm_90a") {
            panic!("ptxas -arch=sm_90a rejected the wgmma zoo for n={n}:\n{msg}\n--- PTX ---\n{ptx}");
        }
    }
}

#[test]
fn target_checks_name_the_problem() {
    // Mismatched 16-bit types, a transposed FP8 operand, and a wrong accumulator width are
    // refused by the target check, whatever built the IR.
    let mut k = KernelBuilder::new("bad", Target::Sm90a);
    let d: Vec<Reg> = (0..4).map(|_| k.new_reg(Type::F32)).collect();
    let desc = k.var(Value::u64(0));
    for (a_ty, b_ty, trans_b, n) in [
        (MmaElem::BF16, MmaElem::F16, false, 8),
        (MmaElem::E4M3, MmaElem::E4M3, true, 8),
        (MmaElem::BF16, MmaElem::BF16, false, 12),
    ] {
        k.push_mma(MmaAsync {
            n,
            a_ty,
            b_ty,
            d: d.clone(),
            a: WgmmaA::Desc(Value::Reg(desc)),
            b_desc: Value::Reg(desc),
            scale_d: Value::pred(true),
            negate_a: false,
            negate_b: false,
            trans_a: false,
            trans_b,
        });
    }
    let e = k.finish().unwrap_err().to_string();
    assert!(e.contains("wgmma multiplies bf16 by f16"), "{e}");
    assert!(e.contains("MN-major (transposed) wgmma operands exist only for f16/bf16"), "{e}");
    assert!(
        e.contains("wgmma N = 12: N must be a multiple of 8 in 8..=256")
            && e.contains("6 f32 registers per thread, 4 given"),
        "{e}"
    );
    assert!(e.contains("tests/wgmma_ptxas.rs:"), "errors carry the Rust line: {e}");
}
