//! The Blackwell GEMM in the simulator under the checker: a 256 x 256 x 256 instance (1-CTA
//! and 2-CTA) computes C with no finding; each injected protocol bug is reported with its
//! category at its Rust line in `gemm_sm100.rs`.

use phaser::runtime::sim::{Category, Finding, SimConfig, SimReport, Strategy};
use phaser::Device;
use phaser_examples::gemm::{compare, random_bf16, GemmShape};
use phaser_examples::gemm_sm100::*;

const FILE: &str = "examples/src/gemm_sm100.rs";

/// The line of `gemm_sm100.rs` holding `marker`.
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("../src/gemm_sm100.rs").lines().collect();
    lines.iter().position(|l| l.contains(marker)).map(|i| i as u32 + 1).unwrap_or_else(|| panic!("no `{marker}`"))
}

struct Run {
    rep: SimReport,
    c: Vec<half::bf16>,
    a: Vec<half::bf16>,
    b: Vec<half::bf16>,
}

fn simulate(cfg: &Sm100Config, shape: GemmShape, ctas: u32, strategy: Strategy, seed: u64) -> Run {
    let k = gemm_sm100_kernel(cfg).unwrap();
    let dev = Device::sim(SimConfig::default().with_strategy(strategy).with_seed(seed));
    let a = random_bf16(shape.m as usize * shape.k as usize, seed);
    let b = random_bf16(shape.n as usize * shape.k as usize, seed ^ 0x9e37);
    let bufs = Sm100Buffers::new(&dev, shape, &a, &b).unwrap();
    let maps = bufs.tensor_maps(&dev, cfg).unwrap();
    let rep = dev.simulate(&k, launch_config(cfg, ctas), &args(&maps, &shape)).unwrap();
    let c = dev.download(&bufs.c).unwrap();
    Run { rep, c, a, b }
}

fn check(run: &Run, shape: &GemmShape, what: &str) {
    assert!(run.rep.findings.is_empty(), "{what}:\n{}", run.rep.text());
    let (m, n) = (shape.m as usize, shape.n as usize);
    let all = (0..m).flat_map(|i| (0..n).map(move |j| (i, j)));
    let cmp = compare(&run.c, shape, all, |i, j| reference_at(&run.a, &run.b, shape, i, j));
    assert!(cmp.passed(), "{what}: worst {:.3} of the tolerance at {:?}", cmp.worst, cmp.at);
    assert_eq!(cmp.compared, m * n);
}

/// About 2-3 s per run in a debug build on the 2-core development machine.
#[test]
fn gemm_256_cubed_runs_clean_and_correct_in_the_simulator() {
    let shape = GemmShape::new(256, 256, 256);
    for (strategy, seed) in [(Strategy::Random, 3), (Strategy::Adversarial, 4)] {
        // One CTA walks both 128-row tiles (the stage ring wraps); one CTA pair computes the
        // 256 x 256 tile with M = 256 MMAs.
        for (two_cta, ctas) in [(false, 1), (true, 2)] {
            let t = std::time::Instant::now();
            let cfg = Sm100Config::new(two_cta);
            let run = simulate(&cfg, shape, ctas, strategy, seed);
            let what = format!("{} ({strategy:?}, seed {seed})", cfg.kernel_name());
            check(&run, &shape, &what);
            eprintln!("{what}: {:.1?}, {} thread-instructions", t.elapsed(), run.rep.stats.thread_instructions);
        }
    }
}

/// The first finding of `category`, at `marker`'s line of `gemm_sm100.rs`.
fn finding<'a>(rep: &'a SimReport, category: Category, marker: &str) -> &'a Finding {
    let line = line_of(marker);
    rep.findings
        .iter()
        .find(|f| f.category == category && f.loc.is_some_and(|l| (l.file, l.line) == (FILE, line)))
        .unwrap_or_else(|| panic!("no {category} finding at {FILE}:{line}:\n{}", rep.text()))
}

/// One CTA, one accumulator buffer (tile 1's MMAs reuse tile 0's columns), the bug.
fn bug_run(bug: Sm100Bug) -> SimReport {
    let cfg = Sm100Config { acc_stages: 1, ..Sm100Config::new(false) }.with_bug(bug);
    simulate(&cfg, GemmShape::new(256, 256, 256), 1, Strategy::RoundRobin, 5).rep
}

#[test]
fn epilogue_reading_before_the_accumulator_barrier_is_a_tmem_race() {
    let rep = bug_run(Sm100Bug::EpilogueSkipsAccumulatorWait);
    let f = finding(&rep, Category::TmemRace, "// TMEM-LD");
    assert!(
        f.message.contains("tcgen05.mma") && f.message.contains(&format!("{FILE}:{}", line_of("// MMA-ISSUE"))),
        "{f}"
    );
}

#[test]
fn a_missing_after_thread_sync_fence_is_reported_at_the_load() {
    let rep = bug_run(Sm100Bug::MissingAfterThreadSyncFence);
    let f = finding(&rep, Category::Tcgen05Fence, "// TMEM-LD");
    assert!(f.message.contains("after_thread_sync") && f.message.contains("acc_full"), "{f}");
}

#[test]
fn a_missing_before_thread_sync_fence_is_reported_at_the_next_mma() {
    let rep = bug_run(Sm100Bug::MissingBeforeThreadSyncFence);
    let f = finding(&rep, Category::Tcgen05Fence, "// MMA-ISSUE");
    assert!(f.message.contains("before_thread_sync") && f.message.contains("tcgen05.ld"), "{f}");
}

#[test]
fn a_stage_refilled_before_its_mma_released_it_is_an_async_write_race() {
    let rep = bug_run(Sm100Bug::StageReusedEarly);
    let f = finding(&rep, Category::AsyncWriteRace, "// TMA-A");
    assert!(f.message.contains("overwrites `dynamic_smem["), "{f}");
}

/// The MMA thread hands each stage back with a commit on `stage_full` instead of
/// `stage_empty`: nothing ever arrives on `stage_empty`, so the producer's second round
/// blocks forever at its acquire (and the MMA thread consumes stale stages meanwhile).
#[test]
fn a_commit_to_the_wrong_barrier_leaves_the_stage_never_released() {
    let rep = bug_run(Sm100Bug::CommitToWrongBarrier);
    let f = finding(&rep, Category::Deadlock, "// ACQUIRE");
    let b = f.barrier.as_ref().unwrap_or_else(|| panic!("{f}"));
    assert_eq!((b.name.as_str(), b.index), ("stage_empty", 0), "{f}");
    assert!(f.message.contains("no arrivals yet"), "{f}");
}
