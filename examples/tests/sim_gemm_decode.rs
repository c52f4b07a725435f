//! The DSL GEMM's decode configurations in the simulator (issue 23 §2): the 64-row tile (one
//! consumer warpgroup, `#[comptime] CONSUMER_WGS = 1`) and split-K reduced by every slice
//! (`FIXUP = 2`, `Reduce::EverySlice`), at decode shapes with a ragged M (1, 16, 33, 64); and
//! the 192-row tile's (`CONSUMER_WGS = 3`) split-K, every way of reducing.
//! C is checked bit for bit against the exact product (ternary inputs: every partial sum is an
//! exact small integer, so C is the product rounded once) by the gallery's check, which also
//! checks every slice's partials and the flags' banks; every launch has zero findings (the
//! global-order checker's included: the flags order the partials between CTAs).

use phaser::problem::{Outputs, Problem};
use phaser::runtime::sim::{Category, SimConfig, Strategy};
use phaser::runtime::RuntimeError;
use phaser::Device;
use phaser_examples::gallery::gemm_dsl::{self, Reduce, Tiles};
use phaser_examples::gallery::run_problem;
use phaser_examples::gemm::{self, BLayout, GemmBuffers, GemmConfig, GemmShape, SplitReduce};

/// A decode configuration: `consumers` warpgroups of one m64 slab, `block_n` columns, 3
/// stages, no cluster, `split` slices reduced by `reduce`.
fn tiles(consumers: u32, block_n: u32, split: u32, reduce: Reduce) -> Tiles {
    Tiles {
        block_n,
        wg_m: 64,
        stages: 3,
        cluster: 1,
        group_m: 8,
        split,
        b_n_major: false,
        reduce,
        consumers,
        a_box_rows: None,
    }
}

/// Set up `tiles` at `shape` over `grid` CTAs (seeded), simulate every launch under `sc`, and
/// check: zero findings in every launch, and the gallery's check (C exact at every element,
/// each slice's partials exact, the flags as the reduction leaves them).
fn run_checked(tiles: Tiles, shape: (u32, u32, u32), grid: u32, sc: SimConfig) -> (Problem, Outputs) {
    let name = format!("{tiles:?} at {shape:?} on {grid} CTAs");
    let dev = Device::sim(sc);
    let mut p = gemm_dsl::setup_tiles(&dev, tiles, shape, grid, 5, true).unwrap_or_else(|e| panic!("{name}: {e}"));
    let outputs = run_problem(&dev, &mut p).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (i, l) in outputs.launches.iter().enumerate() {
        let findings = &l.sim.as_ref().expect("a simulated launch").findings;
        let text: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        assert!(findings.is_empty(), "{name}, launch {i}: {}", text.join("\n\n"));
    }
    let outcome = gemm_dsl::check(&p, &outputs);
    assert!(outcome.passed, "{name}: {}", outcome.detail);
    (p, outputs)
}

/// The 64-row tile (256 threads) without split-K, through its TMA-store epilogue, and with
/// split-K reduced by the second launch: M = 1, 16, 33 and 64 (one tile row: the A box's 64
/// rows, clipped), N ragged over two tile columns, K a partial last block.
#[test]
fn the_64_row_tile_is_exact_at_decode_shapes() {
    for (i, m) in [1, 16, 33, 64].into_iter().enumerate() {
        let shape = (m, 200, 264);
        let sc = SimConfig::default().with_seed(30 + i as u64).with_strategy(Strategy::Random);
        run_checked(tiles(1, 128, 1, Reduce::SecondLaunch), shape, 2, sc.clone());
        let (_, out) = run_checked(tiles(1, 128, 3, Reduce::SecondLaunch), shape, 3, sc);
        assert_eq!(out.launches.len(), 2, "the GEMM and the reduction");
    }
    // Two m64 rows of the grid (M = 130) walk the tiles of both rows.
    let sc = SimConfig::default().with_seed(39).with_strategy(Strategy::Random);
    run_checked(tiles(1, 128, 1, Reduce::SecondLaunch), (130, 136, 136), 2, sc);
}

