//! Which [`GemmConfig`] runs a given GEMM shape: a heuristic that scores every candidate tile
//! shape with a two-term model (compute in waves of tiles over the SMs, and DRAM traffic at a
//! bandwidth that grows with the SMs kept busy and is bounded by the bytes their rings keep in
//! flight, Little's law) and keeps the cheapest, among [`choice_candidates`] and the decode
//! autotune's [`decode_candidates`] (64-row tiles, deeper rings, each way of reducing). The choice comes with
//! the numbers that made it, so it can be printed and explained.
//!
//! The compute term is a model of wave quantization and tile waste: the useful MMA work
//! (`2 M N K`) over what the SMs could do in the whole waves the work units take
//! ([`GemmChoice::efficiency`]), at each tile's own rate. N = 2112 (DeepSeek's projection) is
//! 8.25 tiles of 256 columns but 11 of 192: 0.87 of the SMs' MMA work useful against 0.93.
//!
//! The candidates are the configurations the builder GEMM implements for the layout and whose
//! epilogue the DSL GEMM shares (the DSL GEMM runs them too, but N-major B with a cluster):
//! two consumer warpgroups, tiles 128 x {128, 192, 256} and 256 x {64, 128}, 2- or 1-CTA clusters
//! (ties go to the multicast one), as many stages as shared memory holds (at most
//! [`MAX_STAGES`]); and where the DSL GEMM implements it (either layout; N-major B without a
//! cluster), three consumer warpgroups' 192 x {128, 192} tiles (M = 2112 is 11 rows of 192,
//! 16.5 of 128: cuBLAS's tile there), and split-K into [`SPLITS`] slices of K (also with
//! 128 x 64 tiles, which only split-K's epilogue allows), which pays for its f32 workspace
//! (written, then read by the reduction: `2 * 4 * M * N * split` bytes of DRAM) and the
//! reduction's launch. Every candidate is assembled by `examples/tests/gemm_ptxas.rs` and run
//! in the simulator by `examples/tests/sim_gemm_dsl.rs`, so whatever `choose` returns has been
//! built and checked.

use crate::gemm::{BLayout, GemmConfig, GemmShape, SplitReduce, BLOCK_K};
use std::fmt;

/// The deepest pipeline a candidate gets: deeper rings did not help in the stage sweeps.
pub const MAX_STAGES: u32 = 6;
/// The model's H200 figures: dense bf16 wgmma rate per SM (about 990 TFLOP/s over 132 SMs at
/// the sustained clock) and DRAM bandwidth (4.8 TB/s) once every SM streams.
const FLOPS_PER_SM: f64 = 7.5e12;
const DRAM_BYTES_PER_S: f64 = 4.8e12;
/// Slices of K the chooser tries (1: no split-K).
pub const SPLITS: [u32; 4] = [1, 2, 4, 8];
/// What split-K's second launch costs besides its DRAM traffic: a launch on the stream after
/// the GEMM (its ramp-up and the GEMM's drain), in microseconds.
/// (Run 22a times replayed graphs, where the second launch's ramp-up is about 1 us: k8 with
/// two launches ran 1.7 us ahead of k8 reduced by every slice at 1 x 4096 x 4096.)
const REDUCE_LAUNCH_US: f64 = 1.0;
/// What the reduction by every slice costs besides its DRAM traffic: a flag's release seen by
/// the other slices' acquire spins (a round trip through L2), in microseconds.
const FLAG_ROUND_TRIP_US: f64 = 1.0;
/// The bandwidth at which split-K's in-kernel fix-up reads the partials back (only the last
/// slice of each tile reads, after its mainloop): fitted to run 22a's decode times.
const FIXUP_BYTES_PER_S: f64 = 0.3e12;
/// How long a ring slot's bytes stay in flight per trip (TMA issue to the slot's release), in
/// microseconds: with [`DRAM_BYTES_PER_S`], Little's law for what the rings must hold to reach
/// the bandwidth (see [`score`]).
/// Fitted to run 22a's decode times (bench/gemm.md), not a DRAM latency datum: a ring slot
/// turns around only after its load lands, the consumer's wgmma reads it and the empty
/// barrier's release reaches the producer.
const RING_TURNAROUND_US: f64 = 6.0;
/// Relative mainloop efficiency of a tile shape: smaller N per wgmma issues more instructions
/// and re-reads A more often per flop (64-wide B tiles run at about 3/4 of the 256-wide rate).
fn tile_efficiency(block_m: u32, block_n: u32) -> f64 {
    match (block_m, block_n) {
        (128, 256) | (256, 128) => 1.0,
        // Fitted to run 23a (H100, bench/gemm.md "192-row tiles"): each tile's DSL / cuBLAS
        // over its `efficiency` at 2112 x 7168 x 7168 and 7168 x 2112 x 7168, against
        // 128 x 256's. 192 x 128: 1.00 and 0.98; 128 x 192: 0.85-1.06 (K-major, N-major; the
        // orientation whose tiles divide the shape is ahead); 192 x 192 (three stages, the ring
        // too short): 0.91 and 1.00 of a lower efficiency, 0.82x cuBLAS at both. (128 x 192
        // above 128 x 128's 0.9: the per-flop overhead `1 + c / N` with c = 32 puts N = 192
        // at 0.96 of N = 256.)
        (192, 128) | (128, 192) => 0.97,
        (192, 192) => 0.95,
        (128, 128) => 0.9,
        (256, 64) => 0.85,
        // One consumer warpgroup's m64 slab: the wgmma per flop of the 128-row tile of the
        // same N (run 22a: 64 x 128 ahead of 128 x 64 at M = 128, 256). 64 x 256 from run 23a:
        // 0.85 and 0.81 of 128 x 256's rate (at 2112 x 7168 x 7168 it reloads B 33 times).
        (64, 128) => 0.9,
        (64, 256) => 0.83,
        _ => 0.75,
    }
}

