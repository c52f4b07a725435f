//! Which [`GemmConfig`] runs a given GEMM shape: a heuristic that scores every candidate tile
//! shape with a two-term model (compute in waves of tiles over the SMs, and DRAM traffic at a
//! bandwidth that grows with the SMs kept busy) and keeps the cheapest. The choice comes with
//! the numbers that made it, so it can be printed and explained.
//!
//! The candidates are the configurations both GEMMs (builder and DSL) implement for the
//! layout: two consumer warpgroups, tiles 128 x {128, 256} and 256 x {64, 128}, 2- or
//! 1-CTA clusters (ties go to the multicast one), as many stages as shared memory holds (at most [`MAX_STAGES`]). Every
//! candidate is assembled by `examples/tests/gemm_ptxas.rs` and run in the simulator by
//! `examples/tests/sim_gemm_dsl.rs`, so whatever `choose` returns has been built and checked.

use crate::gemm::{BLayout, GemmConfig, GemmShape, BLOCK_K};
use std::fmt;

/// The deepest pipeline a candidate gets: deeper rings did not help in the stage sweeps.
pub const MAX_STAGES: u32 = 6;
/// The model's H200 figures: dense bf16 wgmma rate per SM (about 990 TFLOP/s over 132 SMs at
/// the sustained clock) and DRAM bandwidth (4.8 TB/s) once every SM streams.
const FLOPS_PER_SM: f64 = 7.5e12;
const DRAM_BYTES_PER_S: f64 = 4.8e12;
/// Relative mainloop efficiency of a tile shape: smaller N per wgmma issues more instructions
/// and re-reads A more often per flop (64-wide B tiles run at about 3/4 of the 256-wide rate).
fn tile_efficiency(block_m: u32, block_n: u32) -> f64 {
    match (block_m, block_n) {
        (128, 256) | (256, 128) => 1.0,
        (128, 128) => 0.9,
        (256, 64) => 0.85,
        _ => 0.75,
    }
}

/// A chosen configuration and the model's numbers for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmChoice {
    pub config: GemmConfig,
    /// CTA tiles of the shape, and waves of them over the SMs.
    pub tiles: u64,
    pub waves: u64,
    /// The model's time, in microseconds: compute and DRAM terms (the larger one is the estimate).
    pub compute_us: f64,
    pub memory_us: f64,
}

impl GemmChoice {
    pub fn estimate_us(&self) -> f64 {
        self.compute_us.max(self.memory_us)
    }
}

impl fmt::Display for GemmChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "{} ({}x{} tiles, {} stages, cluster {}): {} tiles in {} wave(s), model {:.1} us compute / {:.1} us DRAM",
            c.kernel_name(),
            c.block_m(),
            c.block_n,
            c.stages,
            c.cluster_m,
            self.tiles,
            self.waves,
            self.compute_us,
            self.memory_us
        )
    }
}

/// Every configuration [`GemmConfig::choose`] picks from, for `b_layout`.
pub fn choice_candidates(b_layout: BLayout) -> Vec<GemmConfig> {
    let mut v = Vec::new();
    for (block_n, wg_m) in [(256, 64), (128, 128), (128, 64), (64, 128)] {
        for cluster_m in [2, 1] {
            let base =
                GemmConfig { block_n, wg_m, consumers: 2, stages: 2, cluster_m, b_layout, group_m: 8, split_k: 1 };
            let deepest =
                (2..=MAX_STAGES).rev().map(|stages| GemmConfig { stages, ..base }).find(|c| c.problem().is_none());
            v.extend(deepest);
        }
    }
    v
}

impl GemmConfig {
    /// The candidate the model finds fastest for `shape` on `sm_count` SMs (ties go to the
    /// earlier, larger tile).
    pub fn choose(shape: &GemmShape, b_layout: BLayout, sm_count: u32) -> GemmChoice {
        choice_candidates(b_layout)
            .into_iter()
            .map(|c| score(c, shape, sm_count))
            .fold(None, |best: Option<GemmChoice>, c| match best {
                Some(b) if b.estimate_us() <= c.estimate_us() * 1.0001 => Some(b),
                _ => Some(c),
            })
            .expect("choice_candidates is never empty")
    }
}

