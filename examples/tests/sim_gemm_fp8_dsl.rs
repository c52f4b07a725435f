//! The DSL FP8 GEMMs (examples/src/gallery/gemm_fp8_dsl.rs) in the simulator, under the
//! checker: with zero findings, every element of C is the simulator's model bit for bit (each
//! product exact, the tensor core's f32 sum rounded after each in K order; blockwise: each
//! 128-K block's fresh sum scale-added by one fma into the promoted accumulator) and within the
//! stated tolerance of the f64 product of the dequantized inputs. Shapes: the gallery's small
//! one (one cluster, two tiles) and its ragged one (M and N not multiples of the tiles, four K
//! blocks a tile so the stage ring wraps), with the gallery's exact inputs and, blockwise, with
//! random inputs quantized per block. Blockwise runs with one and with two accumulator
//! fragments in flight (`kernel_with_frags`: the same model, bit for bit), and the two-fragment
//! kernel's mutant that promotes a block before waiting for its wgmmas is caught as a
//! `wgmma-register-race` (its clean twin is `blockwise_two_fragments_small_...`: the same problem).
//! The fused e4m3 output (`Output::E4m3`): bytes and scales the host's quantization of the
//! model's f32 C bit for bit with zero findings (ragged, random and exact inputs, both scale
//! paths, a zero row), and the output fed to the next GEMM as its A and `sfa`.

use half::bf16;
use phaser::problem::run_problem;
use phaser::problem::{simulate_problem, Size};
use phaser::runtime::sim::SimConfig;
use phaser::Device;
use phaser_examples::gallery::gemm_dsl::Tiles;
use phaser_examples::gallery::gemm_fp8_dsl::{
    self as fp8, Host, Issue, Output, Quantized, Release, Scales, Scaling, BLOCK_K, SCALE_BLOCK,
};

/// C[i][j] as the simulator computes it.
fn model(q: &Quantized, i: usize, j: usize) -> bf16 {
    bf16::from_f32(model_f32(q, i, j))
}

/// C[i][j] in f32 as the simulator computes it, before the epilogue rounds it.
fn model_f32(q: &Quantized, i: usize, j: usize) -> f32 {
    let k = q.k as usize;
    match q.scaling {
        Scaling::Blockwise => promoted(q, i, j, 0..k / BLOCK_K as usize),
        Scaling::PerTensor => (0..k).fold(0f32, |s, kk| s + product(q, i, j, kk)) * (q.sfa[0] * q.sfb[0]),
    }
}

/// The product of A[i][kk] and B[j][kk], exact in f64 and rounded to f32 (the tensor core's).
fn product(q: &Quantized, i: usize, j: usize, kk: usize) -> f32 {
    let k = q.k as usize;
    (q.a[i * k + kk].to_f32() as f64 * q.b[j * k + kk].to_f32() as f64) as f32
}

/// The blockwise promotion over K blocks `blocks` from a zero accumulator: each 128-K block's
/// f32 sum in K order, scale-added by one fma.
fn promoted(q: &Quantized, i: usize, j: usize, blocks: std::ops::Range<usize>) -> f32 {
    let bk = BLOCK_K as usize;
    blocks.fold(0f32, |sum, kb| {
        let block = (0..bk).fold(0f32, |s, x| s + product(q, i, j, kb * bk + x));
        block.mul_add(q.a_scale(i, kb * bk) * q.b_scale(j, kb * bk), sum)
    })
}

/// Split-K's partial of slice `s` of `split` in f32 as the simulator computes it: the slice's
/// K blocks (the kernel's `split_unit`: `blocks / split` each, the last also the remainder)
/// promoted from zero.
fn model_partial(q: &Quantized, i: usize, j: usize, split: usize, s: usize) -> f32 {
    let blocks = q.k as usize / BLOCK_K as usize;
    let per = blocks / split;
    promoted(q, i, j, s * per..if s == split - 1 { blocks } else { (s + 1) * per })
}

/// Split-K's C[i][j] in f32: the slices' partials added in slice order (`gemm_splitk_reduce`).
fn model_split_f32(q: &Quantized, i: usize, j: usize, split: usize) -> f32 {
    (1..split).fold(model_partial(q, i, j, split, 0), |sum, s| sum + model_partial(q, i, j, split, s))
}

/// The gallery's problem at `size` (exact inputs: ternary elements, power-of-two scales), the
/// blockwise kernel with `frags` fragments in flight.
fn simulate(scaling: Scaling, size: Size, seed: u64, frags: u32) {
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let p = fp8::setup_with_frags(&dev, size, seed, scaling, frags).unwrap_or_else(|e| panic!("{e}"));
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
    simulate(Scaling::Blockwise, Size::Small, 3, 1);
}

#[test]
fn blockwise_ragged_is_the_model_with_no_findings() {
    simulate(Scaling::Blockwise, Size::Quick, 4, 1);
}

/// Random inputs quantized per block (RNE, satfinite): real rounding in every product.
#[test]
fn blockwise_random_quantized_is_the_model_with_no_findings() {
    blockwise_random(1);
}

fn blockwise_random(frags: u32) {
    let dev = Device::sim(SimConfig::default().with_seed(7));
    let q = Quantized::random(328, 200, 512, Scaling::Blockwise, 7);
    let kernel = fp8::kernel_with_frags(Scaling::Blockwise, &fp8::tiles(Scaling::Blockwise), frags).unwrap();
    let p = fp8::problem_with(&dev, q, 4, true, 7, kernel).unwrap_or_else(|e| panic!("{e}"));
    simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, 7);
}

/// Two fragments in flight (block kb + 1 issued before block kb is promoted): the same C, bit
/// for bit, with no findings, at the small size (two K blocks a tile: the loop's one turn, both
/// fragments), the ragged one (four a tile: the stage ring wraps under the trailing release
/// state) and with random inputs.
#[test]
fn blockwise_two_fragments_small_is_the_model_with_no_findings() {
    simulate(Scaling::Blockwise, Size::Small, 3, 2);
}

#[test]
fn blockwise_two_fragments_ragged_is_the_model_with_no_findings() {
    simulate(Scaling::Blockwise, Size::Quick, 4, 2);
}

#[test]
fn blockwise_two_fragments_random_quantized_is_the_model_with_no_findings() {
    blockwise_random(2);
}

/// An odd count of K blocks (three): the loop's last turn promotes fragment 0 alone, its
/// fragment-1 half skipped.
#[test]
fn blockwise_two_fragments_odd_k_blocks_is_the_model_with_no_findings() {
    let dev = Device::sim(SimConfig::default().with_seed(11));
    let q = Quantized::random(256, 128, 384, Scaling::Blockwise, 11);
    let kernel = fp8::kernel_with_frags(Scaling::Blockwise, &fp8::tiles(Scaling::Blockwise), 2).unwrap();
    let p = fp8::problem_with(&dev, q, 2, true, 11, kernel).unwrap_or_else(|e| panic!("{e}"));
    simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, 11);
}

