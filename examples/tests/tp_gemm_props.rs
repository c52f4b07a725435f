//! The numbers a user passes to the tensor-parallel GEMM (`TpGemm::new`: ranks, M, N, K and
//! the tiles), property-tested: either the configuration is built and its shapes hold (whole
//! m-blocks per rank, N and K multiples of 8, one flag per m-block, a grid within the tiles and
//! the SMs, kernels that build), or the named error (`TpTiles::shape_problem`'s text) comes
//! back; never a panic, whatever the numbers (products that overflow included).

use phaser::runtime::sim::SimConfig;
use phaser::{Device, RuntimeError};
use phaser_examples::gemm::tp::{TpGemm, TpKernels, TpTiles};
use proptest::prelude::*;

/// Tiles near the kernels' (multiples of 8 and 32 around the valid ones, 0 included, stages
/// up to past what shared memory holds) and now and then any `u32`.
fn tiles() -> impl Strategy<Value = TpTiles> {
    let block_n = prop_oneof![4 => (0u32..=40).prop_map(|x| x * 8), 1 => any::<u32>()];
    let wg_m = prop_oneof![4 => (0u32..=6).prop_map(|x| x * 32), 1 => any::<u32>()];
    let stages = prop_oneof![4 => 0u32..=12, 1 => any::<u32>()];
    (block_n, wg_m, stages).prop_map(|(block_n, wg_m, stages)| TpTiles { block_n, wg_m, stages })
}

/// What a valid configuration must satisfy, from the numbers alone: `None`, or what fails.
fn shapes_hold(t: &TpTiles, ranks: usize, (m, n, k): (u32, u32, u32), sms: u32) -> Option<String> {
    let bm = t.block_m();
    let rows = m / ranks as u32;
    let tiles = u64::from(m / bm) * u64::from(n.div_ceil(t.block_n));
    let grid = t.gemm_grid(m, n, sms);
    let checks = [
        (ranks > 0 && m > 0 && m as u64 % (ranks as u64 * bm as u64) == 0, "whole m-blocks per rank"),
        (rows > 0 && rows % bm == 0, "each rank's rows are m-blocks"),
        (n > 0 && k > 0 && n % 8 == 0 && k % 8 == 0, "N and K positive multiples of 8"),
        (grid >= 1 && u64::from(grid) <= tiles && grid < sms, "a grid within the tiles, SMs left to the pushes"),
    ];
    checks.iter().find(|c| !c.0).map(|c| c.1.to_string())
}

