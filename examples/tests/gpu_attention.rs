//! The DSL attention on the H200 (run by `.ci/gpu-bundle`): the simulator's shapes of
//! `sim_attention.rs` and GPU-sized ones, head dims 64/128/256, causal and not, GQA, ragged;
//! every row of O and the LSE within the stated tolerance of the f64 reference, O and the
//! LSE poisoned before each launch.

use phaser::Device;
use phaser_examples::gallery::attention_dsl::{add_launch, compare, narrow_block_n, random_bf16, AttentionShape};
use phaser_examples::gallery::{run_problem, Problem};

fn check(dev: &Device, s: AttentionShape, seed: u64) {
    let d = s.d as usize;
    let q = random_bf16((s.batch * s.heads * s.seq_q) as usize * d, seed);
    let k = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * d, seed + 1);
    let v = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * d, seed + 2);
    let mut p = Problem::new(seed);
    let inputs = (p.input(dev, &q).unwrap(), p.input(dev, &k).unwrap(), p.input(dev, &v).unwrap());
    let bufs = add_launch(&mut p, dev, &s, inputs).unwrap();
    let out = run_problem(dev, &mut p).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    let bh = (s.batch * s.heads) as usize;
    // Every row of small problems; of large ones, every 7th row of every head.
    let step = if s.seq_q as usize * bh <= 8192 { 1 } else { 7 };
    let rows = (0..bh).flat_map(|h| (0..s.seq_q as usize).step_by(step).map(move |i| (h, i)));
    let (bad, worst_o, worst_lse) = compare(&s, (&q, &k, &v), (out.get(0, bufs.o), out.get(0, bufs.lse)), rows);
    eprintln!("{s:?}: worst |ΔO| {worst_o:.2e}, |ΔLSE| {worst_lse:.2e}");
    assert_eq!(bad, 0, "{s:?} (seed {seed}): worst |ΔO| {worst_o:.2e}, |ΔLSE| {worst_lse:.2e}");
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gpu_attention_matches_the_f64_reference() {
    let dev = Device::cuda(0).expect("this test needs a CUDA GPU");
    let mut seed = 100;
    for d in [64, 128, 256] {
        let narrow = Some(narrow_block_n(d));
        for (causal, pingpong, persistent, block_n) in [
            (false, true, true, None),
            (true, true, true, None),
            (true, false, false, None),
            (false, true, true, narrow),
        ] {
            for (heads, kv_heads, seq_q, seq_k, batch) in
                [(2, 1, 200, 168, 1), (1, 1, 72, 300, 1), (8, 2, 1000, 1000, 2), (4, 4, 2048, 2048, 1)]
            {
                check(
                    &dev,
                    AttentionShape { batch, heads, kv_heads, seq_q, seq_k, d, causal, pingpong, persistent, block_n },
                    seed,
                );
                seed += 3;
            }
        }
    }
}
