//! The DSL-written Hopper GEMM (examples/src/gallery/gemm_dsl.rs) in the simulator, under the
//! checker: 256 x 256 x 256 with random bf16 inputs matches the f64 CPU reference within bf16
//! tolerance with zero findings (2-CTA cluster with multicast and 2 stages, so the 4 K blocks
//! wrap the ring; and the cluster-free 256 x 128 tiles with two m64 slabs per warpgroup, under
//! the adversarial schedule). The two injected bugs of `gemm_bugs.rs` — a stage released before the
//! `wgmma.wait_group` that retires its wgmmas, and the accumulator read without the
//! `wait_group` — are each reported at their line of the DSL source.

use phaser::codegen::Kernel;
use phaser::runtime::sim::{Category, Finding, SimConfig, Strategy};
use phaser::runtime::RuntimeError;
use phaser::Device;
use phaser_examples::gemm::dsl::{DslKernels, ReduceLaunch};
use phaser_examples::gemm::{self, *};
use phaser_examples::gemm_bugs;
use phaser_examples::mutate::{at, mutator::Move, ops, Mutator};

const SHAPE: GemmShape = GemmShape::new(256, 256, 256);

/// The default configuration (128 x 256 tiles, 2-CTA clusters) with 2 stages.
fn cluster_config() -> GemmConfig {
    GemmConfig { stages: 2, ..gemm::dsl::config(true) }
}

struct Run {
    c: Vec<half::bf16>,
    a: Vec<half::bf16>,
    b: Vec<half::bf16>,
    result: Result<Vec<Finding>, Vec<Finding>>,
    /// The in-kernel fix-up's flags after the launch (every launch leaves them 0).
    flags: Vec<u32>,
}

/// The DSL GEMM `kernel` of `cfg` alone (no split-K), at [`SHAPE`].
fn simulate(kernel: &Kernel, cfg: &GemmConfig, sc: SimConfig) -> Run {
    let kernels = DslKernels { cfg: *cfg, gemm: kernel.clone(), reduce: None };
    simulate_at(&kernels, sc, SHAPE)
}

/// Every launch of `kernels` (with split-K, the GEMM and the reduction) on a B of the
/// configuration's layout, C and the split-K workspace poisoned first; the findings of all
/// of them.
fn simulate_at(kernels: &DslKernels, sc: SimConfig, shape: GemmShape) -> Run {
    simulate_how(kernels, sc, shape, ReduceLaunch::Plain)
}

/// [`simulate_at`] with split-K's reduction launched `how`.
fn simulate_how(kernels: &DslKernels, sc: SimConfig, shape: GemmShape, how: ReduceLaunch) -> Run {
    let seed = sc.seed;
    let dev = Device::sim(sc);
    let a = random_bf16((shape.m * shape.k) as usize, seed);
    let b = random_bf16(b_len(&shape), seed ^ 0x9e37_79b9);
    let mut bufs = GemmBuffers::new(&dev, shape, kernels.cfg.b_layout, &a, &b).unwrap();
    dev.fill(&mut bufs.c, POISON).unwrap();
    let mut ws = gemm::dsl::workspace(&dev, &kernels.cfg, &shape).unwrap();
    dev.fill(&mut ws, f32::NAN).unwrap();
    let mut flags = gemm::dsl::flags(&dev, &kernels.cfg, &shape).unwrap();
    let result = match gemm::dsl::launch_with(&dev, kernels, &mut bufs, &mut ws, &mut flags, how) {
        Ok(reports) => Ok(reports.into_iter().flat_map(|r| r.sim.map(|s| s.findings).unwrap_or_default()).collect()),
        Err(RuntimeError::Simulation(r)) => Err(r.findings),
        Err(e) => panic!("{}: {e}", kernels.gemm.name()),
    };
    let flags = dev.download(&flags).unwrap();
    Run { c: dev.download(&bufs.c).unwrap(), a, b, result, flags }
}

/// Every element of `run`'s C against the CPU reference of its A and B (`layout`), within the
/// tolerance, `name` in the message.
fn assert_matches_the_cpu(run: &Run, shape: &GemmShape, layout: BLayout, name: &str) {
    let (m, n) = (shape.m as usize, shape.n as usize);
    let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
    let cmp = compare(&run.c, shape, all, |i, j| reference_at(&run.a, &run.b, shape, layout, i, j));
    assert_eq!(cmp.compared, m * n, "{name}");
    assert!(cmp.passed(), "{name}: {cmp:?}");
}

fn describe(findings: &[Finding]) -> String {
    findings.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n\n")
}

