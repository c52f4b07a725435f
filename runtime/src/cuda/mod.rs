//! The CUDA backend: cudarc's driver API, PTX JIT-loaded through a module cache.

mod device;
mod launch;
mod module_cache;
pub mod tensor_map;
mod timer;

pub use device::CudaDevice;
pub use module_cache::ModuleCache;

use crate::error::RuntimeError;

/// Map a cudarc driver error into ours, naming what was being done.
pub(crate) fn driver_err(context: impl Into<String>) -> impl FnOnce(cudarc::driver::DriverError) -> RuntimeError {
    let context = context.into();
    move |e| RuntimeError::Driver { context, message: format!("{e:?}") }
}
