//! The DSL-written Blackwell GEMM (examples/src/gallery/gemm_sm100_dsl.rs) without a GPU (its
//! ptxas test is `sm100_ptxas.rs`'s): in the simulator under the checker a 256 x 256 x 256 instance (1-CTA and 2-CTA) runs with no finding, equals the builder
//! GEMM's C bit for bit on the same inputs and the CPU reference within bf16 tolerance; each
//! injected protocol bug is reported with its category at its line of the DSL source.

use phaser::codegen::Kernel;
use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::Device;
use phaser_examples::gallery::gemm_sm100_dsl;
use phaser_examples::gemm::{compare, random_bf16, GemmShape};
use phaser_examples::gemm_sm100::*;

const FILE: &str = "examples/src/gallery/gemm_sm100_dsl.rs";
/// The statements the bugs are reported at: the epilogue's tensor-memory load, the 1-CTA MMA,
/// the producer's acquire of a stage and its TMA load of A.
const TMEM_LD: &str = "T.ptx.tcgen05.ld::<f32>(at)";
const MMA_ISSUE: &str = "T.ptx.tcgen05.mma(d, a_desc, b_desc, add, \"bf16\", tile_m, BN);";
const ACQUIRE: &str = "T.pipeline.producer_acquire(stage, st);";
const TMA_A: &str = "T.tma.load(a_ring[s], a, [a_row, k0], full);";
const SHAPE: GemmShape = GemmShape::new(256, 256, 256);

/// The line of the DSL source holding `marker` (a statement that occurs once).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("../src/gallery/gemm_sm100_dsl.rs").lines().collect();
    let at: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.contains(marker)).map(|(i, _)| i).collect();
    assert_eq!(at.len(), 1, "`{marker}` once in the DSL source");
    at[0] as u32 + 1
}

struct Run {
    rep: SimReport,
    c: Vec<half::bf16>,
    a: Vec<half::bf16>,
    b: Vec<half::bf16>,
}

fn simulate(kernel: &Kernel, cfg: &Sm100Config, ctas: u32, strategy: Strategy, seed: u64) -> Run {
    let dev = Device::sim(SimConfig::default().with_strategy(strategy).with_seed(seed));
    let a = random_bf16(SHAPE.m as usize * SHAPE.k as usize, seed);
    let b = random_bf16(SHAPE.n as usize * SHAPE.k as usize, seed ^ 0x9e37);
    let bufs = Sm100Buffers::new(&dev, SHAPE, &a, &b).unwrap();
    let maps = bufs.tensor_maps(&dev, cfg).unwrap();
    let launch = launch_config(cfg, ctas);
    assert!(kernel.declared_dynamic_bytes() <= cfg.dynamic_smem_bytes(), "{}: the builder's window", kernel.name());
    let rep = dev.simulate(kernel, launch, &args(&maps, &SHAPE)).unwrap();
    let c = dev.download(&bufs.c).unwrap();
    Run { rep, c, a, b }
}

/// About as long as the builder version's runs per variant in a debug build.
#[test]
fn dsl_gemm_256_cubed_equals_the_builder_gemm_bit_for_bit_with_no_findings() {
    for (two_cta, ctas, strategy, seed) in [(false, 1, Strategy::Random, 3), (true, 2, Strategy::Adversarial, 4)] {
        let cfg = Sm100Config::new(two_cta);
        let dsl = simulate(&gemm_sm100_dsl::kernel(&cfg).unwrap(), &cfg, ctas, strategy, seed);
        let what = format!("{} DSL ({strategy:?}, seed {seed})", cfg.kernel_name());
        assert!(dsl.rep.findings.is_empty(), "{what}:\n{}", dsl.rep.text());
        let builder = simulate(&gemm_sm100_kernel(&cfg).unwrap(), &cfg, ctas, strategy, seed);
        assert!(builder.rep.findings.is_empty(), "{}", builder.rep.text());
        let differ = dsl.c.iter().zip(&builder.c).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
        assert_eq!(differ, 0, "{what}: elements that differ from the builder GEMM's");
        let (m, n) = (SHAPE.m as usize, SHAPE.n as usize);
        let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
        let cmp = compare(&dsl.c, &SHAPE, all, |i, j| reference_at(&dsl.a, &dsl.b, &SHAPE, i, j));
        assert_eq!(cmp.compared, m * n);
        assert!(cmp.passed(), "{what}: worst {:.3} of the tolerance at {:?}", cmp.worst, cmp.at);
        // Not vacuous: C has the magnitude of a sum of 256 products of [-1, 1) values.
        let big = dsl.c.iter().filter(|x| x.to_f32().abs() > 1.0).count();
        assert!(big > m * n / 4, "{what}: {big} of {} elements above 1", m * n);
    }
}

