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
    pub fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
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
