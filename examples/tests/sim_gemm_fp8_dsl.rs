//! The DSL FP8 GEMMs (examples/src/gallery/gemm_fp8_dsl.rs) in the simulator, under the
//! checker: with zero findings, every element of C is the simulator's model bit for bit (each
//! product exact, the tensor core's f32 sum rounded after each in K order; blockwise: each
//! 128-K block's fresh sum scale-added by one fma into the promoted accumulator) and within the
//! stated tolerance of the f64 product of the dequantized inputs. Shapes: the gallery's small
//! one (one cluster, two tiles) and its ragged one (M and N not multiples of the tiles, four K
//! blocks a tile so the stage ring wraps), with the gallery's exact inputs and, blockwise, with
//! random inputs quantized per block.

use half::bf16;
use phaser::problem::{simulate_problem, Size};
use phaser::runtime::sim::SimConfig;
use phaser::Device;
use phaser_examples::gallery::gemm_fp8_dsl::{self as fp8, Host, Quantized, Scaling, BLOCK_K};

/// C[i][j] as the simulator computes it.
fn model(q: &Quantized, i: usize, j: usize) -> bf16 {
    let k = q.k as usize;
    let product = |kk: usize| (q.a[i * k + kk].to_f32() as f64 * q.b[j * k + kk].to_f32() as f64) as f32;
    let sum = match q.scaling {
        Scaling::Blockwise => (0..k / BLOCK_K as usize).fold(0f32, |sum, kb| {
            let block = (0..BLOCK_K as usize).fold(0f32, |s, x| s + product(kb * BLOCK_K as usize + x));
            let kk = kb * BLOCK_K as usize;
            block.mul_add(q.a_scale(i, kk) * q.b_scale(j, kk), sum)
        }),
        Scaling::PerTensor => (0..k).fold(0f32, |s, kk| s + product(kk)) * (q.sfa[0] * q.sfb[0]),
    };
    bf16::from_f32(sum)
}

/// The gallery's problem at `size` (exact inputs: ternary elements, power-of-two scales).
fn simulate(scaling: Scaling, size: Size, seed: u64) {
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let p = fp8::setup(&dev, size, seed, scaling).unwrap_or_else(|e| panic!("{e}"));
    simulate_problem_of(&dev, p, scaling, size, seed);
}

fn simulate_problem_of(dev: &Device, mut p: phaser::problem::Problem, scaling: Scaling, size: Size, seed: u64) {
    let reports =
        simulate_problem(&dev, &mut p, &SimConfig::default().with_seed(seed)).unwrap_or_else(|e| panic!("{e}"));
    for r in &reports {
        assert!(r.findings.is_empty(), "{scaling:?} {size:?}: {:#?}", r.findings);
    }
    let h: &Host = p.host();
    let c = p.download(&dev, h.c).unwrap();
    let (m, n) = (h.q.m as usize, h.q.n as usize);
    let (mut worst, mut big) = (0f64, 0);
    for i in 0..m {
        for j in 0..n {
            let got = c[i * n + j];
            let want = model(&h.q, i, j);
            assert_eq!(got.to_bits(), want.to_bits(), "{scaling:?} {size:?}: C[{i}][{j}] = {got}, model {want}");
            let (exact, magnitude) = h.q.reference(i, j);
            let tol = h.q.tolerance(exact, magnitude);
            let err = (got.to_f64() - exact).abs();
            assert!(err <= tol, "{scaling:?} {size:?}: C[{i}][{j}] = {got}, f64 {exact} (tolerance {tol})");
            worst = worst.max(err / tol);
            big += (exact.abs() > 1.0) as usize;
        }
    }
    assert!(big > 0, "{scaling:?}: not vacuous (no element above 1 of {})", m * n);
    eprintln!("{scaling:?} {size:?} {m}x{n}x{}: worst error {worst:.3} of the tolerance", h.q.k);
}

#[test]
fn blockwise_small_is_the_model_with_no_findings() {
    simulate(Scaling::Blockwise, Size::Small, 3);
}

#[test]
fn blockwise_ragged_is_the_model_with_no_findings() {
    simulate(Scaling::Blockwise, Size::Quick, 4);
}

/// Random inputs quantized per block (RNE, satfinite): real rounding in every product.
#[test]
fn blockwise_random_quantized_is_the_model_with_no_findings() {
    let dev = Device::sim(SimConfig::default().with_seed(7));
    let q = Quantized::random(328, 200, 512, Scaling::Blockwise, 7);
    let p = fp8::problem(&dev, q, 4, true, 7).unwrap_or_else(|e| panic!("{e}"));
    simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, 7);
}

#[test]
fn per_tensor_small_is_the_model_with_no_findings() {
    simulate(Scaling::PerTensor, Size::Small, 5);
}

#[test]
fn per_tensor_ragged_is_the_model_with_no_findings() {
    simulate(Scaling::PerTensor, Size::Quick, 6);
}

/// A scale applied to the wrong row would pass a check that ignores them: the tolerance is
/// tight enough to see a row's scale swapped for its neighbour's.
#[test]
fn a_wrong_row_scale_is_outside_the_tolerance() {
    let q = Quantized::random(8, 8, 256, Scaling::Blockwise, 9);
    let mut swapped = Quantized { sfa: q.sfa.clone(), a: q.a.clone(), b: q.b.clone(), sfb: q.sfb.clone(), ..q };
    assert!(!q.exact);
    let m = swapped.m as usize;
    for kb in 0..2 {
        swapped.sfa.swap(kb * m, kb * m + 1);
    }
    let (right, magnitude) = q.reference(0, 0);
    let (wrong, _) = swapped.reference(0, 0);
    assert!((wrong - right).abs() > q.tolerance(right, magnitude), "{right} vs {wrong}");
}

#[test]
fn k_not_a_multiple_of_128_is_refused() {
    let dev = Device::sim(SimConfig::default());
    let q = Quantized::random(128, 128, 128, Scaling::Blockwise, 1);
    let q = Quantized { k: 192, ..q };
    let e = fp8::problem(&dev, q, 2, true, 1).err().expect("refused");
    assert!(e.to_string().contains("K = 192 is not a multiple of 128"), "{e}");
}
