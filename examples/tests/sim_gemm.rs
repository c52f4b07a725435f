//! The builder GEMM (examples/src/gemm.rs) in the simulator, under the checker: wgmma is an
//! asynchronous agent reading shared memory through its descriptors and writing the
//! accumulator when `wgmma.wait_group` retires it. A 256 x 256 x 256 GEMM matches the CPU
//! reference with no findings; the two injected bugs of `gemm_bugs.rs` — a stage released before the
//! `wait_group` that retires its wgmmas, and the accumulator read without the `wait_group` —
//! are each reported at their Rust line in gemm.rs.

use phaser::codegen::Kernel;
use phaser::runtime::sim::{Category, Finding, SimConfig, Strategy};
use phaser::runtime::RuntimeError;
use phaser::Device;
use phaser_examples::gemm::*;
use phaser_examples::gemm_bugs;
use std::time::Instant;

/// The simulator's configuration: the default tile (128 x 256 x 64, two consumer warpgroups,
/// 2-CTA clusters with multicast) with 2 stages, so the 4 K blocks of K = 256 wrap around the
/// pipeline (a stage is refilled while its consumer works on the next).
fn sim_config() -> GemmConfig {
    GemmConfig { stages: 2, ..GemmConfig::new(BLayout::KMajor) }
}

const SHAPE: GemmShape = GemmShape::new(256, 256, 256);

struct Run {
    c: Vec<half::bf16>,
    a: Vec<half::bf16>,
    b: Vec<half::bf16>,
    result: Result<Vec<Finding>, Vec<Finding>>,
}

/// Simulate `kernel` (a possibly mutated `gemm_kernel(cfg)`) at `SHAPE` with B `layout`.
fn simulate(kernel: &Kernel, cfg: &GemmConfig, layout: BLayout, seed: u64) -> Run {
    simulate_with(kernel, cfg, layout, SimConfig::default().with_seed(seed))
}

fn simulate_with(kernel: &Kernel, cfg: &GemmConfig, layout: BLayout, sc: SimConfig) -> Run {
    let seed = sc.seed;
    let dev = Device::sim(sc);
    let a = random_bf16((SHAPE.m * SHAPE.k) as usize, seed);
    let b = random_bf16(b_len(&SHAPE), seed ^ 0x9e37_79b9);
    let mut bufs = GemmBuffers::new(&dev, SHAPE, layout, &a, &b).unwrap();
    dev.fill(&mut bufs.c, POISON).unwrap();
    let t0 = Instant::now();
    let result = match launch(&dev, kernel, cfg, &bufs) {
        Ok(r) => Ok(r.sim.map(|s| s.findings).unwrap_or_default()),
        Err(RuntimeError::Simulation(r)) => Err(r.findings),
        Err(e) => panic!("{}: {e}", kernel.name()),
    };
    eprintln!("{} ({}) simulated in {:?}", kernel.name(), layout.name(), t0.elapsed());
    Run { c: dev.download(&bufs.c).unwrap(), a, b, result }
}

/// The line of gemm.rs that contains `needle` (once).
fn gemm_line(needle: &str) -> u32 {
    let src = include_str!("../src/gemm.rs");
    let lines: Vec<usize> = src.lines().enumerate().filter(|(_, l)| l.contains(needle)).map(|(i, _)| i + 1).collect();
    assert_eq!(lines.len(), 1, "`{needle}` must be on exactly one line of gemm.rs: {lines:?}");
    lines[0] as u32
}

fn describe(findings: &[Finding]) -> String {
    findings.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n\n")
}

#[test]
fn gemm_256_cubed_matches_the_cpu_reference_with_no_findings() {
    for layout in [BLayout::KMajor, BLayout::NMajor] {
        let cfg = GemmConfig { b_layout: layout, ..sim_config() };
        let k = gemm_kernel(&cfg).unwrap();
        let run = simulate(&k, &cfg, layout, 12);
        let findings = run.result.unwrap_or_else(|f| panic!("{} ({}):\n{}", k.name(), layout.name(), describe(&f)));
        assert!(findings.is_empty(), "{}", describe(&findings));
        // Every element, against the f64 CPU reference.
        let (m, n) = (SHAPE.m as usize, SHAPE.n as usize);
        let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
        let cmp = compare(&run.c, &SHAPE, all, |i, j| reference_at(&run.a, &run.b, &SHAPE, layout, i, j));
        assert_eq!(cmp.compared, m * n);
        assert!(cmp.passed(), "{} ({}): {:?}", k.name(), layout.name(), cmp);
        // Not vacuous: C has the magnitude of a sum of 256 products of [-1, 1) values.
        let big = run.c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
        assert!(big > m * n / 4, "{big} of {} elements above 1", m * n);
    }
}

#[test]
fn other_schedules_and_tile_shapes_are_clean_too() {
    // Hostile scheduling (tiny quanta, copies and wgmmas as late as possible, newest first),
    // and 256 x 128 tiles (two m64 wgmmas per warpgroup, two accumulators) without a cluster.
    let runs = [
        (sim_config(), Strategy::Adversarial),
        (GemmConfig { block_n: 128, wg_m: 128, cluster_m: 1, ..sim_config() }, Strategy::RoundRobin),
    ];
    for (cfg, strategy) in runs {
        let k = gemm_kernel(&cfg).unwrap();
        let run = simulate_with(&k, &cfg, cfg.b_layout, SimConfig::default().with_seed(3).with_strategy(strategy));
        let findings = run.result.unwrap_or_else(|f| panic!("{} {strategy:?}:\n{}", k.name(), describe(&f)));
        assert!(findings.is_empty(), "{}", describe(&findings));
        let (m, n) = (SHAPE.m as usize, SHAPE.n as usize);
        let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
        let cmp = compare(&run.c, &SHAPE, all, |i, j| reference_at(&run.a, &run.b, &SHAPE, cfg.b_layout, i, j));
        assert!(cmp.passed(), "{} {strategy:?}: {cmp:?}", k.name());
    }
}