/// The scales through shared memory (`Scales::Shared`: the producer TMAs each stage's A scales
/// and stores its B scale; the consumers read them after the stage's full wait and each warp
/// releases the stage): the same model, bit for bit, with no findings. `m` = 330 is not a
/// multiple of 4: `sfa`'s padded rows (its TMA map's 16-byte stride) are exercised, and the
/// last tile's rows past M read zero-filled scales (their C is clipped).
fn shared_scales(q: Quantized, grid: u32, seed: u64) {
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let t = fp8::tiles(Scaling::Blockwise);
    let kernel = fp8::kernel_with(Scaling::Blockwise, &t, 1, Scales::Shared).unwrap_or_else(|e| panic!("{e}"));
    let p = fp8::problem_with(&dev, q, grid, true, seed, kernel).unwrap_or_else(|e| panic!("{e}"));
    simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, seed);
}

#[test]
fn shared_scales_small_is_the_model_with_no_findings() {
    shared_scales(Quantized::exact(512, 128, 256, Scaling::Blockwise, 3), 2, 3);
}

/// Eight K blocks a tile: the five-stage ring wraps, so stages (scales included) are refilled
/// after their release.
#[test]
fn shared_scales_ragged_is_the_model_with_no_findings() {
    shared_scales(Quantized::exact(330, 200, 1024, Scaling::Blockwise, 4), 4, 4);
}

#[test]
fn shared_scales_random_quantized_is_the_model_with_no_findings() {
    shared_scales(Quantized::random(328, 200, 512, Scaling::Blockwise, 7), 4, 7);
}

/// The categories of the findings of `mutant` of `good` simulated on `q` over one 2-CTA
/// cluster with `seed`: those of a run that ends, or those of the error that stopped it.
fn mutant_categories(
    mutant: &phaser_examples::mutate::Mutant,
    good: &phaser::Kernel,
    q: Quantized,
    seed: u64,
) -> Vec<phaser::runtime::sim::Category> {
    mutant_categories_on(mutant, good, q, seed, 2, &fp8::tiles(Scaling::Blockwise))
}

/// [`mutant_categories`] of a kernel built for `t`, over `grid` CTAs.
fn mutant_categories_on(
    mutant: &phaser_examples::mutate::Mutant,
    good: &phaser::Kernel,
    q: Quantized,
    seed: u64,
    grid: u32,
    t: &Tiles,
) -> Vec<phaser::runtime::sim::Category> {
    let (bad, _) = phaser_examples::mutate::make_mutant(mutant, good).unwrap_or_else(|e| panic!("{e}"));
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let mut p = fp8::problem_tiles(&dev, q, grid, true, seed, bad, Output::Bf16, t).unwrap_or_else(|e| panic!("{e}"));
    match simulate_problem(&dev, &mut p, &SimConfig::default().with_seed(seed)) {
        Ok(reports) => reports.iter().flat_map(|r| r.findings.iter().map(|f| f.category)).collect(),
        Err(e) => e.findings().map(|f| f.iter().map(|f| f.category).collect()).unwrap_or_else(|| panic!("{e}")),
    }
}

/// The warpgroups issuing their K blocks in turn (`Issue::Turns`, named barriers 3 and 4),
/// with both scale paths: C is the model bit for bit with zero findings, on a ragged shape
/// whose CTAs walk two tiles each (the turns carry across tiles) and on one with a cluster
/// that has no tile (its warpgroups only take the first turn and its consumption).
#[test]
fn issuing_in_turns_is_the_model_with_no_findings() {
    let t = fp8::tiles(Scaling::Blockwise);
    for scales in [Scales::Shared, Scales::Global] {
        for (m, n, k, seed) in [(330, 200, 1024, 4), (100, 128, 256, 5)] {
            let dev = Device::sim(SimConfig::default().with_seed(seed));
            let kernel = fp8::kernel_issue(Scaling::Blockwise, &t, 1, scales, Output::Bf16, Issue::Turns)
                .unwrap_or_else(|e| panic!("{e}"));
            let q = Quantized::exact(m, n, k, Scaling::Blockwise, seed);
            let p = fp8::problem_with(&dev, q, 4, true, seed, kernel).unwrap_or_else(|e| panic!("{e}"));
            simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, seed);
        }
    }
}

/// Without the second warpgroup's first arrival each warpgroup waits for its turn forever:
/// the checker names the deadlock.
#[test]
fn turns_without_the_first_grant_are_a_deadlock() {
    use phaser::runtime::sim::Category;
    use phaser_examples::mutate::ops::BAR_ARRIVE;
    use phaser_examples::mutate::{at, Mutant};
    let t = fp8::tiles(Scaling::Blockwise);
    let good = fp8::kernel_issue(Scaling::Blockwise, &t, 1, Scales::Shared, Output::Bf16, Issue::Turns).unwrap();
    let mutant = Mutant {
        subject: "gemm_fp8_dsl",
        // The first of the two: the grant before the walk (the second hands over each turn).
        site: at(BAR_ARRIVE, "T.ptx.bar.arrive(their_turn, 256);").nth(0, 2),
        mutator: Box::new(phaser_examples::mutate::mutator::Delete),
        expect: Category::Deadlock,
        race: None,
    };
    let categories = mutant_categories(&mutant, &good, Quantized::exact(256, 128, 256, Scaling::Blockwise, 6), 6);
    assert!(categories.contains(&Category::Deadlock), "the mutant's findings: {categories:?}");
}

/// Turns are the 1-fragment blockwise kernel's: two fragments and the per-tensor kernel are
/// refused, naming it.
#[test]
fn turns_with_two_fragments_or_per_tensor_are_refused() {
    for (scaling, frags) in [(Scaling::Blockwise, 2), (Scaling::PerTensor, 1)] {
        let e = fp8::kernel_issue(scaling, &fp8::tiles(scaling), frags, Scales::Global, Output::Bf16, Issue::Turns)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("issuing in turns is the blockwise kernel's with 1 fragment"), "{e}");
        assert!(e.contains(&format!("{scaling:?} with {frags}")), "{e}");
    }
}

