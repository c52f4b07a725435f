//! The DSL attention (`gallery::attention_dsl`) in the simulator, under the checker: head
//! dims 64, 128 and 256, causal and not, GQA, sequence lengths that are not multiples of the
//! tiles on either side, with the warpgroups' ping-pong and without, one CTA per tile and
//! persistent CTAs walking several tiles. Every run has zero findings, every row of O and the LSE is within
//! the stated tolerance of the f64 reference (`O_ATOL + O_RTOL |ref|`, `LSE_TOL (1 + |ref|)`).

use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::Device;
use phaser_examples::gallery::attention_dsl::{add_launch, compare, random_bf16, wide_block_n, AttentionShape};
use phaser_examples::gallery::{run_problem, Problem};

fn check(s: AttentionShape, strategy: Strategy, seed: u64) {
    let dev = Device::sim(SimConfig::default().with_strategy(strategy).with_seed(seed));
    let d = s.d as usize;
    let q = random_bf16((s.batch * s.heads * s.seq_q) as usize * d, seed);
    let k = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * d, seed + 1);
    let v = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * d, seed + 2);
    let mut p = Problem::new(seed);
    let inputs = (p.input(&dev, &q).unwrap(), p.input(&dev, &k).unwrap(), p.input(&dev, &v).unwrap());
    let bufs = add_launch(&mut p, &dev, &s, inputs).unwrap();
    let out = run_problem(&dev, &mut p).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    let rep = out.launches[0].sim.as_ref().expect("a simulator report");
    assert!(rep.findings.is_empty(), "{s:?}:\n{}", rep.text());
    let rows = (0..(s.batch * s.heads) as usize).flat_map(|bh| (0..s.seq_q as usize).map(move |i| (bh, i)));
    let (bad, worst_o, worst_lse) = compare(&s, (&q, &k, &v), (out.get(0, bufs.o), out.get(0, bufs.lse)), rows);
    eprintln!("{s:?}: worst |ΔO| {worst_o:.2e}, |ΔLSE| {worst_lse:.2e}");
    assert_eq!(bad, 0, "{s:?} (seed {seed}): worst |ΔO| {worst_o:.2e}, |ΔLSE| {worst_lse:.2e}");
}

const BASE: AttentionShape = AttentionShape {
    batch: 1,
    heads: 1,
    kv_heads: 1,
    seq_q: 128,
    seq_k: 128,
    d: 64,
    causal: false,
    pingpong: true,
    persistent: true,
    block_n: None,
};

#[test]
fn persistent_ctas_walk_several_tiles() {
    // 12 tiles on the simulator's 4 SMs: each CTA walks 3, the Q slabs refilled after each
    // tile's O store (q_empty), the rings and the ping-pong turns running on across tiles.
    let s = AttentionShape { batch: 2, heads: 2, kv_heads: 1, seq_q: 300, seq_k: 136, ..BASE };
    assert_eq!((s.tiles(), s.grid(Device::sim(SimConfig::default()).sm_count().unwrap())), (12, 4));
    check(s, Strategy::Random, 7);
}

#[test]
fn d64_ragged_gqa() {
    check(AttentionShape { heads: 2, kv_heads: 1, seq_q: 200, seq_k: 168, ..BASE }, Strategy::Adversarial, 1);
}

#[test]
fn d64_causal_ragged() {
    check(AttentionShape { seq_q: 200, seq_k: 200, causal: true, ..BASE }, Strategy::Random, 2);
}

#[test]
fn d128_causal_gqa_ragged() {
    check(
        AttentionShape { heads: 2, kv_heads: 1, seq_q: 136, seq_k: 136, d: 128, causal: true, ..BASE },
        Strategy::Adversarial,
        3,
    );
}

#[test]
fn d128_cross_lengths() {
    // More keys than queries, a ragged last KV block, the rings wrapping.
    check(AttentionShape { seq_q: 72, seq_k: 300, d: 128, ..BASE }, Strategy::RoundRobin, 4);
}

#[test]
fn d128_without_pingpong() {
    check(
        AttentionShape { seq_q: 200, seq_k: 300, d: 128, causal: true, pingpong: false, persistent: false, ..BASE },
        Strategy::Adversarial,
        6,
    );
}

#[test]
fn d256_causal_ragged() {
    // BN = 64: the first warpgroup's rows see a fully masked block past its diagonal.
    check(AttentionShape { seq_q: 130, seq_k: 130, d: 256, causal: true, ..BASE }, Strategy::Random, 5);
}

#[test]
fn wide_key_blocks_every_head_dim_ragged() {
    // FlashAttention-3's non-causal block widths (192, 176, 80 keys: none a power of two), with
    // a ragged last block on the key side and two Q tiles.
    for (d, seed) in [(64, 6), (128, 7), (256, 8)] {
        let block_n = Some(wide_block_n(d));
        check(AttentionShape { seq_q: 200, seq_k: 300, d, block_n, ..BASE }, Strategy::Random, seed);
    }
}