/// The first finding of `category` at `marker`'s line of the DSL source.
fn finding<'a>(rep: &'a SimReport, category: Category, marker: &str) -> &'a Finding {
    let line = line_of(marker);
    rep.findings
        .iter()
        .find(|f| f.category == category && f.loc.is_some_and(|l| l.file.ends_with(FILE) && l.line == line))
        .unwrap_or_else(|| panic!("no {category} finding at {FILE}:{line}:\n{}", rep.text()))
}

/// One CTA, one accumulator buffer (tile 1's MMAs reuse tile 0's columns), the bug.
fn bug_run(bug: Sm100Bug) -> SimReport {
    let cfg = Sm100Config { acc_stages: 1, ..Sm100Config::new(false) }.with_bug(bug);
    let k = gemm_sm100_dsl::kernel(&cfg).unwrap();
    simulate(&k, &cfg, 1, Strategy::RoundRobin, 5).rep
}

#[test]
fn epilogue_reading_before_the_accumulator_barrier_is_a_tmem_race_at_the_dsl_line() {
    let rep = bug_run(Sm100Bug::EpilogueSkipsAccumulatorWait);
    let f = finding(&rep, Category::TmemRace, TMEM_LD);
    assert!(f.message.contains("tcgen05.mma") && f.message.contains(&format!(":{}", line_of(MMA_ISSUE))), "{f}");
}

#[test]
fn a_missing_after_thread_sync_fence_is_reported_at_the_dsl_load() {
    let rep = bug_run(Sm100Bug::MissingAfterThreadSyncFence);
    let f = finding(&rep, Category::Tcgen05Fence, TMEM_LD);
    assert!(f.message.contains("after_thread_sync") && f.message.contains("acc_full"), "{f}");
}

#[test]
fn a_missing_before_thread_sync_fence_is_reported_at_the_next_dsl_mma() {
    let rep = bug_run(Sm100Bug::MissingBeforeThreadSyncFence);
    let f = finding(&rep, Category::Tcgen05Fence, MMA_ISSUE);
    assert!(f.message.contains("before_thread_sync") && f.message.contains("tcgen05.ld"), "{f}");
}

#[test]
fn a_stage_refilled_early_is_an_async_write_race_at_the_dsl_tma_load() {
    let rep = bug_run(Sm100Bug::StageReusedEarly);
    let f = finding(&rep, Category::AsyncWriteRace, TMA_A);
    // A tile of the dynamic window is named after the tile, not `dynamic_smem[..]`.
    assert!(f.message.contains("overwrites `a_ring["), "{f}");
}

/// The commit meant for `stage_empty` goes to `stage_full`: nothing ever arrives on
/// `stage_empty`, so the producer's second round blocks forever at its DSL acquire.
#[test]
fn a_commit_to_the_wrong_barrier_is_a_deadlock_at_the_dsl_acquire() {
    let rep = bug_run(Sm100Bug::CommitToWrongBarrier);
    let f = finding(&rep, Category::Deadlock, ACQUIRE);
    let b = f.barrier.as_ref().unwrap_or_else(|| panic!("{f}"));
    assert_eq!((b.name.as_str(), b.index), ("stage_empty", 0), "{f}");
    assert!(f.message.contains("no arrivals yet"), "{f}");
}

/// The gallery's DSL examples write what the builder examples write on the same problem (the
/// same digest of every output bit), at the small and the quick size.
#[test]
fn gallery_dsl_examples_write_the_builder_examples_outputs() {
    use phaser_examples::gallery::{self, Size};
    for name in ["gemm_sm100", "gemm_sm100_2cta"] {
        let dsl_name = name.replace("gemm_sm100", "gemm_sm100_dsl");
        let (builder, dsl) = (gallery::find(name).unwrap(), gallery::find(&dsl_name).unwrap());
        for size in [Size::Small, Size::Quick] {
            let dev = || Device::sim(SimConfig::default().with_strategy(Strategy::Random).with_seed(7));
            let b = gallery::run(&builder, &dev(), size, 1).unwrap();
            let d = gallery::run(&dsl, &dev(), size, 1).unwrap();
            assert!(
                b.outcome.passed && d.outcome.passed,
                "{name} {size:?}: {} / {}",
                b.outcome.detail,
                d.outcome.detail
            );
            assert!(b.findings.is_empty() && d.findings.is_empty(), "{name} {size:?}");
            assert_eq!(b.digest, d.digest, "{name} {size:?}: the DSL and builder outputs differ");
        }
    }
}