#[test]
fn early_release_is_reported_at_the_release_line() {
    let cfg = sim_config();
    let mut k = gemm_kernel(&cfg).unwrap().into_parts();
    // The mainloop's `wgmma_wait_group(1); release_stage(...)` becomes release, then wait.
    assert!(gemm_bugs::release_before_wait(&mut k), "the mainloop's wait_group(1) + release");
    let k = k.finish().unwrap();
    let run = simulate(&k, &cfg, BLayout::KMajor, 12);
    let findings = run.result.expect_err("an early release is a finding");
    let races: Vec<&Finding> = findings.iter().filter(|f| f.category == Category::WgmmaOperandRace).collect();
    assert!(!races.is_empty(), "{}", describe(&findings));
    let line = gemm_line("k.if_then(leader, |k| pipe.consumer_release(k, &st));");
    let f = races[0];
    let loc = f.loc.expect("a Rust line");
    assert!(loc.file.ends_with("examples/src/gemm.rs") && loc.line == line, "{f}");
    assert!(f.message.contains("released") && f.message.contains("wgmma.wait_group"), "{f}");
    // The wgmma and the overwriting TMA load are named too.
    assert!(f.message.contains(&format!("gemm.rs:{}", gemm_line("k.wgmma(acc, &a, 64 * j as u32"))), "{f}");
    eprintln!("{f}");
}

#[test]
fn missing_wait_group_is_reported_at_the_accumulator_read() {
    let cfg = sim_config();
    let mut k = gemm_kernel(&cfg).unwrap().into_parts();
    // The `wgmma_wait_group(0)` before the last release and the epilogue goes away.
    assert!(gemm_bugs::drop_final_wait(&mut k), "the wait_group(0) after the mainloop");
    let k = k.finish().unwrap();
    let run = simulate(&k, &cfg, BLayout::KMajor, 12);
    let findings = run.result.expect_err("reading the accumulator before wait_group is a finding");
    let races: Vec<&Finding> = findings.iter().filter(|f| f.category == Category::WgmmaRegisterRace).collect();
    assert!(!races.is_empty(), "{}", describe(&findings));
    let line = gemm_line("acc.store_bf16_stmatrix(k, &c, buf, t, 0, 0, col, EPI_TILE);");
    let f = races[0];
    let loc = f.loc.expect("a Rust line");
    assert!(loc.file.ends_with("examples/src/gemm.rs") && loc.line == line, "{f}");
    assert!(f.message.contains("wgmma.wait_group"), "{f}");
    eprintln!("{f}");
}

/// The builder GEMM at 128 x 192 tiles (three 64 x 64 epilogue sub-tiles per tile, an odd
/// count: a tile's first waits for every store, since the previous tile's last used its
/// buffer), with and without a cluster and N-major, on 2 CTAs that walk several tiles each of
/// a shape ragged in M, N and K: C equals the exact product of ternary inputs ({-1, 0, 1}:
/// every partial sum exact in f32) bit for bit, with no findings.
#[test]
fn tiles_192_wide_are_exact_at_ragged_shapes_with_no_findings() {
    let shape = GemmShape::new(328, 392, 136);
    let ternary = |len: usize, seed: u64| -> Vec<half::bf16> {
        random_bf16(len, seed)
            .into_iter()
            .map(|x| half::bf16::from_f32((x.to_f32() * 1.5).round().clamp(-1.0, 1.0)))
            .collect()
    };
    for (i, (layout, cluster_m)) in
        [(BLayout::KMajor, 2), (BLayout::KMajor, 1), (BLayout::NMajor, 1)].into_iter().enumerate()
    {
        let cfg = GemmConfig { block_n: 192, stages: 2, cluster_m, ..GemmConfig::new(layout) };
        assert_eq!(cfg.problem(), None, "{}", cfg.kernel_name());
        let k = gemm_kernel(&cfg).unwrap();
        let seed = 70 + i as u64;
        let dev = Device::sim(SimConfig::default().with_seed(seed).with_strategy(Strategy::Random));
        let a = ternary((shape.m * shape.k) as usize, seed);
        let b = ternary(b_len(&shape), seed ^ 0x9e37_79b9);
        let mut bufs = GemmBuffers::new(&dev, shape, layout, &a, &b).unwrap();
        dev.fill(&mut bufs.c, POISON).unwrap();
        let maps = bufs.tensor_maps(&dev, &cfg).unwrap();
        let lc = phaser::LaunchConfig::linear(2, cfg.threads()).with_dynamic_shared(cfg.dynamic_smem_bytes());
        let name = format!("{} at {shape} on 2 CTAs", k.name());
        let findings = match dev.launch(&k, lc, &args(&maps, &shape)) {
            Ok(r) => r.sim.map(|s| s.findings).unwrap_or_default(),
            Err(RuntimeError::Simulation(r)) => panic!("{name}:\n{}", describe(&r.findings)),
            Err(e) => panic!("{name}: {e}"),
        };
        assert!(findings.is_empty(), "{name}: {}", describe(&findings));
        let c = dev.download(&bufs.c).unwrap();
        let (m, n) = (shape.m as usize, shape.n as usize);
        let wrong = (0..m)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| {
                c[i * n + j].to_bits() != half::bf16::from_f64(reference_at(&a, &b, &shape, layout, i, j)).to_bits()
            })
            .count();
        assert_eq!(wrong, 0, "{name}: {wrong} of {} elements wrong", m * n);
        let big = c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
        assert!(big > m * n / 2, "{name}: {big} of {} elements above 1", m * n);
    }
}
