//! The GEMM on the GPU against cuBLASLt and an f64 CPU reference, at the correctness shapes
//! (tile-aligned, ragged in every dimension, smaller than a tile, one row, large), for both
//! B layouts, the default (2-CTA cluster, B multicast) and the cluster-free configuration.
//! Inputs are random bf16 with a fresh seed (printed); C is poisoned with NaN before each run.
//! The DSL-written GEMM (examples/src/gallery/gemm_dsl.rs) is checked the same way (N-major B
//! without a cluster, split-K too), and against the builder GEMM bit for bit (the same wgmma sequence accumulates in the same order).
//! Needs cuBLAS on the loader path (.ci/gpu-run.sh sets it).

use phaser::Device;
use phaser_examples::cublas::CublasLt;
use phaser_examples::gemm::{self, *};
use phaser_examples::timing;

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gemm_matches_cublas_and_the_cpu() {
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let blas = CublasLt::new(timing::cuda(&dev).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        let default = GemmConfig::new(layout);
        let configs =
            [default, GemmConfig { cluster_m: 1, ..default }, GemmConfig { block_n: 128, wg_m: 128, ..default }];
        for cfg in configs {
            let kernel = GemmKernels::Builder(gemm_kernel(&cfg).unwrap());
            for (i, shape) in check_shapes().into_iter().enumerate() {
                // The largest shapes once per layout (the default configuration).
                if shape.flops() > 1e11 && cfg != default {
                    continue;
                }
                let (vs_blas, vs_cpu) = check_against_cublas(&dev, &blas, &kernel, &cfg, shape, seed + i as u64)
                    .unwrap_or_else(|e| panic!("{shape} {}: {e}", cfg.kernel_name()));
                checked += 1;
                if !(vs_blas.passed() && vs_cpu.passed()) {
                    failures.push(format!(
                        "{shape} {}: vs cuBLAS {:.3} at {:?}, vs CPU {:.3} at {:?}",
                        cfg.kernel_name(),
                        vs_blas.worst,
                        vs_blas.at,
                        vs_cpu.worst,
                        vs_cpu.at
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {checked} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn dsl_gemm_matches_cublas_and_the_cpu() {
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let blas = CublasLt::new(timing::cuda(&dev).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let default = gemm::dsl::config(true);
    // Split-K into 2, 3 and 4 slices too (f32 partials, then the reduction launch).
    let splits = [2, 3, 4].map(|split_k| GemmConfig { split_k, ..gemm::dsl::config(split_k != 3) });
    // And reduced in the kernel (one launch: flags between the CTAs of a tile's slices).
    let fixups = splits.map(|c| GemmConfig { reduce: SplitReduce::InKernel, ..c });
    // Reduced by every slice (one launch, one wave), on the 64-row tile (one consumer
    // warpgroup) and the 128-row one; and the 64-row tile without split-K.
    let tile_64 = GemmConfig { consumers: 1, block_n: 256, cluster_m: 1, stages: 5, ..default };
    let narrow = GemmConfig { consumers: 1, block_n: 32, cluster_m: 1, stages: 8, ..default };
    let decode = [
        GemmConfig { split_k: 4, reduce: SplitReduce::EverySlice, ..tile_64 },
        GemmConfig { cluster_m: 1, split_k: 3, reduce: SplitReduce::EverySlice, ..default },
        tile_64,
        // The narrow tiles: 64 x 32 (C from the registers) and 64 x 64 (one staging sub-tile)
        // without split-K, 128 x 32, and 64 x 32 split in 2.
        narrow,
        GemmConfig { block_n: 64, ..narrow },
        GemmConfig { consumers: 2, ..narrow },
        GemmConfig { split_k: 2, ..narrow },
        // A 16-row A box (M up to 16: the 1 x 4096 x 4096 shape), without split-K and split in
        // 4 reduced in the kernel.
        GemmConfig { block_n: 64, a_box_rows: Some(16), ..narrow },
        GemmConfig { split_k: 4, reduce: SplitReduce::InKernel, a_box_rows: Some(16), ..tile_64 },
    ];
    // N-major B (no cluster): the default tiles, the 256 x 128 ones, and split-K into 2.
    let n_major = [
        GemmConfig { cluster_m: 1, ..GemmConfig::new(BLayout::NMajor) },
        GemmConfig { b_layout: BLayout::NMajor, ..gemm::dsl::config(false) },
        GemmConfig { b_layout: BLayout::NMajor, split_k: 2, ..gemm::dsl::config(false) },
    ];
    // The 192-row tile (three consumer warpgroups, 512 threads): 192 x 128 in 2-CTA clusters,
    // 192 x 192 without, N-major B, and split-K into 3 reduced in the kernel.
    let rows_192 = GemmConfig { consumers: 3, block_n: 128, stages: 4, ..default };
    let rows_192 = [
        rows_192,
        GemmConfig { block_n: 192, stages: 3, cluster_m: 1, ..rows_192 },
        GemmConfig { cluster_m: 1, b_layout: BLayout::NMajor, ..rows_192 },
        GemmConfig { cluster_m: 1, split_k: 3, reduce: SplitReduce::InKernel, ..rows_192 },
    ];
    let configs = [default, GemmConfig { cluster_m: 1, ..default }, gemm::dsl::config(false)]
        .into_iter()
        .chain(splits)
        .chain(fixups)
        .chain(decode)
        .chain(n_major)
        .chain(rows_192);
    let (mut failures, mut checked) = (Vec::new(), 0);
    for cfg in configs {
        let kernel = GemmKernels::new(&cfg, true).unwrap_or_else(|e| panic!("{e}"));
        for (i, shape) in check_shapes().into_iter().enumerate() {
            // The largest shapes once (the default configuration); a split into more slices
            // than K has blocks is refused (`sim_gemm_dsl.rs` checks the message).
            // A reduction by every slice over more than one wave is refused (`sim_gemm_decode.rs`).
            let sms = dev.sm_count().unwrap();
            if (shape.flops() > 1e11 && cfg != default) || gemm::dsl::launch_problem(&cfg, &shape, sms).is_some() {
                continue;
            }
            let (vs_blas, vs_cpu) = check_against_cublas(&dev, &blas, &kernel, &cfg, shape, seed + i as u64)
                .unwrap_or_else(|e| panic!("{shape} DSL {}: {e}", cfg.kernel_name()));
            checked += 1;
            eprintln!("{shape} DSL {}: vs cuBLAS {:.3}, vs CPU {:.3}", cfg.kernel_name(), vs_blas.worst, vs_cpu.worst);
            if !(vs_blas.passed() && vs_cpu.passed()) {
                failures.push(format!(
                    "{shape} DSL {}: vs cuBLAS {:.3} at {:?}, vs CPU {:.3} at {:?}",
                    cfg.kernel_name(),
                    vs_blas.worst,
                    vs_blas.at,
                    vs_cpu.worst,
                    vs_cpu.at
                ));
            }
        }
    }
    assert!(checked >= 10, "{checked} checks");
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {checked} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The DSL GEMM and the builder GEMM of the same configuration issue the same wgmmas in the
/// same order: on the same random inputs their C must be identical, bit for bit, at every
/// correctness shape (ragged ones included), C poisoned before each run.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn dsl_gemm_is_bit_identical_to_the_builder_gemm() {
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let mut differing = Vec::new();
    let n_major = [
        GemmConfig { cluster_m: 1, ..GemmConfig::new(BLayout::NMajor) },
        GemmConfig { b_layout: BLayout::NMajor, ..gemm::dsl::config(false) },
    ];
    for cfg in [gemm::dsl::config(true), gemm::dsl::config(false)].into_iter().chain(n_major) {
        let kernels = [GemmKernels::new(&cfg, false).unwrap(), GemmKernels::new(&cfg, true).unwrap()];
        for (i, shape) in check_shapes().into_iter().enumerate() {
            let a = random_bf16(shape.m as usize * shape.k as usize, seed + i as u64);
            let b = random_bf16(b_len(&shape), (seed + i as u64) ^ 0x9e37_79b9);
            let mut bufs = GemmBuffers::new(&dev, shape, cfg.b_layout, &a, &b).unwrap();
            let mut c = Vec::new();
            for k in &kernels {
                dev.fill(&mut bufs.c, POISON).unwrap();
                k.run(&dev, &cfg, &mut bufs).unwrap_or_else(|e| panic!("{shape} {}: {e}", k.name()));
                c.push(dev.download(&bufs.c).unwrap());
            }
            let poisoned = c[1].iter().filter(|x| x.to_bits() == POISON.to_bits()).count();
            let diff = c[0].iter().zip(&c[1]).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
            eprintln!(
                "{shape} {}: {diff} of {} elements differ, {poisoned} left poisoned",
                cfg.kernel_name(),
                c[0].len()
            );
            if diff > 0 || poisoned > 0 {
                differing.push(format!("{shape} {}: {diff} differ, {poisoned} poisoned", cfg.kernel_name()));
            }
        }
    }
    assert!(differing.is_empty(), "seed {seed}:\n{}", differing.join("\n"));
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn cublas_reference_is_sane() {
    // cuBLAS itself against the CPU on a small ragged shape (so a wrong layout mapping in the
    // reference cannot make both sides agree by accident).
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let cuda = timing::cuda(&dev).unwrap();
    let blas = CublasLt::new(cuda).unwrap_or_else(|e| panic!("{e}"));
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        let shape = GemmShape::new(77, 40, 24);
        let a = random_bf16(77 * 24, 5);
        let b = random_bf16(40 * 24, 6);
        let mut bufs = GemmBuffers::new(&dev, shape, layout, &a, &b).unwrap();
        dev.fill(&mut bufs.c, POISON).unwrap();
        let plan = blas.plan(77, 40, 24, layout).unwrap();
        let (pa, pb, pc) =
            (dev.buffer_addr(&bufs.a).unwrap(), dev.buffer_addr(&bufs.b).unwrap(), dev.buffer_addr(&bufs.c).unwrap());
        timing::time(cuda, || blas.run(cuda.stream(), &plan, pa, pb, pc)).unwrap();
        let c = dev.download(&bufs.c).unwrap();
        let all = (0..77).flat_map(|i| (0..40).map(move |j| (i, j)));
        let cmp = compare(&c, &shape, all, |i, j| reference_at(&a, &b, &shape, layout, i, j));
        assert!(cmp.passed(), "{layout:?}: cuBLAS vs CPU {:.3} at {:?}", cmp.worst, cmp.at);
    }
}

/// The simulator's tensor core against the GPU's: the same 256 x 256 x 256 GEMM (the
/// configuration of `sim_gemm.rs`) on both with the same inputs. The simulator sums in f32 in
/// k order and the tensor core's adder rounds its own way, so the bf16 outputs must agree
/// within tolerance; how many are bit-identical is printed (the note records it).
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn simulator_tensor_core_agrees_with_the_gpu() {
    let gpu = Device::cuda(0).expect("needs a CUDA GPU");
    let sim = Device::sim(phaser::runtime::sim::SimConfig::default());
    let shape = GemmShape::new(256, 256, 256);
    let seed = phaser_examples::gallery::fresh_seed();
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        let cfg = GemmConfig { stages: 2, ..GemmConfig::new(layout) };
        let kernel = gemm_kernel(&cfg).unwrap();
        let a = random_bf16((shape.m * shape.k) as usize, seed);
        let b = random_bf16(b_len(&shape), seed ^ 0x9e37_79b9);
        let mut c = Vec::new();
        for dev in [&gpu, &sim] {
            let mut bufs = GemmBuffers::new(dev, shape, layout, &a, &b).unwrap();
            dev.fill(&mut bufs.c, POISON).unwrap();
            launch(dev, &kernel, &cfg, &bufs).unwrap_or_else(|e| panic!("{}: {e}", dev.describe()));
            c.push(dev.download(&bufs.c).unwrap());
        }
        let (on_gpu, in_sim) = (&c[0], &c[1]);
        let n = shape.n as usize;
        let all = (0..shape.m as usize).flat_map(|i| (0..n).map(move |j| (i, j)));
        let cmp = compare(in_sim, &shape, all, |i, j| on_gpu[i * n + j].to_f64());
        let same = on_gpu.iter().zip(in_sim).filter(|(g, s)| g.to_bits() == s.to_bits()).count();
        eprintln!(
            "seed {seed} {}: simulator vs GPU: {same} of {} bf16 outputs bit-identical, worst {:.3} of tolerance at {:?}",
            layout.name(),
            on_gpu.len(),
            cmp.worst,
            cmp.at
        );
        assert!(cmp.passed(), "seed {seed} {}: {cmp:?}", layout.name());
    }
}

/// The FP8 DSL GEMMs (blockwise with FRAGS 1 and 2, blockwise with its scales through shared
/// memory, and per-tensor) on the GPU: the gallery's three sizes and a
/// ragged 1000 x 1040 x 1024 on the whole GPU, each within the stated tolerance
/// (`Quantized::tolerance`) of the f64 product of the dequantized inputs.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gemm_fp8_dsl_matches_the_dequantized_f64_product() {
    use phaser::problem::{run_problem, Size};
    use phaser_examples::gallery::gemm_fp8_dsl::{self as fp8, tiles, Issue, Output, Quantized, Scales, Scaling};
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let mut failures = Vec::new();
    // Blockwise with one and with two accumulator fragments in flight, with shared scales, and
    // with the warpgroups issuing in turns.
    let variants = [
        (Scaling::Blockwise, 1, Scales::Global, Issue::Together),
        (Scaling::Blockwise, 2, Scales::Global, Issue::Together),
        (Scaling::Blockwise, 1, Scales::Shared, Issue::Together),
        (Scaling::Blockwise, 1, Scales::Shared, Issue::Turns),
        (Scaling::Blockwise, 1, Scales::Global, Issue::Turns),
        (Scaling::PerTensor, 1, Scales::Global, Issue::Together),
    ];
    for (scaling, frags, scales, issue) in variants {
        let sms = dev.sm_count().unwrap();
        let ragged = |dev: &Device| {
            let q = Quantized::random(1000, 1040, 1024, scaling, seed);
            let kernel = fp8::kernel_issue(scaling, &tiles(scaling), frags, scales, Output::Bf16, issue).unwrap();
            fp8::problem_with(dev, q, tiles(scaling).grid(1000, 1040, sms), false, seed, kernel)
        };
        let mut problems = vec![("ragged".to_string(), ragged(&dev).unwrap())];
        for size in [Size::Small, Size::Quick, Size::Full] {
            let p = fp8::setup_issue(&dev, size, seed, scaling, frags, scales, issue).unwrap();
            problems.push((format!("{size:?}"), p));
        }
        for (what, mut p) in problems {
            let what = format!("{scaling:?} FRAGS={frags} {scales:?} scales {issue:?} {what}");
            let outputs = run_problem(&dev, &mut p).unwrap_or_else(|e| panic!("{what}: {e}"));
            let outcome = fp8::check(&p, &outputs);
            eprintln!("{what}: {}", outcome.detail);
            if !outcome.passed {
                failures.push(format!("{what}: {}", outcome.detail));
            }
        }
    }
    assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
}

/// The 192-wide blockwise tile (`blockwise_tiles(192)`: two B scales a stage) on the GPU, within
/// the stated tolerance of the f64 product of the dequantized inputs: ragged 1000 x 1040 x 1024
/// (tiles at odd multiples of 192 split their columns at 64, the last tile's second block past
/// N) on the whole GPU, with and without the cluster, and split into 3 slices at 64 x 1040 x 1024.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gemm_fp8_dsl_192_wide_tiles_match_the_dequantized_f64_product() {
    use phaser_examples::gallery::gemm_dsl::Tiles;
    use phaser_examples::gallery::gemm_fp8_dsl::{self as fp8, Output, Quantized, Scales, Scaling};
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let sms = dev.sm_count().unwrap();
    let mut failures = Vec::new();
    for (m, cluster, split) in [(1000, 2, 1), (1000, 1, 1), (64, 1, 3)] {
        let t = Tiles { cluster, split, ..fp8::blockwise_tiles(192) };
        let q = Quantized::random(m, 1040, 1024, Scaling::Blockwise, seed);
        let kernel = fp8::kernel_with(Scaling::Blockwise, &t, 1, Scales::Shared).unwrap();
        let mut p = fp8::problem_tiles(&dev, q, t.grid(m, 1040, sms), false, seed, kernel, Output::Bf16, &t).unwrap();
        let what = format!("192 wide, {m}x1040x1024, cluster {cluster}, split {split}");
        let outputs = phaser::problem::run_problem(&dev, &mut p).unwrap_or_else(|e| panic!("{what}: {e}"));
        let outcome = fp8::check(&p, &outputs);
        eprintln!("{what}: {}", outcome.detail);
        if !outcome.passed {
            failures.push(format!("{what}: {}", outcome.detail));
        }
    }
    assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
}

/// Split-K reduced by every slice (one launch: all slices of a tile wait for all its flags,
/// then each sums its share in slice order) against the two-launch reduction of the same
/// tiles, at decode shapes (M = 1, 16, 33, 64): C identical bit for bit, launched 3 times on
/// one flags buffer (the banks alternate), C poisoned before each; the first run also against
/// cuBLAS and the CPU. A differential test: the two sum the same partials in the same order.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn dsl_every_slice_reduction_is_bit_identical_to_the_two_launch_reduction() {
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    let blas = CublasLt::new(timing::cuda(&dev).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let sms = dev.sm_count().unwrap();
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let base = GemmConfig { cluster_m: 1, ..GemmConfig::new(BLayout::KMajor) };
    let configs = [
        GemmConfig { consumers: 1, block_n: 256, stages: 5, split_k: 4, ..base },
        GemmConfig { consumers: 1, block_n: 256, stages: 5, split_k: 8, ..base },
        GemmConfig { consumers: 1, block_n: 128, stages: 8, split_k: 8, ..base },
        GemmConfig { block_n: 256, stages: 4, split_k: 4, ..base },
    ];
    let shapes =
        [(1, 4096, 4096), (16, 4096, 4096), (33, 4096, 8192), (64, 4096, 4096), (64, 8192, 8192), (64, 2048, 1000)]
            .map(|(m, n, k)| GemmShape::new(m, n, k));
    let (mut failures, mut checked) = (Vec::new(), 0);
    for two in configs {
        let every = GemmConfig { reduce: SplitReduce::EverySlice, ..two };
        let (k_two, k_every) = (gemm::dsl::kernels(&two).unwrap(), gemm::dsl::kernels(&every).unwrap());
        assert!(k_every.reduce.is_none() && k_two.reduce.is_some());
        for (i, shape) in shapes.iter().copied().enumerate() {
            if let Some(why) = gemm::dsl::launch_problem(&every, &shape, sms) {
                eprintln!("{shape} {}: refused ({why})", every.kernel_name());
                continue;
            }
            let s = seed + i as u64;
            let a = random_bf16(shape.m as usize * shape.k as usize, s);
            let b = random_bf16(b_len(&shape), s ^ 0x9e37_79b9);
            let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
            let mut ws = gemm::dsl::workspace(&dev, &two, &shape).unwrap();
            let mut flags = gemm::dsl::flags(&dev, &two, &shape).unwrap();
            dev.fill(&mut bufs.c, POISON).unwrap();
            gemm::dsl::launch(&dev, &k_two, &mut bufs, &mut ws, &mut flags)
                .unwrap_or_else(|e| panic!("{shape} {}: {e}", two.kernel_name()));
            let want = dev.download(&bufs.c).unwrap();
            let mut ws = gemm::dsl::workspace(&dev, &every, &shape).unwrap();
            let mut flags = gemm::dsl::flags(&dev, &every, &shape).unwrap();
            for run in 0..3 {
                dev.fill(&mut bufs.c, POISON).unwrap();
                gemm::dsl::launch(&dev, &k_every, &mut bufs, &mut ws, &mut flags)
                    .unwrap_or_else(|e| panic!("{shape} {} run {run}: {e}", every.kernel_name()));
                let got = dev.download(&bufs.c).unwrap();
                let differ = got.iter().zip(&want).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
                checked += 1;
                eprintln!(
                    "{shape} {} run {run}: {differ} of {} elements differ from {}",
                    every.kernel_name(),
                    got.len(),
                    two.kernel_name()
                );
                if differ > 0 {
                    failures.push(format!("{shape} {} run {run}: {differ} elements differ", every.kernel_name()));
                }
            }
            let kernel = GemmKernels::new(&every, true).unwrap();
            let (vs_blas, vs_cpu) = check_against_cublas(&dev, &blas, &kernel, &every, shape, s)
                .unwrap_or_else(|e| panic!("{shape} {}: {e}", every.kernel_name()));
            if !(vs_blas.passed() && vs_cpu.passed()) {
                failures.push(format!(
                    "{shape} {}: vs cuBLAS {:.3}, vs CPU {:.3}",
                    every.kernel_name(),
                    vs_blas.worst,
                    vs_cpu.worst
                ));
            }
        }
    }
    assert!(checked >= 30, "{checked} checks");
    assert!(failures.is_empty(), "seed {seed}: {} of {checked} failed:\n{}", failures.len(), failures.join("\n"));
}

/// The blockwise FP8 GEMM with its output quantized to e4m3 (`Output::E4m3`) on the GPU. Exact
/// inputs (ternary elements, power-of-two scales: the f32 C is exact on both backends), ragged
/// 330 x 208 x 1024 and the gallery's small and quick sizes: every e4m3 byte and every scale
/// the simulator's, bit for bit (a differential run: amax, quad shuffles, `div.rn`, the
/// satfinite pack and the TMA store of packed pairs on the hardware), and the host's model.
/// Random inputs (ragged 1000 x 1040 x 1024 on the whole GPU, the gallery's full 2048^3):
/// each byte times its scale within `Quantized::tolerance_e4m3` of the f64 product.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gemm_fp8_e4m3_out_matches_the_simulator_and_the_f64_product() {
    use phaser::problem::{run_problem, simulate_problem, Problem, Size};
    use phaser::runtime::sim::SimConfig;
    use phaser_examples::gallery::gemm_fp8_dsl::{self as fp8, tiles, Host, Output, Quantized, Scaling};
    let gpu = Device::cuda(0).expect("needs a CUDA GPU");
    let seed = phaser_examples::gallery::fresh_seed();
    eprintln!("seed {seed}");
    let t = tiles(Scaling::Blockwise);
    let kernel = || fp8::kernel_out(Scaling::Blockwise, &t, fp8::FRAGS, fp8::SCALES, Output::E4m3).unwrap();
    let mut failures = Vec::new();
    // Differential: the same problem on both backends.
    type Make<'a> = Box<dyn Fn(&Device) -> Problem + 'a>;
    let exact: Vec<(&str, Make<'_>)> = vec![
        (
            "ragged 330x208x1024",
            Box::new(|dev: &Device| {
                let q = Quantized::exact(330, 208, 1024, Scaling::Blockwise, seed);
                fp8::problem_out(dev, q, 4, true, seed, kernel(), Output::E4m3).unwrap()
            }),
        ),
        ("small", Box::new(|dev: &Device| fp8::setup_out(dev, Size::Small, seed, Output::E4m3).unwrap())),
        ("quick", Box::new(|dev: &Device| fp8::setup_out(dev, Size::Quick, seed, Output::E4m3).unwrap())),
    ];
    for (what, make) in &exact {
        let mut on_gpu = make(&gpu);
        let outputs = run_problem(&gpu, &mut on_gpu).unwrap_or_else(|e| panic!("{what}: {e}"));
        let outcome = fp8::check(&on_gpu, &outputs);
        eprintln!("{what} on the GPU: {}", outcome.detail);
        if !outcome.passed {
            failures.push(format!("{what}: {}", outcome.detail));
        }
        let h: &Host = on_gpu.host();
        let (gpu_c, gpu_s) = (outputs.get(0, h.c).to_vec(), outputs.get(0, h.sfc).to_vec());
        let sim = Device::sim(SimConfig::default().with_seed(seed));
        let mut in_sim = make(&sim);
        let reports = simulate_problem(&sim, &mut in_sim, &SimConfig::default().with_seed(seed))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(reports.iter().all(|r| r.findings.is_empty()), "{what}: the simulator's findings");
        let hs: &Host = in_sim.host();
        let (sim_c, sim_s) = (in_sim.download(&sim, hs.c).unwrap(), in_sim.download(&sim, hs.sfc).unwrap());
        let bytes = |c: &[half::bf16]| fp8::e4m3_of_pairs(c).iter().map(|b| b.to_bits()).collect::<Vec<u8>>();
        let (gb, sb) = (bytes(&gpu_c), bytes(&sim_c));
        let same_bytes = gb.iter().zip(&sb).filter(|(g, s)| g == s).count();
        let same_scales = gpu_s.iter().zip(&sim_s).filter(|(g, s)| g.to_bits() == s.to_bits()).count();
        eprintln!(
            "{what}: simulator vs GPU: {same_bytes} of {} bytes, {same_scales} of {} scales bit-identical",
            gb.len(),
            gpu_s.len()
        );
        if same_bytes != gb.len() || same_scales != gpu_s.len() {
            failures.push(format!("{what}: the GPU's bytes or scales differ from the simulator's"));
        }
    }
    // Random inputs against the f64 product.
    let sms = gpu.sm_count().unwrap();
    let q = Quantized::random(1000, 1040, 1024, Scaling::Blockwise, seed);
    let mut problems = vec![(
        "random ragged 1000x1040x1024",
        fp8::problem_out(&gpu, q, t.grid(1000, 1040, sms), false, seed, kernel(), Output::E4m3).unwrap(),
    )];
    problems.push(("full", fp8::setup_out(&gpu, Size::Full, seed, Output::E4m3).unwrap()));
    for (what, mut p) in problems {
        let outputs = run_problem(&gpu, &mut p).unwrap_or_else(|e| panic!("{what}: {e}"));
        let outcome = fp8::check(&p, &outputs);
        eprintln!("{what}: {}", outcome.detail);
        if !outcome.passed {
            failures.push(format!("{what}: {}", outcome.detail));
        }
    }
    assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
}