/// A chosen configuration and the model's numbers for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmChoice {
    pub config: GemmConfig,
    /// CTA tiles of the shape, and waves of its work units (a tile's K slice) over the SMs.
    pub tiles: u64,
    pub waves: u64,
    /// Wave quantization and tile waste: the shape's useful MMA work over what the GPU's SMs
    /// could do in `waves` whole waves of work units (each the tile's full `BM x BN` and the
    /// slowest slice's K blocks), i.e. useful / (tiles x tile work) x (fractional waves /
    /// whole waves) at the clusters it uses, idle SMs of an odd count included.
    pub efficiency: f64,
    /// The model's time, in microseconds: compute and DRAM terms of the GEMM (the larger one
    /// counts), and split-K's reduction launch after it (0 without split-K).
    pub compute_us: f64,
    pub memory_us: f64,
    pub reduce_us: f64,
    /// SMs (CTA slots) the tiles would keep busy without split-K.
    pub unsplit_busy: u64,
    pub sm_count: u32,
    /// M x N: the tiles' useful area.
    pub useful_area: u64,
}

impl GemmChoice {
    pub fn estimate_us(&self) -> f64 {
        self.compute_us.max(self.memory_us) + self.reduce_us
    }

    /// The share of the tiles' area past M or N (TMA's zero fill, multiplied all the same).
    /// [`GemmConfig::choose`] breaks a tie of the model's time by it: where waves and waste
    /// trade evenly in `efficiency`, the power cap does not. A padded MMA draws the power of a
    /// useful one; an SM idle in the last wave draws none and lets the busy ones clock higher.
    /// Run 23a: at 2112 x 7168 x 7168, 192 x 128 (no waste, 4.67 waves) 1.089x / 1.086x cuBLAS
    /// against 128 x 192 (3% waste, 4.89 waves) 0.928x / 1.029x; at 7168 x 2112 x 7168 the
    /// other way round, 0.968x / 0.968x against 0.991x / 1.015x (K-major / N-major B).
    pub fn tile_waste(&self) -> f64 {
        let c = &self.config;
        let area = self.tiles as f64 * c.block_m() as f64 * c.block_n as f64;
        1.0 - self.useful_area as f64 / area
    }
}

impl fmt::Display for GemmChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(
            f,
            "{} ({}x{} tiles, {} stages, cluster {}, split-K {}{}): ",
            c.kernel_name(),
            c.block_m(),
            c.block_n,
            c.stages,
            c.cluster_m,
            c.split_k,
            match (c.split_k, c.reduce) {
                (1, _) | (_, SplitReduce::TwoLaunch) => "",
                (_, SplitReduce::InKernel) => " reduced in the kernel",
                (_, SplitReduce::EverySlice) => " reduced by every slice",
            }
        )?;
        if c.split_k > 1 {
            write!(f, "{} tiles x {} K slices = {} work units", self.tiles, c.split_k, self.tiles * c.split_k as u64)?;
        } else {
            write!(f, "{} tiles", self.tiles)?;
        }
        write!(
            f,
            " in {} wave(s), {:.3} of the MMA work useful (waves x tile waste), {:.3} of the tiles' area past M or N (breaks ties), model {:.1} us compute / {:.1} us DRAM + {:.1} us reduction; ",
            self.waves,
            self.efficiency,
            self.tile_waste(),
            self.compute_us,
            self.memory_us,
            self.reduce_us
        )?;
        if c.split_k > 1 {
            write!(
                f,
                "split-K {} because {} tiles alone keep {} of {} SMs busy",
                c.split_k, self.tiles, self.unsplit_busy, self.sm_count
            )
        } else {
            write!(f, "no split-K ({} of {} SMs busy)", self.unsplit_busy, self.sm_count)
        }
    }
}

/// Every configuration [`GemmConfig::choose`] picks from, for `b_layout`: without split-K
/// first (both GEMMs), then each split of [`SPLITS`] the DSL GEMM implements.
pub fn choice_candidates(b_layout: BLayout) -> Vec<GemmConfig> {
    let mut v = Vec::new();
    for split_k in SPLITS {
        // (block_n, wg_m, consumers): the 192-row tiles (three consumer warpgroups) last, so a
        // tie of time and tile waste keeps the two-warpgroup tile; without split-K only (they make fewer tiles).
        let three = if split_k == 1 { &[(128, 64, 3), (192, 64, 3)][..] } else { &[] };
        let two = [(256, 64, 2), (192, 64, 2), (128, 128, 2), (128, 64, 2), (64, 128, 2), (64, 64, 2)];
        for &(block_n, wg_m, consumers) in two.iter().chain(three) {
            for cluster_m in [2, 1] {
                let base =
                    GemmConfig { block_n, wg_m, consumers, stages: 2, cluster_m, split_k, ..GemmConfig::new(b_layout) };
                let deepest =
                    (2..=MAX_STAGES).rev().map(|stages| GemmConfig { stages, ..base }).find(|c| c.problem().is_none());
                // What both GEMMs implement (they share the epilogue, whose rule the DSL GEMM
                // states, for either layout); what the builder GEMM has not (split-K, three
                // consumer warpgroups), where the DSL GEMM does.
                let implemented = |c: &GemmConfig| {
                    if crate::gemm::builder_unsupported(c).is_none() {
                        let as_kmajor = GemmConfig { b_layout: BLayout::KMajor, ..*c };
                        crate::gemm::dsl::unsupported(&as_kmajor).is_none()
                    } else {
                        crate::gemm::dsl::unsupported(c).is_none()
                    }
                };
                v.extend(deepest.filter(implemented).filter(model_fitted));
            }
        }
    }
    v
}

/// Slices of K the decode autotune (`bench_gemm --decode-variants`) tries.
pub const DECODE_SPLITS: [u32; 5] = [1, 2, 4, 8, 16];
/// The deepest ring the decode candidates get (what [`GemmConfig::problem`] allows): a
/// decode GEMM streams B, and more stages are more bytes in flight per SM.
pub const DECODE_MAX_STAGES: u32 = 8;