/// The narrow tiles of decode shapes without split-K: 32 columns (C stored from the registers,
/// clipped at M and at N = 200's last, 8-column tile) and 64 (one staging sub-tile per
/// warpgroup: the tile's first sub-tile waits for every store before reusing it), on one and
/// two consumer warpgroups, CTAs walking several tiles (grid 2), M = 1, 33, 64 and 130 (two
/// tile rows of the 64-row tile); and the 32-column tile split in 3, reduced by the second
/// launch and by every slice. Each C exact, zero findings.
#[test]
fn the_narrow_tiles_are_exact_at_decode_shapes() {
    for (i, m) in [1, 33, 64, 130].into_iter().enumerate() {
        let shape = (m, 200, 264);
        for (consumers, block_n) in [(1, 32), (1, 64), (2, 32), (2, 64)] {
            let sc = SimConfig::default().with_seed(60 + i as u64).with_strategy(Strategy::Random);
            run_checked(tiles(consumers, block_n, 1, Reduce::SecondLaunch), shape, 2, sc);
        }
    }
    for reduce in [Reduce::SecondLaunch, Reduce::EverySlice] {
        let sc = SimConfig::default().with_seed(69).with_strategy(Strategy::Random);
        run_checked(tiles(1, 32, 3, reduce), (16, 200, 264), 21, sc);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]

    /// The 32-column tiles index C in u32 from the registers: any M x N (each u32) whose C has
    /// more elements than a u32 reaches is refused by name, before any launch, and every other
    /// is not refused for it; the 64-column tile (C through TMA stores) is not refused for it at all.
    #[test]
    fn a_c_past_u32_indices_is_refused_for_the_narrow_tiles(
        m in proptest::prop_oneof![1u32..=70_000, proptest::prelude::any::<u32>()],
        n in proptest::prop_oneof![1u32..=70_000, proptest::prelude::any::<u32>()],
    ) {
        let big = m as u64 * n as u64 > u32::MAX as u64;
        let why = tiles(1, 32, 1, Reduce::SecondLaunch).shape_problem(m, n, 64);
        proptest::prop_assert_eq!(why.is_some(), big, "{:?}", why);
        if let Some(why) = why {
            proptest::prop_assert!(why.contains("stored from the registers of 32-column tiles"), "{}", why);
        }
        proptest::prop_assert_eq!(tiles(1, 64, 1, Reduce::SecondLaunch).shape_problem(m, n, 64), None);
    }
}

/// Split-K reduced by every slice, on the 64-row tile and on the two-warpgroup 128-row tile,
/// at 2, 3, 4 and 8 slices (K uneven over the slices), at M = 1, 16, 33 and 64 with N over
/// one or two tile columns: one CTA per work unit, two launches on one flags buffer (the
/// second signals the other bank), each C exact, bit for bit.
#[test]
fn every_slice_reduction_is_exact_at_decode_shapes_and_relaunches() {
    let runs = [
        (1, 256, 4, 1, 200),
        (1, 128, 3, 16, 200),
        (1, 64, 8, 33, 72),
        (1, 128, 2, 64, 256),
        (2, 128, 4, 33, 136),
        (2, 64, 3, 64, 120),
    ];
    for (i, (consumers, block_n, split, m, n)) in runs.into_iter().enumerate() {
        let t = tiles(consumers, block_n, split, Reduce::EverySlice);
        let shape = (m, n, 9 * 64 + 8);
        let grid = t.units(m, n) as u32;
        let sc = SimConfig::default().with_seed(40 + i as u64).with_strategy(Strategy::Random);
        let (_, out) = run_checked(t, shape, grid, sc);
        assert_eq!(out.launches.len(), 2, "two launches of the one kernel");
    }
}

/// The 192-row tile (three consumer warpgroups): split-K into 3 slices reduced each way (a
/// second launch; the last slice's fix-up; every slice, relaunched on the other bank) at M =
/// 200 (a second row of tiles with 8 valid rows: two of its warpgroups have none, and still
/// signal and wait on their flags), N over two tile columns (the last 8 wide), K uneven over the slices: every flag of
/// (slice, tile, warpgroup) indexed by the three warpgroups, each slice's partials and C exact.
#[test]
fn the_192_row_tile_reduces_split_k_exactly_every_way() {
    let reduces = [Reduce::SecondLaunch, Reduce::LastSlice, Reduce::EverySlice];
    for (i, reduce) in reduces.into_iter().enumerate() {
        let t = tiles(3, 128, 3, reduce);
        let shape = (200, 136, 9 * 64 + 8);
        let grid = t.units(shape.0, shape.1) as u32;
        assert_eq!(grid, 2 * 2 * 3, "2 tile rows x 2 columns x 3 slices");
        let sc = SimConfig::default().with_seed(50 + i as u64).with_strategy(Strategy::Random);
        let (_, out) = run_checked(t, shape, grid, sc);
        assert_eq!(out.launches.len(), if reduce == Reduce::LastSlice { 1 } else { 2 }, "{reduce:?}");
    }
}

