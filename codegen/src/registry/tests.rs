//! The registry's own consistency: names, choices, and every entry lowering cleanly.

use super::*;
use crate::arch::Target;

#[test]
fn paths_are_unique_and_aliases_name_a_library() {
    let all: Vec<&OpDef> = ops().collect();
    for (i, o) in all.iter().enumerate() {
        assert!(all[..i].iter().all(|p| p.path != o.path), "{} twice", o.path);
        assert!(!o.doc.is_empty() && !o.doc.contains('\n'), "{}: the doc is one line", o.path);
        for a in o.aliases {
            let (lib, name) = a.split_once(':').unwrap_or_else(|| panic!("{}: alias {a} lacks `library:`", o.path));
            assert!(["cuda", "cute", "cutlass", "gluon"].contains(&lib) && !name.is_empty(), "{}: {a}", o.path);
            assert!(
                all.iter().filter(|p| p.aliases.contains(a)).count() == 1,
                "{a} names two ops: an alias leads to one op"
            );
            assert!(lookup(name).is_none(), "{}: alias {a} is another op's path", o.path);
        }
    }
}

#[test]
fn aliases_find_their_op() {
    // CuTe's names are ops of their own (`T.cute.wait_barrier`), with CuTe's semantics.
    assert_eq!(find_alias("wait_barrier").map(|(o, _)| o.path), Some("cute.wait_barrier"));
    assert_eq!(find_alias("cute::wait_barrier").map(|(o, _)| o.path), Some("cute.wait_barrier"));
    assert_eq!(find_alias("initialize_barrier").map(|(o, _)| o.path), Some("cute.initialize_barrier"));
    // Gluon's blocking `mbarrier.wait` is our `try_wait` loop.
    assert_eq!(find_alias("mbarrier.wait").map(|(o, _)| o.path), Some("ptx.mbarrier.try_wait"));
    assert_eq!(find_alias("__syncwarp").map(|(o, _)| o.path), Some("cuda.warp_sync"));
    assert_eq!(find_alias("cuda::__shfl_xor_sync").map(|(o, _)| o.path), Some("ptx.shfl.sync.bfly"));
    assert_eq!(find_alias("atomicCAS").map(|(o, _)| o.path), Some("atomic.cas"));
    assert_eq!(
        find_alias("mbarrier.expect").map(|(o, a)| (o.path, a)),
        Some(("ptx.mbarrier.arrive.expect_tx", "gluon:mbarrier.expect"))
    );
    assert_eq!(find_alias("__syncthreads").map(|(o, _)| o.path), Some("cuda.cta_sync"));
    assert_eq!(find_alias("syncthreads").map(|(o, _)| o.path), Some("cuda.cta_sync"));
    assert!(find_alias("ptx.mbarrier.try_wiat").is_none());
}

#[test]
fn every_variant_lowers_without_build_errors_on_the_newest_target() {
    for o in ops() {
        for v in variants(o) {
            lower::variant_kernel(o, &v, Target::Sm100a)
                .unwrap_or_else(|e| panic!("{} ({}, literals: {}): {e}", o.path, v.label, v.literals));
        }
    }
}

#[test]
fn a_call_of_the_wrong_shape_is_a_build_error_not_a_panic() {
    let mut k = crate::KernelBuilder::new("k", Target::Sm90a);
    call(&mut k, "ptx.mbarrier.init", vec![OpArg::Const(1)], None, "x");
    call(&mut k, "ptx.mbarrier.frobnicate", vec![], None, "x");
    let v: crate::builder::Barrier = call_as(&mut k, "thread_idx", [], None, "x");
    assert_eq!(v.addr, crate::Value::u32(0));
    let e = k.finish().unwrap_err().to_string();
    assert!(e.contains("`T.ptx.mbarrier.init(bar, count)` got 1 arguments"), "{e}");
    assert!(e.contains("no `T.ptx.mbarrier.frobnicate`"), "{e}");
    assert!(e.contains("`T.thread_idx` returned Value"), "{e}");
}

