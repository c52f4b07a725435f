//! Phaser's runtime: one launch API ([`Device`]) over two backends, a CUDA GPU (cudarc,
//! PTX JIT) and a CPU simulator that interprets the same IR.

#![deny(clippy::undocumented_unsafe_blocks)]

/// The cudarc this runtime is built on, for interop at the same version (`cuda::interop`).
pub use cudarc;

pub mod args;
pub mod buffer;
pub mod cuda;
pub mod device;
pub mod elem;
pub mod error;
pub mod event;
pub mod graph;
pub mod group;
pub mod launch;
#[cfg(feature = "nccl")]
pub mod nccl;
pub mod peer;
pub mod report;
pub mod sim;
pub mod stream;
pub mod tensor_map;
pub mod watchdog;

pub use args::Arg;
pub use buffer::Buffer;
pub use device::Device;
pub use device::LaunchReport;
pub use elem::Elem;
pub use error::{Backend, BackendError, Result, RuntimeError};
pub use event::Event;
pub use group::{launch_group, simulate_group, GroupLaunch};
pub use graph::{Bound, Graph, GraphArg, GraphBuilder};
pub use stream::{Launch, Stream, StreamKernel};
pub use launch::LaunchConfig;
pub use peer::{DeviceId, PeerView, PeerViewMut};
pub use tensor_map::{Swizzle, TensorMap, TensorMapDesc};
pub use watchdog::{Watchdog, WatchdogReport};
