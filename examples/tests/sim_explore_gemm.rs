//! The DSL GEMM's synchronization skeleton explored (`SimConfig::skeleton` +
//! `explore_barriers_only`): a small instance (one 128 x 64 tile, 2 stages, 3 K blocks, two
//! consumer warpgroups and the TMA producer: 12 warps) explores completely with no finding (in
//! one execution since bench/exhaustive.md's run 8), and each of the two GEMM bugs of
//! `gemm_bugs.rs` (a stage released before the `wait_group` that retires its wgmmas; the
//! accumulator read without the final `wait_group`) is found by the same exploration, at its
//! DSL line. Figures: bench/exhaustive.md (`-- --ignored --nocapture` runs the measurement at a
//! larger bound, `GEMM_EXECUTIONS=N`).

use phaser::codegen::Kernel;
use phaser::runtime::sim::{Category, ExploreReport, SimConfig};
use phaser::Device;
use phaser_examples::gallery::{explore_problem, gemm_dsl, run_problem};
use phaser_examples::gemm_bugs;

/// One tile of 128 x 64 (each consumer warpgroup one m64 slab, one 64 x 64 epilogue sub-tile),
/// 2 stages, K = 192: three K blocks, so the ring wraps and the mainloop's release runs.
const TILES: gemm_dsl::Tiles = gemm_dsl::Tiles {
    block_n: 64,
    wg_m: 64,
    stages: 2,
    cluster: 1,
    group_m: 1,
    split: 1,
    b_n_major: false,
    reduce: gemm_dsl::Reduce::SecondLaunch,
    consumers: gemm_dsl::CONSUMERS,
    a_box_rows: None,
};
const SHAPE: (u32, u32, u32) = (128, 64, 192);

fn skeleton(max_executions: u64) -> SimConfig {
    SimConfig {
        echo_printf: false,
        trace: false,
        explore_barriers_only: true,
        skeleton: true,
        explore_max_executions: max_executions,
        ..SimConfig::default()
    }
}

fn explore(k: &Kernel, sc: SimConfig) -> ExploreReport {
    let dev = Device::sim(sc);
    let p = gemm_dsl::setup_tiles(&dev, TILES, SHAPE, 1, 7, true).unwrap();
    let mut p = p.with_kernel(0, k.clone());
    explore_problem(&dev, &mut p).unwrap().remove(0)
}