/// The configurations the decode autotune measures, for `b_layout` (with
/// [`choice_candidates`], what [`ChoiceCache`](crate::gemm_choice_cache::ChoiceCache) accepts
/// as a recorded choice): the DSL GEMM without a cluster, 128-row tiles (two consumer
/// warpgroups of one m64 slab) and 64-row tiles (one consumer warpgroup: no zero-filled half
/// at M <= 64, and more B stages in the same shared memory) with N in {32, 64, 128, 256}, the
/// deepest ring shared memory holds (at most [`DECODE_MAX_STAGES`]), split-K into
/// [`DECODE_SPLITS`] slices, each split every way of reducing ([`SplitReduce`]); and each
/// 64-row tile again with an A box of 16 rows (`a_box_rows`), for M up to 16. A split of more
/// slices than a shape's K blocks, a reduction by every slice over more than one wave, or an
/// A box of fewer rows than M, is left out per shape ([`can_run`]).
pub fn decode_candidates(b_layout: BLayout) -> Vec<GemmConfig> {
    // One A box height, to keep the autotune's candidates few: it covers M = 1 and 16.
    const DECODE_A_BOX_ROWS: u32 = 16;
    let mut v = Vec::new();
    for consumers in [2, 1] {
        for block_n in [crate::gemm::NARROW_BLOCK_N, 64, 128, 256] {
            for split_k in DECODE_SPLITS {
                let reduces: &[SplitReduce] = if split_k == 1 {
                    &[SplitReduce::TwoLaunch]
                } else {
                    &[SplitReduce::TwoLaunch, SplitReduce::InKernel, SplitReduce::EverySlice]
                };
                for &reduce in reduces {
                    let base = GemmConfig {
                        block_n,
                        wg_m: 64,
                        consumers,
                        cluster_m: 1,
                        split_k,
                        reduce,
                        ..GemmConfig::new(b_layout)
                    };
                    let deepest = (2..=DECODE_MAX_STAGES)
                        .rev()
                        .map(|stages| GemmConfig { stages, ..base })
                        .find(|c| c.problem().is_none() && crate::gemm::dsl::unsupported(c).is_none());
                    v.extend(deepest);
                    // The 64-row tile with an A box of DECODE_A_BOX_ROWS rows, for M up to
                    // that (`can_run`): no K block's A box has rows past M to zero-fill.
                    if consumers == 1 {
                        v.extend(deepest.map(|c| GemmConfig { a_box_rows: Some(DECODE_A_BOX_ROWS), ..c }));
                    }
                }
            }
        }
    }
    v
}

/// The configuration of kernel name `name` for `b_layout` among the model's, the decode
/// autotune's and the sweep's candidates (what `bench_gemm --config-name` takes).
pub fn named_config(name: &str, b_layout: BLayout) -> Option<GemmConfig> {
    choice_candidates(b_layout)
        .into_iter()
        .chain(decode_candidates(b_layout))
        .chain(crate::gemm::sweep_configs(b_layout))
        .find(|c| c.kernel_name() == name)
}

/// What [`GemmConfig::choose`] scores for `b_layout`: [`choice_candidates`] and the
/// [`decode_candidates`] the model's rates were fitted to (those the decode autotune measures
/// and `gemm_ptxas` / `sim_gemm_dsl` assemble and simulate, for either layout).
pub fn model_candidates(b_layout: BLayout) -> Vec<GemmConfig> {
    let mut v = choice_candidates(b_layout);
    v.extend(decode_candidates(b_layout).into_iter().filter(model_fitted));
    v
}

/// Whether the model's tile rates were fitted to `c`'s tile: not the narrow tiles of session 39
/// (32 columns; one epilogue sub-tile per warpgroup without split-K: 64 x 64, 128 x 64), nor
/// the A boxes below the tile's of session 40, which the decode autotune measures
/// (`decode_candidates`) instead.
fn model_fitted(c: &GemmConfig) -> bool {
    c.block_n >= 64 && (c.split_k > 1 || c.wg_m / 64 * c.block_n / 64 >= 2) && c.a_box_rows.is_none()
}

impl GemmConfig {
    /// The candidate the model finds fastest for `shape` on `sm_count` SMs among those that
    /// can run it (a split needs a K block per slice; ties go to the earlier: no or fewer
    /// slices, the larger tile).
    pub fn choose(shape: &GemmShape, b_layout: BLayout, sm_count: u32) -> GemmChoice {
        model_candidates(b_layout)
            .into_iter()
            .filter(|c| can_run(c, shape, sm_count))
            .map(|c| score(c, shape, sm_count))
            .fold(None, |best: Option<GemmChoice>, c| match best {
                Some(b) if b.estimate_us() < c.estimate_us() * 0.9999 => Some(b),
                Some(b) if b.estimate_us() <= c.estimate_us() * 1.0001 && b.tile_waste() <= c.tile_waste() => Some(b),
                _ => Some(c),
            })
            .expect("choice_candidates is never empty")
    }
}

/// Whether candidate `c` can run `shape` on `sm_count` SMs: a split needs a K block per
/// slice, a reduction by every slice one wave, and an A box below the tile's M at most its
/// rows (`gemm::dsl::launch_problem`).
pub fn can_run(c: &GemmConfig, shape: &GemmShape, sm_count: u32) -> bool {
    (c.split_k == 1 && c.a_box_rows.is_none()) || crate::gemm::dsl::launch_problem(c, shape, sm_count).is_none()
}

