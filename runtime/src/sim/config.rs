//! Simulator settings: scheduling strategy, seed, limits, tracing.

pub use crate::report::schedule::Schedule;
pub use crate::report::Strategy;
use phaser_codegen::InvalidSetting;

#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seed of every scheduling choice: the same seed replays the same interleaving.
    pub seed: u64,
    pub strategy: Strategy,
    /// Thread-instructions per launch before the run is stopped with an error.
    pub max_steps: u64,
    /// Bytes of simulated memory (global buffers + per-cluster shared memory and shadow state).
    pub max_memory_bytes: u64,
    /// Record barrier events for the Perfetto/Chrome trace.
    pub trace: bool,
    /// Trace events kept per launch (the rest are counted, not stored).
    pub max_trace_events: usize,
    /// Findings kept per launch (duplicates of one site are counted, not stored; findings
    /// past the cap are counted in `SimReport::dropped` and still fail the launch). At least 1.
    pub max_findings: usize,
    /// Probe records kept per launch.
    pub max_probes: usize,
    /// Run the happens-before checker (`sim/check/hb.rs`: vector clocks and per-byte shadow
    /// state): shared-memory races, uninitialized shared reads, stale parities, init visibility,
    /// missing proxy fences, remote accesses racing with a CTA's exit. Off, the simulation
    /// still reports deadlocks, faults and barrier misuse, and runs faster.
    pub race_check: bool,
    /// Also require a `fence.proxy.async` between a thread's ordinary (generic-proxy) read of
    /// shared bytes and a later async-proxy write of them (a TMA or bulk copy refilling a
    /// stage that was read with ordinary loads and released; DeepEP#642). The PTX ISA asks for
    /// a cross-proxy fence in both directions; off by default because pipelines that read
    /// TMA-filled stages with ordinary loads commonly release them without one (CUTLASS does),
    /// so the default check orders the proxies only for generic writes read by the async proxy.
    pub proxy_war_check: bool,
    /// CTAs simulated at the same time (clusters start as others finish, as on the GPU):
    /// clusters that wait for each other must fit. Default: 132, one per SM of an H100/H200.
    pub max_resident_ctas: u32,
    /// Cores the simulation may use: clusters run in parallel between the grid's epochs
    /// (`sim/grid.rs`). The result is the same for every value. Default: the machine's cores.
    pub threads: usize,
    /// Write each launch's Perfetto/Chrome trace (`<kernel>.<n>.trace.json`) and probe tables
    /// (`<kernel>.<n>.probes.txt`) into this directory.
    pub trace_dir: Option<std::path::PathBuf>,
    /// Print what the kernel's `printf`s printed to stdout after each launch (as the GPU
    /// does); it is in `SimReport::printed` either way.
    pub echo_printf: bool,
    /// Run one actor per step in this order (a schedule `Device::explore` reported, or one
    /// read with `Schedule::from_str`) instead of the seeded strategy; past its end, the first
    /// actor that can run. A launch of one cluster only.
    pub schedule: Option<Schedule>,
    /// Every launch on this device is explored exhaustively (`Device::explore`): it fails with
    /// the first counterexample; a launch without one runs once more under `strategy` (its
    /// outputs) and its report carries the exploration's (`SimReport::exploration`).
    pub exhaustive: bool,
    /// `Device::explore`: executions at most (each re-runs the launch from the start).
    pub explore_max_executions: u64,
    /// `Device::explore`: steps per execution at most; longer executions are cut, and the
    /// report says what was not covered.
    pub explore_max_depth: u64,
    /// `Device::explore`: bytes of exploration state (the current path's states, their
    /// backtrack and sleep sets) at most.
    pub explore_max_memory_bytes: u64,
    /// `Device::explore` in barriers-only mode: the reduction orders only what decides
    /// synchronization (mbarriers, named and cluster barriers, async groups, tensor-core
    /// issue and completion, atomics and volatile accesses), not plain data bytes, so orders
    /// that differ only in when data was moved are one execution. Sound for protocol bugs
    /// because the race checker (`race_check`, required) judges every pair of data accesses
    /// by happens-before in each execution, whatever their order there; what it does not
    /// explore is which value a racy read returns (a race, reported) (bench/exhaustive.md).
    pub explore_barriers_only: bool,
    /// The synchronization skeleton: wgmma and tcgen05 MMAs keep every effect on the
    /// protocol (their `.sync.aligned` meeting, issue order, commit groups and `wait_group`,
    /// `tcgen05.commit` arrivals on mbarriers, the accumulator registers in flight until
    /// retired, their operand bytes read as the race checker sees them) and skip the math: a
    /// retired accumulator holds zeros, a tensor-memory accumulator is left as it was. What a
    /// launch computes is then not the kernel's result; what it reports about the protocol is
    /// (bench/exhaustive.md: the argument, and what it cannot see). Needs `race_check`.
    /// `Device::explore` runs its executions in it; the run that gives an exhaustive launch's
    /// outputs does the math.
    pub skeleton: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0x5eed,
            strategy: Strategy::Random,
            max_steps: 2_000_000_000,
            max_memory_bytes: 8 << 30,
            trace: true,
            max_trace_events: 200_000,
            max_findings: 64,
            max_probes: 100_000,
            race_check: true,
            proxy_war_check: false,
            max_resident_ctas: 132,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            trace_dir: None,
            echo_printf: true,
            schedule: None,
            exhaustive: false,
            explore_max_executions: 100_000,
            explore_max_depth: 100_000,
            explore_max_memory_bytes: 1 << 30,
            explore_barriers_only: false,
            skeleton: false,
        }
    }
}

