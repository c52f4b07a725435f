//! A CUDA device: context, stream, buffers.

use super::driver_err;
use super::module_cache::ModuleCache;
use crate::error::{Result, RuntimeError};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;
use std::time::Duration;

pub struct CudaDevice {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub modules: ModuleCache,
    pub(crate) cc: (i32, i32),
    name: String,
}

impl CudaDevice {
    pub fn new(ordinal: usize) -> Result<CudaDevice> {
        // With dynamic loading cudarc panics when libcuda is missing: ask first.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(RuntimeError::NoGpu("the CUDA driver library (libcuda) was not found".into()));
        }
        let count = CudaContext::device_count()
            .map_err(|e| RuntimeError::NoGpu(format!("cuInit/cuDeviceGetCount failed: {e:?}")))?;
        if count <= ordinal as i32 {
            return Err(RuntimeError::NoGpu(format!("{count} CUDA device(s) found, device {ordinal} requested")));
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_err("creating the CUDA context"))?;
        let cc = ctx.compute_capability().map_err(driver_err("reading the compute capability"))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let stream = ctx.default_stream();
        Ok(CudaDevice { ctx, stream, modules: ModuleCache::default(), cc, name })
    }

    pub fn describe(&self) -> String {
        format!("{} (sm_{}{})", self.name, self.cc.0, self.cc.1)
    }

    pub fn compute_capability(&self) -> (i32, i32) {
        self.cc
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub(crate) fn alloc(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(driver_err(format!("allocating {bytes} bytes")))
    }

    /// The device address of a buffer (what a kernel's `.u64` pointer parameter receives).
    pub fn device_ptr(&self, s: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = s.device_ptr(&self.stream);
        ptr
    }

    /// Number of streaming multiprocessors (what a persistent grid is sized by).
    pub fn sm_count(&self) -> Result<u32> {
        let n = self
            .ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver_err("reading the multiprocessor count"))?;
        Ok(n.max(1) as u32)
    }

    /// Encode a tensor map (validated first) in this device's context.
    pub fn encode_tensor_map(&self, desc: &crate::tensor_map::TensorMapDesc) -> Result<[u64; 16]> {
        self.ctx.bind_to_thread().map_err(driver_err("binding the CUDA context"))?;
        super::tensor_map::encode_tiled(desc)
    }

    /// `cuMemcpyDtoDAsync` of `bytes` from `src` to `dst`, timed with CUDA events on the
    /// launch stream; returns the device time.
    pub(crate) fn copy_timed(&self, src: &CudaSlice<u8>, dst: &CudaSlice<u8>, bytes: usize) -> Result<Duration> {
        self.ctx.bind_to_thread().map_err(driver_err("binding the CUDA context"))?;
        let (s, d) = (self.device_ptr(src), self.device_ptr(dst));
        let timer = super::timer::EventTimer::start(&self.ctx, &self.stream)?;
        // Safety: both slices hold at least `bytes` bytes (checked by `Device::copy`) and
        // belong to this context's stream.
        unsafe { cudarc::driver::result::memcpy_dtod_async(d, s, bytes, self.stream.cu_stream()) }
            .map_err(driver_err("cuMemcpyDtoDAsync"))?;
        timer.stop(&self.stream)?;
        self.stream.synchronize().map_err(driver_err("waiting for a device-to-device copy"))?;
        timer.elapsed()
    }

    pub(crate) fn write(&self, dst: &CudaSlice<u8>, bytes: &[u8]) -> Result<()> {
        self.stream.synchronize().map_err(driver_err("copying to the device"))?;
        let ptr = self.device_ptr(dst);
        // Safety: `ptr` addresses `dst`, which holds at least `bytes.len()` bytes (checked by `Device`).
        unsafe { cudarc::driver::result::memcpy_htod_sync(ptr, bytes) }.map_err(driver_err("copying to the device"))
    }

    pub(crate) fn read(&self, src: &CudaSlice<u8>) -> Result<Vec<u8>> {
        self.stream.synchronize().map_err(driver_err("copying from the device"))?;
        let mut out = vec![0u8; src.len()];
        let ptr = self.device_ptr(src);
        // Safety: `out` has exactly the buffer's length.
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut out, ptr) }
            .map_err(driver_err("copying from the device"))?;
        Ok(out)
    }
}
