//! How one streaming kernel (`stream_axpb` in any [`StreamConfig`], or the DSL's `stream_ldg`
//! in any [`LdgConfig`]) is launched on `y = a*x + b` over a `rows x cols` f32 tensor: kernel,
//! grid, block, dynamic shared memory and arguments, named by role. The gallery and
//! `bench_stream` both turn a plan into [`Problem`] launches ([`push_plan`]), so the benchmark
//! times exactly what the gallery checks.

use super::stream_axpb::StreamConfig;
use super::stream_ldg::LdgConfig;
use phaser::codegen::Kernel;
use phaser::problem::MapId;
use phaser::problem::{BufferId, Problem};
use phaser::runtime::{Device, LaunchConfig, RuntimeError, Swizzle};

/// One streaming kernel of `y = a*x + b`: the TMA pipeline or the plain vector loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `stream_axpb`: TMA loads into an mbarrier ring (the flagship and its knobs).
    Tma(StreamConfig),
    /// `stream_ldg`: `ld.global.nc.v4` / `st.global.v4`, no shared memory, no barriers.
    Ldg(LdgConfig),
}

impl Variant {
    pub fn name(&self) -> String {
        match self {
            Variant::Tma(c) => c.name(),
            Variant::Ldg(c) => c.name(),
        }
    }
    /// Why this variant cannot stream a `rows x cols` tensor (or cannot be built), if so.
    pub fn problem(&self, rows: u64, cols: u64) -> Option<String> {
        match self {
            Variant::Tma(c) => {
                c.problem().map(|p| format!("{}: {p}", c.name())).or_else(|| c.shape_problem(rows, cols))
            }
            Variant::Ldg(c) => c.problem(rows * cols),
        }
    }
    /// The launch over a `rows x cols` tensor on a device of `sm_count` SMs.
    pub fn plan(&self, rows: u64, cols: u64, sm_count: u32) -> Result<Plan, RuntimeError> {
        match self {
            Variant::Tma(c) => c.plan(rows, cols, sm_count),
            Variant::Ldg(c) => c.plan(rows * cols, sm_count),
        }
    }
}

/// One kernel argument, by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanArg {
    /// A tensor map over the input `x`: `dims` innermost first, the TMA box `box_dims`.
    InputMap {
        dims: [u64; 2],
        box_dims: [u32; 2],
    },
    /// A tensor map over the output `y`.
    OutputMap {
        dims: [u64; 2],
        box_dims: [u32; 2],
    },
    /// The input's address (`&[f32]`).
    Input,
    /// The output's address (`&mut [f32]`).
    Output,
    /// The scalar `a` (f32).
    A,
    /// The scalar `b` (f32).
    B,
    U32(u32),
}

/// A launch of one streaming kernel.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kernel: Kernel,
    pub grid: u32,
    pub block: u32,
    pub dynamic_smem: u32,
    pub args: Vec<PlanArg>,
}

impl Plan {
    pub fn launch_config(&self) -> LaunchConfig {
        LaunchConfig::linear(self.grid, self.block).with_dynamic_shared(self.dynamic_smem)
    }
}

/// What identifies a tensor map of a problem: over the output?, its dims, its box.
type MapKey = (bool, [u64; 2], [u32; 2]);

/// The tensor maps a problem already made, by [`MapKey`], so launches share them.
#[derive(Default)]
pub struct MapCache {
    maps: Vec<(MapKey, MapId)>,
}

/// Add `plan`'s launch to `p`: `x` is `input`, `y` is `output`.
pub fn push_plan(
    p: &mut Problem,
    dev: &Device,
    maps: &mut MapCache,
    plan: Plan,
    (input, output): (BufferId<f32>, BufferId<f32>),
    (a, b): (f32, f32),
) -> Result<usize, RuntimeError> {
    let mut args = Vec::with_capacity(plan.args.len());
    for arg in &plan.args {
        args.push(match *arg {
            PlanArg::InputMap { dims, box_dims } | PlanArg::OutputMap { dims, box_dims } => {
                let is_out = matches!(arg, PlanArg::OutputMap { .. });
                let key = (is_out, dims, box_dims);
                let id = match maps.maps.iter().find(|(k, _)| *k == key) {
                    Some(&(_, id)) => id,
                    None => {
                        let id = if is_out {
                            p.tensor_map(dev, output, &dims, &box_dims, Swizzle::None)?
                        } else {
                            p.tensor_map(dev, input, &dims, &box_dims, Swizzle::None)?
                        };
                        maps.maps.push((key, id));
                        id
                    }
                };
                id.into()
            }
            PlanArg::Input => input.into(),
            PlanArg::Output => output.into(),
            PlanArg::A => a.into(),
            PlanArg::B => b.into(),
            PlanArg::U32(v) => v.into(),
        });
    }
    let config = plan.launch_config();
    Ok(p.launch(plan.kernel, config, args, [output.into()]))
}
