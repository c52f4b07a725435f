//! A typed `CudaSlice<T>` seen through its element-type-erased launch interface.

use cudarc::driver::{CudaContext, CudaSlice, LaunchArgs, PushKernelArg};
use std::sync::Arc;

/// What a launch needs of a buffer argument: push it (cudarc records its read event) and
/// tell which context owns it.
pub trait CudaBufferArg: Sync {
    fn push_arg<'s>(&'s self, args: &mut LaunchArgs<'s>);
    fn context(&self) -> &Arc<CudaContext>;
}

impl<T> CudaBufferArg for CudaSlice<T> {
    fn push_arg<'s>(&'s self, args: &mut LaunchArgs<'s>) {
        args.arg(self);
    }
    fn context(&self) -> &Arc<CudaContext> {
        CudaSlice::context(self)
    }
}
