//! Phaser: asynchronous GPU pipelines synchronized by mbarriers, written in Rust.
//!
//! - [`codegen`]: the kernel IR, its builder, target checks and the PTX printer;
//! - [`runtime`]: [`Device`], one launch API over the CUDA GPU and the CPU simulator;
//! - [`gallery`]: every example kernel with its host-side check.

extern crate self as phaser;

pub use phaser_codegen as codegen;
pub use phaser_runtime as runtime;

pub use phaser_codegen::{Kernel, Target, Type, Value};
pub use phaser_runtime::{Arg, Buffer, Device, LaunchConfig, RuntimeError, Swizzle, TensorMap};

pub mod gallery;
pub mod mutate;

/// The names most kernels and hosts need.
pub mod prelude {
    pub use crate::codegen::build::{Barrier, BarrierArray, GlobalPtr, KernelBuilder, SharedArray};
    pub use crate::codegen::ir::Dim;
    pub use crate::{Arg, Buffer, Device, Kernel, LaunchConfig, RuntimeError, Target, Type, Value};
}
