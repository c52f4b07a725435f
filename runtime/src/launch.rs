//! Launch configuration and what a launch reports back.

use crate::error::{Result, RuntimeError};
use crate::watchdog::Watchdog;
use phaser_codegen::Kernel;
use std::time::Duration;

/// Grid, block, dynamic shared memory, programmatic dependent launch and the wait watchdog of
/// a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// Programmatic dependent launch (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`,
    /// sm_90): this launch may start before the previous one on the stream finished, once
    /// every CTA of that one executed `griddepcontrol.launch_dependents` (or exited); its
    /// `griddepcontrol.wait` waits for the previous grid's completion and memory. The simulator
    /// runs launches in order, so there `griddepcontrol.wait` never waits.
    pub programmatic_dependent_launch: bool,
    /// This launch's wait watchdog; `None`: the kernel's own (`Kernel::watchdog`), else the
    /// device's default (on, 4 s; `PHASER_WATCHDOG=off|250ms|...` changes it). The GPU loads
    /// the PTX printed for the resolved setting (one JIT per distinct setting).
    pub watchdog: Option<Watchdog>,
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
        }
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
                kernel: k.name.clone(),
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

/// What a launch reports: wall time on the GPU, or the simulator's report.
#[derive(Debug, Default)]
pub struct LaunchReport {
    /// Device time between events around the launch (CUDA backend).
    pub elapsed: Option<Duration>,
    /// The simulator's statistics, trace and findings (simulator backend).
    pub sim: Option<crate::sim::SimReport>,
}

/// The simulator runs every thread of the grid, each at least one instruction: a launch of
/// more threads than `SimConfig::max_steps` cannot finish, so it is refused before it starts
/// (instead of running for hours into the step limit).
pub(crate) fn check_sim_budget(cfg: &LaunchConfig, sc: &crate::sim::SimConfig) -> crate::Result<()> {
    let threads = cfg.total_threads();
    if threads > sc.max_steps as u128 {
        return Err(crate::RuntimeError::SimulatorLimit(format!(
            "the launch has {threads} threads (grid {:?} x block {:?}), more than the simulator's step \
             budget of {} (SimConfig::max_steps): each thread executes at least one instruction; \
             simulate a smaller grid",
            cfg.grid, cfg.block, sc.max_steps
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::{KernelBuilder, TileLayout, TileShape};
    use phaser_codegen::{Target, Type, Value};

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
}
