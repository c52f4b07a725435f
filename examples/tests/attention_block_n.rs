//! Keys per KV block a user passes (`AttentionShape::block_n`): every width is either refused by
//! `problem()` with the width named, or builds a kernel that prints, or fails in the builder's
//! shared-memory check with an error; never a panic. The widths that fit shared memory are a
//! prefix of the valid widths (a wider block only adds shared memory).

use phaser::codegen::emit_kernel;
use phaser_examples::gallery::attention_dsl::{kernel, AttentionShape};
use proptest::prelude::*;

fn shape(d: u32, causal: bool, block_n: u32) -> AttentionShape {
    AttentionShape {
        batch: 1,
        heads: 2,
        kv_heads: 1,
        seq_q: 128,
        seq_k: 256,
        d,
        causal,
        pingpong: true,
        persistent: true,
        block_n: Some(block_n),
    }
}

/// What the kernel makes of a width: refused by `problem()`, built, or a shared-memory error.
#[derive(Debug, PartialEq)]
enum Outcome {
    Refused,
    Built,
    TooMuchShared,
}

fn outcome(s: &AttentionShape) -> Outcome {
    let bn = s.block_n.unwrap();
    let built = std::panic::catch_unwind(|| kernel(s)).unwrap_or_else(|_| panic!("{s:?}: building panicked"));
    if let Some(p) = s.problem() {
        assert!(p.contains(&bn.to_string()), "{s:?}: the refusal does not name the width: {p}");
        let e = built.expect_err("a refused shape must not build");
        assert!(e.to_string().contains(&p), "{s:?}: the build error does not carry the refusal: {e}");
        return Outcome::Refused;
    }
    match built {
        Ok(k) => {
            emit_kernel(&k).unwrap_or_else(|e| panic!("{s:?}: built but does not print: {e}"));
            Outcome::Built
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains("shared memory"), "{s:?}: a valid width failed for another reason: {text}");
            Outcome::TooMuchShared
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_width_is_refused_built_or_out_of_shared_memory(
        // Half the cases a valid width (a multiple of 16 up to 256), half any width.
        bn in prop_oneof![(1u32..=16).prop_map(|k| k * 16), 0u32..=320],
        d in prop::sample::select(vec![64u32, 128, 256]),
        causal in any::<bool>(),
    ) {
        let s = shape(d, causal, bn);
        let got = outcome(&s);
        let valid = (16..=256).contains(&bn) && bn % 16 == 0;
        prop_assert_eq!(got == Outcome::Refused, !valid, "{:?}: {:?}", s, got);
        // Monotone in the width: a width that fits means every narrower valid one fits, and
        // one out of shared memory means every wider valid one is too.
        if got == Outcome::Built && bn > 16 {
            prop_assert_eq!(outcome(&shape(d, causal, bn - 16)), Outcome::Built, "{:?}", s);
        }
        if got == Outcome::TooMuchShared && bn < 256 {
            prop_assert_eq!(outcome(&shape(d, causal, bn + 16)), Outcome::TooMuchShared, "{:?}", s);
        }
    }
}

/// The two ends: the narrowest block builds at every head dimension, and the widest valid block
/// at d256 does not fit (so both outcomes of a valid width occur).
#[test]
fn the_narrowest_builds_and_the_widest_d256_does_not_fit() {
    for d in [64, 128, 256] {
        assert_eq!(outcome(&shape(d, false, 16)), Outcome::Built, "d{d}");
    }
    assert_eq!(outcome(&shape(256, false, 256)), Outcome::TooMuchShared);
}