impl SimConfig {
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// See [`SimConfig::proxy_war_check`].
    pub fn with_proxy_war_check(mut self, on: bool) -> Self {
        self.proxy_war_check = on;
        self
    }
    pub fn with_strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }
    /// Every field usable, or the first that is not, named. Checked at every simulated
    /// launch: no setting may turn the checker off or make a run impossible.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let at_least_one = |setting: &'static str, value: u64, what: &str| {
            if value == 0 {
                Err(InvalidSetting::new(setting, value, format!("must be at least 1: {what}")))
            } else {
                Ok(())
            }
        };
        at_least_one("SimConfig::max_steps", self.max_steps, "every thread executes at least one instruction")?;
        at_least_one("SimConfig::max_memory_bytes", self.max_memory_bytes, "a launch needs memory for its parameters")?;
        at_least_one(
            "SimConfig::max_findings",
            self.max_findings as u64,
            "a failing report shows at least one finding (findings past the cap are counted, never ignored)",
        )?;
        at_least_one("SimConfig::max_resident_ctas", self.max_resident_ctas as u64, "a CTA must be resident to run")?;
        at_least_one("SimConfig::threads", self.threads as u64, "the simulation runs on at least one core")?;
        at_least_one(
            "SimConfig::explore_max_executions",
            self.explore_max_executions,
            "an exploration runs at least one execution",
        )?;
        at_least_one("SimConfig::explore_max_depth", self.explore_max_depth, "an execution takes at least one step")?;
        at_least_one(
            "SimConfig::explore_max_memory_bytes",
            self.explore_max_memory_bytes,
            "an exploration holds at least the state of its first execution",
        )?;
        if self.explore_barriers_only && !self.race_check {
            return Err(InvalidSetting::new(
                "SimConfig::explore_barriers_only",
                true,
                "needs `race_check`: barriers-only exploration leaves the order of data accesses to the race checker",
            ));
        }
        if self.skeleton && !self.race_check {
            return Err(InvalidSetting::new(
                "SimConfig::skeleton",
                true,
                "needs `race_check`: the skeleton skips the MMAs' math, and only the race checker judges their \
                 operands and results",
            ));
        }
        if self.schedule.as_ref().is_some_and(|s| s.steps.is_empty()) {
            return Err(InvalidSetting::new(
                "SimConfig::schedule",
                "Some(empty)",
                "a replayed schedule has at least one step (None runs the seeded strategy)",
            ));
        }
        Ok(())
    }

    /// Settings for speed measurements: no trace, no race checking.
    pub fn fast() -> Self {
        SimConfig { strategy: Strategy::RoundRobin, trace: false, race_check: false, ..SimConfig::default() }
    }
}