/// The model's numbers for `config` at `shape`.
pub fn score(config: GemmConfig, shape: &GemmShape, sm_count: u32) -> GemmChoice {
    let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
    let (bm, bn, cm) = (config.block_m() as u64, config.block_n as u64, config.cluster_m as u64);
    // Clusters walk cluster-tiles; a cluster row past M still occupies its CTA.
    let cluster_tiles = m.div_ceil(bm * cm) * n.div_ceil(bn);
    let slots = (sm_count as u64 / cm).max(1);
    let waves = cluster_tiles.div_ceil(slots);
    let k_padded = k.div_ceil(BLOCK_K as u64) * BLOCK_K as u64;
    let tile_flops = 2.0 * (bm * bn * k_padded) as f64;
    let compute_us = waves as f64 * tile_flops / (FLOPS_PER_SM * tile_efficiency(bm as u32, bn as u32)) * 1e6;
    // DRAM: A once per tile column it meets in L2 is approximated by A and B read once, plus C;
    // the bandwidth a kernel reaches grows with the SMs it keeps loading.
    let active = (cluster_tiles.min(slots) * cm) as f64 / sm_count as f64;
    let bytes = 2.0 * (m * k + n * k + m * n) as f64;
    let memory_us = bytes / (DRAM_BYTES_PER_S * active.min(1.0)) * 1e6;
    GemmChoice { config, tiles: cluster_tiles * cm, waves, compute_us, memory_us }
}

/// The shapes of issue 23 §2 the shape sweep times: decode and prefill M against N, K in
/// {4096, 8192}, and DeepSeek's 7168 x 2112 x 7168 projection (both ways round).
pub fn issue_shapes() -> Vec<GemmShape> {
    let mut v = Vec::new();
    for m in [1, 16, 64, 128, 256, 512, 1024] {
        for n in [4096, 8192] {
            for k in [4096, 8192] {
                v.push(GemmShape::new(m, n, k));
            }
        }
    }
    v.push(GemmShape::new(7168, 2112, 7168));
    v.push(GemmShape::new(2112, 7168, 7168));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn large_square_shapes_keep_the_default_tile() {
        let c = GemmConfig::choose(&GemmShape::new(8192, 8192, 8192), BLayout::KMajor, 132);
        assert_eq!((c.config.block_m(), c.config.block_n), (128, 256), "{c}");
    }

    #[test]
    fn decode_shapes_take_narrow_tiles_to_spread_over_the_sms() {
        // (128 x 64 is no candidate: the DSL GEMM refuses it, see `gemm::dsl::unsupported`.)
        // M = 1, N = 4096: 16 tiles of 256 columns would leave 116 SMs idle.
        let c = GemmConfig::choose(&GemmShape::new(1, 4096, 4096), BLayout::KMajor, 132);
        assert!(c.config.block_n <= 128, "{c}");
        assert!(c.tiles >= 64, "{c}: at least 64 CTAs busy");
    }

    proptest! {
        /// Whatever the shape, the choice is a valid candidate, the DSL GEMM implements it for
        /// K-major B, and no candidate has a smaller model time.
        #[test]
        fn the_choice_is_a_valid_candidate_with_the_least_model_time(
            m in 1u32..20000, n8 in 1u32..2000, k8 in 1u32..2000, sms in 1u32..200, nmajor: bool,
        ) {
            let layout = if nmajor { BLayout::NMajor } else { BLayout::KMajor };
            let shape = GemmShape::new(m, n8 * 8, k8 * 8);
            let c = GemmConfig::choose(&shape, layout, sms);
            prop_assert!(c.config.problem().is_none());
            prop_assert!(choice_candidates(layout).contains(&c.config));
            if !nmajor {
                prop_assert!(crate::gemm::dsl::unsupported(&c.config).is_none());
            }
            for other in choice_candidates(layout) {
                prop_assert!(c.estimate_us() <= score(other, &shape, sms).estimate_us() * 1.0001, "{c} vs {other:?}");
            }
            prop_assert!(c.waves >= 1 && c.tiles >= 1);
        }
    }
}
