//! A CUDA device: context, stream, typed buffers.

use super::driver_err;
use super::jit::JitOptions;
use super::module_cache::ModuleCache;
use super::policy::LaunchPolicy;
use super::record::RecordBuffer;
use crate::elem::Elem;
use crate::error::{Result, RuntimeError};
use crate::watchdog::Watchdog;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use phaser_codegen::emit::WaitLoop;
use std::sync::Arc;
use std::time::Duration;

pub struct CudaDevice {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub modules: ModuleCache,
    pub(crate) cc: (i32, i32),
    name: String,
    /// Where starved waits leave their record (see `phaser_codegen::emit::watchdog`); a
    /// launch holds the lock until its kernel finished.
    pub(crate) record: std::sync::Mutex<RecordBuffer>,
    /// The wait watchdog of launches that set none, for kernels that set none.
    pub(crate) watchdog: Watchdog,
    /// How blocking waits with a watchdog are printed.
    pub(crate) wait_loop: WaitLoop,
    /// The record's device address (fixed for its life), what modules are pointed at.
    pub(crate) record_addr: u64,
    /// Launches submitted and not yet waited for or dropped, on every stream.
    pub(crate) in_flight: Arc<std::sync::atomic::AtomicUsize>,
    /// Launches' timing events, reused.
    pub(crate) events: Arc<super::timer::EventPool>,
    /// The GPUs (ordinals) whose memory this context's kernels were given access to.
    peers: std::sync::Mutex<std::collections::BTreeSet<u32>>,
}

impl CudaDevice {
    /// The GPU `ordinal` with the policy the environment sets ([`LaunchPolicy::from_env`]).
    pub fn new(ordinal: usize) -> Result<CudaDevice> {
        CudaDevice::with_policy(ordinal, LaunchPolicy::from_env()?)
    }

    /// How many GPUs the driver sees (0 without libcuda or without a GPU).
    pub fn count() -> Result<usize> {
        if !super::ffi::libcuda_present() {
            return Ok(0);
        }
        match CudaContext::device_count() {
            Ok(n) => Ok(n.max(0) as usize),
            Err(cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Ok(0),
            Err(e) => Err(RuntimeError::NoGpu { reason: "cuInit/cuDeviceGetCount failed".into(), source: Some(e.into()) }),
        }
    }

    /// Whether kernels of this GPU can address `peer`'s memory.
    pub fn can_access_peer(&self, peer: &CudaDevice) -> Result<bool> {
        super::ffi::can_access_peer(&self.ctx, &peer.ctx).map_err(driver_err("asking whether peer access is possible"))
    }

    /// Let kernels of this GPU address `peer`'s memory (checked possible by the caller).
    pub(crate) fn enable_peer_access(&self, peer: &CudaDevice) -> Result<()> {
        super::ffi::enable_peer_access(&self.ctx, &peer.ctx).map_err(|e| RuntimeError::PeerAccess {
            from: crate::peer::DeviceId(self.ctx.ordinal() as u32),
            to: crate::peer::DeviceId(peer.ctx.ordinal() as u32),
            problem: "cuCtxEnablePeerAccess failed".into(),
            source: Some(e.into()),
        })?;
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).insert(peer.ctx.ordinal() as u32);
        Ok(())
    }