/// The model's numbers for `config` at `shape`.
pub fn score(config: GemmConfig, shape: &GemmShape, sm_count: u32) -> GemmChoice {
    let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
    let (bm, bn, cm) = (config.block_m() as u64, config.block_n as u64, config.cluster_m as u64);
    // Clusters walk cluster-tiles; a cluster row past M still occupies its CTA.
    let split = config.split_k.max(1) as u64;
    let cluster_tiles = m.div_ceil(bm * cm) * n.div_ceil(bn);
    let units = cluster_tiles * split;
    let slots = (sm_count as u64 / cm).max(1);
    let waves = units.div_ceil(slots);
    // The slowest unit: the last slice, which also takes the remainder of the K blocks.
    let k_blocks = k.div_ceil(BLOCK_K as u64);
    let unit_blocks = k_blocks - (split - 1) * (k_blocks / split).min(k_blocks);
    // What the SMs could do in those waves against what the shape needs: a unit of a cluster
    // occupies the whole tile for the slowest slice's K blocks in every wave (on fewer SMs
    // than a cluster has CTAs, its CTAs are counted as SMs).
    let unit_work = (bm * bn * unit_blocks * BLOCK_K as u64) as f64;
    let sms = (sm_count as u64).max(slots * cm) as f64;
    let efficiency = (m * n * k) as f64 / (waves as f64 * sms * unit_work);
    // Time: the useful flops at every SM's rate, the tile's own rate, and that efficiency
    // (= waves x the slowest unit's flops at the tile's rate).
    let rate = FLOPS_PER_SM * sms * tile_efficiency(bm as u32, bn as u32);
    let compute_us = shape.flops() / (rate * efficiency) * 1e6;
    // DRAM: A once per tile column it meets in L2 is approximated by A and B read once, plus C
    // (bf16) or, with split-K, the f32 partials written; the bandwidth a kernel reaches grows
    // with the SMs it keeps loading.
    let active = (units.min(slots) * cm) as f64 / sm_count as f64;
    let out_bytes = if split > 1 { 4 * m * n * split } else { 2 * m * n };
    let bytes = (2 * (m * k + n * k) + out_bytes) as f64;
    // The rings bound that bandwidth too (Little's law): each busy CTA holds at most `stages`
    // loads in flight, each its A rows (the rows past M are TMA's zero fill, no DRAM) and its
    // share of the B tile (multicast splits it over the cluster), so the busy CTAs stream at
    // most their bytes in flight per DRAM latency.
    let busy_ctas = (units.min(slots) * cm) as f64;
    let stage_bytes = (2 * BLOCK_K as u64 * (bm.min(m) + bn / cm)) as f64;
    let in_flight = busy_ctas * config.stages as f64 * stage_bytes;
    let bandwidth = (DRAM_BYTES_PER_S * active.min(1.0)).min(in_flight / (RING_TURNAROUND_US * 1e-6));
    let memory_us = bytes / bandwidth * 1e6;
    // Split-K's reduction reads the partials back and writes C, at the full bandwidth.
    // In the kernel (the fix-up) there is no second launch: the last slice reads the other
    // slices' partials back, after its own mainloop.
    // Reduced by every slice: each reads its share of every slice's partials back and writes
    // its share of C, all units at once (one wave), after a flag's round trip.
    let reduce_us = match (split, config.reduce) {
        (1, _) => 0.0,
        (_, SplitReduce::TwoLaunch) => {
            REDUCE_LAUNCH_US + (4 * m * n * split + 2 * m * n) as f64 / DRAM_BYTES_PER_S * 1e6
        }
        // The last slice takes the other slices' partials one by one, each after its flag's
        // round trip, at the fix-up's own bandwidth (run 22a: over the two-launch reduction, 7
        // slices of M = 1 cost about 10 us, 1 slice of 128 x 4096 about 7 us).
        (_, SplitReduce::InKernel) => {
            (split - 1) as f64 * FLAG_ROUND_TRIP_US + (4 * m * n * (split - 1)) as f64 / FIXUP_BYTES_PER_S * 1e6
        }
        (_, SplitReduce::EverySlice) => {
            FLAG_ROUND_TRIP_US + (4 * m * n * split + 2 * m * n) as f64 / (DRAM_BYTES_PER_S * active.min(1.0)) * 1e6
        }
    };
    GemmChoice {
        config,
        tiles: cluster_tiles * cm,
        waves,
        efficiency,
        compute_us,
        memory_us,
        reduce_us,
        unsplit_busy: cluster_tiles.min(slots) * cm,
        sm_count,
        useful_area: m * n,
    }
}

