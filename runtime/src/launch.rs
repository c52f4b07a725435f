//! Launch configuration and what a launch reports back.

use std::time::Duration;

/// Grid, block, dynamic shared memory and (optionally) cluster shape of a launch.
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
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared_bytes: 0,
            programmatic_dependent_launch: false,
        }
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
