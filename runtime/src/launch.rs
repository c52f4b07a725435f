//! Launch configuration and what a launch reports back.

use crate::watchdog::Watchdog;
use std::time::Duration;

/// Grid, block, dynamic shared memory and the wait watchdog of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// This launch's wait watchdog; `None`: the kernel's own (`Kernel::watchdog`), else the
    /// device's default (on, 4 s; `PHASER_WATCHDOG=off|250ms|...` changes it). The GPU loads
    /// the PTX printed for the resolved setting (one JIT per distinct setting).
    pub watchdog: Option<Watchdog>,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], dynamic_shared_bytes: 0, watchdog: None }
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
