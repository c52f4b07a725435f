//! The Blackwell GEMM without a GPU: every configuration (1-CTA and 2-CTA, both with every
//! injected bug too), built with the builder and written in the DSL
//! (`gallery/gemm_sm100_dsl.rs`), assembles for sm_100a with zero spill bytes, the PTX is the tcgen05 form
//! the book describes, and bad configurations are refused with the constraint named.

use phaser::codegen::{emit_kernel, ptx_text, ptxas};
use phaser_examples::gallery::gemm_sm100_dsl;
use phaser_examples::gemm_sm100::*;
use std::path::Path;

/// `ptxas -v` output.
fn assemble_verbose(ptxas: &Path, ptx: &str, name: &str) -> String {
    ptxas::assemble_with(ptxas, ptx, "sm_100a", &["-v"]).unwrap_or_else(|e| panic!("ptxas rejected {name}:\n{e}"))
}

/// `N bytes spill stores, M bytes spill loads` of ptxas -v.
fn spill_bytes(verbose: &str) -> (u64, u64) {
    let line = verbose.lines().find(|l| l.contains("bytes spill stores")).expect("ptxas -v reports spills");
    let nums: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (nums[nums.len() - 2], nums[nums.len() - 1])
}

#[test]
fn every_config_assembles_for_sm100a_without_spills() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    let configs = configs();
    assert!(configs.iter().any(|c| c.two_cta) && configs.iter().any(|c| !c.two_cta));
    for cfg in configs {
        let k = gemm_sm100_kernel(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let ptx = emit_kernel(&k).unwrap();
        assert!(ptx.contains(".target sm_100a") && ptx.contains("// examples/src/gemm_sm100.rs:"), "{}", k.name());
        let g = if cfg.two_cta { "cta_group::2" } else { "cta_group::1" };
        // The book's async GEMM: four MMAs per K block, a commit per stage and per tile, the
        // epilogue's loads and waits, tensor memory allocated and freed by one warp.
        for needle in [
            format!("tcgen05.alloc.{g}.sync.aligned.shared::cta.b32 [%r*], _"),
            format!("tcgen05.relinquish_alloc_permit.{g}.sync.aligned"),
            format!("tcgen05.mma.{g}.kind::f16 [%r*], _, _, _, _"),
            format!("tcgen05.commit.{g}.mbarrier::arrive::one.shared::cluster*"),
            "tcgen05.ld.sync.aligned.32x32b.x32.b32".to_string(),
            "tcgen05.wait::ld.sync.aligned".into(),
            "tcgen05.fence::after_thread_sync".into(),
            "tcgen05.fence::before_thread_sync".into(),
            format!("tcgen05.dealloc.{g}.sync.aligned.b32 %r*, _"),
            "cp.async.bulk.tensor.2d.shared::cluster.global.*".into(),
            "cp.async.bulk.tensor.2d.global.shared::cta.*".into(),
        ] {
            assert!(ptx_text::has(&ptx, &needle), "{}: no `{needle}`", k.name());
        }
        assert_eq!(ptx_text::count(&ptx, "tcgen05.mma.*"), 4, "{}: 4 k16 steps of one K block", k.name());
        if cfg.two_cta {
            assert!(
                ptx_text::has(&ptx, "tcgen05.commit.*.multicast::cluster.b64"),
                "{}: commits reach both CTAs",
                k.name()
            );
            assert!(ptx_text::has_directive(&ptx, ".reqnctapercluster 2, 1, 1"), "{}", k.name());
        }
        let verbose = assemble_verbose(&ptxas, &ptx, k.name());
        assert_eq!(spill_bytes(&verbose), (0, 0), "{} spills:\n{verbose}", k.name());
    }
}