    /// Whether access to GPU `ordinal`'s memory was enabled through this device.
    pub(crate) fn peer_enabled(&self, ordinal: u32) -> bool {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).contains(&ordinal)
    }

    /// The GPU `ordinal` with `policy` for what launches do not decide themselves.
    pub fn with_policy(ordinal: usize, policy: LaunchPolicy) -> Result<CudaDevice> {
        // With dynamic loading cudarc panics on first use when libcuda is missing: ask first.
        if !super::ffi::libcuda_present() {
            return Err(RuntimeError::NoGpu {
                reason: "the CUDA driver library (libcuda) was not found".into(),
                source: None,
            });
        }
        let count = CudaContext::device_count().map_err(|e| RuntimeError::NoGpu {
            reason: "cuInit/cuDeviceGetCount failed".into(),
            source: Some(e.into()),
        })?;
        if count <= ordinal as i32 {
            return Err(RuntimeError::NoGpu {
                reason: format!("{count} CUDA device(s) found, device {ordinal} requested"),
                source: None,
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_err("creating the CUDA context"))?;
        let stream = ctx.default_stream();
        CudaDevice::on(ctx, stream, policy)
    }

    /// A device on the application's own context and stream (cudarc interop): Phaser's
    /// synchronous operations (`Device::launch`, uploads, downloads) run on `stream`, and
    /// buffers it allocates belong to `ctx`, so they mix with the application's cudarc memory.
    pub fn on(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, policy: LaunchPolicy) -> Result<CudaDevice> {
        if *stream.context() != ctx {
            return Err(RuntimeError::Config(
                "the stream given to a CUDA device belongs to another context than the one given".into(),
            ));
        }
        let cc = ctx.compute_capability().map_err(driver_err("reading the compute capability"))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let record = RecordBuffer::new(&ctx)?;
        let record_addr = record.device_addr();
        let LaunchPolicy { watchdog, wait_loop, jit } = policy;
        Ok(CudaDevice {
            ctx,
            stream,
            modules: ModuleCache::new(jit),
            cc,
            name,
            record: std::sync::Mutex::new(record),
            watchdog,
            wait_loop,
            record_addr,
            in_flight: Default::default(),
            events: Default::default(),
            peers: Default::default(),
        })
    }

    /// The watchdog of launches and kernels that set none (default: on, 4 s).
    pub fn set_default_watchdog(&mut self, w: Watchdog) {
        self.watchdog = w;
    }

    pub fn default_watchdog(&self) -> Watchdog {
        self.watchdog
    }

    /// The printer's options for a launch on this device whose watchdog is its default: what
    /// a tool that loads PTX itself prints to match the device's launches.
    pub fn default_emit_options(&self) -> phaser_codegen::EmitOptions {
        super::policy::emit_options(self.watchdog, self.wait_loop)
    }

    /// Make modules with other JIT options from now on (modules already loaded stay).
    pub fn set_jit_options(&mut self, jit: JitOptions) {
        self.modules = ModuleCache::new(jit);
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

    /// Whether `ctx` is this device's context (buffers of another context are foreign).
    pub(crate) fn owns(&self, ctx: &Arc<CudaContext>) -> bool {
        **ctx == *self.ctx
    }

    /// `len` zeroed elements (at least one is allocated: the driver refuses empty allocations).
    pub(crate) fn alloc<T: Elem>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros::<T>(len.max(1))
            .map_err(driver_err(format!("allocating {len} elements of {}", T::TYPE)))
    }

    /// The device address of a buffer (what a kernel's `.u64` pointer parameter receives).
    pub fn device_ptr<T>(&self, s: &CudaSlice<T>) -> u64 {
        let (ptr, _record) = s.device_ptr(&self.stream);
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

    /// Copy the first `len` elements of `src` into `dst` on the launch stream, timed with
    /// CUDA events; returns the device time. `len` is checked against both by `Device::copy`.
    pub(crate) fn copy_timed<T: Elem>(
        &self,
        src: &CudaSlice<T>,
        dst: &mut CudaSlice<T>,
        len: usize,
    ) -> Result<Duration> {
        let timer = super::timer::EventTimer::start(&self.ctx, &self.stream)?;
        if len > 0 {
            self.stream
                .memcpy_dtod(&src.slice(..len), &mut dst.slice_mut(..len))
                .map_err(driver_err("copying device to device"))?;
        }
        timer.stop(&self.stream)?;
        self.stream.synchronize().map_err(driver_err("waiting for a device-to-device copy"))?;
        timer.elapsed()
    }

    /// Copy `data` into the first `data.len()` elements of `dst` (checked by `Device::write`).
    pub(crate) fn write<T: Elem>(&self, dst: &mut CudaSlice<T>, data: &[T]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.stream.memcpy_htod(data, &mut dst.slice_mut(..data.len())).map_err(driver_err("copying to the device"))?;
        self.stream.synchronize().map_err(driver_err("copying to the device"))
    }

    /// The first `len` elements of `src`.
    pub(crate) fn read<T: Elem>(&self, src: &CudaSlice<T>, len: usize) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len];
        if len > 0 {
            self.stream.memcpy_dtoh(&src.slice(..len), &mut out).map_err(driver_err("copying from the device"))?;
            self.stream.synchronize().map_err(driver_err("copying from the device"))?;
        }
        Ok(out)
    }
}