/// 192-wide tiles (`blockwise_tiles(192)`: two B scales a stage, four stages): C is the model bit
/// for bit with zero findings. N = 448 puts a tile at column 192 (its columns from 64 on take
/// the second block's scale), one at 384 (its second block past N: clamped to the last), and
/// clips the last; random quantized inputs, so every block's scale differs and a register
/// scaled by its neighbour's block is a wrong bit. With the 2-CTA cluster (B multicast in two
/// 96-row halves), without one, and split into three slices (exact inputs: the slices' sums
/// are the model's in any order). The tile's three 64-column sub-tiles (an odd count) reuse
/// the first staging tile across tiles: CTAs walk several tiles.
#[test]
fn tiles_192_wide_are_the_model_with_no_findings() {
    for (q, cluster, split, grid, seed) in [
        (Quantized::random(330, 448, 512, Scaling::Blockwise, 51), 2, 1, 4, 51),
        (Quantized::random(200, 448, 1024, Scaling::Blockwise, 52), 1, 1, 3, 52),
        (Quantized::exact(100, 448, 640, Scaling::Blockwise, 53), 1, 3, 4, 53),
    ] {
        let t = Tiles { cluster, split, ..fp8::blockwise_tiles(192) };
        let dev = Device::sim(SimConfig::default().with_seed(seed));
        let kernel = fp8::kernel_with(Scaling::Blockwise, &t, 1, Scales::Shared).unwrap_or_else(|e| panic!("{e}"));
        let p =
            fp8::problem_tiles(&dev, q, grid, true, seed, kernel, Output::Bf16, &t).unwrap_or_else(|e| panic!("{e}"));
        simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, seed);
    }
}

/// The 192-wide tile's three epilogue sub-tiles are an odd count: the first of a tile reuses
/// the staging tile the previous tile's last store read. The mutant without the wait for every
/// store there (`wait_group_read(0)` deleted) is an `async-write-race`; its clean twin is the
/// first case of `tiles_192_wide_are_the_model_with_no_findings`.
#[test]
fn the_192_wide_tile_without_its_odd_count_wait_is_an_async_write_race() {
    use phaser::runtime::sim::Category;
    use phaser_examples::mutate::ops::BULK_WAIT;
    use phaser_examples::mutate::{at, Mutant};
    let t = fp8::blockwise_tiles(192);
    let good = fp8::kernel_with(Scaling::Blockwise, &t, 1, Scales::Shared).unwrap();
    let mutant = Mutant {
        subject: "gemm_fp8_dsl",
        site: at(BULK_WAIT, "T.ptx.cp_async.bulk.wait_group_read(0);"),
        mutator: Box::new(phaser_examples::mutate::mutator::Delete),
        expect: Category::AsyncWriteRace,
        race: None,
    };
    let q = Quantized::random(330, 448, 512, Scaling::Blockwise, 51);
    let categories = mutant_categories_on(&mutant, &good, q, 51, 4, &t);
    assert!(categories.contains(&Category::AsyncWriteRace), "the mutant's findings: {categories:?}");
}

/// The 192-wide tile is refused, by name, where it is not built: global scales, two fragments,
/// the e4m3 output; and widths other than 128 and 192.
#[test]
fn tile_widths_the_blockwise_kernel_has_not_are_refused() {
    let wide = fp8::blockwise_tiles(192);
    let global = fp8::kernel_with(Scaling::Blockwise, &wide, 1, Scales::Global).err().expect("refused").to_string();
    assert!(
        global.contains("a tile 192 wide (two B scale blocks)") && global.contains("not Global scales"),
        "{global}"
    );
    let frags = fp8::kernel_with(Scaling::Blockwise, &wide, 2, Scales::Global).err().expect("refused").to_string();
    assert!(frags.contains("a tile 192 wide") && frags.contains("2 fragment(s)"), "{frags}");
    let e4m3 =
        fp8::kernel_out(Scaling::Blockwise, &wide, 1, Scales::Shared, Output::E4m3).err().expect("refused").to_string();
    assert!(e4m3.contains("a tile 192 wide") && e4m3.contains("E4m3 C"), "{e4m3}");
    for n in [64, 160, 256] {
        let e = fp8::kernel_with(Scaling::Blockwise, &fp8::blockwise_tiles(n), 1, Scales::Shared)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains(&format!("N = 128 or 192 per tile, not 64 and {n}")), "{e}");
    }
}

