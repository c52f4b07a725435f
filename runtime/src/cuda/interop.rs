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
//! **Tensor maps on cudarc memory.** [`Device::tensor_map_cuda`] (a kernel only reads through
//! the map) and [`Device::tensor_map_cuda_mut`] (it may write: a TMA store) encode a map over
//! the application's memory and return a [`CudaTensorMap`] guard, which derefs to the
//! [`TensorMap`] a launch takes. The guard borrows the memory (shared or exclusive) for as long
//! as it lives, so safe code cannot free or (for `_mut`) touch the memory while a map to it
//! exists. Making the map orders the device's stream after the memory's last cudarc write
//! (for `_mut`, after its reads too); dropping the guard waits for the launches that hold the
//! map (as dropping a `Buffer` does), then records the use on the device's stream for cudarc,
//! so later cudarc work on any stream waits for those launches. A launch through the map on
//! another Phaser `Stream` is ordered with earlier cudarc work only by an event.
//!
//! **Phaser out.** [`Buffer::as_cuda_slice`] / [`Buffer::as_cuda_slice_mut`] lend a Phaser
//! buffer's storage as a `CudaSlice<T>`. The rules: the buffer keeps owning the memory (it is
//! freed when the `Buffer` drops, never by the application); the slice holds at least one
//! element (the driver refuses empty allocations), so `Buffer::len` is the length in use; the
//! slice's stream is the device's stream; work the application queues on the slice is
//! ordered with Phaser's by cudarc's events, as any two cudarc users of one slice are.
//!
//! **Who frees what.** cudarc memory is freed by its owner (the application, e.g. candle's
//! storage) when its `CudaSlice` drops; Phaser never frees it, and a borrow (an argument, a
//! `CudaTensorMap`) keeps it from dropping while Phaser uses it. A device built with
//! `from_cudarc` holds `Arc`s of the context and stream: they outlive the device, and the
//! application's other handles keep working after it drops.

use super::{CudaBufferArg, CudaBufferArgMut, CudaDevice, LaunchPolicy};
use crate::args::Arg;
use crate::buffer::{Buffer, Lifeline};
use crate::device::{BufferArg, Device, Storage};
use crate::elem::Elem;
use crate::error::{Backend, Result, RuntimeError};
use crate::tensor_map::{Swizzle, TensorMap, TensorMapDesc};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DeviceSlice};
use std::sync::Arc;

impl<'a, T: Elem> From<&'a CudaSlice<T>> for Arg<'a> {
    fn from(s: &'a CudaSlice<T>) -> Self {
        Arg::Buffer { elem: T::TYPE, len: s.len(), storage: BufferArg::Cuda(s as &dyn CudaBufferArg), peer: None }
    }
}

impl<'a, T: Elem> From<&'a mut CudaSlice<T>> for Arg<'a> {
    fn from(s: &'a mut CudaSlice<T>) -> Self {
        let len = s.len();
        Arg::Buffer { elem: T::TYPE, len, storage: BufferArg::CudaMut(s as &mut dyn CudaBufferArgMut), peer: None }
    }
}

impl<'a, 'v: 'a, T: Elem> From<&'a CudaView<'v, T>> for Arg<'a> {
    fn from(s: &'a CudaView<'v, T>) -> Self {
        Arg::Buffer { elem: T::TYPE, len: s.len(), storage: BufferArg::Cuda(s as &dyn CudaBufferArg), peer: None }
    }
}

impl<'a, 'v: 'a, T: Elem> From<&'a mut CudaViewMut<'v, T>> for Arg<'a> {
    fn from(s: &'a mut CudaViewMut<'v, T>) -> Self {
        let len = s.len();
        Arg::Buffer { elem: T::TYPE, len, storage: BufferArg::CudaMut(s as &mut dyn CudaBufferArgMut), peer: None }
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

/// A tensor map over the application's cudarc memory, made by [`Device::tensor_map_cuda`] or
/// [`Device::tensor_map_cuda_mut`]; it derefs to the [`TensorMap`] a launch takes. It borrows
/// the memory for `'a` (see the module's rules); once it drops, a launch refuses the map (and
/// any clone of it) as viewing dropped memory.
pub struct CudaTensorMap<'a> {
    map: TensorMap,
    /// The map's own lifeline: launches hold it, the drop ends it.
    lifeline: Arc<Lifeline>,
    memory: CudaUse<'a>,
    /// The device's stream, where the use is recorded for cudarc when the guard drops.
    stream: Arc<CudaStream>,
}

/// How a [`CudaTensorMap`] uses its memory.
enum CudaUse<'a> {
    Read(&'a dyn CudaBufferArg),
    Write(&'a mut dyn CudaBufferArgMut),
}

impl std::ops::Deref for CudaTensorMap<'_> {
    type Target = TensorMap;
    fn deref(&self) -> &TensorMap {
        &self.map
    }
}

impl std::fmt::Debug for CudaTensorMap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.memory {
            CudaUse::Read(_) => "read",
            CudaUse::Write(_) => "written",
        };
        write!(f, "CudaTensorMap({:?}, {how})", self.map.desc)
    }
}

