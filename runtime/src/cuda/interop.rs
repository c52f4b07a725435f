//! cudarc interop, both directions, zero-copy.
//!
//! **cudarc in.** A kernel's buffer arguments accept the application's own cudarc memory:
//! `&CudaSlice<T>` and `&CudaView<T>` (read), `&mut CudaSlice<T>` and `&mut CudaViewMut<T>`
//! (written; views carry an offset and a length: `slice.slice(a..b)`, `slice.slice_mut(a..b)`).
//! They are pushed to cudarc's launch builder exactly as the application's own launches are,
//! so cudarc's event tracking orders them with the application's work on other streams. The
//! memory must belong to the device's context (else `ForeignBuffer`, naming the argument).
//! [`Device::from_cudarc`] builds a device on the application's context and stream.
//!
//! **Phaser out.** [`Buffer::as_cuda_slice`] / [`Buffer::as_cuda_slice_mut`] lend a Phaser
//! buffer's storage as a `CudaSlice<T>`. The rules: the buffer keeps owning the memory (it is
//! freed when the `Buffer` drops, never by the application); the slice holds at least one
//! element (the driver refuses empty allocations), so `Buffer::len` is the length in use; the
//! slice's stream is the device's stream; work the application queues on the slice is
//! ordered with Phaser's by cudarc's events, as any two cudarc users of one slice are.

use super::{CudaBufferArg, CudaBufferArgMut, CudaDevice, LaunchPolicy};
use crate::args::Arg;
use crate::buffer::Buffer;
use crate::device::{BufferArg, Device, Storage};
use crate::elem::Elem;
use crate::error::Result;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
use std::sync::Arc;

impl<'a, T: Elem> From<&'a CudaSlice<T>> for Arg<'a> {
    fn from(s: &'a CudaSlice<T>) -> Self {
        Arg::Buffer { elem: T::TYPE, len: s.len(), storage: BufferArg::Cuda(s as &dyn CudaBufferArg) }
    }
}

impl<'a, T: Elem> From<&'a mut CudaSlice<T>> for Arg<'a> {
    fn from(s: &'a mut CudaSlice<T>) -> Self {
        let len = s.len();
        Arg::Buffer { elem: T::TYPE, len, storage: BufferArg::CudaMut(s as &mut dyn CudaBufferArgMut) }
    }
}

impl<'a, 'v: 'a, T: Elem> From<&'a CudaView<'v, T>> for Arg<'a> {
    fn from(s: &'a CudaView<'v, T>) -> Self {
        Arg::Buffer { elem: T::TYPE, len: s.len(), storage: BufferArg::Cuda(s as &dyn CudaBufferArg) }
    }
}

impl<'a, 'v: 'a, T: Elem> From<&'a mut CudaViewMut<'v, T>> for Arg<'a> {
    fn from(s: &'a mut CudaViewMut<'v, T>) -> Self {
        let len = s.len();
        Arg::Buffer { elem: T::TYPE, len, storage: BufferArg::CudaMut(s as &mut dyn CudaBufferArgMut) }
    }
}

impl Device {
    /// A device on the application's CUDA context and stream: Phaser's synchronous work
    /// (`Device::launch`, uploads, downloads) runs on `stream`, its buffers belong to `ctx`,
    /// and the launch policy comes from the environment (`PHASER_*`).
    pub fn from_cudarc(ctx: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<Device> {
        Ok(Device::Cuda(CudaDevice::on(ctx, stream, LaunchPolicy::from_env()?)?))
    }
}

impl<T: Elem> Buffer<T> {
    /// The buffer's storage as cudarc memory (GPU buffers only); see the module's rules.
    pub fn as_cuda_slice(&self) -> Option<&CudaSlice<T>> {
        match &self.storage {
            Storage::Cuda(s) => Some(s),
            Storage::Sim(_) => None,
        }
    }

    /// The buffer's storage as cudarc memory to write (GPU buffers only).
    pub fn as_cuda_slice_mut(&mut self) -> Option<&mut CudaSlice<T>> {
        match &mut self.storage {
            Storage::Cuda(s) => Some(s),
            Storage::Sim(_) => None,
        }
    }
}
