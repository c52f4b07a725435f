//! `Device`: one launch API over two backends, the CUDA GPU and the CPU simulator.
//!
//! The one place that names the backends: the backend-neutral core (arguments, buffers,
//! launch configuration and its checks, tensor maps, errors) refers to their storage through
//! [`Storage`] and [`BufferArg`]. A launch is checked here, by the core's functions, before
//! it is dispatched; a backend gets its own buffer handles ([`ResolvedArg`]) and returns what
//! it measured, which [`LaunchReport`] carries.

use crate::args::{check_args, Arg, ResolvedArg};
use crate::buffer::Buffer;
use crate::elem::{from_bytes, to_bytes, Elem};
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::peer::PeerGrant;
pub use crate::launch::{check_config, check_target};
use crate::tensor_map::{hold_tensor_maps, DeviceKey, Swizzle, TensorMap, TensorMapDesc};
use crate::{cuda, sim};
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::Kernel;
use std::time::Duration;

/// How many SMs the simulator reports (small, so persistent grids stay cheap to simulate).
pub const SIM_SM_COUNT: u32 = 4;

/// A GPU or the simulator, behind one launch API.
///
/// `Send + Sync`: share `&Device` between threads (give each its own [`crate::Stream`]). The
/// CUDA backend's state is cudarc's context and streams (thread-safe: cudarc binds the
/// context to the calling thread before each driver call) plus mutex-guarded caches and the
/// watchdog record; the simulator's memory is behind a mutex, so simulated launches from
/// several threads run one at a time.
pub enum Device {
    Cuda(cuda::CudaDevice),
    Sim(sim::SimDevice),
}

/// Backend storage of a buffer of `T`.
pub enum Storage<T> {
    /// A typed cudarc allocation. It holds at least one element (the driver refuses empty
    /// allocations); the buffer's `len` says how many are in use.
    Cuda(cudarc::driver::CudaSlice<T>),
    /// Freed in the simulator's memory when dropped.
    Sim(sim::SimBuffer),
}

impl<T> Storage<T> {
    pub fn backend(&self) -> Backend {
        match self {
            Storage::Cuda(_) => Backend::Cuda,
            Storage::Sim(_) => Backend::Sim,
        }
    }

    /// The storage as a launch argument the kernel reads (its element type erased).
    pub(crate) fn as_arg(&self) -> BufferArg<'_> {
        match self {
            Storage::Cuda(s) => BufferArg::Cuda(s),
            Storage::Sim(s) => BufferArg::Sim(s),
        }
    }

    /// The storage as a launch argument the kernel may write.
    pub(crate) fn as_arg_mut(&mut self) -> BufferArg<'_> {
        match self {
            Storage::Cuda(s) => BufferArg::CudaMut(s),
            Storage::Sim(s) => BufferArg::SimMut(s),
        }
    }
}

