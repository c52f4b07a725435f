//! Launch configuration, and the checks every backend runs before a launch: the target, the
//! launch shape, the shared memory.

use crate::error::{Result, RuntimeError};
use crate::watchdog::Watchdog;
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::Kernel;

/// Grid, block, dynamic shared memory, programmatic dependent launch, the wait watchdog and
/// device timing of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// Programmatic dependent launch (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`,
    /// sm_90): this launch may start before the previous one on the stream finished, once
    /// every CTA of that one executed `griddepcontrol.launch_dependents` (or exited); its
    /// `griddepcontrol.wait` waits for the previous grid's completion and memory. The simulator
    /// runs launches in order, so there `griddepcontrol.wait` never waits; instead it checks
    /// that no thread touches global bytes the previous launch wrote (or writes bytes it read)
    /// before that thread's `griddepcontrol.wait` (`Category::EarlyDependentAccess`).
    pub programmatic_dependent_launch: bool,
    /// This launch's wait watchdog; `None`: the kernel's own (`Kernel::watchdog`), else the
    /// device's default (on, 4 s; `PHASER_WATCHDOG=off|250ms|...` changes it). The GPU loads
    /// the PTX printed for the resolved setting (one JIT per distinct setting).
    pub watchdog: Option<Watchdog>,
    /// Time the kernel on the device: a pair of CUDA events around a [`crate::Stream`] launch,
    /// reported in [`crate::LaunchReport::elapsed`]. Off by default: the two event records
    /// cost about as much host time as the launch itself, so a stream launch that is not
    /// timed makes no driver call beyond cudarc's own launch (time a sequence of launches
    /// with [`crate::Stream::record`] instead). `Device::launch` always times; the simulator
    /// has no device clock.
    pub timed: bool,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared_bytes: 0,
            watchdog: None,
            programmatic_dependent_launch: false,
            timed: false,
        }
    }
    /// Time this launch on the device (see the field).
    pub fn with_timing(mut self) -> Self {
        self.timed = true;
        self
    }
    /// Set this launch's wait watchdog (`Watchdog::Off` for a cuda-gdb session).
    pub fn with_watchdog(mut self, w: Watchdog) -> Self {
        self.watchdog = Some(w);
        self
    }
    pub fn with_dynamic_shared(mut self, bytes: u32) -> Self {
        self.dynamic_shared_bytes = bytes;
        self
    }
    /// Launch as a programmatic dependent of the previous launch (see the field).
    pub fn with_programmatic_dependent_launch(mut self) -> Self {
        self.programmatic_dependent_launch = true;
        self
    }
    /// Every field usable, or the first that is not, named (the shape's limits of a target
    /// are `device::check_config`'s).
    pub fn validate(&self) -> std::result::Result<(), phaser_codegen::InvalidSetting> {
        for (setting, dims) in [("LaunchConfig::grid", self.grid), ("LaunchConfig::block", self.block)] {
            if dims.contains(&0) {
                return Err(phaser_codegen::InvalidSetting::new(
                    setting,
                    dims,
                    "every dimension must be at least 1 (a zero dimension launches nothing)",
                ));
            }
        }
        if let Some(w) = self.watchdog {
            w.validate("LaunchConfig::watchdog")?;
        }
        Ok(())
    }

    /// This launch of `k` with its dynamic shared memory decided: an explicit size (at least
    /// what the kernel's tiles need), or, when none is given (0), exactly what they need.
    pub fn resolved_for(self, k: &Kernel) -> Result<LaunchConfig> {
        let declared = k.declared_dynamic_bytes();
        match self.dynamic_shared_bytes {
            0 => Ok(LaunchConfig { dynamic_shared_bytes: declared, ..self }),
            given if given < declared => Err(RuntimeError::BadLaunch {
                kernel: k.name().to_owned(),
                problem: format!(
                    "the launch gives {given} bytes of dynamic shared memory but the kernel's tiles need {declared} \
                     (give at least that, or leave it 0 to get exactly that)"
                ),
            }),
            _ => Ok(self),
        }
    }

    /// Threads per block, saturating at `u32::MAX` (a block of `[65536, 65536, 1]` has
    /// 2^32 threads, not 0; the launch check refuses it).
    pub fn threads_per_block(&self) -> u32 {
        u32::try_from(self.threads_per_block_wide()).unwrap_or(u32::MAX)
    }
    /// Threads per block, exactly.
    pub fn threads_per_block_wide(&self) -> u64 {
        self.block.iter().map(|&b| b as u64).product()
    }
    /// Threads in the whole grid, saturating at `u128::MAX` (only reached by grids and
    /// blocks far beyond any limit: 2^96 x 2^96).
    pub fn total_threads(&self) -> u128 {
        let blocks: u128 = self.grid.iter().map(|&g| g as u128).product();
        blocks.saturating_mul(self.threads_per_block_wide() as u128)
    }
    /// Blocks in the grid, saturating at `u64::MAX` (three `u32` extents can reach 2^96).
    pub fn blocks(&self) -> u64 {
        u64::try_from(self.grid.iter().map(|&g| g as u128).product::<u128>()).unwrap_or(u64::MAX)
    }
}