/// Tiles the kernels mostly take (so that shapes, not tiles, decide), now and then [`tiles`].
fn usable_tiles() -> impl Strategy<Value = TpTiles> {
    let usable =
        (1u32..=4, 1u32..=2, 1u32..=6).prop_map(|(n, m, stages)| TpTiles { block_n: 64 * n, wg_m: 64 * m, stages });
    prop_oneof![3 => usable, 1 => tiles()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any numbers, through the check `TpGemm::new` makes first (no buffers: a shape it
    /// accepts may be far too large to allocate here): no panic, and an accepted shape holds.
    #[test]
    fn any_numbers_are_refused_by_name_or_hold(
        t in tiles(),
        ranks in prop_oneof![3 => 0usize..=9, 1 => any::<usize>()],
        m in prop_oneof![2 => (0u32..=64).prop_map(|x| x * 128), 1 => any::<u32>()],
        n in prop_oneof![2 => (0u32..=64).prop_map(|x| x * 8), 1 => any::<u32>()],
        k in prop_oneof![2 => (0u32..=64).prop_map(|x| x * 8), 1 => any::<u32>()],
    ) {
        match t.shape_problem(ranks, m, n, k) {
            Some(problem) => prop_assert!(!problem.is_empty()),
            None => {
                prop_assert_eq!(t.problem(), None);
                prop_assert_eq!(shapes_hold(&t, ranks, (m, n, k), 132), None, "{:?} {} ranks {}x{}x{}", t, ranks, m, n, k);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Small shapes (whole m-blocks or a few rows off, N and K multiples of 8 or not) on
    /// simulated devices, one per rank: `TpGemm::new` builds exactly what `shape_problem`
    /// accepts, with every buffer its shape's size and kernels that build; else the named
    /// error.
    #[test]
    fn tp_gemm_new_builds_what_holds_or_returns_the_named_error(
        t in usable_tiles(),
        ranks in 1usize..=4,
        blocks in 1u32..=3,
        m_off in prop_oneof![3 => Just(0u32), 1 => 1u32..=100],
        n in prop_oneof![3 => (1u32..=40).prop_map(|x| x * 8), 1 => 0u32..=300],
        k in prop_oneof![3 => (1u32..=40).prop_map(|x| x * 8), 1 => 0u32..=300],
    ) {
        // An m-block of the tiles if they have one, else the gallery's (the tiles are refused).
        let bm = if t.problem().is_none() { t.block_m() } else { 128 };
        let m = ranks as u32 * bm * blocks + m_off;
        let devs = Device::sim_system(ranks as u32, SimConfig::default());
        let problem = t.shape_problem(ranks, m, n, k);
        let built = TpGemm::new(devs.iter().collect(), t, (m, n, k), 1);
        match (built, problem) {
            (Ok(tp), None) => {
                let sms = devs[0].sm_count().unwrap();
                prop_assert_eq!(shapes_hold(&t, ranks, (m, n, k), sms), None);
                prop_assert_eq!((tp.rows() * ranks as u32, tp.gemm_grid), (m, t.gemm_grid(m, n, sms)));
                let (mu, nu, ku) = (m as usize, n as usize, k as usize);
                prop_assert_eq!((tp.a.len(), tp.bs.len()), (mu * ku, ranks));
                for r in &tp.ranks {
                    prop_assert_eq!(
                        (r.a_own.len(), r.a_full.len(), r.b.len(), r.c.len(), r.flags.len()),
                        (mu / ranks * ku, mu * ku, nu * ku, mu * nu, (m / t.block_m()) as usize)
                    );
                }
                prop_assert!(TpKernels::new(t).is_ok());
            }
            (Err(RuntimeError::BadLaunch { kernel, problem: got }), Some(want)) => {
                prop_assert_eq!(kernel, "gemm_allgather_dsl");
                prop_assert_eq!(got, want);
            }
            (got, want) => prop_assert!(false, "{:?} {} ranks {}x{}x{}: new gave {:?}, the check {:?}",
                t, ranks, m, n, k, got.err().map(|e| e.to_string()), want),
        };
    }
}

/// The products that overflow, by name: a rank count whose m-blocks pass `u32`, and buffers no
/// allocation holds; tiles the kernels cannot take.
#[test]
fn overflowing_products_and_bad_tiles_are_named() {
    let t = TpTiles::gallery();
    let p = t.shape_problem(1 << 26, 128, 128, 128).expect("refused");
    assert!(p.contains("67108864 ranks x 128 rows overflows"), "{p}");
    let p = t.shape_problem(1, 0xFFFF_FF80, 0xFFFF_FFF8, 0xFFFF_FFF8).expect("refused");
    assert!(p.starts_with("A (4294967168 x 4294967288 bf16)") && p.contains("more than one allocation holds"), "{p}");
    let bad = [
        (TpTiles { wg_m: 96, ..t }, "wg_m = 96 must be a positive multiple of wgmma's 64 rows, at most 128"),
        (TpTiles { wg_m: 0, ..t }, "wg_m = 0 must be"),
        (TpTiles { block_n: 100, ..t }, "block_n = 100 must be a positive multiple of the epilogue's 64 columns"),
        (TpTiles { block_n: 320, ..t }, "block_n = 320"),
        (TpTiles { stages: 0, ..t }, "stages = 0: at least one"),
        (TpTiles { stages: u32::MAX, ..t }, "stages = 4294967295: at least one, and the rings (32768 bytes a stage)"),
    ];
    for (tiles, want) in bad {
        let p = tiles.shape_problem(2, 256, 128, 128).unwrap_or_else(|| panic!("{tiles:?} accepted"));
        assert!(p.starts_with(want), "{tiles:?}: {p}");
    }
    assert_eq!(t.shape_problem(2, 256, 128, 128), None);
}