/// Across CTAs under the adversarial schedule: the flags order every slice's partials before
/// the others' reads (zero global-order findings) and C is exact.
#[test]
fn every_slice_reduction_across_ctas_under_the_adversarial_schedule() {
    let t = tiles(1, 64, 4, Reduce::EverySlice);
    let shape = (33, 128, 5 * 64);
    let sc = SimConfig::default().with_seed(9).with_strategy(Strategy::Adversarial);
    run_checked(t, shape, t.units(33, 128) as u32, sc);
}

/// The reduction by every slice is bit for bit the two-launch reduction's (the same slice
/// order), through the host's launch (`gemm::dsl::launch`) on random inputs.
#[test]
fn every_slice_reduction_is_bit_identical_to_the_two_launch_reduction() {
    let shape = GemmShape::new(16, 136, 328);
    let two = GemmConfig {
        block_n: 128,
        wg_m: 64,
        consumers: 1,
        stages: 3,
        cluster_m: 1,
        split_k: 2,
        ..GemmConfig::new(BLayout::KMajor)
    };
    let every = GemmConfig { reduce: SplitReduce::EverySlice, ..two };
    assert_ne!(two.kernel_name(), every.kernel_name());
    assert!(every.kernel_name().ends_with("_k2e_kmajor"), "{}", every.kernel_name());
    let c = |cfg: &GemmConfig| {
        let dev = Device::sim(SimConfig::default().with_seed(3).with_strategy(Strategy::Random));
        let a = gemm::random_bf16((shape.m * shape.k) as usize, 11);
        let b = gemm::random_bf16(gemm::b_len(&shape), 12);
        let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
        dev.fill(&mut bufs.c, gemm::POISON).unwrap();
        let mut ws = gemm::dsl::workspace(&dev, cfg, &shape).unwrap();
        let mut flags = gemm::dsl::flags(&dev, cfg, &shape).unwrap();
        let kernels = gemm::dsl::kernels(cfg).unwrap();
        assert_eq!(kernels.reduce.is_none(), cfg.reduce == SplitReduce::EverySlice, "{}", cfg.kernel_name());
        let reports = gemm::dsl::launch(&dev, &kernels, &mut bufs, &mut ws, &mut flags).unwrap();
        for r in reports {
            assert!(r.sim.unwrap().findings.is_empty(), "{}", cfg.kernel_name());
        }
        dev.download(&bufs.c).unwrap()
    };
    let (x, y) = (c(&two), c(&every));
    assert!(x.iter().all(|v| !v.is_nan()));
    let differ = x.iter().zip(&y).filter(|(p, q)| p.to_bits() != q.to_bits()).count();
    assert_eq!(differ, 0, "{differ} elements differ from the two-launch reduction");
}