/// The DSL version of every configuration: the same tcgen05 protocol (its tensor-memory reads
/// one register per `tcgen05.ld.32x32b.x1`), no spills.
#[test]
fn every_config_written_in_the_dsl_assembles_for_sm100a_without_spills() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for cfg in configs() {
        let k = gemm_sm100_dsl::kernel(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let ptx = emit_kernel(&k).unwrap();
        let what = format!("{} in the DSL", cfg.kernel_name());
        assert!(
            ptx.contains(".target sm_100a") && ptx.contains("// examples/src/gallery/gemm_sm100_dsl.rs:"),
            "{what}"
        );
        let g = if cfg.two_cta { "cta_group::2" } else { "cta_group::1" };
        for needle in [
            format!("tcgen05.alloc.{g}.sync.aligned.shared::cta.b32 [%r*], _"),
            format!("tcgen05.relinquish_alloc_permit.{g}.sync.aligned"),
            format!("tcgen05.mma.{g}.kind::f16"),
            format!("tcgen05.commit.{g}.mbarrier::arrive::one.shared::cluster*"),
            "tcgen05.ld.sync.aligned.32x32b.x1.b32".to_string(),
            "tcgen05.wait::ld.sync.aligned".into(),
            "tcgen05.fence::after_thread_sync".into(),
            "tcgen05.fence::before_thread_sync".into(),
            format!("tcgen05.dealloc.{g}.sync.aligned.b32 %r*, _"),
            "cp.async.bulk.tensor.2d.shared::cluster.global.*".into(),
            "cp.async.bulk.tensor.2d.global.shared::cta.*".into(),
        ] {
            assert!(ptx_text::has(&ptx, &needle), "{what}: no `{needle}`");
        }
        assert_eq!(ptx_text::count(&ptx, "tcgen05.mma.*"), 4, "{what}: 4 k16 steps of one K block");
        // Every accumulator column once per tile: block_n loads of one register.
        assert_eq!(ptx_text::count(&ptx, "tcgen05.ld.*"), cfg.block_n as usize, "{what}");
        if cfg.two_cta {
            assert!(ptx_text::has(&ptx, "tcgen05.commit.*.multicast::cluster.b64"), "{what}: commits reach both CTAs");
            assert!(ptx_text::has_directive(&ptx, ".reqnctapercluster 2, 1, 1"), "{what}");
        }
        let verbose = assemble_verbose(&ptxas, &ptx, &format!("{}_dsl", cfg.kernel_name()));
        assert_eq!(spill_bytes(&verbose), (0, 0), "{what} spills:\n{verbose}");
    }
    for bug in [
        Sm100Bug::CommitToWrongBarrier,
        Sm100Bug::EpilogueSkipsAccumulatorWait,
        Sm100Bug::MissingAfterThreadSyncFence,
        Sm100Bug::MissingBeforeThreadSyncFence,
        Sm100Bug::StageReusedEarly,
    ] {
        for two_cta in [false, true] {
            let cfg = Sm100Config::new(two_cta).with_bug(bug);
            let ptx = emit_kernel(&gemm_sm100_dsl::kernel(&cfg).unwrap()).unwrap();
            ptxas::assemble(&ptxas, &ptx, "sm_100a").unwrap_or_else(|e| panic!("{bug:?} in the DSL: {e}"));
        }
    }
}

#[test]
fn injected_bugs_still_assemble() {
    // The mutants the simulator tests run are real kernels: ptxas takes them (the bugs are
    // protocol bugs, not syntax).
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for bug in [
        Sm100Bug::CommitToWrongBarrier,
        Sm100Bug::EpilogueSkipsAccumulatorWait,
        Sm100Bug::MissingAfterThreadSyncFence,
        Sm100Bug::MissingBeforeThreadSyncFence,
        Sm100Bug::StageReusedEarly,
    ] {
        let cfg = Sm100Config::new(false).with_bug(bug);
        let ptx = emit_kernel(&gemm_sm100_kernel(&cfg).unwrap()).unwrap();
        ptxas::assemble(&ptxas, &ptx, "sm_100a").unwrap_or_else(|e| panic!("{bug:?}: {e}"));
    }
}

#[test]
fn bad_configurations_are_refused_with_the_constraint() {
    let bad = |c: Sm100Config| gemm_sm100_kernel(&c).unwrap_err().to_string();
    let base = Sm100Config::new(false);
    assert!(bad(Sm100Config { block_n: 96, ..base }).contains("block_n = 96: a multiple of 64"));
    assert!(bad(Sm100Config { stages: 6, ..base }).contains("over the 232448 of sm_100a"));
    assert!(bad(Sm100Config { acc_stages: 3, ..base }).contains("1 or 2"));
    // The builder names the Rust line of the kernel's own call.
    let e = gemm_sm100_kernel(&Sm100Config { block_n: 96, ..base }).unwrap_err();
    assert!(e.diagnostics[0].loc.is_some_and(|l| l.file.ends_with("gemm_sm100.rs")), "{e}");
}