/// Whether a GPU of compute capability `(major, minor)` runs `k`'s code
/// ([`phaser_codegen::Target::runs_on`]): `RuntimeError::TargetMismatch` with the fix when it
/// cannot (sm_100a code on an sm_90 GPU). The GPU backend checks every launch with it; tools
/// that only JIT a kernel (bench_jit) ask it first and skip what the device cannot load.
pub fn check_target(k: &Kernel, (major, minor): (i32, i32)) -> Result<()> {
    let cc = (major * 10 + minor) as u32;
    if k.target().runs_on(cc) {
        return Ok(());
    }
    let (sm_major, sm_minor) = (k.target().sm() / 10, k.target().sm() % 10);
    let hint = if k.target().is_arch_specific() {
        format!("{} code runs only on compute capability {sm_major}.{sm_minor}", k.target())
    } else {
        format!("{} needs compute capability {sm_major}.{sm_minor} or newer", k.target())
    };
    Err(RuntimeError::TargetMismatch { kernel: k.name().to_owned(), target: k.target().to_string(), major, minor, hint })
}

/// Launch-shape and shared-memory checks, the same on both backends (the GPU never gets to
/// discover a bad shape); returns the launch's shared-memory layout.
pub fn check_config(k: &Kernel, cfg: &LaunchConfig) -> Result<SharedLayout> {
    // IR nested past the limit is refused before the simulator's recursive passes see it.
    phaser_codegen::arch::check_nesting(k)?;
    let bad = |problem: String| Err(RuntimeError::BadLaunch { kernel: k.name().to_owned(), problem });
    let limits = k.target().limits();
    if let Err(e) = cfg.validate() {
        return bad(e.to_string());
    }
    let threads = cfg.block.iter().map(|&b| b as u64).product::<u64>();
    if threads > limits.max_threads_per_block as u64 {
        return bad(format!("{threads} threads per block exceed {}", limits.max_threads_per_block));
    }
    for (what, dims, max) in [("block", cfg.block, limits.max_block_dims), ("grid", cfg.grid, limits.max_grid_dims)] {
        if let Some(d) = (0..3).find(|&d| dims[d] > max[d]) {
            return bad(format!("{what} {dims:?}: dimension {d} exceeds {} ({} limit)", max[d], k.target()));
        }
    }
    if let Some(most) = k.bounds().maxntid {
        let most_threads: u64 = most.iter().map(|&m| m as u64).product();
        if threads > most_threads {
            return bad(format!(
                "{threads} threads per block exceed the kernel's maximum block {most:?} (.maxntid, {most_threads} threads)"
            ));
        }
    }
    if let Some(req) = k.bounds().reqntid {
        if req != cfg.block {
            return bad(format!("the kernel requires block {req:?} (.reqntid), launched with {:?}", cfg.block));
        }
    }
    if let Some(c) = k.bounds().cluster {
        for d in 0..3 {
            if !cfg.grid[d].is_multiple_of(c[d]) {
                return bad(format!("grid {:?} is not a multiple of the cluster shape {c:?}", cfg.grid));
            }
        }
    }
    if k.uses_dynamic_shared() && cfg.dynamic_shared_bytes == 0 {
        return bad("the kernel uses dynamic shared memory but the launch gives it 0 bytes".into());
    }
    Ok(k.check_shared_launch(cfg.dynamic_shared_bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::{KernelBuilder, TileLayout, TileShape};
    use phaser_codegen::{Target, Type, Value};

    fn empty(name: &str, target: Target) -> Kernel {
        KernelBuilder::new(name, target).finish().unwrap()
    }

    fn tiled() -> Kernel {
        let mut k = KernelBuilder::new("tiled", Target::Sm90a);
        let t = k.alloc_tile("t", &TileShape::new(Type::F32, &[64, 32], TileLayout::RowMajor));
        let row = k.tile_at(t, Value::u32(0));
        k.st_tile(row, Value::u32(0), Value::f32(1.0));
        k.finish().unwrap()
    }

    #[test]
    fn dynamic_shared_memory_comes_from_the_tiles_unless_given() {
        let k = tiled();
        let cfg = LaunchConfig::linear(1, 32);
        assert_eq!(cfg.resolved_for(&k).unwrap().dynamic_shared_bytes, 64 * 32 * 4);
        let more = cfg.with_dynamic_shared(16384);
        assert_eq!(more.resolved_for(&k).unwrap(), more, "an explicit size at least the tiles' stays");
        let e = cfg.with_dynamic_shared(100).resolved_for(&k).unwrap_err().to_string();
        assert!(e.contains("gives 100 bytes of dynamic shared memory but the kernel's tiles need 8192"), "{e}");
    }

    #[test]
    fn check_target_refuses_what_the_gpu_cannot_run() {
        let sm100a = empty("tcgen05_gemm", Target::Sm100a);
        match check_target(&sm100a, (9, 0)) {
            Err(RuntimeError::TargetMismatch { kernel, target, major: 9, minor: 0, hint }) => {
                assert_eq!((kernel.as_str(), target.as_str()), ("tcgen05_gemm", "sm_100a"));
                assert_eq!(hint, "sm_100a code runs only on compute capability 10.0");
            }
            other => panic!("sm_100a on sm_90: {other:?}"),
        }
        // Architecture-specific code runs on its own chip only; portable code on newer ones too.
        assert!(check_target(&sm100a, (10, 0)).is_ok());
        assert!(check_target(&empty("hopper", Target::Sm90a), (9, 0)).is_ok());
        assert!(check_target(&empty("hopper", Target::Sm90a), (10, 0)).is_err());
        let e = check_target(&empty("ampere", Target::Sm80), (7, 5)).unwrap_err().to_string();
        assert!(e.ends_with("sm_80 needs compute capability 8.0 or newer"), "{e}");
        assert!(check_target(&empty("ampere", Target::Sm80), (9, 0)).is_ok());
    }

    #[test]
    fn launch_shape_limits_come_from_the_target_table() {
        let mut k = KernelBuilder::new("shape", Target::Sm90a);
        let x = k.param("x", Type::U32);
        k.probe("x", &[x]);
        let k = k.finish().unwrap();
        let problem = |grid: [u32; 3], block: [u32; 3]| match check_config(
            &k,
            &LaunchConfig { grid, block, ..LaunchConfig::linear(1, 1) },
        ) {
            Err(RuntimeError::BadLaunch { problem, .. }) => problem,
            other => panic!("expected BadLaunch, got {:?}", other.map(|_| ())),
        };
        assert_eq!(problem([1, 65536, 1], [32, 1, 1]), "grid [1, 65536, 1]: dimension 1 exceeds 65535 (sm_90a limit)");
        assert_eq!(problem([1, 1, 1], [1, 1, 65]), "block [1, 1, 65]: dimension 2 exceeds 64 (sm_90a limit)");
        assert_eq!(problem([1, 1, 1], [64, 32, 1]), "2048 threads per block exceed 1024");
        check_config(
            &k,
            &LaunchConfig { grid: [(1 << 31) - 1, 65535, 65535], block: [1024, 1, 1], ..LaunchConfig::linear(1, 1) },
        )
        .unwrap();
    }

    #[test]
    fn cluster_grid_must_be_a_multiple() {
        let mut k = KernelBuilder::new("c", Target::Sm90a);
        k.cluster(2, 1, 1);
        let x = k.param("x", Type::U32);
        k.probe("x", &[x]);
        let k = k.finish().unwrap();
        let e = check_config(&k, &LaunchConfig::linear(3, 32)).unwrap_err().to_string();
        assert!(e.contains("not a multiple of the cluster shape [2, 1, 1]"), "{e}");
        check_config(&k, &LaunchConfig::linear(4, 32)).unwrap();
    }
}