/// One release per warpgroup after a `bar.sync` of its 128 threads (`Release::PerWarpgroup`,
/// shared scales): C is the model bit for bit with zero findings on a ragged shape whose CTAs
/// walk two tiles (eight K blocks: the ring wraps), one with a cluster that has no tile, and
/// split into three slices.
#[test]
fn releasing_per_warpgroup_is_the_model_with_no_findings() {
    for (m, n, k, split, seed) in [(330, 200, 1024, 1, 41), (100, 128, 256, 1, 42), (200, 256, 640, 3, 43)] {
        let t = Tiles { split, ..fp8::tiles(Scaling::Blockwise) };
        let dev = Device::sim(SimConfig::default().with_seed(seed));
        let kernel = fp8::kernel_release(
            Scaling::Blockwise,
            &t,
            1,
            Scales::Shared,
            Output::Bf16,
            Issue::Together,
            Release::PerWarpgroup,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let q = Quantized::exact(m, n, k, Scaling::Blockwise, seed);
        let p = fp8::problem_tiles(&dev, q, 4, true, seed, kernel, Output::Bf16, &t).unwrap_or_else(|e| panic!("{e}"));
        simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, seed);
    }
    let e = fp8::kernel_release(
        Scaling::Blockwise,
        &fp8::tiles(Scaling::Blockwise),
        1,
        Scales::Global,
        Output::Bf16,
        Issue::Together,
        Release::PerWarpgroup,
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(
        e.contains("a release per warpgroup is the blockwise kernel's with shared scales") && e.contains("Global"),
        "{e}"
    );
}

/// Without the warpgroup's `bar.sync` its leader releases the stage after its own warp's
/// scale reads only: the producer's refill of the stage's scales is not ordered after the
/// other warps' reads, and the checker names it an `async-write-race`.
#[test]
fn a_release_per_warpgroup_without_its_barrier_is_a_finding() {
    use phaser::runtime::sim::Category;
    use phaser_examples::mutate::ops::BAR_SYNC;
    use phaser_examples::mutate::{at, Mutant};
    let t = fp8::tiles(Scaling::Blockwise);
    let good = fp8::kernel_release(
        Scaling::Blockwise,
        &t,
        1,
        Scales::Shared,
        Output::Bf16,
        Issue::Together,
        Release::PerWarpgroup,
    )
    .unwrap();
    let mutant = Mutant {
        subject: "gemm_fp8_dsl",
        site: at(BAR_SYNC, "T.ptx.bar.sync(bar_id, 128);").nth(0, 5),
        mutator: Box::new(phaser_examples::mutate::mutator::Delete),
        expect: Category::AsyncWriteRace,
        race: None,
    };
    let categories = mutant_categories(&mutant, &good, Quantized::exact(256, 128, 1024, Scaling::Blockwise, 5), 5);
    assert!(categories.contains(&Category::AsyncWriteRace), "the mutant's findings: {categories:?}");
}

/// The mutant whose warps read an A scale after releasing the stage (the `ld.shared` of `a1`
/// moved below the release): the producer's refill of that stage (its scales' TMA) is not
/// ordered after the read, and the checker names it an `async-write-race`. Eight K blocks a tile: the ring wraps.
#[test]
fn reading_a_scale_after_the_release_is_a_finding() {
    use phaser::runtime::sim::Category;
    use phaser_examples::mutate::ops::{LD_SHARED, REMOTE_ARRIVE};
    use phaser_examples::mutate::{at, Mutant};
    let t = fp8::tiles(Scaling::Blockwise);
    let good = fp8::kernel_with(Scaling::Blockwise, &t, 1, Scales::Shared).unwrap();
    // The warp's release: lane 0's arrivals on both CTAs' `empty`, in its `if`.
    let release = at(REMOTE_ARRIVE, "T.pipeline.consumer_release(pipe, read);").nth(0, 2).parent();
    let mutant = Mutant {
        subject: "gemm_fp8_dsl",
        site: at(LD_SHARED, "let a1 = sfa_ring[s][0][cw * 64 + frag_row + 8];"),
        mutator: Box::new(phaser_examples::mutate::mutator::Move { to: release, after: true }),
        expect: Category::AsyncWriteRace,
        race: None,
    };
    let categories = mutant_categories(&mutant, &good, Quantized::exact(256, 128, 1024, Scaling::Blockwise, 5), 5);
    assert!(categories.contains(&Category::AsyncWriteRace), "the mutant's findings: {categories:?}");
    eprintln!("read a scale after the release: {categories:?}");
}

/// The mutant that promotes block kb before waiting for its wgmmas (the loop's first
/// `wait_group(1)` moved below the scale-add, to just before the stage's release): the
/// checker names the scale-add reading the fragment the wgmma still writes.
#[test]
fn promoting_before_the_wait_is_a_wgmma_register_race() {
    use phaser::runtime::sim::Category;
    use phaser_examples::mutate::ops::{REMOTE_ARRIVE, WGMMA_WAIT};
    use phaser_examples::mutate::{at, Mutant};
    let good = fp8::kernel_with_frags(Scaling::Blockwise, &fp8::tiles(Scaling::Blockwise), 2).unwrap();
    // The `if leader { release }` of the loop's first half (the release arrives on both CTAs'
    // `empty`: two arrivals per release, two releases in the unrolled turn).
    let release = at(REMOTE_ARRIVE, "T.pipeline.consumer_release(pipe, rel);").nth(0, 4).parent();
    let mutant = Mutant {
        subject: "gemm_fp8_dsl",
        site: at(WGMMA_WAIT, "T.ptx.wgmma.wait_group(1);").nth(0, 2),
        mutator: Box::new(phaser_examples::mutate::mutator::Move { to: release, after: false }),
        expect: Category::WgmmaRegisterRace,
        race: None,
    };
    let categories = mutant_categories(&mutant, &good, Quantized::exact(256, 128, 256, Scaling::Blockwise, 3), 3);
    assert!(categories.contains(&Category::WgmmaRegisterRace), "the mutant's findings: {categories:?}");
    eprintln!("promote before the wait: {categories:?}");
}

#[test]
fn per_tensor_small_is_the_model_with_no_findings() {
    simulate(Scaling::PerTensor, Size::Small, 5, 1);
}

#[test]
fn per_tensor_ragged_is_the_model_with_no_findings() {
    simulate(Scaling::PerTensor, Size::Quick, 6, 1);
}

/// The configuration `tiles_for` chooses at M ≤ 128 (no cluster: one 128-row tile per CTA,
/// B loaded whole, no multicast) on both scalings, M = 64 and a ragged 100: the model bit for
/// bit with no findings, over two CTAs walking three tile columns, and the fused e4m3 output. Above one block row it keeps
/// the 2-CTA cluster the other tests run.
#[test]
fn the_small_m_choice_without_a_cluster_is_the_model_with_no_findings() {
    for (scaling, m, seed) in
        [(Scaling::Blockwise, 64, 31), (Scaling::Blockwise, 100, 32), (Scaling::PerTensor, 64, 33)]
    {
        let (t, why) = fp8::tiles_for(scaling, m);
        assert_eq!(t.cluster, 1, "{scaling:?} M = {m}: {why}");
        let n = if scaling == Scaling::Blockwise { 384 } else { 768 };
        let dev = Device::sim(SimConfig::default().with_seed(seed));
        let kernel = fp8::kernel(scaling, &t).unwrap_or_else(|e| panic!("{e}"));
        let q = Quantized::exact(m, n, 512, scaling, seed);
        let p = fp8::problem_tiles(&dev, q, 2, true, seed, kernel, Output::Bf16, &t).unwrap_or_else(|e| panic!("{e}"));
        simulate_problem_of(&dev, p, scaling, Size::Quick, seed);
    }
    // The fused e4m3 output without a cluster.
    e4m3_out_tiles(
        Quantized::random(64, 256, 256, Scaling::Blockwise, 34),
        2,
        34,
        Scales::Shared,
        fp8::tiles_for(Scaling::Blockwise, 64).0,
    );
    for scaling in [Scaling::Blockwise, Scaling::PerTensor] {
        assert_eq!(fp8::tiles_for(scaling, 129).0, fp8::tiles(scaling), "{scaling:?}: two block rows keep the cluster");
    }
}

/// The width `choose` picks on an H100's 132 SMs, from the waves (run 25): 192 at 8192³ (1376
/// cluster tiles, 20.85 waves, against 31.03 of 128-wide tiles: 0.985 of the work useful
/// against 0.970), 128 at 4096³ (5.33 waves of 192-wide tiles: 0.86), 512x8192x8192 and
/// M = 64; never 192 for the e4m3 output or per-tensor scaling. A shape whose tiles fill
/// whole waves exactly is all useful.
#[test]
fn the_blockwise_width_is_the_one_whose_waves_do_the_most_useful_work() {
    let width = |m, n, output| fp8::choose(Scaling::Blockwise, output, m, n, 132).0.block_n;
    assert_eq!(
        width(8192, 8192, Output::Bf16),
        192,
        "{}",
        fp8::choose(Scaling::Blockwise, Output::Bf16, 8192, 8192, 132).1
    );
    for (m, n) in [(4096, 4096), (512, 8192), (64, 8192)] {
        assert_eq!(
            width(m, n, Output::Bf16),
            128,
            "{m}x{n}: {}",
            fp8::choose(Scaling::Blockwise, Output::Bf16, m, n, 132).1
        );
    }
    assert_eq!(width(8192, 8192, Output::E4m3), 128);
    assert_eq!(fp8::choose(Scaling::PerTensor, Output::Bf16, 8192, 8192, 132).0, fp8::tiles(Scaling::PerTensor));
    let (t, _) = fp8::choose(Scaling::Blockwise, Output::Bf16, 8192, 8192, 132);
    assert_eq!((t.stages, t.cluster), (4, 2), "the 192-wide tile's stages, the cluster kept");
    assert_eq!(fp8::choose(Scaling::Blockwise, Output::Bf16, 64, 8192, 132).0.cluster, 1);
    assert!((fp8::wave_efficiency(256 * 66, 128, 128, 128, 2, 132) - 1.0).abs() < 1e-12);
    let e = fp8::wave_efficiency(8192, 8192, 128, 192, 2, 132);
    assert!((e - 20.848_484 / 21.0 * 8192.0 / 8256.0).abs() < 1e-5, "{e}");
}

/// A scale applied to the wrong row would pass a check that ignores them: the tolerance is
/// tight enough to see a row's scale swapped for its neighbour's.
#[test]
fn a_wrong_row_scale_is_outside_the_tolerance() {
    let q = Quantized::random(8, 8, 256, Scaling::Blockwise, 9);
    let mut swapped = Quantized { sfa: q.sfa.clone(), a: q.a.clone(), b: q.b.clone(), sfb: q.sfb.clone(), ..q };
    assert!(!q.exact);
    let m = swapped.m as usize;
    let m = fp8::sfa_stride(m as u32);
    for kb in 0..2 {
        swapped.sfa.swap(kb * m, kb * m + 1);
    }
    let (right, magnitude) = q.reference(0, 0);
    let (wrong, _) = swapped.reference(0, 0);
    assert!((wrong - right).abs() > q.tolerance(right, magnitude), "{right} vs {wrong}");
}

/// The checks' batched reference (A and B dequantized once) is `reference` bit for bit, per
/// element, for both scalings and ragged shapes.
#[test]
fn the_batched_reference_is_the_reference_bit_for_bit() {
    for (scaling, seed) in [(Scaling::Blockwise, 3), (Scaling::PerTensor, 4)] {
        let q = Quantized::random(13, 136, 384, scaling, seed);
        let positions: Vec<(usize, usize)> = (0..13).flat_map(|i| (0..136).map(move |j| (i, j))).collect();
        for (&(i, j), &(v, mag)) in positions.iter().zip(&q.references(&positions)) {
            let (want, want_mag) = q.reference(i, j);
            assert_eq!((v.to_bits(), mag.to_bits()), (want.to_bits(), want_mag.to_bits()), "{scaling:?} C[{i}][{j}]");
        }
    }
}

#[test]
fn k_not_a_multiple_of_128_is_refused() {
    let dev = Device::sim(SimConfig::default());
    let q = Quantized::random(128, 128, 128, Scaling::Blockwise, 1);
    let q = Quantized { k: 192, ..q };
    let e = fp8::problem(&dev, q, 2, true, 1).err().expect("refused");
    assert!(e.to_string().contains("K = 192 is not a multiple of 128"), "{e}");
}

#[test]
fn fragment_counts_other_than_the_kernels_are_refused() {
    for (scaling, frags, most) in [(Scaling::Blockwise, 0, 2), (Scaling::Blockwise, 3, 2), (Scaling::PerTensor, 2, 1)] {
        let e = fp8::kernel_with_frags(scaling, &fp8::tiles(scaling), frags).err().expect("refused");
        let want = format!("{scaling:?} takes 1 to {most} accumulator fragments in flight, not {frags}");
        assert!(e.to_string().contains(&want), "{e}");
    }
}

/// Shared-memory scales are the blockwise kernel's with one fragment: other combinations are
/// refused with a message naming them.
#[test]
fn shared_scales_other_than_blockwise_one_fragment_are_refused() {
    for (scaling, frags) in [(Scaling::Blockwise, 2), (Scaling::PerTensor, 1)] {
        let e = fp8::kernel_with(scaling, &fp8::tiles(scaling), frags, Scales::Shared).err().expect("refused");
        let want =
            format!("shared-memory scales are the blockwise kernel's with 1 fragment, not {scaling:?} with {frags}");
        assert!(e.to_string().contains(&want), "{e}");
    }
    assert!(fp8::kernel_with(Scaling::Blockwise, &fp8::tiles(Scaling::Blockwise), 1, Scales::Shared).is_ok());
}

/// The fused e4m3 output (`Output::E4m3`) in the simulator, under the checker: zero findings,
/// every byte and every scale the host's quantization (`quantize_output`: amax per row and
/// 128-column block, `448 / max(amax, floor)`, RNE satfinite) of the simulator's own f32 C
/// ([`model_f32`]), bit for bit, and each byte times its scale within `tolerance_e4m3` of the
/// f64 product. Ragged (M = 330: `sfa_stride`'s padding; N = 208: a partial column block, C's rows 16-byte multiples).
fn e4m3_out(q: Quantized, grid: u32, seed: u64, scales: Scales) {
    e4m3_out_tiles(q, grid, seed, scales, fp8::tiles(Scaling::Blockwise));
}

/// [`e4m3_out`] with the tiles `t`.
fn e4m3_out_tiles(q: Quantized, grid: u32, seed: u64, scales: Scales, t: Tiles) {
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let kernel = fp8::kernel_out(Scaling::Blockwise, &t, 1, scales, Output::E4m3).unwrap_or_else(|e| panic!("{e}"));
    let mut p =
        fp8::problem_tiles(&dev, q, grid, true, seed, kernel, Output::E4m3, &t).unwrap_or_else(|e| panic!("{e}"));
    let reports =
        simulate_problem(&dev, &mut p, &SimConfig::default().with_seed(seed)).unwrap_or_else(|e| panic!("{e}"));
    for r in &reports {
        assert!(r.findings.is_empty(), "e4m3 out: {:#?}", r.findings);
    }
    let h: &Host = p.host();
    let (m, n, mp) = (h.q.m as usize, h.q.n as usize, fp8::sfa_stride(h.q.m));
    let bytes = fp8::e4m3_of_pairs(&p.download(&dev, h.c).unwrap());
    let scales = p.download(&dev, h.sfc).unwrap();
    let c: Vec<f32> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| model_f32(&h.q, i, j)).collect();
    let (want, want_scales) = fp8::quantize_output(&c, h.q.m, h.q.n);
    let blocks = n.div_ceil(SCALE_BLOCK as usize);
    for nb in 0..blocks {
        for i in 0..m {
            let (got, want) = (scales[nb * mp + i], want_scales[nb * mp + i]);
            assert_eq!(got.to_bits(), want.to_bits(), "the scale of row {i}, block {nb}: {got}, model {want}");
        }
    }
    let mut worst = 0f64;
    // Row blocks (row, column block) with a byte of magnitude 448.
    let mut saturated = std::collections::HashSet::new();
    for i in 0..m {
        for j in 0..n {
            let (got, model) = (bytes[i * n + j], want[i * n + j]);
            assert_eq!(got.to_bits(), model.to_bits(), "C[{i}][{j}] = {got}, model {model} (f32 {})", c[i * n + j]);
            let scale = scales[j / SCALE_BLOCK as usize * mp + i] as f64;
            let (exact, magnitude) = h.q.reference(i, j);
            let tol = h.q.tolerance_e4m3(exact, magnitude, scale);
            let err = (got.to_f32() as f64 * scale - exact).abs();
            assert!(err <= tol, "C[{i}][{j}] = {got} x {scale}, f64 {exact} (tolerance {tol})");
            worst = worst.max(err / tol);
            if got.to_f32().abs() == fp8::E4M3_MAX {
                saturated.insert((i, j / SCALE_BLOCK as usize));
            }
        }
    }
    // Not vacuous: every row block's amax maps onto 448 (a zero block's floor aside), so each
    // has a byte of 448.
    let zero_blocks = (0..blocks)
        .flat_map(|nb| (0..m).map(move |i| (nb, i)))
        .filter(|&(nb, i)| scales[nb * mp + i] == fp8::AMAX_FLOOR / fp8::E4M3_MAX)
        .count();
    assert_eq!(saturated.len() + zero_blocks, m * blocks, "row blocks without a byte of 448 ({zero_blocks} zero)");
    eprintln!("e4m3 out {m}x{n}x{}: bytes and scales the model's, worst error {worst:.3} of the tolerance", h.q.k);
}