/// The line of gemm_dsl.rs holding `needle`, the first after the line holding `after`.
fn dsl_line(after: &str, needle: &str) -> u32 {
    let src = include_str!("../src/gallery/gemm_dsl.rs");
    let lines: Vec<&str> = src.lines().collect();
    let start = lines.iter().position(|l| l.contains(after)).unwrap_or_else(|| panic!("`{after}` in gemm_dsl.rs"));
    let at = lines[start..].iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` after it"));
    (start + at + 1) as u32
}

#[test]
fn dsl_gemm_256_cubed_matches_the_cpu_reference_with_no_findings() {
    let runs = [
        (cluster_config(), Strategy::RoundRobin, 12),
        (cluster_config(), Strategy::Random, 13),
        (GemmConfig { stages: 3, ..gemm::dsl::config(false) }, Strategy::Adversarial, 3),
    ];
    for (cfg, strategy, seed) in runs {
        let k = gemm::dsl::kernel(&cfg).unwrap_or_else(|e| panic!("{e}"));
        let t0 = std::time::Instant::now();
        let run = simulate(&k, &cfg, SimConfig::default().with_seed(seed).with_strategy(strategy));
        eprintln!("{} {strategy:?} simulated in {:?}", cfg.kernel_name(), t0.elapsed());
        let findings = run.result.unwrap_or_else(|f| panic!("{} {strategy:?}:\n{}", cfg.kernel_name(), describe(&f)));
        assert!(findings.is_empty(), "{}", describe(&findings));
        let (m, n) = (SHAPE.m as usize, SHAPE.n as usize);
        let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
        let cmp = compare(&run.c, &SHAPE, all, |i, j| reference_at(&run.a, &run.b, &SHAPE, BLayout::KMajor, i, j));
        assert_eq!(cmp.compared, m * n);
        assert!(cmp.passed(), "{} {strategy:?}: {cmp:?}", cfg.kernel_name());
        // Not vacuous: C has the magnitude of a sum of 256 products of [-1, 1) values.
        let big = run.c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
        assert!(big > m * n / 4, "{big} of {} elements above 1", m * n);
    }
}

/// Every configuration `GemmConfig::choose` can pick that the DSL GEMM implements (tiles
/// 128 x {128, 192, 256} and 256 x {64, 128}, 1- and 2-CTA clusters, and split-K into 2, 4 and 8
/// slices, also with 128 x 64 tiles; for K-major B, and for N-major B those without a
/// cluster) is exact against the CPU reference with no findings at a decode shape
/// (M = 1) and a shape ragged in every dimension, both smaller than a tile, where it can run
/// them (K of 4 and 3 blocks), and with 8 slices at K = 520 (9 blocks).
#[test]
fn every_chosen_configuration_matches_the_cpu_reference_at_m1_and_ragged_shapes() {
    let candidates = phaser_examples::gemm_choice::choice_candidates(BLayout::KMajor);
    assert!(candidates.iter().any(|c| c.block_n == 64) && candidates.iter().any(|c| c.cluster_m == 2));
    assert!([2, 4, 8].iter().all(|&s| candidates.iter().any(|c| c.split_k == s)));
    let n_major: Vec<GemmConfig> = phaser_examples::gemm_choice::choice_candidates(BLayout::NMajor)
        .into_iter()
        .filter(|c| gemm::dsl::unsupported(c).is_none())
        .collect();
    assert!([1, 2, 4, 8].iter().all(|&s| n_major.iter().any(|c| c.split_k == s)), "{n_major:?}");
    let candidates = candidates.into_iter().chain(n_major);
    let shapes = [GemmShape::new(1, 136, 200), GemmShape::new(130, 72, 136), GemmShape::new(1, 136, 520)];
    for cfg in candidates {
        let k = gemm::dsl::kernels(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let runnable: Vec<GemmShape> = shapes
            .iter()
            .copied()
            .filter(|s| gemm::dsl::shape_problem(&cfg, s).is_none())
            .take(if cfg.split_k == 1 { 2 } else { 1 })
            .collect();
        assert!(!runnable.is_empty(), "{}: no shape to run", cfg.kernel_name());
        for (i, shape) in runnable.into_iter().enumerate() {
            let sc = SimConfig::default().with_seed(20 + i as u64).with_strategy(Strategy::Random);
            let t0 = std::time::Instant::now();
            let run = simulate_at(&k, sc, shape);
            let name = format!("{} at {shape}", cfg.kernel_name());
            eprintln!("{name} simulated in {:?}", t0.elapsed());
            let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
            assert!(findings.is_empty(), "{name}: {}", describe(&findings));
            assert_matches_the_cpu(&run, &shape, cfg.b_layout, &name);
        }
    }
}

#[test]
fn early_release_is_reported_at_the_dsl_release_line() {
    let cfg = cluster_config();
    let mut k = gemm::dsl::kernel(&cfg).unwrap().into_parts();
    assert!(gemm_bugs::release_before_wait(&mut k), "the mainloop's wait_group(1) + release");
    let k = k.finish().unwrap();
    let run = simulate(&k, &cfg, SimConfig::default().with_seed(12));
    let findings = run.result.expect_err("an early release is a finding");
    let races: Vec<&Finding> = findings.iter().filter(|f| f.category == Category::WgmmaOperandRace).collect();
    assert!(!races.is_empty(), "{}", describe(&findings));
    let f = races[0];
    let loc = f.loc.expect("a Rust line");
    let release = dsl_line("T.ptx.wgmma.wait_group(1);", "T.pipeline.consumer_release(pipe, release);");
    assert!(loc.file.ends_with("examples/src/gallery/gemm_dsl.rs") && loc.line == release, "{f}");
    assert!(f.message.contains("released") && f.message.contains("wgmma.wait_group"), "{f}");
    // The wgmma whose operand was released is named by its DSL line too (the first K block's
    // or the mainloop's, whichever read the stage: the K-major B's).
    let first = dsl_line("K block 0 of the slice overwrites", "a_ring[s][slab0 + j], b_ring[s], kk, kk > 0, \"k\");");
    let mainloop = dsl_line("for _kb in kb0 + 1..kb1", "a_ring[s][slab0 + j], b_ring[s], kk, true, \"k\");");
    let named = |line: u32| f.message.contains(&format!("gemm_dsl.rs:{line}:"));
    assert!(named(first) || named(mainloop), "{f}");
    eprintln!("{f}");
}

#[test]
fn missing_wait_group_is_reported_at_the_dsl_accumulator_read() {
    let cfg = cluster_config();
    let mut k = gemm::dsl::kernel(&cfg).unwrap().into_parts();
    assert!(gemm_bugs::drop_final_wait(&mut k), "the wait_group(0) after the mainloop");
    let k = k.finish().unwrap();
    let run = simulate(&k, &cfg, SimConfig::default().with_seed(12));
    let findings = run.result.expect_err("reading the accumulator before wait_group is a finding");
    let races: Vec<&Finding> = findings.iter().filter(|f| f.category == Category::WgmmaRegisterRace).collect();
    assert!(!races.is_empty(), "{}", describe(&findings));
    let f = races[0];
    let loc = f.loc.expect("a Rust line");
    let read = dsl_line("let g = (sub * EPI + q * 16) / 8;", "T.ptx.stmatrix.x4(");
    assert!(loc.file.ends_with("examples/src/gallery/gemm_dsl.rs") && loc.line == read, "{f}");
    assert!(f.message.contains("wgmma.wait_group"), "{f}");
    eprintln!("{f}");
}

/// Split-K: K in 2, 3 and 4 slices (each a contiguous range of K blocks, the last with the
/// remainder), f32 partials stored from the wgmma fragments into `[SPLIT, M, N]`, then the
/// reduction launch: every element of C matches the CPU reference with no findings, at shapes
/// uneven in K (K blocks not a multiple of the split, a partial last block) and in M and N
/// (partial tiles), with a 2-CTA cluster and without.
#[test]
fn split_k_matches_the_cpu_reference_at_uneven_shapes_with_no_findings() {
    // (split, cluster, shape): K = 328 is 6 blocks (the last partial; 3 + 3, 2 + 2 + 2,
    // 1 + 1 + 1 + 3), K = 200 is 4 blocks (2 + 2, 1 + 1 + 2), K = 456 is 8 (2 x 4).
    let runs = [
        (2, true, GemmShape::new(200, 136, 328)),
        (3, false, GemmShape::new(130, 200, 328)),
        (4, true, GemmShape::new(72, 264, 328)),
        (3, true, GemmShape::new(1, 72, 200)),
        (4, false, GemmShape::new(257, 64, 456)),
    ];
    for (i, (split_k, cluster, shape)) in runs.into_iter().enumerate() {
        let cfg = GemmConfig { split_k, stages: 2, ..gemm::dsl::config(cluster) };
        let kernels = gemm::dsl::kernels(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        assert!(kernels.reduce.is_some(), "split-K has a reduction launch");
        let sc = SimConfig::default().with_seed(40 + i as u64).with_strategy(Strategy::Random);
        let t0 = std::time::Instant::now();
        let run = simulate_at(&kernels, sc, shape);
        let name = format!("{} at {shape}", cfg.kernel_name());
        eprintln!("{name} simulated in {:?}", t0.elapsed());
        let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
        assert!(findings.is_empty(), "{name}: {}", describe(&findings));
        assert_matches_the_cpu(&run, &shape, BLayout::KMajor, &name);
        let (m, n) = (shape.m as usize, shape.n as usize);
        let big = run.c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
        assert!(big > m * n / 4, "{name}: {big} of {} elements above 1", m * n);
    }
}

/// Split-K's reduction launched as the GEMM's programmatic dependent
/// (`ReduceLaunch::Programmatic`, as `gemm::dsl::graph` can launch it): it waits
/// (`griddepcontrol.wait`) before its first read of the partials, so the simulator finds no
/// early dependent access, and C matches the reference.
#[test]
fn split_k_with_a_programmatic_reduction_is_clean() {
    for (split_k, cluster, shape) in [(3, true, GemmShape::new(1, 72, 200)), (2, false, GemmShape::new(130, 64, 200))] {
        let cfg = GemmConfig { split_k, stages: 2, ..gemm::dsl::config(cluster) };
        let kernels = gemm::dsl::kernels(&cfg).unwrap();
        let sc = SimConfig::default().with_seed(7).with_strategy(Strategy::Random);
        let run = simulate_how(&kernels, sc, shape, ReduceLaunch::Programmatic);
        let name = format!("{} at {shape}", cfg.kernel_name());
        let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
        assert!(findings.is_empty(), "{name}: {}", describe(&findings));
        assert_matches_the_cpu(&run, &shape, BLayout::KMajor, &name);
    }
}

/// The reduction with its `griddepcontrol.wait` moved after its grid-stride loop (so after
/// its first read of the GEMM's partials): launched as the GEMM's programmatic dependent, its
/// first read is an early dependent access at its line, naming the GEMM; launched plainly the
/// same mutant is clean.
#[test]
fn a_programmatic_reduction_reading_before_its_wait_is_found_at_the_read() {
    let (split_k, cluster, shape) = (3, true, GemmShape::new(1, 72, 200));
    let cfg = GemmConfig { split_k, stages: 2, ..gemm::dsl::config(cluster) };
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    let reduce = kernels.reduce.as_ref().unwrap();
    let (wait, _) = at(ops::GRID_DEP_WAIT, "T.ptx.griddepcontrol.wait();").resolve(reduce).unwrap();
    let mut parts = reduce.to_parts();
    Move { to: at(ops::LOOP, "while i < mn {"), after: true }.apply(&mut parts, wait).unwrap();
    let mutant = DslKernels { reduce: Some(parts.finish_unchecked()), ..kernels.clone() };
    let first = dsl_line("pub fn sum_partial_pairs", "let first = T.ld.v2(ws, at);");
    let later = dsl_line("pub fn sum_partial_pairs", "let v = T.ld.v2(ws, s * mn + at);");
    let sc = SimConfig::default().with_seed(7).with_strategy(Strategy::Random);
    let findings = match simulate_how(&mutant, sc.clone(), shape, ReduceLaunch::Programmatic).result {
        Err(f) => f,
        Ok(f) => panic!("the mutant ran clean: {}", describe(&f)),
    };
    let mut lines: Vec<u32> = findings.iter().map(|f| f.loc.map_or(0, |l| l.line)).collect();
    lines.sort();
    lines.dedup();
    assert_eq!(lines, [first, later], "{}", describe(&findings));
    for f in &findings {
        assert_eq!(f.category, Category::EarlyDependentAccess, "{}", describe(&findings));
        assert_eq!(f.kernel, reduce.name(), "{f}");
        assert_eq!(f.loc.map(|l| l.file), Some("examples/src/gallery/gemm_dsl.rs"), "{f}");
        let who = format!("the previous launch (`{}`) wrote buffer #", kernels.gemm.name());
        assert!(
            f.message.starts_with("a global vector load of 8 bytes at buffer #") && f.message.contains(&who),
            "{f}"
        );
    }
    let plain = simulate_how(&mutant, sc, shape, ReduceLaunch::Plain);
    let findings = plain.result.unwrap_or_else(|f| panic!("{}", describe(&f)));
    assert!(findings.is_empty(), "{}", describe(&findings));
}

/// N-major B (stored K x N, each stage's 64 x BN tile loaded as 64-column boxes through
/// `b_kn`, the wgmmas with transposed B), without a cluster: with and without split-K, at
/// shapes ragged in M, N and K (partial tiles, a partial last K block, uneven slices), every
/// element of C matches the CPU reference with no findings.
#[test]
fn n_major_b_matches_the_cpu_reference_at_uneven_shapes_with_no_findings() {
    // (split, wg_m, block_n, shape): K = 328 is 6 blocks (3 + 3), K = 200 is 4 (2 + 2) and
    // K = 136 is 3 (1 + 2).
    let runs = [
        (1, 128, 128, GemmShape::new(200, 136, 328)),
        (1, 64, 256, GemmShape::new(130, 264, 200)),
        (2, 64, 128, GemmShape::new(130, 200, 328)),
        (2, 128, 64, GemmShape::new(1, 72, 136)),
    ];
    for (i, (split_k, wg_m, block_n, shape)) in runs.into_iter().enumerate() {
        let cfg =
            GemmConfig { split_k, wg_m, block_n, stages: 2, b_layout: BLayout::NMajor, ..gemm::dsl::config(false) };
        assert_eq!(gemm::dsl::unsupported(&cfg), None, "{}", cfg.kernel_name());
        let kernels = gemm::dsl::kernels(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let sc = SimConfig::default().with_seed(60 + i as u64).with_strategy(Strategy::Random);
        let t0 = std::time::Instant::now();
        let run = simulate_at(&kernels, sc, shape);
        let name = format!("{} at {shape}", cfg.kernel_name());
        eprintln!("{name} simulated in {:?}", t0.elapsed());
        let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
        assert!(findings.is_empty(), "{name}: {}", describe(&findings));
        assert_matches_the_cpu(&run, &shape, BLayout::NMajor, &name);
        let (m, n) = (shape.m as usize, shape.n as usize);
        let big = run.c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
        assert!(big > m * n / 4, "{name}: {big} of {} elements above 1", m * n);
    }
}

/// N-major B with a cluster is refused, naming why, when the kernel is built and by the
/// configuration check the chooser and the benchmark ask.
#[test]
fn n_major_b_with_a_cluster_is_refused_naming_why() {
    let cfg = GemmConfig { b_layout: BLayout::NMajor, ..gemm::dsl::config(true) };
    let why = "N-major B with a 2-CTA cluster: the multicast needs a column-block view of the 64 x 256 B tile, \
               which the DSL has not; use cluster 1";
    assert_eq!(gemm::dsl::unsupported(&cfg).as_deref(), Some(why));
    let e = gemm::dsl::kernel(&cfg).expect_err("refused").to_string();
    assert!(e.contains(&format!("GEMM configuration {}: {why}", cfg.kernel_name())), "{e}");
    let e = gemm::dsl::tiles(&cfg).kernel().expect_err("the kernel's own refusal").to_string();
    assert!(e.contains(why), "{e}");
}

/// A kernel built for N-major B with a cluster past the host's refusal does not build: its
/// multicast of the 64 x BN tile's share does not match the K-major map's box (an error, not
/// a C computed through the wrong map).
#[test]
fn n_major_b_with_a_cluster_past_the_refusal_does_not_build() {
    let t = gemm::dsl::tiles(&gemm::dsl::config(true));
    let e = phaser_examples::gallery::gemm_dsl::gemm_dsl::kernel_for(
        t.block_n,
        t.wg_m,
        t.stages,
        t.cluster,
        t.group_m,
        1,
        1,
        0,
        t.consumers,
        64,
    )
    .expect_err("no N-major multicast")
    .to_string();
    assert!(e.contains("TMA multicast load: the tile does not match tensor map `b`"), "{e}");
}

/// The slices are summed in slice order, whatever the schedule: two runs of one split-K
/// GEMM under different schedulers give the same C bit for bit.
#[test]
fn split_k_is_deterministic_across_schedules() {
    let cfg = GemmConfig { split_k: 3, stages: 2, ..gemm::dsl::config(false) };
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    let shape = GemmShape::new(130, 136, 264);
    let runs: Vec<Run> = [(Strategy::Random, 7), (Strategy::Adversarial, 7)]
        .into_iter()
        .map(|(strategy, seed)| {
            simulate_at(&kernels, SimConfig::default().with_seed(seed).with_strategy(strategy), shape)
        })
        .collect();
    for r in &runs {
        assert!(r.result.as_ref().is_ok_and(|f| f.is_empty()), "{:?}", r.result.as_ref().map(|f| describe(f)));
    }
    let differ = runs[0].c.iter().zip(&runs[1].c).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
    assert_eq!(differ, 0, "{differ} elements differ between the schedules");
    assert!(runs[0].c.iter().all(|x| !x.is_nan()), "every element written");
}

/// More slices than K blocks, and 0 slices, are refused with both numbers named: on the host
/// before any launch, and (0) when the kernel is built.
#[test]
fn split_k_refuses_more_slices_than_k_blocks_and_zero_slices() {
    let cfg = GemmConfig { split_k: 4, stages: 2, ..gemm::dsl::config(false) };
    // K = 136 is 3 blocks of 64.
    let shape = GemmShape::new(64, 64, 136);
    let why = gemm::dsl::shape_problem(&cfg, &shape).expect("4 slices of 3 K blocks");
    assert_eq!(
        why, "split-K into 4 slices, but K = 136 is 3 block(s) of 64: at most one slice per K block",
        "the message names the split and the K blocks"
    );
    let dev = Device::sim(SimConfig::default());
    let a = random_bf16((shape.m * shape.k) as usize, 1);
    let b = random_bf16(b_len(&shape), 2);
    let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
    let mut ws = gemm::dsl::workspace(&dev, &cfg, &shape).unwrap();
    let mut flags = gemm::dsl::flags(&dev, &cfg, &shape).unwrap();
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    match gemm::dsl::launch(&dev, &kernels, &mut bufs, &mut ws, &mut flags) {
        Err(RuntimeError::BadLaunch { problem, .. }) => assert_eq!(problem, format!("64x64x136: {why}")),
        other => panic!("expected a refused launch, got {:?}", other.map(|_| ())),
    }
    // 3 slices of the same K are fine.
    assert_eq!(gemm::dsl::shape_problem(&GemmConfig { split_k: 3, ..cfg }, &shape), None);

    let zero = GemmConfig { split_k: 0, ..cfg };
    assert_eq!(zero.problem().as_deref(), Some("split_k = 0: at least 1 slice of K (1: no split)"));
    let e = gemm::dsl::kernel(&zero).expect_err("0 slices is a build error").to_string();
    assert!(e.contains("split_k = 0: at least 1 slice of K"), "{e}");
    let e = gemm::dsl::tiles(&zero).kernel().expect_err("the kernel's own refusal").to_string();
    assert!(e.contains("split-K into 0 slices: at least 1"), "{e}");
    // The builder GEMM has no split-K.
    let e = gemm_kernel(&GemmConfig { split_k: 2, ..cfg }).expect_err("no split-K in the builder GEMM").to_string();
    assert!(e.contains("split_k = 2: the builder GEMM has no split-K"), "{e}");
}

/// A split-K launch that skips the host's refusal (more slices than K blocks) traps at the
/// kernel's guard instead of waiting forever for a stage no producer fills.
#[test]
fn split_k_past_the_k_blocks_traps_instead_of_hanging() {
    let cfg = GemmConfig { split_k: 4, stages: 2, ..gemm::dsl::config(false) };
    let shape = GemmShape::new(64, 64, 136); // 3 K blocks
    let dev = Device::sim(SimConfig::default());
    let a = random_bf16((shape.m * shape.k) as usize, 1);
    let b = random_bf16(b_len(&shape), 2);
    let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
    let mut ws = gemm::dsl::workspace(&dev, &cfg, &shape).unwrap();
    let mut flags = gemm::dsl::flags(&dev, &cfg, &shape).unwrap();
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    let maps = gemm::dsl::tensor_maps(&dev, &cfg, &bufs).unwrap();
    let lc = gemm::dsl::launch_config(&cfg, &shape, dev.sm_count().unwrap());
    match dev.launch(&kernels.gemm, lc, &gemm::dsl::args(&maps, &shape, &mut ws, &mut flags, &mut bufs.c)) {
        Err(RuntimeError::Simulation(r)) => {
            assert!(r.findings.iter().any(|f| f.category == Category::Trap), "{}", describe(&r.findings));
            let f = r.findings.iter().find(|f| f.category == Category::Trap).unwrap();
            let guard = dsl_line("if k_blocks < SPLIT {", "T.ptx.trap();");
            assert_eq!(f.loc.map(|l| l.line), Some(guard), "{f}");
        }
        other => panic!("expected the guard's trap, got {:?}", other.map(|_| ())),
    }
}

/// The in-kernel fix-up (`SplitReduce::InKernel`: one launch, the last slice's CTA waits on
/// flags and sums the partials in slice order) at splits 2, 3 and 4 on shapes uneven in M, N
/// and K, with and without a cluster, over one CTA (the fix-up after its own slices) and over
/// several (the flags between CTAs): zero findings, and C bit for bit the two-launch path's
/// (a differential test), which matches the CPU reference; the flags are 0 again after.
#[test]
fn in_kernel_fixup_is_bit_identical_to_the_two_launch_reduction_with_no_findings() {
    let runs = [
        (2, true, GemmShape::new(200, 136, 328)),
        (3, false, GemmShape::new(130, 200, 328)),
        (4, true, GemmShape::new(72, 264, 328)),
        (4, false, GemmShape::new(1, 72, 456)),
    ];
    for (i, (split_k, cluster, shape)) in runs.into_iter().enumerate() {
        let two = GemmConfig { split_k, stages: 2, ..gemm::dsl::config(cluster) };
        let fix = GemmConfig { reduce: SplitReduce::InKernel, ..two };
        assert_ne!(two.kernel_name(), fix.kernel_name());
        let kernels = gemm::dsl::kernels(&fix).unwrap_or_else(|e| panic!("{}: {e}", fix.kernel_name()));
        assert!(kernels.reduce.is_none(), "the fix-up is one launch");
        let sc = SimConfig::default().with_seed(80 + i as u64).with_strategy(Strategy::Random);
        let name = format!("{} at {shape}", fix.kernel_name());
        let run = simulate_at(&kernels, sc.clone(), shape);
        let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
        assert!(findings.is_empty(), "{name}: {}", describe(&findings));
        assert!(run.flags.len() > 1 && run.flags.iter().all(|&f| f == 0), "{name}: flags left {:?}", run.flags);
        let base = simulate_at(&gemm::dsl::kernels(&two).unwrap(), sc, shape);
        assert!(base.result.as_ref().is_ok_and(|f| f.is_empty()), "{}", two.kernel_name());
        let differ = run.c.iter().zip(&base.c).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
        assert_eq!(differ, 0, "{name}: {differ} elements differ from the two-launch reduction");
        assert_matches_the_cpu(&run, &shape, BLayout::KMajor, &name);
    }
}

/// The fix-up over several CTAs (a grid of one CTA per work unit, as on the GPU), under the
/// adversarial schedule: the flags order the partials between CTAs (zero findings of the
/// global-order checker) and C equals the two-launch path's bit for bit.
#[test]
fn in_kernel_fixup_across_ctas_under_the_adversarial_schedule() {
    let two = GemmConfig { split_k: 3, stages: 2, ..gemm::dsl::config(false) };
    let fix = GemmConfig { reduce: SplitReduce::InKernel, ..two };
    let shape = GemmShape::new(130, 136, 264);
    let sc = SimConfig::default().with_seed(9).with_strategy(Strategy::Adversarial);
    let run = simulate_at(&gemm::dsl::kernels(&fix).unwrap(), sc.clone(), shape);
    let findings = run.result.unwrap_or_else(|f| panic!("{}", describe(&f)));
    assert!(findings.is_empty(), "{}", describe(&findings));
    assert!(run.flags.iter().all(|&f| f == 0), "{:?}", run.flags);
    let base = simulate_at(&gemm::dsl::kernels(&two).unwrap(), sc, shape);
    let differ = run.c.iter().zip(&base.c).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
    assert_eq!(differ, 0);
    assert!(run.c.iter().all(|x| !x.is_nan()), "every element written");
}

/// Every tile shape (both tile heights) and ring depth of the decode candidates
/// (`gemm_choice::decode_candidates`) of either B layout once at its largest split (16
/// slices, reduced in the kernel by the last slice, where the shape's 17 K blocks allow it)
/// and once reduced by every slice (2 slices: 2 tile columns x 2 slices fill the simulator's
/// 4 SMs, one wave), at a decode shape ragged in N and K (M = 16, two tile columns, a partial
/// last K block): zero findings and C exact against the CPU reference.
#[test]
fn every_decode_tile_shape_and_depth_matches_the_cpu_reference() {
    use std::collections::BTreeMap;
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        let mut by_shape: BTreeMap<(u32, u32, u32, bool, u32), GemmConfig> = BTreeMap::new();
        for c in phaser_examples::gemm_choice::decode_candidates(layout) {
            let every = c.reduce == SplitReduce::EverySlice;
            if every && c.split_k != 2 {
                continue;
            }
            let slot = by_shape.entry((c.block_m(), c.block_n, c.stages, every, c.a_rows())).or_insert(c);
            if (c.split_k, c.reduce == SplitReduce::InKernel) > (slot.split_k, slot.reduce == SplitReduce::InKernel) {
                *slot = c;
            }
        }
        // K-major: 2 heights x {32, 64, 128, 256} columns; N-major has no 32-column tile. The
        // 64-row tiles again with a 16-row A box (M = 16 is at most its rows).
        let shapes = if layout == BLayout::KMajor { 12 } else { 9 };
        assert!(by_shape.len() >= shapes, "{layout:?}: {by_shape:?}");
        assert!(by_shape.keys().any(|k| k.0 == 64) && by_shape.keys().any(|k| k.3), "{by_shape:?}");
        assert!(by_shape.keys().any(|k| k.0 == 64 && k.4 == 16 && k.3), "{by_shape:?}");
        for (i, cfg) in by_shape.values().enumerate() {
            let shape = GemmShape::new(16, cfg.block_n + 8, 16 * 64 + 8);
            let name = format!("{} at {shape}", cfg.kernel_name());
            let kernels = gemm::dsl::kernels(cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
            let sc = SimConfig::default().with_seed(100 + i as u64).with_strategy(Strategy::Random);
            let t0 = std::time::Instant::now();
            let run = simulate_at(&kernels, sc, shape);
            eprintln!("{name} simulated in {:?}", t0.elapsed());
            let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
            assert!(findings.is_empty(), "{name}: {}", describe(&findings));
            assert_matches_the_cpu(&run, &shape, layout, &name);
        }
    }
}

/// Elements of {-1, 0, 1}: every partial sum is a small integer, exact in f32 in any order,
/// so C is the exact product rounded once to bf16 and can be compared bit for bit.
fn ternary_bf16(len: usize, seed: u64) -> Vec<half::bf16> {
    random_bf16(len, seed)
        .into_iter()
        .map(|x| half::bf16::from_f32((x.to_f32() * 1.5).round().clamp(-1.0, 1.0)))
        .collect()
}

/// 128 x 192 tiles (N = 2112 is 11 tiles of 192, 8.25 of 256: `gemm_choice`), three 64 x 64
/// epilogue sub-tiles per warpgroup, an odd number, so consecutive tiles of a CTA start on
/// the staging tile the previous tile's last store read: with a 2-CTA cluster (B multicast
/// in 96-row halves), without, and N-major B, each on grids that make every CTA walk several
/// tiles of a shape ragged in M, N (a last column of tiles 8 wide) and K (a partial last
/// block), C equals the exact product bit for bit with no findings.
#[test]
fn tiles_192_wide_are_exact_at_ragged_shapes_with_no_findings() {
    let shape = GemmShape::new(328, 392, 136);
    let runs = [(BLayout::KMajor, 2, 2), (BLayout::KMajor, 1, 2), (BLayout::NMajor, 1, 1)];
    for (i, (layout, cluster_m, grid)) in runs.into_iter().enumerate() {
        let cfg = GemmConfig { block_n: 192, wg_m: 64, stages: 2, cluster_m, ..GemmConfig::new(layout) };
        assert_eq!(gemm::dsl::unsupported(&cfg), None, "{}", cfg.kernel_name());
        launch_exact_with_no_findings(&cfg, shape, grid, 60 + i as u64);
    }
}

/// The 192-row tile (three consumer warpgroups, 512 threads): 192 x 128 and 192 x 192 tiles
/// with a 2-CTA cluster (B multicast in halves, a 384-row cluster tile) and without, and with
/// N-major B, at a shape ragged in M (328: one full row of tiles and one of 136 rows, where the
/// third warpgroup has 8 valid rows of 64), N (a last column of tiles 8 or 72 wide) and K (a
/// partial last block), on grids where every CTA walks several tiles (the epilogue's staging
/// tiles reused, 3 sub-tiles per warpgroup at 192): C equals the exact product bit for bit
/// with no findings.
#[test]
fn tiles_192_high_are_exact_at_ragged_shapes_with_no_findings() {
    let shape = GemmShape::new(328, 264, 136);
    let runs = [
        (BLayout::KMajor, 128, 2, 2),
        (BLayout::KMajor, 192, 1, 2),
        (BLayout::NMajor, 128, 1, 2),
        (BLayout::NMajor, 192, 1, 1),
    ];
    for (i, (layout, block_n, cluster_m, grid)) in runs.into_iter().enumerate() {
        let cfg = GemmConfig { block_n, wg_m: 64, consumers: 3, stages: 2, cluster_m, ..GemmConfig::new(layout) };
        assert_eq!(gemm::dsl::unsupported(&cfg), None, "{}", cfg.kernel_name());
        assert_eq!((cfg.block_m(), cfg.threads()), (192, 512), "{}", cfg.kernel_name());
        launch_exact_with_no_findings(&cfg, shape, grid, 70 + i as u64);
    }
}

/// A tile whose accumulators do not fit the registers is refused on the host, naming the
/// numbers: 192 x 256 (128 accumulator registers of a consumer thread, 32 more needed, 128 a
/// thread of 512 threads), and a third warpgroup of two m64 slabs (a 384-row A box).
#[test]
fn tiles_192_high_refuse_what_does_not_fit() {
    let wide = GemmConfig {
        block_n: 256,
        wg_m: 64,
        consumers: 3,
        stages: 3,
        cluster_m: 1,
        ..GemmConfig::new(BLayout::KMajor)
    };
    assert_eq!(wide.problem(), None, "valid as a configuration");
    let why = gemm::dsl::unsupported(&wide).expect("192 x 256 refused");
    assert!(
        why.contains("192 x 256 tiles with 3 consumer warpgroups: 128 accumulator registers")
            && why.contains("over the 128"),
        "{why}"
    );
    let e = gemm::dsl::kernel(&wide).unwrap_err().to_string();
    assert!(e.contains("128 accumulator registers"), "{e}");
    let tall = GemmConfig { block_n: 64, wg_m: 128, ..wide };
    let why = gemm::dsl::unsupported(&tall).expect("384 rows refused");
    assert!(why.contains("a 384-row A tile, one TMA box of at most 256 rows"), "{why}");
    assert!(gemm::builder_unsupported(&GemmConfig { block_n: 128, ..wide }).unwrap().contains("the DSL GEMM's only"));
}

/// `cfg`'s DSL kernel on `grid` CTAs at `shape` in the simulator (random schedule from
/// `seed`, ternary inputs from it): no findings, C the exact product bit for bit, and not
/// vacuously (sums of ternary products are mostly not 0, +-1).
fn launch_exact_with_no_findings(cfg: &GemmConfig, shape: GemmShape, grid: u32, seed: u64) {
    let layout = cfg.b_layout;
    let name = format!("{} at {shape} on {grid} CTAs", cfg.kernel_name());
    let kernel = gemm::dsl::kernel(cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dev = Device::sim(SimConfig::default().with_seed(seed).with_strategy(Strategy::Random));
    let a = ternary_bf16((shape.m * shape.k) as usize, seed);
    let b = ternary_bf16(b_len(&shape), seed ^ 0x9e37_79b9);
    let mut bufs = GemmBuffers::new(&dev, shape, layout, &a, &b).unwrap();
    dev.fill(&mut bufs.c, POISON).unwrap();
    let mut ws = gemm::dsl::workspace(&dev, cfg, &shape).unwrap();
    let mut flags = gemm::dsl::flags(&dev, cfg, &shape).unwrap();
    let maps = gemm::dsl::tensor_maps(&dev, cfg, &bufs).unwrap();
    let lc = phaser::LaunchConfig::linear(grid, cfg.threads()).with_dynamic_shared(cfg.dynamic_smem_bytes());
    let t0 = std::time::Instant::now();
    let report = match dev.launch(&kernel, lc, &gemm::dsl::args(&maps, &shape, &mut ws, &mut flags, &mut bufs.c)) {
        Ok(r) => r,
        Err(RuntimeError::Simulation(r)) => panic!("{name}:\n{}", describe(&r.findings)),
        Err(e) => panic!("{name}: {e}"),
    };
    eprintln!("{name} simulated in {:?}", t0.elapsed());
    let findings = report.sim.map(|s| s.findings).unwrap_or_default();
    assert!(findings.is_empty(), "{name}: {}", describe(&findings));
    let c = dev.download(&bufs.c).unwrap();
    let (m, n) = (shape.m as usize, shape.n as usize);
    let wrong: Vec<(usize, usize)> = (0..m)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            let want = half::bf16::from_f64(reference_at(&a, &b, &shape, layout, i, j));
            c[i * n + j].to_bits() != want.to_bits()
        })
        .collect();
    assert!(wrong.is_empty(), "{name}: {} of {} elements wrong, first at {:?}", wrong.len(), m * n, wrong.first());
    let big = c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
    assert!(big > m * n / 2, "{name}: {big} of {} elements above 1", m * n);
}

/// `bench_gemm --pad-a-rows` (run 26's question: the 64 x 64 tile takes twice as long at M = 1
/// as at M = 64): A read through a map of 64 rows, zeros past M, gives C bit for bit as the
/// map of M rows does (whose box rows past M TMA fills with zeros), with no findings. M
/// reaches the kernel as `m`, C's clip, not through A's map.
#[test]
fn an_a_map_padded_past_m_with_zeros_gives_the_same_c() {
    let cfg = phaser_examples::gemm_choice::named_config("phaser_gemm_64x64x64_s8_c1_g8_kmajor", BLayout::KMajor)
        .expect("the 64 x 64 decode tile");
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    for m in [1, 17] {
        let shape = GemmShape::new(m, 72, 16 * 64 + 8);
        let sc = SimConfig::default().with_seed(7 + m as u64).with_strategy(Strategy::Random);
        let base = simulate_at(&kernels, sc.clone(), shape);
        assert!(base.result.as_ref().is_ok_and(|f| f.is_empty()), "M = {m}: {:?}", base.result);

        let dev = Device::sim(sc);
        let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &base.a, &base.b).unwrap();
        dev.fill(&mut bufs.c, POISON).unwrap();
        let mut padded = base.a.clone();
        padded.resize(64 * shape.k as usize, half::bf16::ZERO);
        let padded = dev.upload(&padded).unwrap();
        let mut maps = gemm::dsl::tensor_maps(&dev, &cfg, &bufs).unwrap();
        maps[0] = dev.tensor_map(&padded, &[shape.k as u64, 64], &[BLOCK_K, 64], phaser::Swizzle::B128).unwrap();
        let mut ws = gemm::dsl::workspace(&dev, &cfg, &shape).unwrap();
        let mut flags = gemm::dsl::flags(&dev, &cfg, &shape).unwrap();
        let lc = gemm::dsl::launch_config(&cfg, &shape, dev.sm_count().unwrap());
        let report = dev.launch(&kernels.gemm, lc, &gemm::dsl::args(&maps, &shape, &mut ws, &mut flags, &mut bufs.c));
        let findings = report.unwrap_or_else(|e| panic!("M = {m}: {e}")).sim.map(|s| s.findings).unwrap_or_default();
        assert!(findings.is_empty(), "M = {m}: {}", describe(&findings));
        let c = dev.download(&bufs.c).unwrap();
        let differ = c.iter().zip(&base.c).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
        assert_eq!((differ, c.len()), (0, (m * 72) as usize), "M = {m}");
    }
}

/// The 64-row tile with an A box of 16 rows (`Tiles::a_box_rows`; the decode candidates' for
/// M up to 16): every K block brings A's first 16 rows, each stage's other 48 zero-filled once
/// by boxes past M. At M = 1, 9 and 16, without split-K and split in 3 (reduced in the kernel by
/// the last slice), on grids where CTAs walk several tiles: C exact against the CPU reference,
/// no findings (no uninitialized row is read). M = 17 is refused, naming the box. The 8- and
/// 32-row boxes too, at M = 8 and 32.
#[test]
fn a_16_row_a_box_is_exact_up_to_m_16_and_refused_past_it() {
    let base = phaser_examples::gemm_choice::named_config("phaser_gemm_64x64x64_s8_c1_g8_kmajor", BLayout::KMajor)
        .expect("the 64 x 64 decode tile");
    let split = GemmConfig { split_k: 3, reduce: SplitReduce::InKernel, ..base };
    for (i, cfg) in [base, split].into_iter().enumerate() {
        let cfg = GemmConfig { a_box_rows: Some(16), ..cfg };
        assert!(cfg.kernel_name().ends_with("_a16_kmajor"), "{}", cfg.kernel_name());
        let kernels = gemm::dsl::kernels(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        for m in [1, 9, 16] {
            let shape = GemmShape::new(m, 200, 8 * 64 + 8);
            let name = format!("{} at {shape}", cfg.kernel_name());
            let sc = SimConfig::default().with_seed(40 + m as u64 + i as u64).with_strategy(Strategy::Random);
            let run = simulate_at(&kernels, sc, shape);
            let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
            assert!(findings.is_empty(), "{name}: {}", describe(&findings));
            assert_matches_the_cpu(&run, &shape, BLayout::KMajor, &name);
        }
        let past = GemmShape::new(17, 200, 8 * 64 + 8);
        let why = gemm::dsl::shape_problem(&cfg, &past).expect("M = 17 past a 16-row A box");
        assert!(why.contains("M = 17 with an A box of 16 rows"), "{why}");
    }
    // The other heights the kernel takes (`A_BOX_ROWS`), at M = their rows: 7 and 1 chunks
    // zero-filled a stage.
    for rows in [8, 32] {
        let cfg = GemmConfig { a_box_rows: Some(rows), ..base };
        let kernels = gemm::dsl::kernels(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        let shape = GemmShape::new(rows, 200, 8 * 64 + 8);
        let name = format!("{} at {shape}", cfg.kernel_name());
        let run = simulate_at(&kernels, SimConfig::default().with_seed(60 + rows as u64), shape);
        let findings = run.result.as_ref().unwrap_or_else(|f| panic!("{name}:\n{}", describe(f)));
        assert!(findings.is_empty(), "{name}: {}", describe(findings));
        assert_matches_the_cpu(&run, &shape, BLayout::KMajor, &name);
    }
}

/// The 16-row A box's zero fill is what initializes the slab's other rows: the mutant without
/// one of its box loads past M (the stage's first fill still expects its bytes) is found at the
/// fill's commit, not a C computed from shared memory no copy wrote. (Without the whole zero
/// fill, its bytes too, the wgmma's read is an `uninitialized-shared-read`: checked by hand.)
#[test]
fn a_16_row_a_box_without_its_zero_fill_is_found() {
    use phaser_examples::mutate::{make_mutant, mutator::Delete, Mutant};
    let cfg = phaser_examples::gemm_choice::named_config("phaser_gemm_64x64x64_s8_c1_g8_a16_kmajor", BLayout::KMajor)
        .expect("the 64 x 64 decode tile with a 16-row A box");
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    let mutant = Mutant {
        subject: "gemm_dsl",
        // The first of the three unrolled loads (chunk 1 of 4).
        site: at(ops::TMA_LOAD, "T.tma.load(a_ring[s][r], a, [m = 64, k = 0], full);").nth(0, 3),
        mutator: Box::new(Delete),
        expect: Category::TxImbalance,
        race: None,
    };
    let (bad, _) = make_mutant(&mutant, &kernels.gemm).unwrap_or_else(|e| panic!("{e}"));
    let mutated = DslKernels { gemm: bad, ..kernels.clone() };
    let sc = SimConfig::default().with_seed(41).with_strategy(Strategy::Random);
    let run = simulate_at(&mutated, sc, GemmShape::new(1, 200, 8 * 64 + 8));
    let findings = match run.result {
        Err(f) => f,
        Ok(f) => f,
    };
    // The stage's expected bytes outnumber those that land: a transaction imbalance at the
    // commit, and the waits on that stage never complete.
    let commit =
        dsl_line("pub fn gemm_dsl", "let full = T.pipeline.producer_commit(pipe, st, stage_bytes + zero_bytes);");
    let at_commit = |f: &Finding| f.category == Category::TxImbalance && f.loc.map(|l| l.line) == Some(commit);
    assert!(findings.iter().any(at_commit), "{}", describe(&findings));
    assert!(findings.iter().any(|f| f.category == Category::Deadlock), "{}", describe(&findings));
    assert!(findings.iter().all(|f| f.kernel == kernels.gemm.name()), "{}", describe(&findings));
}
