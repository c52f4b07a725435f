//! What a program's kernels and runnable examples are, collected at link time (`inventory`):
//! every `#[phaser::kernel]` submits a [`KernelEntry`]; a crate with host code that sets up,
//! runs and checks kernels submits an [`Examples`] provider. The `phaser` CLI
//! (`phaser::cli::main()`, feature `cli`) lists, emits, checks, runs, traces and benchmarks
//! what is registered here, so a user's crate gets it for its own kernels.

use phaser_codegen::{CodegenError, Kernel, Target};
use phaser_runtime::{Device, RuntimeError};
use std::time::Duration;

/// A `#[phaser::kernel]`, as its expansion registers it.
pub struct KernelEntry {
    /// The kernel's name (the Rust function's), as `phaser list` prints it.
    pub name: &'static str,
    /// The target named in the attribute.
    pub target: Target,
    /// The `#[comptime]` parameters, in declaration order.
    pub comptime: &'static [&'static str],
    /// Where the kernel is defined (file, line).
    pub location: (&'static str, u32),
    /// Build the IR for a target and the comptime values (in `comptime` order; exactly
    /// `comptime.len()` of them: [`KernelEntry::build_named`] checks).
    pub build: fn(Target, &[u32]) -> Result<Kernel, CodegenError>,
}

inventory::collect!(KernelEntry);

impl KernelEntry {
    /// Build with comptime values given by name (`N=64`); a missing, unknown or repeated
    /// name is an error that lists the kernel's parameters.
    pub fn build_named(&self, target: Target, values: &[(String, u32)]) -> Result<Kernel, String> {
        let params = || {
            if self.comptime.is_empty() {
                "it has no #[comptime] parameters".to_string()
            } else {
                format!("its #[comptime] parameters: {}", self.comptime.join(", "))
            }
        };
        for (name, _) in values {
            if !self.comptime.contains(&name.as_str()) {
                return Err(format!("kernel `{}` has no #[comptime] parameter `{name}` ({})", self.name, params()));
            }
            if values.iter().filter(|(n, _)| n == name).count() > 1 {
                return Err(format!("`{name}` is given more than once"));
            }
        }
        let mut ordered = Vec::with_capacity(self.comptime.len());
        for p in self.comptime {
            match values.iter().find(|(n, _)| n == p) {
                Some((_, v)) => ordered.push(*v),
                None => {
                    return Err(format!("kernel `{}` needs `--comptime {p}=VALUE` ({})", self.name, params()));
                }
            }
        }
        (self.build)(target, &ordered).map_err(|e| e.to_string())
    }
}

/// Every registered kernel, sorted by name (then file and line).
pub fn kernels() -> Vec<&'static KernelEntry> {
    let mut v: Vec<&'static KernelEntry> = inventory::iter::<KernelEntry>.into_iter().collect();
    v.sort_by_key(|k| (k.name, k.location));
    v
}

/// The registered kernel named `name`.
pub fn kernel(name: &str) -> Option<&'static KernelEntry> {
    inventory::iter::<KernelEntry>.into_iter().find(|k| k.name == name)
}

/// How big a run of an example is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Size {
    /// The smallest problem that exercises every path of the protocol: one CTA (or one
    /// cluster) walking enough tiles that every ring wraps. The mutation suite simulates every
    /// mutant at this size.
    Small,
    /// Small, ragged shapes over several CTAs: seconds in the simulator.
    Quick,
    /// GPU-sized problems.
    Full,
}

/// What one run of an example found.
#[derive(Clone, Debug, Default)]
pub struct ExampleRun {
    /// Whether the outputs matched the example's reference.
    pub passed: bool,
    /// Not run: the device cannot run the example's kernels (sm_100a code on an sm_90 GPU);
    /// `detail` says what it needs. Neither a pass nor a failure.
    pub skipped: bool,
    /// What was checked, or what differed.
    pub detail: String,
    /// A digest of every output (equal digests: bit-identical outputs).
    pub digest: u64,
    /// Why the outputs may differ between backends while both pass the check (`.approx`
    /// instructions: the simulator computes the correctly rounded value, the GPU a value
    /// within the ISA's bound): `phaser diff` compares the checks, not the digests.
    pub approximate: Option<String>,
    /// Device time of the last launch (GPU).
    pub elapsed: Option<Duration>,
    /// The simulator's findings of non-fatal classes (fatal ones are `RuntimeError::Simulation`).
    pub findings: Vec<String>,
}

/// Why a run that failed with `e` is skipped rather than failed, if it is: the device cannot
/// run the kernel's target (sm_100a code on an sm_90 GPU), which is neither a pass nor a
/// failure. Every kind of runnable example (a [`crate::Runnable`], a [`crate::problem::Example`])
/// asks this.
pub fn skip_reason(e: &RuntimeError) -> Option<String> {
    match e {
        RuntimeError::TargetMismatch { target, major, minor, .. } => {
            Some(format!("needs {target} (this GPU is compute capability {major}.{minor})"))
        }
        _ => None,
    }
}

type KernelsFn = dyn Fn(Target) -> Result<Vec<Kernel>, CodegenError> + Send + Sync;
type RunFn = dyn Fn(&Device, Size, u64) -> Result<ExampleRun, RuntimeError> + Send + Sync;

/// A runnable example: its kernels (for `emit`) and a run that sets up inputs from a seed,
/// launches on a device and checks the outputs against a host reference.
pub struct Example {
    /// The name `phaser run NAME` selects it by.
    pub name: String,
    /// One line on what it shows, as `phaser list` prints it.
    pub about: String,
    /// Its kernels built for a target (what `phaser emit` prints).
    pub kernels: Box<KernelsFn>,
    /// Set up inputs from the seed at a size, launch on the device, check against the host
    /// reference.
    pub run: Box<RunFn>,
}

/// A provider of runnable examples, submitted once by a crate:
/// `inventory::submit!(phaser::registry::Examples(my_examples));`
pub struct Examples(pub fn() -> Vec<Example>);

inventory::collect!(Examples);

/// Every registered example, in each provider's order (providers sorted by their first name).
pub fn examples() -> Vec<Example> {
    let mut groups: Vec<Vec<Example>> = inventory::iter::<Examples>.into_iter().map(|p| (p.0)()).collect();
    groups.sort_by(|a, b| a.first().map(|e| &e.name).cmp(&b.first().map(|e| &e.name)));
    groups.into_iter().flatten().collect()
}

/// Re-exported so a crate registers examples without depending on `inventory` itself.
pub use inventory::submit;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_the_device_cannot_run_is_a_skip_and_nothing_else_is() {
        let mismatch = RuntimeError::TargetMismatch {
            kernel: "k".into(),
            target: "sm_100a".into(),
            major: 9,
            minor: 0,
            hint: String::new(),
        };
        assert_eq!(skip_reason(&mismatch).as_deref(), Some("needs sm_100a (this GPU is compute capability 9.0)"));
        let bad = RuntimeError::BadLaunch { kernel: "k".into(), problem: "grid 0".into() };
        assert_eq!(skip_reason(&bad), None);
    }
}