#[test]
fn e4m3_out_ragged_random_is_the_model_with_no_findings() {
    e4m3_out(Quantized::random(330, 208, 512, Scaling::Blockwise, 12), 4, 12, Scales::Shared);
}

#[test]
fn e4m3_out_ragged_exact_is_the_model_with_no_findings() {
    e4m3_out(Quantized::exact(330, 208, 1024, Scaling::Blockwise, 13), 4, 13, Scales::Shared);
}

/// The epilogue is the mainloop's: with scales from global memory as well.
#[test]
fn e4m3_out_global_scales_is_the_model_with_no_findings() {
    e4m3_out(Quantized::random(200, 256, 256, Scaling::Blockwise, 14), 2, 14, Scales::Global);
}

/// A row whose C is all zeros (A's row zero): its scale is the floor's, its bytes zero.
#[test]
fn e4m3_out_zero_rows_get_the_floor_scale() {
    let mut q = Quantized::random(128, 128, 256, Scaling::Blockwise, 15);
    let k = q.k as usize;
    for x in &mut q.a[5 * k..6 * k] {
        *x = phaser::F8E4M3::from_f32(0.0);
    }
    let (bytes, scales) = fp8::quantize_output(&vec![0f32; 128], 1, 128);
    assert!(bytes.iter().all(|b| b.to_f32() == 0.0));
    assert_eq!(scales[0], fp8::AMAX_FLOOR / fp8::E4M3_MAX);
    assert!(scales[0].is_normal());
    e4m3_out(q, 2, 15, Scales::Shared);
}