/// A buffer argument's storage, its element type erased (the kernel's parameter list says
/// it), borrowed shared (the kernel reads it) or exclusive (it may write it). An exclusive
/// CUDA argument is pushed to cudarc as `&mut`, so cudarc records the kernel's write and
/// orders later use on other streams after it.
pub enum BufferArg<'a> {
    Cuda(&'a dyn cuda::CudaBufferArg),
    CudaMut(&'a mut dyn cuda::CudaBufferArgMut),
    Sim(&'a sim::SimBuffer),
    SimMut(&'a mut sim::SimBuffer),
}

impl<'a> BufferArg<'a> {
    pub fn backend(&self) -> Backend {
        match self {
            BufferArg::Cuda(_) | BufferArg::CudaMut(_) => Backend::Cuda,
            BufferArg::Sim(_) | BufferArg::SimMut(_) => Backend::Sim,
        }
    }

    /// Whether the argument was borrowed exclusively (the kernel may write it).
    pub fn is_exclusive(&self) -> bool {
        match self {
            BufferArg::CudaMut(_) | BufferArg::SimMut(_) => true,
            BufferArg::Cuda(_) | BufferArg::Sim(_) => false,
        }
    }

    /// The simulator buffer, however it was borrowed.
    pub(crate) fn sim(&self) -> Option<&sim::SimBuffer> {
        match self {
            BufferArg::Sim(b) => Some(b),
            BufferArg::SimMut(b) => Some(b),
            BufferArg::Cuda(_) | BufferArg::CudaMut(_) => None,
        }
    }

    /// The CUDA buffer as a launch that waits for its kernel uses it, however it was borrowed.
    pub(crate) fn cuda(&self) -> Option<cuda::CudaBuf<'_>> {
        match self {
            BufferArg::Cuda(b) => Some(cuda::CudaBuf::Read(*b)),
            BufferArg::CudaMut(b) => Some(cuda::CudaBuf::ReadExclusive(&**b)),
            BufferArg::Sim(_) | BufferArg::SimMut(_) => None,
        }
    }

    /// The CUDA buffer as a launch that returns at once uses it: written when borrowed
    /// exclusively, so cudarc records the write.
    pub(crate) fn into_cuda(self) -> Option<cuda::CudaBuf<'a>> {
        match self {
            BufferArg::Cuda(b) => Some(cuda::CudaBuf::Read(b)),
            BufferArg::CudaMut(b) => Some(cuda::CudaBuf::Write(b)),
            BufferArg::Sim(_) | BufferArg::SimMut(_) => None,
        }
    }
}

/// What a launch reports: wall time on the GPU, or the simulator's report.
#[derive(Debug, Default)]
pub struct LaunchReport {
    /// Device time between events around the launch (CUDA backend): always for
    /// `Device::launch`, for a stream launch when its config asks (`LaunchConfig::with_timing`).
    pub elapsed: Option<Duration>,
    /// The simulator's statistics, trace and findings (simulator backend).
    pub sim: Option<sim::SimReport>,
}

/// A buffer's storage once it is known to belong to the device at hand.
enum Owned<'b, T> {
    Cuda(&'b cuda::CudaDevice, &'b cudarc::driver::CudaSlice<T>),
    Sim(&'b sim::SimDevice, &'b sim::SimBuffer),
}

impl Device {
    /// The CUDA GPU `ordinal`, or a clear error when there is none (no panic without libcuda).
    pub fn cuda(ordinal: usize) -> Result<Device> {
        Ok(Device::Cuda(cuda::CudaDevice::new(ordinal)?))
    }

    /// The CPU simulator.
    pub fn sim(cfg: sim::SimConfig) -> Device {
        Device::Sim(sim::SimDevice::new(cfg))
    }

    /// The GPU when one is present, otherwise the simulator; the reason is returned too.
    pub fn best() -> (Device, Option<String>) {
        match Device::cuda(0) {
            Ok(d) => (d, None),
            Err(e) => (Device::sim(sim::SimConfig::default()), Some(e.to_string())),
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Device::Cuda(_))
    }

    pub fn backend(&self) -> Backend {
        match self {
            Device::Cuda(_) => Backend::Cuda,
            Device::Sim(_) => Backend::Sim,
        }
    }