/// The line of gemm_dsl.rs holding `needle`, the first after the line holding `after`.
fn dsl_line(after: &str, needle: &str) -> u32 {
    let src = include_str!("../src/gallery/gemm_dsl.rs");
    let lines: Vec<&str> = src.lines().collect();
    let start = lines.iter().position(|l| l.contains(after)).unwrap_or_else(|| panic!("`{after}` in gemm_dsl.rs"));
    let at = lines[start..].iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` after it"));
    (start + at + 1) as u32
}

/// The GEMM's skeleton explores completely (every interleaving that matters, under the
/// 300-execution bound) with no finding, and the report says which mode ran and that it is
/// complete; the kernel's outputs (the math, outside the skeleton) are exact.
#[test]
fn the_gemm_skeleton_explores_completely_with_no_finding() {
    let k = TILES.kernel().unwrap();
    let r = explore(&k, skeleton(300));
    println!("{}", r.summary());
    assert!(r.counterexample.is_none(), "{r}");
    assert!(r.barriers_only && r.skeleton, "{r}");
    assert!(r.complete() && r.bound_hit.is_none(), "{r}");
    // One execution (run 8): every pair of its dependent steps is ordered by the protocol
    // (the wgmmas' completions after their parts, the waits after the completions they
    // retire), and what is left commutes (a phase's count-down steps, a round's arrivals,
    // the register pool's frees and takes, exits).
    assert_eq!(r.executions, 1, "{r}");
    assert!(r.states > r.executions * 10, "every execution explores new states past its prefix: {r}");
    let text = r.summary();
    assert!(text.contains("(barriers only, skeleton)") && text.contains("\nskeleton: MMAs kept"), "{text}");
    assert!(text.contains("`gemm_dsl` (1 CTA(s) of 384 threads, 12 warps each)"), "{text}");
    assert!(text.contains(&format!("no finding in any of {} explored executions (complete", r.executions)), "{text}");
    // The instance's bounds: the pipeline's 2 stages; the producer's tile loop once, its K loop
    // 3 times (K = 192: 3 blocks of 64), its tail over the S stages; each consumer warp's tile
    // loop once and its K loop twice (the first block is peeled).
    let at = |after: &str, needle: &str| format!("examples/src/gallery/gemm_dsl.rs:{}", dsl_line(after, needle));
    let (producer, consumer) =
        ("let st = T.pipeline.producer_state(pipe);", "let release = T.pipeline.consumer_state(pipe);");
    let blocks = SHAPE.2 / 64;
    let expected = format!(
        "stages: pipeline `pipe` {s}\niterations per role (the most any execution ran): {} (warp 0: 1); {} (warp 0: \
         {blocks}); {} (warp 0: {s}); {} (warps 4-11: 1); {} (warps 4-11: {})\n",
        at(producer, "while t < total {"),
        at(producer, "for kb in kb0..kb1 {"),
        at(producer, "T.pipeline.producer_tail(pipe, st);"),
        at(consumer, "while t < total {"),
        at(consumer, "for _kb in kb0 + 1..kb1 {"),
        blocks - 1,
        s = TILES.stages,
    );
    assert_eq!(r.instance_text(), expected);
    let dev = Device::sim(SimConfig { echo_printf: false, ..SimConfig::default() });
    let mut p = gemm_dsl::setup_tiles(&dev, TILES, SHAPE, 1, 7, true).unwrap();
    let out = run_problem(&dev, &mut p).unwrap();
    let outcome = gemm_dsl::check(&p, &out);
    assert!(outcome.passed, "{}", outcome.detail);
}

/// Each GEMM bug is a counterexample of the skeleton's exploration (in its first execution),
/// named at its DSL line: the skeleton keeps the operand reads of the wgmmas in flight and
/// their accumulators' registers.
#[test]
fn the_gemm_skeleton_exploration_finds_both_gemm_bugs_at_their_lines() {
    type Bug = fn(&mut phaser::codegen::ir::KernelParts) -> bool;
    let release = dsl_line("T.ptx.wgmma.wait_group(1);", "T.pipeline.consumer_release(pipe, release);");
    let read = dsl_line("let g = (sub * EPI + q * 16) / 8;", "T.ptx.stmatrix.x4(");
    let bugs: [(&str, Bug, Category, u32); 2] = [
        ("release before wait_group(1)", gemm_bugs::release_before_wait, Category::WgmmaOperandRace, release),
        ("no wait_group(0)", gemm_bugs::drop_final_wait, Category::WgmmaRegisterRace, read),
    ];
    for (what, bug, category, line) in bugs {
        let mut parts = TILES.kernel().unwrap().into_parts();
        assert!(bug(&mut parts), "{what}: the GEMM has the statements it changes");
        let r = explore(&parts.finish().unwrap(), skeleton(300));
        println!("{what}: {}", r.summary().lines().next().unwrap_or_default());
        let c = r.counterexample.as_ref().unwrap_or_else(|| panic!("{what}: no counterexample\n{r}"));
        let f = c.findings.iter().find(|f| f.category == category).unwrap_or_else(|| panic!("{what}: {r}"));
        let loc = f.loc.unwrap_or_else(|| panic!("{what}: a Rust line: {f}"));
        assert!(loc.file.ends_with("examples/src/gallery/gemm_dsl.rs") && loc.line == line, "{what}: {f}");
        assert!(c.schedule.is_some(), "{what}: the counterexample's schedule");
    }
}

/// The figure of bench/exhaustive.md: `GEMM_EXECUTIONS` (default 3,000) executions of the
/// skeleton, K blocks from `GEMM_K` (default 192).
#[test]
#[ignore = "the GEMM skeleton's figure of bench/exhaustive.md (GEMM_EXECUTIONS, GEMM_K)"]
fn the_gemm_skeleton_figure() {
    let n = std::env::var("GEMM_EXECUTIONS").map_or(3000, |s| s.parse().unwrap());
    let k = std::env::var("GEMM_K").map_or(SHAPE.2, |s| s.parse().unwrap());
    let dev = Device::sim(skeleton(n));
    let mut p = gemm_dsl::setup_tiles(&dev, TILES, (SHAPE.0, SHAPE.1, k), 1, 7, true).unwrap();
    for r in explore_problem(&dev, &mut p).unwrap() {
        println!("{}", r.summary());
        println!("{:.0} executions/s, {:.0} states/s", r.executions_per_second(), r.states_per_second());
        assert!(r.counterexample.is_none(), "{r}");
    }
}