/// The e4m3 output is the blockwise kernel's: per-tensor is refused, naming it.
#[test]
fn e4m3_out_per_tensor_is_refused() {
    let t = fp8::tiles(Scaling::PerTensor);
    let e = fp8::kernel_out(Scaling::PerTensor, &t, 1, Scales::Global, Output::E4m3).err().expect("refused");
    assert!(e.to_string().contains("the e4m3 output is the blockwise kernel's, not PerTensor's"), "{e}");
}

/// e4m3 C's rows are N bytes: an N that is not a multiple of 16 is refused, naming it.
#[test]
fn e4m3_out_n_not_a_multiple_of_16_is_refused() {
    let dev = Device::sim(SimConfig::default());
    let t = fp8::tiles(Scaling::Blockwise);
    let kernel = fp8::kernel_out(Scaling::Blockwise, &t, 1, Scales::Shared, Output::E4m3).unwrap();
    let q = Quantized::exact(128, 200, 256, Scaling::Blockwise, 1);
    let e = fp8::problem_out(&dev, q, 2, true, 1, kernel, Output::E4m3).err().expect("refused");
    assert!(e.to_string().contains("N = 200 is not a multiple of 16"), "{e}");
}

/// The e4m3 output is the next FP8 GEMM's A as it is: its bytes as `a` and its scales as `sfa`
/// (the same layout, read by `Quantized::a_scale`), times random B, in the simulator: zero
/// findings, C within the tolerance of the f64 product of those inputs, and each element of
/// that dequantized A within `tolerance_e4m3` of the first GEMM's f64 product.
#[test]
fn e4m3_out_feeds_the_next_gemm() {
    let seed = 16;
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let t = fp8::tiles(Scaling::Blockwise);
    let first = Quantized::random(200, 256, 256, Scaling::Blockwise, seed);
    let kernel = fp8::kernel_out(Scaling::Blockwise, &t, 1, Scales::Shared, Output::E4m3).unwrap();
    let mut p = fp8::problem_out(&dev, first, 2, true, seed, kernel, Output::E4m3).unwrap();
    let reports = simulate_problem(&dev, &mut p, &SimConfig::default().with_seed(seed)).unwrap();
    assert!(reports.iter().all(|r| r.findings.is_empty()));
    let h: &Host = p.host();
    let a = fp8::e4m3_of_pairs(&p.download(&dev, h.c).unwrap());
    let sfa = p.download(&dev, h.sfc).unwrap();
    let b = Quantized::random(128, 192, 256, Scaling::Blockwise, seed + 1);
    let next = Quantized { m: 200, n: 192, k: 256, a, sfa, b: b.b, sfb: b.sfb, ..b };
    for i in 0..200 {
        for kk in 0..256 {
            let (want, magnitude) = h.q.reference(i, kk);
            let scale = next.a_scale(i, kk) as f64;
            let got = next.a[i * 256 + kk].to_f32() as f64 * scale;
            let tol = h.q.tolerance_e4m3(want, magnitude, scale);
            assert!((got - want).abs() <= tol, "A[{i}][{kk}] = {got}, the first GEMM's f64 {want} (tolerance {tol})");
        }
    }
    let kernel = fp8::kernel(Scaling::Blockwise, &t).unwrap();
    let mut p2 = fp8::problem_with(&dev, next, 2, true, seed, kernel).unwrap();
    let reports = simulate_problem(&dev, &mut p2, &SimConfig::default().with_seed(seed)).unwrap();
    assert!(reports.iter().all(|r| r.findings.is_empty()));
    let h2: &Host = p2.host();
    let c = p2.download(&dev, h2.c).unwrap();
    let (mut worst, mut big) = (0f64, 0);
    for i in 0..200 {
        for j in 0..192 {
            let (want, magnitude) = h2.q.reference(i, j);
            let err = (c[i * 192 + j].to_f64() - want).abs();
            let tol = h2.q.tolerance(want, magnitude);
            assert!(err <= tol, "C2[{i}][{j}] = {}, f64 {want} (tolerance {tol})", c[i * 192 + j]);
            worst = worst.max(err / tol);
            big += (want.abs() > 1.0) as usize;
        }
    }
    assert!(big > 0, "not vacuous");
    eprintln!("e4m3 out into the next GEMM: worst error {worst:.3} of the tolerance");
}