/// More work units than SMs (every slice would wait for a slice not yet resident) is refused
/// on the host with the condition named; a launch that skips the refusal with fewer CTAs than
/// units traps at the kernel's guard instead of hanging.
#[test]
fn every_slice_reduction_refuses_more_than_one_wave_and_traps_past_it() {
    let cfg = GemmConfig {
        block_n: 64,
        wg_m: 64,
        consumers: 1,
        stages: 3,
        cluster_m: 1,
        split_k: 4,
        reduce: SplitReduce::EverySlice,
        ..GemmConfig::new(BLayout::KMajor)
    };
    // 2 tile columns x 4 slices = 8 units over the simulator's 4 SMs.
    let shape = GemmShape::new(16, 128, 512);
    let why = gemm::dsl::launch_problem(&cfg, &shape, 4).expect("8 units on 4 SMs");
    assert!(why.contains("8 work units") && why.contains("4 SMs hold 4 CTAs"), "{why}");
    assert_eq!(gemm::dsl::launch_problem(&cfg, &shape, 8), None, "8 SMs hold the 8 units");
    assert_eq!(gemm::dsl::shape_problem(&cfg, &shape), None, "a matter of the GPU, not the shape");
    assert!(!phaser_examples::gemm_choice::can_run(&cfg, &shape, 4));
    let dev = Device::sim(SimConfig::default());
    let a = gemm::random_bf16((shape.m * shape.k) as usize, 1);
    let b = gemm::random_bf16(gemm::b_len(&shape), 2);
    let mut bufs = GemmBuffers::new(&dev, shape, BLayout::KMajor, &a, &b).unwrap();
    let mut ws = gemm::dsl::workspace(&dev, &cfg, &shape).unwrap();
    let mut flags = gemm::dsl::flags(&dev, &cfg, &shape).unwrap();
    let kernels = gemm::dsl::kernels(&cfg).unwrap();
    match gemm::dsl::launch(&dev, &kernels, &mut bufs, &mut ws, &mut flags) {
        Err(RuntimeError::BadLaunch { problem, .. }) => assert_eq!(problem, format!("{shape}: {why}")),
        other => panic!("expected a refused launch, got {:?}", other.map(|_| ())),
    }
    // The launch shape the host would give it (4 CTAs), launched directly.
    let maps = gemm::dsl::tensor_maps(&dev, &cfg, &bufs).unwrap();
    let lc = gemm::dsl::launch_config(&cfg, &shape, 4);
    match dev.launch(&kernels.gemm, lc, &gemm::dsl::args(&maps, &shape, &mut ws, &mut flags, &mut bufs.c)) {
        Err(RuntimeError::Simulation(r)) => {
            let f = r.findings.iter().find(|f| f.category == Category::Trap).expect("the guard's trap");
            let src = include_str!("../src/gallery/gemm_dsl.rs");
            let guard = src.lines().position(|l| l.contains("if total > step {")).expect("the guard") as u32 + 2;
            assert_eq!(f.loc.map(|l| l.line), Some(guard), "{f}");
        }
        other => panic!("expected the guard's trap, got {:?}", other.map(|_| ())),
    }
}

/// The tests can fail: with the slice's signal made relaxed (it publishes nothing), the
/// global-order checker reports a race at the share's read of another slice's partials.
#[test]
fn a_relaxed_signal_is_a_global_race_at_the_share_read() {
    use phaser_examples::mutate::mutator::{release_to_relaxed, Replace};
    use phaser_examples::mutate::{at, make_mutant, ops, Mutant};
    let t = tiles(1, 64, 4, Reduce::EverySlice);
    let m = Mutant {
        subject: "gemm_dsl",
        site: at(ops::FLAG_STORE, "T.flag.signal(flags, mine + slice, 1);"),
        mutator: Box::new(Replace("release -> relaxed", release_to_relaxed)),
        expect: Category::GlobalRace,
        race: None,
    };
    let (mutant, _) = make_mutant(&m, &t.kernel().unwrap()).unwrap();
    let sc = SimConfig::default().with_seed(4).with_strategy(Strategy::Random);
    let dev = Device::sim(sc.clone());
    let shape = (16, 64, 4 * 64);
    let p = gemm_dsl::setup_tiles(&dev, t, shape, t.units(16, 64) as u32, 5, true).unwrap();
    let mut p = p.with_kernel(0, mutant).only_launch(0);
    let report = phaser_examples::gallery::simulate_problem(&dev, &mut p, &sc).unwrap().remove(0);
    let race = report.findings.iter().find(|f| f.category == Category::GlobalRace);
    let f = race.unwrap_or_else(|| panic!("no global race: {:?}", report.findings));
    let src = include_str!("../src/gallery/gemm_dsl.rs");
    let lines: Vec<&str> = src.lines().collect();
    // The share's sum (`while i < end`, through `sum_partial_pairs`, which the finding names:
    // an inlined device function's statements carry its own lines) at its read of another
    // slice's partial (CTA 0 is slice 0: its own comes first, unraced).
    let share = lines.iter().position(|l| l.contains("while i < end {")).expect("the share's loop");
    assert!(
        lines[share..].iter().any(|l| l.contains("sum_partial_pairs(pair, ws, at, m * n, SPLIT);")),
        "the share's sum"
    );
    let sum = lines.iter().position(|l| l.contains("pub fn sum_partial_pairs(")).expect("the slices' sum");
    let read = sum + lines[sum..].iter().position(|l| l.contains("T.ld.v2(ws, s * mn + at)")).unwrap() + 1;
    assert_eq!(f.loc.map(|l| l.line), Some(read as u32), "{f}");
    assert!(f.message.contains("with a relaxed store and no `fence.acq_rel` before it"), "{f}");
}