    /// Whether this device can run `k`'s code ([`check_target`]; the simulator runs every
    /// target).
    pub fn check_target(&self, k: &Kernel) -> Result<()> {
        match self {
            Device::Cuda(d) => check_target(k, d.compute_capability()),
            Device::Sim(_) => Ok(()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Device::Cuda(d) => d.describe(),
            Device::Sim(_) => "Phaser CPU simulator".into(),
        }
    }

    /// Check that `buf` belongs to this device: same backend, same device.
    fn owned<'b, T: Elem>(&'b self, buf: &'b Buffer<T>) -> Result<Owned<'b, T>> {
        match (self, &buf.storage) {
            (Device::Cuda(d), Storage::Cuda(s)) if d.owns(s.context()) => Ok(Owned::Cuda(d, s)),
            (Device::Sim(d), Storage::Sim(s)) if d.owns(s) => Ok(Owned::Sim(d, s)),
            _ => Err(self.not_mine_storage(&buf.storage.as_arg(), None)),
        }
    }

    /// Which device this is, as tensor maps record it.
    pub(crate) fn key(&self) -> DeviceKey {
        match self {
            Device::Cuda(d) => DeviceKey::Cuda(d.context().cu_ctx() as usize),
            Device::Sim(d) => DeviceKey::Sim(d.id()),
        }
    }

    /// A zero-filled buffer of `len` elements; refused when its size in bytes overflows.
    pub fn alloc<T: Elem>(&self, len: usize) -> Result<Buffer<T>> {
        let size = T::TYPE.size();
        let bytes = len.checked_mul(size as usize).ok_or(RuntimeError::BufferTooLarge { len, elem: T::TYPE, size })?;
        let storage = match self {
            Device::Cuda(d) => Storage::Cuda(d.alloc::<T>(len)?),
            Device::Sim(d) => Storage::Sim(d.alloc(bytes)?),
        };
        Ok(Buffer { storage, len, lifeline: Default::default() })
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Elem>(&self, data: &[T]) -> Result<Buffer<T>> {
        let mut b = self.alloc::<T>(data.len())?;
        self.write(&mut b, data)?;
        Ok(b)
    }

    /// Overwrite every element of `buf` with `data` (same length).
    pub fn write<T: Elem>(&self, buf: &mut Buffer<T>, data: &[T]) -> Result<()> {
        if data.len() != buf.len() {
            return Err(RuntimeError::SizeMismatch {
                what: "writing host data into a buffer",
                expected: buf.len(),
                found: data.len(),
            });
        }
        self.owned(buf)?;
        match (self, &mut buf.storage) {
            (Device::Cuda(d), Storage::Cuda(s)) => d.write(s, data),
            (Device::Sim(d), Storage::Sim(s)) => d.write(s, &to_bytes(data)),
            _ => unreachable!("ownership checked above"),
        }
    }

    /// Fill every element with `value` (used to poison outputs before a run).
    pub fn fill<T: Elem>(&self, buf: &mut Buffer<T>, value: T) -> Result<()> {
        let data = vec![value; buf.len()];
        self.write(buf, &data)
    }

    pub fn download<T: Elem>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        match self.owned(buf)? {
            Owned::Cuda(d, s) => d.read(s, buf.len()),
            Owned::Sim(d, s) => Ok(from_bytes(&d.read(s))),
        }
    }

    /// Number of streaming multiprocessors: the GPU's, or the simulator's configured count.
    pub fn sm_count(&self) -> Result<u32> {
        match self {
            Device::Cuda(d) => d.sm_count(),
            Device::Sim(_) => Ok(SIM_SM_COUNT),
        }
    }

    /// A tensor map over `buf` viewed as a dense tensor of `dims` (dimension 0 innermost and
    /// contiguous), copied in boxes of `box_dims` with `swizzle`. Validated on both backends
    /// (see [`TensorMapDesc::validate`]); encoded with `cuTensorMapEncodeTiled` on the GPU.
    /// The map views the buffer by address: a launch refuses it once the buffer is dropped.
    pub fn tensor_map<T: Elem>(
        &self,
        buf: &Buffer<T>,
        dims: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<TensorMap> {
        let desc = TensorMapDesc::dense(T::TYPE, self.buffer_addr(buf)?, dims, box_dims, swizzle);
        self.tensor_map_from_desc(buf, desc)
    }

    /// A tensor map with explicit byte strides for dimensions 1.. (padded rows, sub-views).
    pub fn tensor_map_strided<T: Elem>(
        &self,
        buf: &Buffer<T>,
        dims: &[u64],
        strides: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<TensorMap> {
        let desc = TensorMapDesc {
            dtype: T::TYPE,
            base: self.buffer_addr(buf)?,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            box_dims: box_dims.to_vec(),
            swizzle,
        };
        self.tensor_map_from_desc(buf, desc)
    }

    /// The map of `desc` over `buf` (whose address `desc.base` is, on this device or through
    /// a peer mapping for it): validated, held to the buffer's size, encoded on the GPU.
    pub(crate) fn tensor_map_from_desc<T: Elem>(&self, buf: &Buffer<T>, desc: TensorMapDesc) -> Result<TensorMap> {
        desc.validate()?;
        if desc.extent_bytes() > buf.bytes() as u128 {
            return Err(RuntimeError::TensorMap(format!(
                "the view {:?} (strides {:?}) of {} reaches {} bytes but the buffer holds {}",
                desc.dims,
                desc.strides,
                desc.dtype,
                desc.extent_bytes(),
                buf.bytes()
            )));
        }
        let encoded = match self {
            Device::Cuda(d) => Some(d.encode_tensor_map(&desc)?),
            Device::Sim(_) => None,
        };
        Ok(TensorMap::new(desc, encoded, self.key(), &buf.lifeline))
    }

    /// The device address of a buffer (the simulator's fake address on the simulator).
    pub fn buffer_addr<T: Elem>(&self, buf: &Buffer<T>) -> Result<u64> {
        match self.owned(buf)? {
            Owned::Cuda(d, s) => Ok(d.device_ptr(s)),
            Owned::Sim(_, s) => Ok(s.addr),
        }
    }

    /// Copy `src` into `dst` (same length) on the device. On the GPU this is a stream
    /// device-to-device copy timed with CUDA events (the copy-bandwidth baseline); the
    /// simulator copies bytes and reports no time.
    pub fn copy<T: Elem>(&self, src: &Buffer<T>, dst: &mut Buffer<T>) -> Result<Option<Duration>> {
        if src.len() != dst.len() {
            return Err(RuntimeError::SizeMismatch {
                what: "copying one buffer into another",
                expected: dst.len(),
                found: src.len(),
            });
        }
        self.owned(src)?;
        self.owned(dst)?;
        let len = src.len();
        match (self, &src.storage, &mut dst.storage) {
            (Device::Cuda(d), Storage::Cuda(s), Storage::Cuda(t)) => Ok(Some(d.copy_timed(s, t, len)?)),
            (Device::Sim(d), Storage::Sim(s), Storage::Sim(t)) => {
                let bytes = d.read(s);
                d.write(t, &bytes)?;
                Ok(None)
            }
            _ => unreachable!("ownership checked above"),
        }
    }

    /// The checks every launch gets before a backend sees it: the launch's dynamic shared
    /// memory decided, arguments against the kernel's parameters, launch shape and shared
    /// memory (the same functions for both backends).
    pub(crate) fn checked(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<(LaunchConfig, SharedLayout)> {
        let cfg = cfg.resolved_for(kernel)?;
        check_args(kernel, args)?;
        let layout = check_config(kernel, &cfg)?;
        Ok((cfg, layout))
    }

    /// The arguments with each buffer resolved by `mine` to the backend's handle, or by
    /// `peer` when it is another device's buffer passed through a peer mapping made for this
    /// device; any other buffer (another backend's, another device's) is refused.
    pub(crate) fn resolve<'r, B>(
        &self,
        kernel: &Kernel,
        args: &'r [Arg<'_>],
        mine: impl Fn(&'r BufferArg<'_>) -> Option<B>,
        peer: impl Fn(&'r BufferArg<'_>, &PeerGrant) -> Option<B>,
    ) -> Result<Vec<ResolvedArg<'r, B>>> {
        args.iter()
            .enumerate()
            .map(|(i, a)| match a {
                Arg::Scalar { ty, bits } => Ok(ResolvedArg::Scalar { ty: *ty, bits: *bits }),
                Arg::Buffer { storage, peer: grant, .. } => mine(storage)
                    .or_else(|| self.granted(grant.as_ref()).and_then(|g| peer(storage, g)))
                    .map(ResolvedArg::Buffer)
                    .ok_or_else(|| self.not_mine_arg(kernel, i, storage, grant.as_ref())),
                Arg::TensorMap(t) => Ok(ResolvedArg::TensorMap(t)),
            })
            .collect()
    }

    /// The peer mapping, when it was made for this device.
    pub(crate) fn granted<'g>(&self, grant: Option<&'g PeerGrant>) -> Option<&'g PeerGrant> {
        grant.filter(|g| g.to == self.key())
    }

    /// The error for argument `i`, a buffer this device does not own (nor may use through
    /// `grant`), naming the argument: a kernel may take several buffers.
    pub(crate) fn not_mine_arg(
        &self,
        kernel: &Kernel,
        i: usize,
        storage: &BufferArg<'_>,
        grant: Option<&PeerGrant>,
    ) -> RuntimeError {
        let param = kernel.params().get(i).map(|p| p.name.clone());
        match self.not_mine_storage(storage, grant) {
            RuntimeError::ForeignBuffer { backend, .. } => RuntimeError::ForeignBuffer { backend, param },
            RuntimeError::WrongDevice { buffer_on, used_on, mapped_for, .. } => {
                RuntimeError::WrongDevice { param, buffer_on, used_on, mapped_for }
            }
            other => other,
        }
    }

    /// A CUDA buffer passed through a peer mapping: the peer's address, taken when the
    /// mapping was made (the launch guard holds the buffer's borrow).
    pub(crate) fn cuda_peer<'r>(_: &'r BufferArg<'_>, g: &PeerGrant) -> Option<cuda::CudaBuf<'r>> {
        Some(cuda::CudaBuf::Address(g.addr))
    }

    /// A simulator buffer passed through a peer mapping (its system was checked when the
    /// mapping was made).
    pub(crate) fn sim_peer<'r>(s: &'r BufferArg<'_>, _: &PeerGrant) -> Option<&'r sim::SimBuffer> {
        s.sim()
    }

    /// A simulator buffer argument of `d`.
    pub(crate) fn sim_args<'r>(d: &sim::SimDevice, s: &'r BufferArg<'_>) -> Option<&'r sim::SimBuffer> {
        s.sim().filter(|b| d.owns(b))
    }

    /// Launch `kernel` and wait for it; arguments, launch shape and shared memory are checked
    /// first, by the same functions on both backends, and the buffers its tensor maps view are
    /// held until it returns.
    pub fn launch(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<LaunchReport> {
        let (cfg, layout) = self.checked(kernel, cfg, args)?;
        match self {
            Device::Cuda(d) => {
                let resolved = self.resolve(
                    kernel,
                    args,
                    |s| s.cuda().filter(|b| b.context().is_some_and(|c| d.owns(c))),
                    Self::cuda_peer,
                )?;
                self.check_target(kernel)?;
                let _maps = hold_tensor_maps(kernel, args, self.key())?;
                let elapsed = d.launch(kernel, &cfg, &layout, resolved)?;
                Ok(LaunchReport { elapsed: Some(elapsed), sim: None })
            }
            Device::Sim(d) => {
                let resolved = self.resolve(kernel, args, |s| Self::sim_args(d, s), Self::sim_peer)?;
                let _maps = hold_tensor_maps(kernel, args, self.key())?;
                Ok(LaunchReport { elapsed: None, sim: Some(d.launch(kernel, &cfg, &resolved)?) })
            }
        }
    }
}