/// `sfa_stride(M)`, `sfa`'s row stride: at least M, a multiple of 4 (each K block's row of f32
/// scales starts 16-byte aligned: TMA's rule for global strides) and the least such; the host's
/// scales (`Quantized`'s `sfa`, both constructors) and the A-scale map's dims (`sfa_dims`) are
/// laid out with it.
mod sfa_layout {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Any shape, tile and SM count (each u32, zeros included): the useful share is in
        /// [0, 1], never NaN, 0 exactly where C or the tile is empty, and 1 where the tiles
        /// cover C exactly in whole waves; `choose` never panics on it.
        #[test]
        fn wave_efficiency_is_a_share_for_any_shape(
            m in prop_oneof![3 => 0u32..=20_000, 1 => any::<u32>()],
            n in prop_oneof![3 => 0u32..=20_000, 1 => any::<u32>()],
            block_m in prop_oneof![3 => prop::sample::select(vec![64u32, 128, 192]), 1 => any::<u32>()],
            block_n in prop_oneof![3 => prop::sample::select(vec![128u32, 192]), 1 => any::<u32>()],
            cluster in 0u32..=4,
            sms in prop_oneof![3 => 1u32..=264, 1 => any::<u32>()],
        ) {
            let e = fp8::wave_efficiency(m, n, block_m, block_n, cluster, sms);
            prop_assert!((0.0..=1.0).contains(&e), "{} {} {} {} {} {}: {}", m, n, block_m, block_n, cluster, sms, e);
            prop_assert_eq!(e == 0.0, m == 0 || n == 0 || block_m == 0 || block_n == 0 || cluster == 0);
            let exact = fp8::wave_efficiency(128 * 2 * 66 * 3, 128 * 5, 128, 128, 2, 132);
            prop_assert!((exact - 1.0).abs() < 1e-12);
            let (t, _) = fp8::choose(Scaling::Blockwise, Output::Bf16, m.max(1), n.max(1), sms);
            prop_assert!(fp8::BLOCKWISE_WIDTHS.contains(&t.block_n));
        }

        #[test]
        fn sfa_stride_is_the_least_multiple_of_4_at_least_m(m in prop_oneof![3 => 0u32..=4096, 1 => any::<u32>()]) {
            let (s, mu) = (fp8::sfa_stride(m), m as usize);
            prop_assert!(s >= mu && s % 4 == 0 && s < mu + 4, "M = {}: stride {}", m, s);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn the_hosts_scales_are_laid_out_with_the_stride(m in 1u32..=700, kbs in 1u32..=4, seed in 0u64..1000) {
            let k = kbs * BLOCK_K;
            let s = fp8::sfa_stride(m);
            for q in [Quantized::exact(m, 8, k, Scaling::Blockwise, seed), Quantized::random(m, 8, k, Scaling::Blockwise, seed)] {
                prop_assert_eq!(q.sfa.len(), kbs as usize * s);
                prop_assert_eq!(fp8::sfa_dims(&q), [s as u64, kbs as u64]);
                prop_assert_eq!((s * 4) % 16, 0, "the map's row stride in bytes");
            }
        }
    }

    proptest! {
        // Each case is two simulated GEMMs (a few seconds each).
        #![proptest_config(ProptestConfig { cases: 3, ..ProptestConfig::default() })]

        /// The kernel reads the layout the host wrote: at a random M (mostly not a multiple of
        /// 4, one or two m-blocks, the last ragged), with row-varying exact scales, C is the
        /// model (which reads scales through `Quantized::a_scale`) bit for bit with no findings,
        /// with the scales read from global memory (the kernel's own stride) and brought into
        /// shared memory by TMA through the map of `sfa_dims`.
        #[test]
        fn the_kernel_reads_a_scales_where_the_host_put_them(m in 5u32..=250, seed in 0u64..1000) {
            let t = fp8::tiles(Scaling::Blockwise);
            for scales in [Scales::Global, Scales::Shared] {
                let dev = Device::sim(SimConfig::default().with_seed(seed));
                let q = Quantized::exact(m, t.block_n, 2 * BLOCK_K, Scaling::Blockwise, seed);
                let kernel = fp8::kernel_with(Scaling::Blockwise, &t, 1, scales).unwrap_or_else(|e| panic!("{e}"));
                let p = fp8::problem_with(&dev, q, t.cluster, true, seed, kernel).unwrap_or_else(|e| panic!("{e}"));
                simulate_problem_of(&dev, p, Scaling::Blockwise, Size::Quick, seed);
            }
        }
    }
}

/// Split-K of the blockwise kernel (`split` slices of K, `Tiles::split`) on `grid` CTAs: zero
/// findings in both launches (the GEMM's partials, then `gemm_splitk_reduce`), every slice's
/// f32 partial its model's (`model_partial`), every element of C the split model
/// (`model_split_f32`) bit for bit and within the tolerance of the f64 product, and the
/// gallery's check passing. Returns C and how many elements of the split model's f32 C differ
/// from the unsplit one's (`model_f32`).
fn split_k(q: Quantized, t: Tiles, frags: u32, scales: Scales, grid: u32, seed: u64) -> (Vec<bf16>, usize) {
    let dev = Device::sim(SimConfig::default().with_seed(seed));
    let split = t.split;
    let kernel = fp8::kernel_with(Scaling::Blockwise, &t, frags, scales).unwrap_or_else(|e| panic!("{e}"));
    let mut p =
        fp8::problem_tiles(&dev, q, grid, true, seed, kernel, Output::Bf16, &t).unwrap_or_else(|e| panic!("{e}"));
    let what = format!("split {split}, cluster {}, {frags} fragment(s), {scales:?} scales", t.cluster);
    let outputs = run_problem(&dev, &mut p).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(outputs.launches.len(), 2, "{what}: the GEMM and the reduction");
    for l in &outputs.launches {
        let r = l.sim.as_ref().expect("a simulator report");
        assert!(r.findings.is_empty(), "{what}: {}", r.text());
    }
    let h: &Host = p.host();
    let c = outputs.get(1, h.c).to_vec();
    let (m, n) = (h.q.m as usize, h.q.n as usize);
    let (ws, slices) = h.partials.expect("split-K's partials");
    assert_eq!(slices, split);
    let ws = outputs.get(0, ws);
    let mut unsplit_differs = 0;
    for i in 0..m {
        for j in 0..n {
            for s in 0..split as usize {
                // By value: the poison (NaN) equals nothing.
                let (got, want) = (ws[s * m * n + i * n + j], model_partial(&h.q, i, j, split as usize, s));
                assert!(got == want, "{what}: slice {s}'s partial[{i}][{j}] = {got}, model {want}");
            }
            let f32_sum = model_split_f32(&h.q, i, j, split as usize);
            unsplit_differs += (f32_sum.to_bits() != model_f32(&h.q, i, j).to_bits()) as usize;
            let got = c[i * n + j];
            let want = bf16::from_f32(f32_sum);
            assert_eq!(got.to_bits(), want.to_bits(), "{what}: C[{i}][{j}] = {got}, split model {want}");
            let (exact, magnitude) = h.q.reference(i, j);
            let tol = h.q.tolerance(exact, magnitude);
            assert!((got.to_f64() - exact).abs() <= tol, "{what}: C[{i}][{j}] = {got}, f64 {exact} (tolerance {tol})");
        }
    }
    let o = fp8::check(&p, &outputs);
    assert!(o.passed, "{what}: {}", o.detail);
    let bf16_differs = (0..m * n).filter(|&x| c[x].to_bits() != model(&h.q, x / n, x % n).to_bits()).count();
    eprintln!(
        "{what} {m}x{n}x{}: of {} elements, {unsplit_differs} differ from the unsplit model in f32, {bf16_differs} in bf16",
        h.q.k,
        m * n
    );
    (c, unsplit_differs)
}

