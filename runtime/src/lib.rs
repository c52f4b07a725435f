//! Phaser's runtime: one launch API ([`Device`]) over two backends, a CUDA GPU (cudarc,
//! PTX JIT) and a CPU simulator that interprets the same IR.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod args;
pub mod buffer;
pub mod cuda;
pub mod device;
pub mod elem;
pub mod error;
pub mod launch;
pub mod report;
pub mod sim;
pub mod tensor_map;
pub mod watchdog;

pub use args::Arg;
pub use buffer::Buffer;
pub use device::Device;
pub use device::LaunchReport;
pub use elem::Elem;
pub use error::{Backend, BackendError, Result, RuntimeError};
pub use launch::LaunchConfig;
pub use tensor_map::{Swizzle, TensorMap, TensorMapDesc};
pub use watchdog::{Watchdog, WatchdogRecord};