impl Drop for CudaTensorMap<'_> {
    fn drop(&mut self) {
        // First no launch may still hold the map (they release it once known done) ...
        self.lifeline.end();
        // ... then cudarc records the use after every launch queued through the map, so later
        // cudarc work on the memory, on any stream, waits for them (the guards record on drop).
        match &mut self.memory {
            CudaUse::Read(m) => drop(m.device_addr(&self.stream)),
            CudaUse::Write(m) => drop(m.device_addr_mut(&self.stream)),
        }
    }
}

impl Device {
    /// A tensor map over cudarc memory (`&CudaSlice<T>`, `&CudaView<T>`) that kernels only read
    /// through; dense row-major `dims` (innermost first), as [`Device::tensor_map`]. The memory
    /// must belong to this device's context and hold the whole view.
    pub fn tensor_map_cuda<'a, T: Elem, M: DeviceSlice<T> + CudaBufferArg>(
        &self,
        memory: &'a M,
        dims: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<CudaTensorMap<'a>> {
        let (d, stream) = self.cuda_for(CudaBufferArg::context(memory))?;
        // The guard makes the stream wait for the memory's last write; it records a read now,
        // and the drop records one again after the launches.
        let (base, ordered) = memory.device_addr(&stream);
        drop(ordered);
        let (map, lifeline) = self.cuda_map::<T>(d, base, memory.len(), dims, box_dims, swizzle)?;
        Ok(CudaTensorMap { map, lifeline, memory: CudaUse::Read(memory), stream })
    }

    /// A tensor map over cudarc memory (`&mut CudaSlice<T>`, `&mut CudaViewMut<T>`) that
    /// kernels may write through (TMA stores); otherwise as [`Device::tensor_map_cuda`].
    pub fn tensor_map_cuda_mut<'a, T: Elem, M: DeviceSlice<T> + CudaBufferArgMut>(
        &self,
        memory: &'a mut M,
        dims: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<CudaTensorMap<'a>> {
        let (d, stream) = self.cuda_for(CudaBufferArgMut::context(memory))?;
        let len = memory.len();
        // As a write: the stream waits for the memory's earlier reads and writes.
        let (base, ordered) = memory.device_addr_mut(&stream);
        drop(ordered);
        let (map, lifeline) = self.cuda_map::<T>(d, base, len, dims, box_dims, swizzle)?;
        Ok(CudaTensorMap { map, lifeline, memory: CudaUse::Write(memory), stream })
    }

    /// This CUDA device and its stream, if `ctx` is its context.
    fn cuda_for(&self, ctx: &Arc<CudaContext>) -> Result<(&CudaDevice, Arc<CudaStream>)> {
        match self {
            Device::Cuda(d) if d.owns(ctx) => Ok((d, d.stream().clone())),
            Device::Cuda(_) => Err(RuntimeError::ForeignBuffer { backend: Backend::Cuda, param: None }),
            Device::Sim(_) => Err(RuntimeError::BackendMismatch { buffer: Backend::Cuda, device: Backend::Sim }),
        }
    }

    /// The map of `len` elements at `base`, checked as [`Device::tensor_map`] checks its own.
    fn cuda_map<T: Elem>(
        &self,
        d: &CudaDevice,
        base: u64,
        len: usize,
        dims: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<(TensorMap, Arc<Lifeline>)> {
        let desc = TensorMapDesc::dense(T::TYPE, base, dims, box_dims, swizzle);
        desc.validate()?;
        let bytes = len as u128 * T::TYPE.size() as u128;
        if desc.extent_bytes() > bytes {
            return Err(RuntimeError::TensorMap(format!(
                "the view {:?} of {} reaches {} bytes but the cudarc memory holds {bytes}",
                desc.dims,
                desc.dtype,
                desc.extent_bytes()
            )));
        }
        let encoded = d.encode_tensor_map(&desc)?;
        let lifeline = Arc::new(Lifeline::default());
        Ok((TensorMap::new(desc, Some(encoded), self.key(), &lifeline), lifeline))
    }
}