impl Device {
    /// Run `kernel` in the simulator and return its full report, findings included (a
    /// launch would turn error findings into `RuntimeError::Simulation`).
    pub fn simulate(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<sim::SimReport> {
        match self {
            Device::Sim(d) => self.simulate_with(kernel, cfg, args, &d.config),
            Device::Cuda(_) => Err(self.needs_sim("Device::simulate")),
        }
    }

    /// Like [`Device::simulate`] with other simulator settings (seed, strategy, limits).
    pub fn simulate_with(
        &self,
        kernel: &Kernel,
        cfg: LaunchConfig,
        args: &[Arg],
        sc: &sim::SimConfig,
    ) -> Result<sim::SimReport> {
        match self {
            Device::Sim(d) => {
                let (cfg, _) = self.checked(kernel, cfg, args)?;
                let resolved = self.resolve(kernel, args, |s| Self::sim_args(d, s), Self::sim_peer)?;
                let _maps = hold_tensor_maps(kernel, args, self.key())?;
                d.simulate_with(kernel, &cfg, &resolved, sc)
            }
            Device::Cuda(_) => Err(self.needs_sim("Device::simulate_with")),
        }
    }

    /// Explore every interleaving of the launch that matters (stateless model checking with
    /// partial-order reduction, `sim/explore/`), within the simulator's `explore_*` bounds:
    /// the report says whether no execution has a finding (and whether that is complete), or
    /// gives the first counterexample with its replayable schedule. Global memory is restored
    /// before each execution and holds, afterwards, what the last one wrote. One cluster only.
    pub fn explore(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<sim::ExploreReport> {
        match self {
            Device::Sim(d) => {
                let (cfg, _) = self.checked(kernel, cfg, args)?;
                let resolved = self.resolve(kernel, args, |s| Self::sim_args(d, s), Self::sim_peer)?;
                let _maps = hold_tensor_maps(kernel, args, self.key())?;
                d.explore(kernel, &cfg, &resolved)
            }
            Device::Cuda(_) => Err(self.needs_sim("Device::explore")),
        }
    }

    fn needs_sim(&self, operation: &'static str) -> RuntimeError {
        RuntimeError::Unsupported { operation, needs: Backend::Sim, device: self.backend() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::KernelBuilder;
    use phaser_codegen::Target;

    #[test]
    fn the_simulator_runs_every_target() {
        let sm100a = KernelBuilder::new("tcgen05_gemm", Target::Sm100a).finish().unwrap();
        assert!(Device::sim(Default::default()).check_target(&sm100a).is_ok());
    }

    #[test]
    fn sim_tensor_map_uses_the_buffer_address() {
        let dev = Device::sim(Default::default());
        let buf = dev.alloc::<f32>(64 * 32).unwrap();
        let map = dev.tensor_map(&buf, &[64, 32], &[64, 8], Swizzle::None).unwrap();
        assert_eq!(map.desc.base, dev.buffer_addr(&buf).unwrap());
        assert_eq!(map.desc.strides, vec![256]);
        assert_eq!(map.box_bytes(), 2048);
        assert!(map.encoded.is_none(), "the simulator needs no encoding");
    }

    #[test]
    fn tensor_map_must_fit_its_buffer() {
        let dev = Device::sim(Default::default());
        let buf = dev.alloc::<f32>(64 * 31).unwrap();
        let e = dev.tensor_map(&buf, &[64, 32], &[64, 8], Swizzle::None).unwrap_err().to_string();
        assert!(e.contains("reaches 8192 bytes but the buffer holds 7936"), "{e}");
        let e = dev.tensor_map(&buf, &[64, 31], &[64, 8], Swizzle::B128).unwrap_err().to_string();
        assert!(e.contains("128-byte swizzling"), "{e}");
        let m = dev.tensor_map_strided(&buf, &[60, 31], &[256], &[16, 8], Swizzle::B64).unwrap();
        assert_eq!(m.desc.dims, vec![60, 31]);
    }

    #[test]
    fn sim_copy_and_sm_count() {
        let dev = Device::sim(Default::default());
        let a = dev.upload(&[1u32, 2, 3, 4]).unwrap();
        let mut b = dev.alloc::<u32>(4).unwrap();
        assert_eq!(dev.copy(&a, &mut b).unwrap(), None);
        assert_eq!(dev.download(&b).unwrap(), vec![1, 2, 3, 4]);
        let mut c = dev.alloc::<u32>(3).unwrap();
        let e = dev.copy(&a, &mut c).unwrap_err();
        assert!(
            matches!(e, RuntimeError::SizeMismatch { expected: 3, found: 4, .. }),
            "a length mismatch is its own variant: {e}"
        );
        assert_eq!(dev.sm_count().unwrap(), SIM_SM_COUNT);
    }
}
