//! A typed `CudaSlice<T>` seen through its element-type-erased launch interface.

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, LaunchArgs, PushKernelArg, SyncOnDrop};
use std::sync::Arc;

/// What a launch needs of a buffer argument: push it (cudarc records its read event) and
/// tell which context owns it.
pub trait CudaBufferArg: Sync {
    fn push_arg<'s>(&'s self, args: &mut LaunchArgs<'s>);
    fn context(&self) -> &Arc<CudaContext>;
    /// The device address for a launch on `stream` (the guard records the use when dropped,
    /// after the launch: `cuLaunchKernelEx` bypasses the launch builder).
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
}

impl<T> CudaBufferArg for CudaSlice<T> {
    fn push_arg<'s>(&'s self, args: &mut LaunchArgs<'s>) {
        args.arg(self);
    }
    fn context(&self) -> &Arc<CudaContext> {
        CudaSlice::context(self)
    }
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
}