/// The decode shapes `bench_gemm --decode-variants` autotunes: M in {1, 16, 64, 128, 256}
/// against N, K in {4096, 8192}.
pub fn decode_shapes() -> Vec<GemmShape> {
    let mut v = Vec::new();
    for m in [1, 16, 64, 128, 256] {
        for n in [4096, 8192] {
            for k in [4096, 8192] {
                v.push(GemmShape::new(m, n, k));
            }
        }
    }
    v
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

    /// Run 22a (bench/gemm.md, "#### Run 22a"; NVIDIA H200, `bench_gemm --decode-variants`,
    /// K-major B): per decode shape, every candidate the autotune timed within 5% of the
    /// shape's best, fastest first, in microseconds per launch.
    const RUN_22A_WITHIN_5_PERCENT: &[((u32, u32, u32), &[(&str, f64)])] = &[
        (
            (1, 4096, 4096),
            &[("phaser_gemm_64x256x64_s5_c1_g8_k8_kmajor", 11.2), ("phaser_gemm_64x256x64_s5_c1_g8_k16_kmajor", 11.7)],
        ),
        (
            (1, 4096, 8192),
            &[
                ("phaser_gemm_64x256x64_s5_c1_g8_k4_kmajor", 22.4),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 23.2),
                ("phaser_gemm_64x256x64_s5_c1_g8_k4e_kmajor", 23.2),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4e_kmajor", 23.3),
            ],
        ),
        (
            (1, 8192, 4096),
            &[
                ("phaser_gemm_64x256x64_s5_c1_g8_k2e_kmajor", 22.7),
                ("phaser_gemm_64x256x64_s5_c1_g8_k2_kmajor", 22.9),
                ("phaser_gemm_64x256x64_s5_c1_g8_k4_kmajor", 23.3),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2e_kmajor", 23.5),
                ("phaser_gemm_64x256x64_s5_c1_g8_k4e_kmajor", 23.5),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 23.5),
                ("phaser_gemm_64x256x64_s5_c1_g8_k8_kmajor", 23.7),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 23.8),
            ],
        ),
        (
            (1, 8192, 8192),
            &[("phaser_gemm_64x256x64_s5_c1_g8_k4e_kmajor", 39.9), ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 41.8)],
        ),
        (
            (16, 4096, 4096),
            &[
                ("phaser_gemm_64x256x64_s5_c1_g8_k8_kmajor", 11.1),
                ("phaser_gemm_64x256x64_s5_c1_g8_k4_kmajor", 11.4),
                ("phaser_gemm_64x128x64_s8_c1_g8_k8_kmajor", 11.5),
            ],
        ),
        (
            (16, 4096, 8192),
            &[
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 23.2),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4e_kmajor", 23.6),
                ("phaser_gemm_64x256x64_s5_c1_g8_k8_kmajor", 23.7),
            ],
        ),
        (
            (16, 8192, 4096),
            &[
                ("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 22.6),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 23.2),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 23.3),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2e_kmajor", 23.4),
            ],
        ),
        (
            (16, 8192, 8192),
            &[
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 41.1),
                ("phaser_gemm_64x256x64_s5_c1_g8_k4e_kmajor", 41.3),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2e_kmajor", 41.6),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 42.9),
                ("phaser_gemm_128x256x64_s4_c1_g8_k4e_kmajor", 43.1),
            ],
        ),
        (
            (64, 4096, 4096),
            &[
                ("phaser_gemm_64x64x64_s8_c1_g8_k2_kmajor", 11.2),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 11.2),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 11.3),
            ],
        ),
        (
            (64, 4096, 8192),
            &[
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 24.1),
                ("phaser_gemm_64x64x64_s8_c1_g8_k2_kmajor", 24.4),
                ("phaser_gemm_64x64x64_s8_c1_g8_k4_kmajor", 24.4),
                ("phaser_gemm_64x128x64_s8_c1_g8_k4_kmajor", 25.0),
            ],
        ),
        ((64, 8192, 4096), &[("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 21.3)]),
        (
            (64, 8192, 8192),
            &[
                ("phaser_gemm_64x64x64_s8_c1_g8_k2_kmajor", 42.2),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 42.8),
                ("phaser_gemm_64x64x64_s8_c1_g8_k4_kmajor", 44.0),
            ],
        ),
        (
            (128, 4096, 4096),
            &[("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 12.8), ("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 13.0)],
        ),
        (
            (128, 4096, 8192),
            &[
                ("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 26.1),
                ("phaser_gemm_64x128x64_s8_c1_g8_k2_kmajor", 26.5),
                ("phaser_gemm_128x64x64_s6_c1_g8_k2_kmajor", 26.8),
                ("phaser_gemm_128x64x64_s8_c1_g8_k2_kmajor", 27.0),
            ],
        ),
        ((128, 8192, 4096), &[("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 22.3)]),
        ((128, 8192, 8192), &[("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 39.9)]),
        ((256, 4096, 4096), &[("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 14.7)]),
        ((256, 4096, 8192), &[("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 31.1)]),
        (
            (256, 8192, 4096),
            &[
                ("phaser_gemm_128x128x64_s6_c1_g8_kmajor", 30.5),
                ("phaser_gemm_128x128x64_s6_c2_g8_kmajor", 30.6),
                ("phaser_gemm_64x256x64_s5_c1_g8_kmajor", 31.0),
                ("phaser_gemm_64x128x64_s8_c1_g8_kmajor", 31.8),
            ],
        ),
        (
            (256, 8192, 8192),
            &[
                ("phaser_gemm_128x128x64_s6_c2_g8_kmajor", 57.2),
                ("phaser_gemm_128x128x64_s6_c1_g8_kmajor", 57.9),
                ("phaser_gemm_64x256x64_s5_c1_g8_kmajor", 59.7),
            ],
        ),
    ];

    #[test]
    fn at_the_decode_shapes_the_model_picks_what_the_h200_measured_within_5_percent() {
        // Where the model still misses (its pick outside 5% of run 22a's best, or not timed
        // there): M = 1, 16 at N = 8192 or K = 8192 (a split of 4-16 against run 22a's 2-4),
        // 64 x 8192 x 4096 (split 2 against none) and 128 x 4096 x 4096 (128 x 64 against
        // 64 x 128 tiles, 5.5% off). Every other shape is held to the measured best.
        const STILL_MISSED: [(u32, u32, u32); 6] =
            [(1, 4096, 8192), (1, 8192, 8192), (16, 8192, 4096), (16, 8192, 8192), (64, 8192, 4096), (128, 4096, 4096)];
        let mut misses = Vec::new();
        for &((m, n, k), near_best) in RUN_22A_WITHIN_5_PERCENT.iter().filter(|(s, _)| !STILL_MISSED.contains(s)) {
            let shape = GemmShape::new(m, n, k);
            let c = GemmConfig::choose(&shape, BLayout::KMajor, 132);
            let best = near_best[0].1;
            match near_best.iter().find(|(name, _)| *name == c.config.kernel_name()) {
                Some((_, us)) => assert!(*us <= best * 1.05, "{shape}: {us} us against the best {best} us"),
                None => misses.push(format!(
                    "{shape}: the model picks {c}; run 22a measured within 5% of the best ({best} us): {near_best:?}"
                )),
            }
        }
        assert!(
            misses.is_empty(),
            "{} of {} decode shapes:\n{}",
            misses.len(),
            RUN_22A_WITHIN_5_PERCENT.len() - STILL_MISSED.len(),
            misses.join("\n")
        );
    }

    #[test]
    fn large_square_shapes_keep_the_default_tile() {
        // 128 x 256 tiles, 2-CTA clusters, no split: the decode terms (the rings' bytes in
        // flight, the fix-up) leave a shape that fills the GPU alone.
        for size in [4096, 8192] {
            let c = GemmConfig::choose(&GemmShape::new(size, size, size), BLayout::KMajor, 132);
            assert_eq!(c.config, candidate(BLayout::KMajor, 256, 2), "{c}");
            assert_eq!((c.config.block_m(), c.config.block_n, c.config.split_k), (128, 256, 1), "{c}");
        }
    }

    /// The candidate without split-K of `block_n` x `wg_m` tiles and `cluster_m` CTAs.
    fn candidate(layout: BLayout, block_n: u32, cluster_m: u32) -> GemmConfig {
        choice_candidates(layout)
            .into_iter()
            .find(|c| c.split_k == 1 && c.block_n == block_n && c.wg_m == 64 && c.cluster_m == cluster_m)
            .unwrap_or_else(|| panic!("a {block_n}-wide candidate with cluster {cluster_m}"))
    }

    #[test]
    fn wave_quantization_and_tile_waste_pick_a_width_that_divides_n() {
        // DeepSeek's 7168 x 2112 x 7168: 128 x 256 tiles are 56 x 9 = 504 (the last column
        // 64 wide of 256) in 3.82 waves of 132 SMs, so 4: 15138816 / (4 x 132 x 128 x 256)
        // of the MMA work is useful. 128 x 192 tiles are 56 x 11 = 616, no waste, in 4.67
        // waves, so 5: 15138816 / (5 x 132 x 128 x 192).
        let shape = GemmShape::new(7168, 2112, 7168);
        for layout in [BLayout::KMajor, BLayout::NMajor] {
            let c = GemmConfig::choose(&shape, layout, 132);
            assert_eq!(shape.n % c.config.block_n, 0, "{c}: no partial column of tiles");
            assert_eq!((c.config.block_n, c.tiles, c.waves), (192, 616, 5), "{c}");
            assert!((c.efficiency - 15138816.0 / (5.0 * 132.0 * 128.0 * 192.0)).abs() < 1e-12, "{c}");
            let wide = score(candidate(layout, 256, if layout == BLayout::KMajor { 2 } else { 1 }), &shape, 132);
            assert_eq!((wide.tiles, wide.waves), (504, 4), "{wide}");
            assert!((wide.efficiency - 15138816.0 / (4.0 * 132.0 * 128.0 * 256.0)).abs() < 1e-12, "{wide}");
            assert!(c.estimate_us() < wide.estimate_us(), "{c} vs {wide}");
            assert!(c.to_string().contains("5 wave(s), 0.933 of the MMA work useful (waves x tile waste)"), "{c}");
        }
        // At 4096^3 N is 16 tiles of 256 but 21.3 of 192: today's 128 x 256 tiles stay.
        let square = GemmShape::new(4096, 4096, 4096);
        let c = GemmConfig::choose(&square, BLayout::KMajor, 132);
        assert_eq!(c.config, candidate(BLayout::KMajor, 256, 2), "{c}");
        let narrow = score(candidate(BLayout::KMajor, 192, 2), &square, 132);
        assert!(narrow.efficiency < c.efficiency, "{narrow} vs {c}");
    }

    #[test]
    fn at_m_2112_the_192_row_tile_without_tile_waste_is_chosen() {
        // 2112 x 7168 x 7168 (run 22d's ncu: 0.967x cuBLAS, whose tile is 192 rows): 128 x 256
        // tiles are 17 x 28 = 476 (the last row 64 of 128) in 3.6 waves, so 4: 15138816 /
        // (4 x 132 x 128 x 256) of the MMA work useful. 192 x 128 tiles are 11 x 56 = 616, no
        // waste, in 4.67 waves, so 5: 15138816 / (5 x 132 x 192 x 128); 192 x 192 ones leave
        // a partial column (37.3) in 3.2 waves, so 4. Without a cluster: a 2-CTA cluster's
        // 384 rows are 5.5 of M.
        let shape = GemmShape::new(2112, 7168, 7168);
        let tile_192 = |layout: BLayout| {
            let c = choice_candidates(layout)
                .into_iter()
                .find(|c| c.consumers == 3 && c.block_n == 128 && c.cluster_m == 1 && c.split_k == 1)
                .expect("a 192 x 128 candidate");
            score(c, &shape, 132)
        };
        for layout in [BLayout::KMajor, BLayout::NMajor] {
            let c = tile_192(layout);
            assert_eq!((c.config.block_m(), c.config.stages, c.tiles, c.waves), (192, 4, 616, 5), "{c}");
            assert!((c.efficiency - 15138816.0 / (5.0 * 132.0 * 192.0 * 128.0)).abs() < 1e-12, "{c}");
            assert_eq!(crate::gemm::dsl::unsupported(&c.config), None, "{c}");
            let text = c.to_string();
            assert!(text.starts_with("phaser_gemm_192x128x64_s4_c1_g8_"), "{text}");
            assert!(
                text.contains("(192x128 tiles, 4 stages, cluster 1, split-K 1): 616 tiles in 5 wave(s), 0.933"),
                "{text}"
            );
            for cluster in [2, 1] {
                let wide = score(candidate(layout, 256, cluster), &shape, 132);
                assert!((wide.efficiency - 15138816.0 / (4.0 * 132.0 * 128.0 * 256.0)).abs() < 1e-12, "{wide}");
                assert!(c.estimate_us() < wide.estimate_us(), "{c} vs {wide}");
            }
        }
        // Both layouts choose it (run 23a, H100: 1.089x / 1.086x cuBLAS, the best measured
        // there). 128 x 192 c1 (17 x 38 = 646, also 5 waves of the same tile area at the same
        // rate) ties it in the model's time, and the tie goes to the tile without waste; the
        // decode candidates' 64 x 256 (33 rows of 64, no waste, 7 waves, at its measured rate)
        // is behind.
        for layout in [BLayout::KMajor, BLayout::NMajor] {
            let chosen = GemmConfig::choose(&shape, layout, 132);
            assert_eq!(chosen, tile_192(layout), "{chosen}");
            assert_eq!(chosen.tile_waste(), 0.0, "{chosen}");
            let wide = choice_candidates(layout)
                .into_iter()
                .find(|c| c.consumers == 2 && c.block_n == 192 && c.cluster_m == 1 && c.split_k == 1)
                .map(|c| score(c, &shape, 132))
                .expect("a 128 x 192 candidate");
            assert_eq!((wide.tiles, wide.waves), (646, 5), "{wide}");
            assert_eq!(wide.estimate_us(), chosen.estimate_us(), "{wide} ties {chosen}");
            assert!(
                chosen.to_string().contains(
                    "0.933 of the MMA work useful (waves x tile waste), 0.000 of the tiles' area past M or N"
                ),
                "{chosen}"
            );
            assert!(wide.to_string().contains(", 0.046 of the tiles' area past M or N"), "{wide}");
            // 16.5 rows of 128 and 37.3 columns of 192.
            assert!(
                (wide.tile_waste() - (1.0 - 2112.0 * 7168.0 / (17.0 * 128.0 * 38.0 * 192.0))).abs() < 1e-12,
                "{wide}"
            );
        }
        let narrow = decode_candidates(BLayout::KMajor)
            .into_iter()
            .find(|c| c.consumers == 1 && c.block_n == 256 && c.split_k == 1)
            .map(|c| score(c, &shape, 132))
            .expect("a 64 x 256 candidate");
        assert_eq!((narrow.tiles, narrow.efficiency), (33 * 28, 1.0), "{narrow}");
        assert!(narrow.estimate_us() > tile_192(BLayout::KMajor).estimate_us(), "{narrow}");
    }

    #[test]
    fn every_config_name_of_the_gpu_run_names_a_candidate() {
        // A name `bench_gemm --config-name` does not know ends the GPU step with exit 2, and
        // one the DSL GEMM refuses ends a step that times the DSL GEMM (`--impl dsl`, or
        // `decode_ncu.sh`) the same way: minutes of a device run, before either is seen.
        let script = include_str!("../../.ci/gpu-run.sh");
        let mut names = Vec::new();
        // One command per line, its continuation lines joined.
        for command in script.replace("\\\n", " ").lines() {
            let dsl = command.contains("--impl dsl") || command.contains("decode_ncu.sh");
            for name in command
                .split(|c: char| c.is_whitespace() || c == ',' || c == '=')
                .filter(|w| w.starts_with("phaser_gemm_"))
            {
                let layout = if name.ends_with("_nmajor") { BLayout::NMajor } else { BLayout::KMajor };
                let cfg = named_config(name, layout)
                    .unwrap_or_else(|| panic!("{name}: no {layout:?} candidate of that name"));
                if dsl {
                    assert_eq!(
                        crate::gemm::dsl::unsupported(&cfg),
                        None,
                        "{name}: the DSL GEMM refuses it, in `{command}`"
                    );
                }
                names.push(name.to_string());
            }
        }
        assert!(names.len() >= 16 && names.iter().any(|n| n.starts_with("phaser_gemm_192x")), "{names:?}");
    }

    #[test]
    fn decode_shapes_take_narrow_tiles_to_spread_over_the_sms() {
        // (128 x 64 is no candidate: the DSL GEMM refuses it, see `gemm::dsl::unsupported`.)
        // M = 1, N = 4096: 16 tiles of 256 columns alone would leave 116 SMs idle; narrow
        // tiles or slices of K put at least 64 SMs on the stream of B (run 22a's best:
        // 64 x 256 tiles in 8 slices).
        let c = GemmConfig::choose(&GemmShape::new(1, 4096, 4096), BLayout::KMajor, 132);
        assert!(c.tiles * c.config.split_k as u64 >= 64, "{c}: at least 64 CTAs busy");
    }

    #[test]
    fn decode_shapes_split_k_and_say_why() {
        // M = 64, N = K = 4096: 32 tiles of 128 x 128 keep 32 of 132 SMs busy; the stream of
        // B is the bound, and split-K puts every SM on it.
        let c = GemmConfig::choose(&GemmShape::new(64, 4096, 4096), BLayout::KMajor, 132);
        assert!(c.config.split_k > 1, "{c}");
        assert!(c.tiles * c.config.split_k as u64 > 64, "{c}");
        let text = c.to_string();
        assert!(
            text.contains(&format!(
                "split-K {} because {} tiles alone keep {} of 132 SMs busy",
                c.config.split_k, c.tiles, c.unsplit_busy
            )),
            "{text}"
        );
        // Large squares fill the GPU without it.
        let big = GemmConfig::choose(&GemmShape::new(4096, 4096, 4096), BLayout::KMajor, 132);
        assert_eq!(big.config.split_k, 1, "{big}");
        assert!(big.to_string().ends_with(&format!("; no split-K ({} of 132 SMs busy)", big.unsplit_busy)), "{big}");
        // 128 x 64 tiles only under split-K (the staging epilogue needs two sub-tiles).
        for layout in [BLayout::KMajor, BLayout::NMajor] {
            let narrow: Vec<GemmConfig> =
                choice_candidates(layout).into_iter().filter(|c| c.block_m() == 128 && c.block_n == 64).collect();
            assert!(!narrow.is_empty() && narrow.iter().all(|c| c.split_k > 1), "{layout:?}: {narrow:?}");
        }
        // N-major B splits K too, in the DSL GEMM, which reads it without a cluster.
        let nmajor = GemmConfig::choose(&GemmShape::new(64, 4096, 4096), BLayout::NMajor, 132);
        assert!(nmajor.config.split_k > 1 && nmajor.config.cluster_m == 1, "{nmajor}");
        let split_nmajor: Vec<GemmConfig> =
            choice_candidates(BLayout::NMajor).into_iter().filter(|c| c.split_k > 1).collect();
        assert!(!split_nmajor.is_empty() && split_nmajor.iter().all(|c| c.cluster_m == 1), "{split_nmajor:?}");
    }

    #[test]
    fn the_workspace_and_the_reduction_are_paid_for() {
        let shape = GemmShape::new(64, 4096, 4096);
        let base = GemmConfig { split_k: 1, stages: 4, ..GemmConfig::new(BLayout::KMajor) };
        let one = score(base, &shape, 132);
        let four = score(GemmConfig { split_k: 4, ..base }, &shape, 132);
        assert_eq!(one.reduce_us, 0.0);
        // Partials of 4 x 64 x 4096 f32 and C read back, plus the launch.
        let want = REDUCE_LAUNCH_US + (4.0 * 64.0 * 4096.0 * 4.0 + 2.0 * 64.0 * 4096.0) / DRAM_BYTES_PER_S * 1e6;
        assert!((four.reduce_us - want).abs() < 1e-9, "{four}");
        // A quarter of K per unit: the compute term shrinks 4x at the same number of waves.
        assert_eq!((one.waves, four.waves), (1, 1));
        assert!((four.compute_us * 4.0 - one.compute_us).abs() < 1e-9 * one.compute_us, "{one} / {four}");
    }

    proptest! {
        /// Whatever the shape, the choice can be launched: the DSL GEMM (split-K or the
        /// 192-row tile, either layout) or both GEMMs run its configuration, a split leaves a K block to every
        /// slice, and the grid it launches is within the SMs.
        #[test]
        fn the_choice_is_always_launchable(
            m in 1u32..20000, n8 in 1u32..2000, k8 in 1u32..2000, sms in 1u32..200, nmajor: bool,
        ) {
            let layout = if nmajor { BLayout::NMajor } else { BLayout::KMajor };
            let shape = GemmShape::new(m, n8 * 8, k8 * 8);
            let c = GemmConfig::choose(&shape, layout, sms);
            if crate::gemm::builder_unsupported(&c.config).is_some() {
                prop_assert_eq!(crate::gemm::dsl::shape_problem(&c.config, &shape), None);
                prop_assert!(crate::gemm::dsl::kernels(&c.config).is_ok(), "{}", c);
            } else {
                prop_assert_eq!(crate::gemm::builder_unsupported(&c.config), None);
            }
            let grid = crate::gemm::dsl::tiles(&c.config).grid(shape.m, shape.n, sms);
            prop_assert!(grid >= 1 && grid <= sms.max(c.config.cluster_m), "grid {} on {} SMs", grid, sms);
        }
    }

    proptest! {
        /// The model does not see B's layout but through the candidates (N-major B has no
        /// cluster in the DSL GEMM, and no 32-column tile): wherever K-major B's choice is one
        /// N-major B has too, N-major B's choice is that configuration. Both layouts' choices
        /// agree at every decode shape (M in 1..=256), where the clusters do not win.
        #[test]
        fn the_layouts_choose_alike_where_they_have_the_same_candidates(
            m in 1u32..20000, n8 in 1u32..2000, k8 in 1u32..2000, sms in 1u32..200,
        ) {
            let shape = GemmShape::new(m, n8 * 8, k8 * 8);
            let k = GemmConfig::choose(&shape, BLayout::KMajor, sms);
            let n = GemmConfig::choose(&shape, BLayout::NMajor, sms);
            let as_n = GemmConfig { b_layout: BLayout::NMajor, ..k.config };
            if model_candidates(BLayout::NMajor).contains(&as_n) {
                prop_assert_eq!(n.config, as_n, "{} against {}", n, k);
            }
        }
    }

    proptest! {
        /// Any A box height on any tile either is refused by name (by the DSL GEMM, and by the
        /// builder GEMM, which has none) or is one of `A_BOX_ROWS` on a 64-row tile; then a
        /// shape is refused, naming the box, exactly where M exceeds it, and the kernel builds.
        #[test]
        fn any_a_box_height_is_refused_by_name_or_runs_up_to_its_rows(
            rows in 0u32..300, consumers in 1u32..4, m in 1u32..200, nmajor: bool,
        ) {
            use crate::gallery::gemm_dsl::A_BOX_ROWS;
            let layout = if nmajor { BLayout::NMajor } else { BLayout::KMajor };
            let base = GemmConfig { consumers, block_n: 128, cluster_m: 1, stages: 4, ..GemmConfig::new(layout) };
            let cfg = GemmConfig { a_box_rows: Some(rows), ..base };
            prop_assert!(crate::gemm::builder_unsupported(&cfg).is_some());
            let valid = A_BOX_ROWS.contains(&rows) && cfg.block_m() == 64;
            match crate::gemm::dsl::unsupported(&cfg) {
                Some(why) => {
                    prop_assert!(!valid, "{}: {}", cfg.kernel_name(), why);
                    prop_assert!(why.contains(&format!("an A box of {rows} rows")), "{}", why);
                    prop_assert!(crate::gemm::dsl::tiles(&cfg).kernel().is_err());
                }
                None => {
                    prop_assert!(valid, "{}", cfg.kernel_name());
                    let shape = GemmShape::new(m, 256, 256);
                    let why = crate::gemm::dsl::shape_problem(&cfg, &shape);
                    prop_assert_eq!(why.is_some(), m > rows, "{:?}", why);
                }
            }
        }
    }

    #[test]
    fn every_a_box_height_builds_on_the_64_row_tile() {
        for rows in crate::gallery::gemm_dsl::A_BOX_ROWS {
            let cfg = GemmConfig {
                consumers: 1,
                block_n: 128,
                cluster_m: 1,
                stages: 4,
                a_box_rows: Some(rows),
                ..GemmConfig::new(BLayout::KMajor)
            };
            assert!(crate::gemm::dsl::kernels(&cfg).is_ok(), "{}", cfg.kernel_name());
        }
    }

    #[test]
    fn at_every_decode_shape_n_major_b_takes_k_major_bs_choice() {
        for shape in decode_shapes() {
            let k = GemmConfig::choose(&shape, BLayout::KMajor, 132);
            let n = GemmConfig::choose(&shape, BLayout::NMajor, 132);
            assert_eq!(n.config, GemmConfig { b_layout: BLayout::NMajor, ..k.config }, "{shape}: {n} against {k}");
        }
    }

    proptest! {
        /// Whatever the shape, the choice is a valid candidate, the DSL GEMM implements it
        /// (N-major B with a cluster: the builder GEMM does), and no candidate has a smaller
        /// model time.
        #[test]
        fn the_choice_is_a_valid_candidate_with_the_least_model_time(
            m in 1u32..20000, n8 in 1u32..2000, k8 in 1u32..2000, sms in 1u32..200, nmajor: bool,
        ) {
            let layout = if nmajor { BLayout::NMajor } else { BLayout::KMajor };
            let shape = GemmShape::new(m, n8 * 8, k8 * 8);
            let c = GemmConfig::choose(&shape, layout, sms);
            prop_assert!(c.config.problem().is_none());
            let candidates = model_candidates(layout);
            prop_assert!(candidates.contains(&c.config));
            if !nmajor || c.config.cluster_m == 1 {
                prop_assert!(crate::gemm::dsl::unsupported(&c.config).is_none(), "{}", c);
            } else {
                prop_assert!(crate::gemm::builder_unsupported(&c.config).is_none(), "{}", c);
            }
            // Every candidate that can run the shape scores no better (a split of more slices
            // than K has blocks cannot run it).
            for other in candidates {
                if !can_run(&other, &shape, sms) {
                    continue;
                }
                prop_assert!(c.estimate_us() <= score(other, &shape, sms).estimate_us() * 1.0001, "{c} vs {other:?}");
            }
            prop_assert!(c.waves >= 1 && c.tiles >= 1);
            prop_assert!(c.efficiency > 0.0 && c.efficiency <= 1.0 + 1e-12, "{}", c);
            prop_assert!(c.reduce_us == 0.0 || c.config.split_k > 1);
        }
    }
}
