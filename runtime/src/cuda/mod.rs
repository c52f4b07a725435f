//! The CUDA backend: cudarc's safe driver layer (typed `CudaSlice<T>`, stream copies, the
//! launch builder), PTX JIT-loaded through a module cache.

mod buffer_arg;
mod device;
mod ffi;
pub mod interop;
pub mod jit;
mod launch;
mod launch_function;
mod launch_queue;
mod module_cache;
mod policy;
mod record;
pub mod tensor_map;
mod timer;

pub(crate) use buffer_arg::CudaBuf;
#[cfg(feature = "nccl")]
pub(crate) use ffi::libnccl_present;
pub(crate) use ffi::Slot;
pub(crate) use launch_function::LaunchFunction;
pub(crate) use launch_queue::LaunchQueue;
pub use buffer_arg::{CudaBufferArg, CudaBufferArgMut};
pub use device::CudaDevice;
pub(crate) use launch::{slot as launch_slot, slots as launch_slots, Submitted};
pub use jit::{JitOptions, LoadPath, LoadStats};
pub use module_cache::{declares_record, ModuleCache, PtxKeyed};
pub use policy::{user_cache_dir, LaunchPolicy};

use crate::error::RuntimeError;

/// Map a cudarc driver error into ours, naming what was being done; the driver error stays
/// attached as the source.
pub(crate) fn driver_err(context: impl Into<String>) -> impl FnOnce(cudarc::driver::DriverError) -> RuntimeError {
    let context = context.into();
    move |source| RuntimeError::Driver { context, source: source.into() }
}

/// [`driver_err`] with the context made only when the call failed: the launch path formats
/// nothing that succeeds.
pub(crate) fn driver_err_with(
    context: impl FnOnce() -> String,
) -> impl FnOnce(cudarc::driver::DriverError) -> RuntimeError {
    move |source| RuntimeError::Driver { context: context(), source: source.into() }
}
