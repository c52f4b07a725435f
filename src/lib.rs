//! Phaser: asynchronous GPU pipelines synchronized by mbarriers, written in Rust.
//!
//! - [`codegen`]: the kernel IR, its builder, target checks and the PTX printer;
//! - [`runtime`]: [`Device`], one launch API over the CUDA GPU and the CPU simulator;
//! - [`kernel`] / [`device`]: the `#[phaser::kernel]` DSL, which expands to builder calls;
//! - [`registry`]: every `#[phaser::kernel]` and every registered runnable example;
//! - [`problem`]: an example's host side as data (buffers, poisoned outputs, tensor maps,
//!   launches), for examples of several launches and tools that rerun them;
//! - `cli` (feature `cli`): the `phaser` command line over what is registered, so a crate's
//!   `fn main() -> std::process::ExitCode { phaser::cli::main() }` is the whole tool.
//!
//! The gallery of example kernels, the mutation suite and the gallery's `phaser` binary live
//! in the workspace's non-published `examples/` crate, which uses only this facade.

#![warn(missing_docs)]

extern crate self as phaser;

pub use phaser_codegen as codegen;
pub use phaser_runtime as runtime;

/// `#[phaser::kernel(target = "sm_90a")] fn name(..) { .. }` and `#[phaser::device] fn f(..)`:
/// the DSL (see `dsl/README.md` for the `T.*` op table).
pub use phaser_dsl::{device, kernel};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// What rustc names in the errors of a call to a `#[phaser::device]` function: `Scalar<f32>`
/// (the DSL's `f32` at that boundary) for arguments of the wrong type or number, `DeviceFn` for
/// a call of a function that is not one. Public, so its messages name these paths and not the
/// macro's private glue.
pub mod device_types {
    pub use crate::__private::{DeviceFn, DslScalar, Scalar, StateTy};
}

#[cfg(feature = "cli")]
pub mod cli;
pub mod problem;
pub mod registry;
mod runnable;
pub use runnable::{Outputs, Runnable};

pub use phaser_codegen::{Kernel, Target, Type, Value};
/// The OCP FP8 host elements (buffers of e4m3/e5m2 tiles): `from_f32` rounds to nearest even
/// and saturates, `to_f32` is exact.
pub use phaser_runtime::elem::{F8E4M3, F8E5M2};
pub use phaser_runtime::{Arg, Buffer, Device, Event, Graph, Launch, LaunchConfig, RuntimeError, Stream, Swizzle, TensorMap};
pub use phaser_runtime::{launch_group, simulate_group, DeviceId, GroupLaunch, PeerView, PeerViewMut};

/// The names most kernels and hosts need.
pub mod prelude {
    pub use crate::codegen::builder::{Barrier, BarrierArray, GlobalPtr, KernelBuilder, SharedArray};
    pub use crate::codegen::ir::Dim;
    pub use crate::{device, kernel};
    pub use crate::{Arg, Buffer, Device, Event, Kernel, Launch, LaunchConfig, RuntimeError, Stream, Target, Type, Value};
}

/// The README's Rust code blocks compile and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
