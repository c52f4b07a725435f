//! The builder GEMM's configurations ([`GemmConfig`]) taken to the DSL GEMM
//! (`gallery::gemm_dsl`, whose own host side knows only its [`Tiles`]): the benchmarks, the
//! GPU tests and the candle op run either kernel from one configuration.

use super::{BLayout, GemmConfig};
use crate::gallery::gemm_dsl::{Tiles, CONSUMERS, EPI};
use phaser::Kernel;

/// Why the DSL GEMM does not implement `cfg`, if it does not: it is written for K-major B and
/// two consumer warpgroups (every other choice of [`GemmConfig`] it takes as `#[comptime]`).
pub fn unsupported(cfg: &GemmConfig) -> Option<String> {
    if cfg.b_layout != BLayout::KMajor {
        return Some("the DSL GEMM reads a K-major B (N x K); the N-major GEMM is the builder's".into());
    }
    if cfg.consumers != CONSUMERS {
        return Some(format!("the DSL GEMM has {CONSUMERS} consumer warpgroups, not {}", cfg.consumers));
    }
    // The epilogue alternates its two staging tiles within a tile and waits for the store
    // before last: with one sub-tile per warpgroup, the next tile's would overwrite the one
    // still being stored (the simulator reports the race).
    if (cfg.wg_m / 64) * (cfg.block_n / EPI) < 2 {
        return Some(format!(
            "wg_m = {} with block_n = {}: one {EPI} x {EPI} epilogue sub-tile per warpgroup; the DSL GEMM needs two",
            cfg.wg_m, cfg.block_n
        ));
    }
    cfg.problem()
}

/// The DSL kernel's configuration of `cfg` (which [`unsupported`] accepts).
pub fn tiles(cfg: &GemmConfig) -> Tiles {
    Tiles { block_n: cfg.block_n, wg_m: cfg.wg_m, stages: cfg.stages, cluster: cfg.cluster_m, group_m: cfg.group_m }
}

/// The DSL GEMM for `cfg` (built once per configuration and cached); a configuration it does
/// not implement is a kernel error that says why.
pub fn kernel(cfg: &GemmConfig) -> phaser::codegen::Result<Kernel> {
    if let Some(p) = unsupported(cfg) {
        let mut k = phaser::codegen::builder::KernelBuilder::new("gemm_dsl", phaser::Target::Sm90a);
        k.error(format!("GEMM configuration {}: {p}", cfg.kernel_name()));
        return k.finish();
    }
    tiles(cfg).kernel()
}

/// The gallery's configurations ([`Tiles::gallery`]) as builder configurations.
pub fn config(cluster: bool) -> GemmConfig {
    let t = Tiles::gallery(cluster);
    GemmConfig {
        block_n: t.block_n,
        wg_m: t.wg_m,
        consumers: CONSUMERS,
        stages: t.stages,
        cluster_m: t.cluster,
        group_m: t.group_m,
        ..GemmConfig::new(BLayout::KMajor)
    }
}
