//! The Blackwell GEMM on a GPU (run by `.ci/gpu-bundle`, `--include-ignored`). On a B200
//! (compute capability 10.0) it runs the 1-CTA and the 2-CTA kernel at the small and the full
//! size and compares every element exactly (the gallery's ternary inputs) and, for random
//! bf16 inputs, against an f64 CPU reference within the bf16 tolerance. On any other GPU (the
//! H200 of this project's runs) the gallery must *skip* both examples with "needs sm_100a"
//! and the launch must be refused with a target mismatch: nothing here has run on silicon
//! until a B200 runs this file (see `bench/blackwell.md`).

use phaser::runtime::RuntimeError;
use phaser::Device;
use phaser_examples::gallery::{self, fresh_seed, Size};
use phaser_examples::gemm::{compare, random_bf16, GemmShape};
use phaser_examples::gemm_sm100::*;

fn gpu() -> Device {
    Device::cuda(0).expect("this test needs a CUDA GPU")
}

/// Whether the GPU runs sm_100a code: a launch of an sm_100a kernel is not refused.
fn runs_sm100a(dev: &Device, cfg: &Sm100Config) -> bool {
    let shape = GemmShape::new(128, 128, 64);
    let a = random_bf16(128 * 64, 1);
    let b = random_bf16(128 * 64, 2);
    let bufs = Sm100Buffers::new(dev, shape, &a, &b).unwrap();
    let maps = bufs.tensor_maps(dev, cfg).unwrap();
    let k = gemm_sm100_kernel(cfg).unwrap();
    match dev.launch(&k, launch_config(cfg, cfg.ctas()), &args(&maps, &shape)) {
        Err(RuntimeError::TargetMismatch { target, .. }) => {
            assert_eq!(target, "sm_100a");
            false
        }
        other => {
            other.unwrap_or_else(|e| panic!("{e}"));
            true
        }
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn blackwell_gemm_runs_on_sm100_and_is_skipped_elsewhere() {
    let dev = gpu();
    let blackwell = runs_sm100a(&dev, &Sm100Config::new(false));
    for name in ["gemm_sm100", "gemm_sm100_2cta"] {
        let e = gallery::find(name).unwrap();
        for size in [Size::Small, Size::Full] {
            let seed = fresh_seed();
            let r = gallery::run(&e, &dev, size, seed)
                .unwrap_or_else(|err| panic!("{name} ({size:?}, seed {seed}): {err}"));
            if blackwell {
                assert!(r.outcome.passed, "{name} ({size:?}, seed {seed}): {}", r.outcome.detail);
            } else {
                assert!(r.outcome.skipped && !r.outcome.passed, "{name}: {:?}", r.outcome);
                assert!(r.outcome.detail.starts_with("needs sm_100a"), "{}", r.outcome.detail);
            }
            eprintln!("{} {name} ({size:?}): {}", r.outcome.verdict(), r.outcome.detail);
        }
    }
    if !blackwell {
        return;
    }
    // Random bf16 inputs, ragged and square, against the f64 reference.
    for two_cta in [false, true] {
        let cfg = Sm100Config::new(two_cta);
        let k = gemm_sm100_kernel(&cfg).unwrap();
        for shape in [GemmShape::new(4096, 4096, 4096), GemmShape::new(1000, 1992, 1504)] {
            let seed = fresh_seed();
            let a = random_bf16(shape.m as usize * shape.k as usize, seed);
            let b = random_bf16(shape.n as usize * shape.k as usize, seed ^ 1);
            let bufs = Sm100Buffers::new(&dev, shape, &a, &b).unwrap();
            let maps = bufs.tensor_maps(&dev, &cfg).unwrap();
            let ctas = grid(&cfg, &shape, dev.sm_count().unwrap());
            dev.launch(&k, launch_config(&cfg, ctas), &args(&maps, &shape)).unwrap();
            let c = dev.download(&bufs.c).unwrap();
            use rand::{Rng, SeedableRng};
            let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (m, n) = (shape.m as usize, shape.n as usize);
            let at = (0..2000).map(|_| (r.random_range(0..m), r.random_range(0..n)));
            let cmp = compare(&c, &shape, at, |i, j| reference_at(&a, &b, &shape, i, j));
            assert!(cmp.passed(), "{} {shape} (seed {seed}): worst {:.3} at {:?}", k.name(), cmp.worst, cmp.at);
        }
    }
}