/// The gallery's blockwise tiles split into `split` slices of K.
fn split_tiles(split: u32) -> Tiles {
    Tiles { split, ..fp8::tiles(Scaling::Blockwise) }
}

/// M = 1 (decode), five K blocks in three slices (1, 1, 3: uneven), the gallery's shared
/// scales, without a cluster (a 128-row tile per CTA); two CTAs walk the three units, so the
/// ring runs on across slices.
#[test]
fn split_k_m1_random_is_the_split_model_with_no_findings() {
    let t = Tiles { cluster: 1, ..split_tiles(3) };
    split_k(Quantized::random(1, 128, 640, Scaling::Blockwise, 21), t, 1, Scales::Shared, 2, 21);
}

/// M = 16, N = 200 (a partial tile column), two slices of 2 and 3 K blocks with two fragments
/// in flight (the three-block slice ends on the loop's half turn), global scales.
#[test]
fn split_k_m16_two_fragments_is_the_split_model_with_no_findings() {
    split_k(Quantized::random(16, 200, 640, Scaling::Blockwise, 22), split_tiles(2), 2, Scales::Global, 4, 22);
}

/// M = 64, four slices of five K blocks (1, 1, 1, 2), one fragment, global scales; two
/// clusters of two units each. Random inputs: the slices' f32 partials are rounded apart and
/// summed in another order than one promoted accumulator, so C is not the unsplit kernel's
/// bit for bit in f32 (most often still in bf16); it is the split model's, and the test says
/// the split model's f32 C differs from the unsplit one (the partials' check tells them apart).
#[test]
fn split_k_m64_random_is_the_split_model_not_the_unsplit_one() {
    let (_, differs) =
        split_k(Quantized::random(64, 128, 640, Scaling::Blockwise, 23), split_tiles(4), 1, Scales::Global, 4, 23);
    assert!(differs > 0, "random inputs: the split and unsplit models agree everywhere in f32");
}

/// Exact inputs (ternary elements, power-of-two scales: every partial and sum exact in f32):
/// split-K's C is the unsplit kernel's bit for bit, and both the f64 product rounded once.
#[test]
fn split_k_exact_is_the_unsplit_c_bit_for_bit() {
    let q = || Quantized::exact(64, 128, 640, Scaling::Blockwise, 24);
    let (split, differs) = split_k(q(), split_tiles(3), 1, Scales::Shared, 2, 24);
    assert_eq!(differs, 0);
    let dev = Device::sim(SimConfig::default().with_seed(24));
    let kernel = fp8::kernel(Scaling::Blockwise, &fp8::tiles(Scaling::Blockwise)).unwrap();
    let mut p = fp8::problem_with(&dev, q(), 2, true, 24, kernel).unwrap();
    simulate_problem(&dev, &mut p, &SimConfig::default().with_seed(24)).unwrap();
    let h: &Host = p.host();
    let unsplit = p.download(&dev, h.c).unwrap();
    let same = split.iter().zip(&unsplit).all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same, "split 3 and split 1 differ on exact inputs");
}

/// What split-K refuses, each naming why: more slices than K blocks (at the launch), 0 slices,
/// the e4m3 output (its scales need the reduced C's amax), the per-tensor kernel, and the
/// bf16 GEMM's in-kernel reductions.
#[test]
fn split_k_refusals_name_the_problem() {
    use phaser_examples::gallery::gemm_dsl::Reduce;
    let dev = Device::sim(SimConfig::default());
    let split = split_tiles;
    let t = split(3);
    let kernel = fp8::kernel_with(Scaling::Blockwise, &t, 1, Scales::Shared).unwrap();
    let q = Quantized::random(64, 128, 256, Scaling::Blockwise, 1);
    let e = fp8::problem_tiles(&dev, q, 2, true, 1, kernel, Output::Bf16, &t).err().expect("refused");
    let want = "64x128x256: split-K into 3 slices, but K = 256 is 2 block(s) of 128: at most one slice per K block";
    assert!(e.to_string().contains(want), "{e}");
    let refusal = |scaling: Scaling, t: Tiles, frags: u32, scales: Scales, output: Output| {
        let tiles = Tiles { block_n: fp8::tiles(scaling).block_n, ..t };
        fp8::kernel_out(scaling, &tiles, frags, scales, output).err().expect("refused").to_string()
    };
    let e = refusal(Scaling::Blockwise, split(0), 1, Scales::Shared, Output::Bf16);
    assert!(e.contains("split-K into 0 slices"), "{e}");
    let e = refusal(Scaling::Blockwise, split(2), 1, Scales::Shared, Output::E4m3);
    assert!(e.contains("with the e4m3 output: its scales need the amax of the reduced C"), "{e}");
    let e = refusal(Scaling::PerTensor, split(2), 1, Scales::Global, Output::Bf16);
    assert!(e.contains("split-K (into 2) is the blockwise kernel's, not PerTensor's"), "{e}");
    for reduce in [Reduce::LastSlice, Reduce::EverySlice] {
        let e = refusal(Scaling::Blockwise, Tiles { reduce, ..split(2) }, 1, Scales::Shared, Output::Bf16);
        assert!(
            e.contains(&format!("reduced by {reduce:?}: the FP8 GEMM reduces its slices in a second launch")),
            "{e}"
        );
    }
}