#[test]
fn the_chosen_variant_is_what_gets_checked() {
    let arrive = lookup("ptx.mbarrier.arrive_sem").unwrap();
    let hints = |sem| vec![ArgHint::Any, ArgHint::Choice(sem), ArgHint::Choice("cta")];
    let release =
        support(arrive, &Variant { label: String::new(), literals: false, hints: hints("release"), elem: None });
    let relaxed =
        support(arrive, &Variant { label: String::new(), literals: false, hints: hints("relaxed"), elem: None });
    assert_eq!(release.unwrap().ptx, crate::PtxVersion::new(8, 0));
    assert_eq!(relaxed.unwrap().ptx, crate::PtxVersion::new(8, 6));
    let p = probe(Target::Sm80, arrive, &hints("relaxed"), None);
    let u = p.unavailable.expect("sm_80 has no .relaxed arrive");
    assert_eq!((u.requirement.what, u.fix), ("`.relaxed` mbarrier semantics", Some(Target::Sm90)));
    let init = lookup("ptx.mbarrier.init").unwrap();
    let p = probe(Target::Sm90a, init, &[ArgHint::Any, ArgHint::Literal(0, None)], None);
    assert_eq!(p.value_problems, vec!["mbarrier arrival count 0 is out of range: must be in 1..=1048575".to_string()]);
}

#[test]
fn a_warp_level_name_never_suggests_a_wider_barrier() {
    for unknown in ["warp_sync", "syncwarp", "cuda.sync_warp", "cuda.warpsync", "warp_barrier", "cuda.warp_cta_sync"] {
        for wide in WIDER_THAN_A_WARP {
            assert!(lookup(wide).is_some(), "{wide} is an op");
            assert!(!may_suggest(unknown, wide), "{unknown} may suggest {wide}");
        }
        assert_eq!(warp_sync_for(unknown).map(|o| o.path), Some("cuda.warp_sync"), "{unknown}");
    }
    // A CTA-wide name still gets the CTA barrier; a warpgroup name the warpgroup barrier.
    assert!(may_suggest("cuda.cta_synk", "cuda.cta_sync"));
    assert!(may_suggest("warpgroup_sync", "cuda.warpgroup_sync"));
    assert!(warp_sync_for("warpgroup_sync").is_none());
}

/// The wgmma ops multiply FP8 tiles in the K-major forms only: every variant with an MN-major
/// operand lacks an e4m3/e5m2 twin, and each FP8 variant's instruction carries its own types.
#[test]
fn wgmma_ops_have_their_k_major_fp8_forms() {
    use crate::ir::{walk_insts, Inst, WgmmaOp};
    for path in ["ptx.wgmma.mma_async", "ptx.wgmma.mma_async_rs"] {
        let op = lookup(path).unwrap();
        let vs = variants(op);
        for elem in ["e4m3", "e5m2"] {
            let fp8: Vec<_> = vs.iter().filter(|v| v.label.starts_with(elem)).collect();
            assert!(!fp8.is_empty(), "{path}: no {elem} variant");
            assert!(fp8.iter().all(|v| !v.label.contains("\"mn\"")), "{path}: an MN-major {elem} variant");
            for v in fp8 {
                let k = variant_kernel(op, v, Target::Sm90a).unwrap();
                let mut types = Vec::new();
                walk_insts(k.body(), &mut |i, _| {
                    if let Inst::Wgmma(WgmmaOp::MmaAsync(m)) = i {
                        types.push((m.a_ty.ptx(), m.b_ty.ptx()));
                    }
                });
                assert_eq!(types, [(elem, elem)], "{path} ({})", v.label);
            }
        }
        let k_major = vs.iter().filter(|v| !v.label.contains("\"mn\"") && !v.label.starts_with('e')).count();
        assert_eq!(vs.iter().filter(|v| v.label.starts_with("e4m3")).count(), k_major, "{path}");
    }
}
