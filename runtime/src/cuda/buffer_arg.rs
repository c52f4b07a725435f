//! cudarc memory (`CudaSlice<T>`, `CudaView`, `CudaViewMut`) seen through its
//! element-type-erased launch interface: a Phaser buffer's storage and the application's own
//! cudarc memory are pushed the same way, so cudarc's per-allocation events order them.

use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, LaunchArgs,
    PushKernelArg, SyncOnDrop,
};
use std::sync::Arc;

/// What a launch needs of a buffer the kernel reads: push it (cudarc waits for its last write
/// and records the read) and tell which context owns it.
pub trait CudaBufferArg: Sync {
    fn push_arg<'s>(&'s self, args: &mut LaunchArgs<'s>);
    fn context(&self) -> &Arc<CudaContext>;
    /// The device address for a launch on `stream` (the guard records the use when dropped,
    /// after the launch: `cuLaunchKernelEx` bypasses the launch builder).
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
}

/// What a launch needs of a buffer the kernel may write: pushed as `&mut`, so cudarc waits for
/// its earlier reads and writes and records this write (a later read on any stream waits).
/// `device_addr` is the shared use of a launch that waits for its kernel (`Device::launch`).
pub trait CudaBufferArgMut: Send + Sync {
    fn push_arg_mut<'s>(&'s mut self, args: &mut LaunchArgs<'s>);
    fn context(&self) -> &Arc<CudaContext>;
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
    fn device_addr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
}

/// A CUDA buffer argument once resolved: read, borrowed exclusive but used as a read by a
/// launch that waits for its kernel, or written by a launch that returns at once.
pub(crate) enum CudaBuf<'a> {
    Read(&'a dyn CudaBufferArg),
    ReadExclusive(&'a dyn CudaBufferArgMut),
    Write(&'a mut dyn CudaBufferArgMut),
    /// The address of a buffer a CUDA graph holds, taken before the capture began: pushed
    /// as is, since cudarc's event waits inside a capture are refused by the driver (the graph
    /// orders its replays with the buffer's events itself, see `graph.rs`).
    Address(u64),
}

impl CudaBuf<'_> {
    /// The context that owns the buffer (`None` for an address, checked when it was taken).
    pub(crate) fn context(&self) -> Option<&Arc<CudaContext>> {
        match self {
            CudaBuf::Read(b) => Some(b.context()),
            CudaBuf::ReadExclusive(b) => Some(b.context()),
            CudaBuf::Write(b) => Some(b.context()),
            CudaBuf::Address(_) => None,
        }
    }
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

impl<T> CudaBufferArgMut for CudaSlice<T> {
    fn push_arg_mut<'s>(&'s mut self, args: &mut LaunchArgs<'s>) {
        args.arg(self);
    }
    fn context(&self) -> &Arc<CudaContext> {
        CudaSlice::context(self)
    }
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
    fn device_addr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr_mut(stream)
    }
}

impl<T: Sync> CudaBufferArg for CudaView<'_, T> {
    fn push_arg<'s>(&'s self, args: &mut LaunchArgs<'s>) {
        args.arg(self);
    }
    fn context(&self) -> &Arc<CudaContext> {
        DeviceSlice::stream(self).context()
    }
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
}

impl<T: Send + Sync> CudaBufferArgMut for CudaViewMut<'_, T> {
    fn push_arg_mut<'s>(&'s mut self, args: &mut LaunchArgs<'s>) {
        args.arg(self);
    }
    fn context(&self) -> &Arc<CudaContext> {
        DeviceSlice::stream(self).context()
    }
    fn device_addr<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
    fn device_addr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr_mut(stream)
    }
}
