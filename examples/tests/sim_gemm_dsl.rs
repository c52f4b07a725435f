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
use phaser_examples::gemm::{self, *};
use phaser_examples::gemm_bugs;

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
}

fn simulate(kernel: &Kernel, cfg: &GemmConfig, sc: SimConfig) -> Run {
    simulate_at(kernel, cfg, sc, SHAPE)
}

fn simulate_at(kernel: &Kernel, cfg: &GemmConfig, sc: SimConfig, shape: GemmShape) -> Run {
    let seed = sc.seed;
    let dev = Device::sim(sc);
    let a = random_bf16((shape.m * shape.k) as usize, seed);
    let b = random_bf16(b_len(&shape), seed ^ 0x9e37_79b9);
    let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
    dev.fill(&mut bufs.c, POISON).unwrap();
    let result = match launch(&dev, kernel, cfg, &bufs) {
        Ok(r) => Ok(r.sim.map(|s| s.findings).unwrap_or_default()),
        Err(RuntimeError::Simulation(r)) => Err(r.findings),
        Err(e) => panic!("{}: {e}", kernel.name()),
    };
    Run { c: dev.download(&bufs.c).unwrap(), a, b, result }
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

/// Every configuration `GemmConfig::choose` can pick (tiles 128 x {128, 256} and
/// 256 x {64, 128}, 1- and 2-CTA clusters) is exact against the CPU reference with no findings
/// at a decode shape (M = 1) and a shape ragged in every dimension, both smaller than a tile.
#[test]
fn every_chosen_configuration_matches_the_cpu_reference_at_m1_and_ragged_shapes() {
    let candidates = phaser_examples::gemm_choice::choice_candidates(BLayout::KMajor);
    assert!(candidates.iter().any(|c| c.block_n == 64) && candidates.iter().any(|c| c.cluster_m == 2));
    for cfg in candidates {
        let k = gemm::dsl::kernel(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
        for (i, shape) in [GemmShape::new(1, 136, 200), GemmShape::new(130, 72, 136)].into_iter().enumerate() {
            let sc = SimConfig::default().with_seed(20 + i as u64).with_strategy(Strategy::Random);
            let t0 = std::time::Instant::now();
            let run = simulate_at(&k, &cfg, sc, shape);
            let name = format!("{} at {shape}", cfg.kernel_name());
            eprintln!("{name} simulated in {:?}", t0.elapsed());
            let findings = run.result.unwrap_or_else(|f| panic!("{name}:\n{}", describe(&f)));
            assert!(findings.is_empty(), "{name}: {}", describe(&findings));
            let (m, n) = (shape.m as usize, shape.n as usize);
            let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
            let cmp = compare(&run.c, &shape, all, |i, j| reference_at(&run.a, &run.b, &shape, BLayout::KMajor, i, j));
            assert_eq!(cmp.compared, m * n);
            assert!(cmp.passed(), "{name}: {cmp:?}");
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
    // or the mainloop's, whichever read the stage).
    let first = dsl_line("K block 0 overwrites", "T.ptx.wgmma.mma_async(");
    let mainloop = dsl_line("for _kb in 1..k_blocks", "T.ptx.wgmma.mma_async(");
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
