//! The DSL attention without a GPU: every configuration (head dim 64, 128 and 256, causal and
//! not, ping-pong and not) assembles for sm_90a with zero spill bytes, no ignored `setmaxnreg` and no
//! serialized wgmma (ptxas C7515/C7517), its SASS has
//! the HGMMAs of S = Q Kᵀ (N = BN, K-major) and O += P V (A from registers), and shapes the
//! kernel does not take are refused by name.

use phaser::codegen::{emit_kernel, ptx_text, ptxas};
use phaser_examples::gallery::attention_dsl::{kernel, narrow_block_n, AttentionShape};

fn shape(d: u32, causal: bool) -> AttentionShape {
    AttentionShape {
        batch: 1,
        heads: 1,
        kv_heads: 1,
        seq_q: 128,
        seq_k: 128,
        d,
        causal,
        pingpong: true,
        persistent: true,
        block_n: None,
    }
}

/// `N bytes spill stores, M bytes spill loads` of ptxas -v, for the one kernel.
fn spill_bytes(verbose: &str) -> (u64, u64) {
    let line = verbose.lines().find(|l| l.contains("bytes spill stores")).expect("ptxas -v reports spills");
    let nums: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (nums[nums.len() - 2], nums[nums.len() - 1])
}

#[test]
fn every_config_assembles_without_spills_and_uses_hgmma() {
    let (ptxas, cuobjdump) = (ptxas::require(), ptxas::require_cuobjdump());
    let dir = tempfile::tempdir().unwrap();
    for d in [64, 128, 256] {
        // The default blocks (FlashAttention-3's wider ones where not causal), and the narrow.
        let narrow = Some(narrow_block_n(d));
        for (causal, pingpong, block_n) in
            [(false, true, None), (true, true, None), (false, false, None), (true, false, None), (false, true, narrow)]
        {
            let s = AttentionShape { pingpong, block_n, ..shape(d, causal) };
            let (bn, _) = s.config();
            let k = kernel(&s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
            let ptx = emit_kernel(&k).unwrap();
            assert!(ptx_text::has(&ptx, "setmaxnreg.inc.sync.aligned.u32 240"), "{s:?}");
            // Ping-pong: the second warpgroup's first-turn arrival, block 0's S turn and one per
            // block; none without.
            let arrives =
                ptx_text::find_all(&ptx, "bar.arrive").len() + ptx_text::find_all(&ptx, "barrier.arrive").len();
            assert_eq!(arrives, if pingpong { 3 } else { 0 }, "{s:?}");
            let cubin = dir.path().join(format!("attention_d{d}_{causal}_{pingpong}_{bn}.cubin"));
            let verbose = ptxas::assemble_to(&ptxas, &ptx, "sm_90a", &["-v"], &cubin)
                .unwrap_or_else(|e| panic!("ptxas rejected {s:?}:\n{e}"));
            assert_eq!(spill_bytes(&verbose), (0, 0), "{s:?} spills:\n{verbose}");
            assert!(!verbose.contains("C7508"), "setmaxnreg ignored:\n{verbose}");
            // Every wgmma keeps its asynchrony: ptxas neither serializes them (C7515) nor
            // injects a wait (C7517); the SASS has no `WARPGROUP.DEPBAR` after each HGMMA.
            let serialized = ptxas::wgmma_serialization(&verbose, &ptx);
            assert!(serialized.is_empty(), "{s:?}: ptxas serialized the wgmmas: {serialized:#?}");
            let listing = ptxas::sass(&cuobjdump, &cubin).unwrap_or_else(|e| panic!("{e}"));
            if let Ok(dir) = std::env::var("ATTENTION_SASS_DIR") {
                std::fs::write(format!("{dir}/d{d}_{causal}_{pingpong}_{bn}.sass"), &listing).unwrap();
                std::fs::write(format!("{dir}/d{d}_{causal}_{pingpong}_{bn}.ptx"), &ptx).unwrap();
            }
            let count = |op: &str| listing.lines().filter(|l| l.split_whitespace().any(|w| w.starts_with(op))).count();
            // S: D / 16 k-steps of 64 x BN, twice (block 0's before the loop, block j + 1's in
            // it); P V: BN / 16 k-steps of 64 x D (one N = D wgmma each), once (in the loop).
            let s_gemm = format!("HGMMA.64x{bn}x16.F32.BF16");
            let pv_gemm = format!("HGMMA.64x{d}x16.F32.BF16");
            let (want_s, want_pv) = (2 * (d / 16) as usize, (bn / 16) as usize);
            // The waits are the kernel's own four `wait_group`s (block 0's S, two per block, the
            // last P V's), not one per HGMMA.
            assert!(count("WARPGROUP.DEPBAR") <= 4, "{s:?}: waits after the HGMMAs:\n{listing}");
            if bn == d {
                assert_eq!(count(&s_gemm), want_s + want_pv, "{s:?}:\n{listing}");
            } else {
                assert_eq!(count(&s_gemm), want_s, "{s:?}:\n{listing}");
                assert_eq!(count(&pv_gemm), want_pv, "{s:?}:\n{listing}");
            }
        }
    }
}

#[test]
fn shapes_the_kernel_does_not_take_are_refused() {
    let e = kernel(&shape(96, false)).unwrap_err().to_string();
    assert!(e.contains("head dimension 96: the kernel takes 64, 128 or 256"), "{e}");
    let e = kernel(&AttentionShape { heads: 3, kv_heads: 2, ..shape(64, false) }).unwrap_err().to_string();
    assert!(e.contains("3 query heads do not share 2 KV heads evenly"), "{e}");
}
