//! Launches on several devices in flight together ([`launch_group`]): what a protocol between
//! devices needs (a kernel on one device waits for a flag a kernel on another sets), since a
//! launch that waits for its kernel before the next is queued would deadlock it.
//!
//! On the GPU every member's module is loaded first (loading one waits for the device's
//! running kernels), then each launch is queued on its stream ([`Stream::launch`], the same
//! checks and borrows) before any is waited for. In the simulator the devices must be of one system
//! (`Device::sim_system`): their clusters run in one epoch loop (`sim::engine::grid`), and each
//! report's findings name their device.

use crate::args::Arg;
use crate::device::{Device, LaunchReport};
use crate::error::{Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::sim;
use crate::stream::Stream;
use crate::tensor_map::hold_tensor_maps;
use phaser_codegen::Kernel;

/// One launch of a group: a kernel on a stream of its device, with its arguments (the
/// device's own buffers, or peers' buffers through peer mappings made for it).
pub struct GroupLaunch<'a> {
    pub stream: &'a Stream<'a>,
    pub kernel: &'a Kernel,
    pub cfg: LaunchConfig,
    pub args: Vec<Arg<'a>>,
}

impl<'a> GroupLaunch<'a> {
    pub fn new(
        stream: &'a Stream<'a>,
        kernel: &'a Kernel,
        cfg: LaunchConfig,
        args: impl IntoIterator<Item = Arg<'a>>,
    ) -> GroupLaunch<'a> {
        GroupLaunch { stream, kernel, cfg, args: args.into_iter().collect() }
    }
}

/// Launch every member, all in flight together, and wait for all of them: one report per
/// launch, in order. Every launch is checked as [`Stream::launch`] checks it, except that a
/// buffer a kernel writes may be passed shared (`&buf`, `buf.peer(&device)`): the kernels of
/// a protocol between devices use the same buffers at once (one writes a tile and a flag the
/// other reads and waits on), and no host code can touch them before the call returns, when
/// every launch is done.
/// In the simulator an error finding in any launch ends them all and is returned as
/// [`RuntimeError::Simulation`] (the first launch's report that has one; [`simulate_group`]
/// returns every report).
pub fn launch_group(launches: Vec<GroupLaunch<'_>>) -> Result<Vec<LaunchReport>> {
    match group_backend(&launches)? {
        GroupBackend::Empty => Ok(Vec::new()),
        GroupBackend::Sim => {
            let reports = simulate_group(launches)?;
            if let Some(bad) = reports.iter().position(sim::SimReport::has_errors) {
                let mut reports = reports;
                return Err(RuntimeError::Simulation(Box::new(reports.swap_remove(bad))));
            }
            Ok(reports.into_iter().map(|r| LaunchReport { elapsed: None, sim: Some(r) }).collect())
        }
        GroupBackend::Cuda => {
            // Every module is loaded before the first launch is queued (`Stream::preload`).
            for l in &launches {
                l.stream.preload(l.kernel, l.cfg, &l.args)?;
            }
            let mut guards = Vec::with_capacity(launches.len());
            for l in launches {
                guards.push(l.stream.launch_in_group(l.kernel, l.cfg, l.args)?);
            }
            // Every guard is waited for, the first error returned.
            let results: Vec<Result<LaunchReport>> = guards.into_iter().map(|g| g.wait()).collect();
            results.into_iter().collect()
        }
    }
}

/// Simulate the members together (simulated devices of one system only) and return every
/// report, findings included (an error in one launch ends them all; each report names the
/// CTAs cut short).
pub fn simulate_group(launches: Vec<GroupLaunch<'_>>) -> Result<Vec<sim::SimReport>> {
    if let GroupBackend::Cuda = group_backend(&launches)? {
        let device = launches[0].stream.device();
        return Err(RuntimeError::Unsupported {
            operation: "simulate_group",
            needs: crate::Backend::Sim,
            device: device.backend(),
        });
    }
    let mut holds = Vec::with_capacity(launches.len());
    let mut checked = Vec::with_capacity(launches.len());
    for l in &launches {
        let dev = l.stream.device();
        let (cfg, _) = dev.checked(l.kernel, l.cfg, &l.args)?;
        holds.push(hold_tensor_maps(l.kernel, &l.args, dev.key())?);
        checked.push(cfg);
    }
    let members = launches
        .iter()
        .zip(&checked)
        .map(|(l, cfg)| {
            let Device::Sim(d) = l.stream.device() else { unreachable!("the group's backend was checked") };
            let args = l.stream.device().resolve(l.kernel, &l.args, |s| Device::sim_args(d, s), Device::sim_peer)?;
            Ok(sim::GroupMember { device: d, kernel: l.kernel, cfg, args })
        })
        .collect::<Result<Vec<_>>>()?;
    sim::SimDevice::simulate_group(&members)
}

enum GroupBackend {
    Empty,
    Cuda,
    Sim,
}

/// The one backend of every member's device.
fn group_backend(launches: &[GroupLaunch<'_>]) -> Result<GroupBackend> {
    let Some(first) = launches.first() else { return Ok(GroupBackend::Empty) };
    let backend = first.stream.device().backend();
    if let Some(other) = launches.iter().find(|l| l.stream.device().backend() != backend) {
        return Err(RuntimeError::Config(format!(
            "a group launch runs on devices of one backend, but it has a {backend} and a {}",
            other.stream.device().backend()
        )));
    }
    Ok(match backend {
        crate::Backend::Cuda => GroupBackend::Cuda,
        crate::Backend::Sim => GroupBackend::Sim,
    })
}
