//! `Device`: one launch API over two backends, the CUDA GPU and the CPU simulator.

use crate::args::{check_args, Arg, BufferArg};
use crate::buffer::{Buffer, Storage};
use crate::elem::{from_bytes, to_bytes, Elem};
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use crate::tensor_map::{DeviceKey, Swizzle, TensorMap, TensorMapDesc};
use crate::{cuda, sim};
use phaser_codegen::ir::SharedLayout;
use phaser_codegen::Kernel;
use std::time::Duration;

/// How many SMs the simulator reports (small, so persistent grids stay cheap to simulate).
pub const SIM_SM_COUNT: u32 = 4;

pub enum Device {
    Cuda(cuda::CudaDevice),
    Sim(sim::SimDevice),
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
            _ => Err(self.not_mine(buf.backend())),
        }
    }

    /// The error for a buffer of `backend` that this device does not own.
    fn not_mine(&self, backend: Backend) -> RuntimeError {
        if backend == self.backend() {
            RuntimeError::ForeignBuffer { backend, param: None }
        } else {
            RuntimeError::BackendMismatch { buffer: backend, device: self.backend() }
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

    fn tensor_map_from_desc<T: Elem>(&self, buf: &Buffer<T>, desc: TensorMapDesc) -> Result<TensorMap> {
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

    /// Check that every buffer argument belongs to this device (tensor maps are checked, and
    /// held, by each backend's launch: `tensor_map::hold_tensor_maps`).
    fn check_arg_owners(&self, kernel: &Kernel, args: &[Arg]) -> Result<()> {
        for (i, a) in args.iter().enumerate() {
            if let Arg::Buffer { storage, .. } = a {
                let mine = match (self, storage) {
                    (Device::Cuda(d), BufferArg::Cuda(s)) => d.owns(s.context()),
                    (Device::Sim(d), BufferArg::Sim(s)) => d.owns(s),
                    _ => false,
                };
                if !mine {
                    return Err(match self.not_mine(storage.backend()) {
                        RuntimeError::ForeignBuffer { backend, .. } => {
                            RuntimeError::ForeignBuffer { backend, param: kernel.params.get(i).map(|p| p.name.clone()) }
                        }
                        other => other,
                    });
                }
            }
        }
        Ok(())
    }

    /// Launch `kernel` and wait for it; arguments, launch shape and shared memory are checked
    /// first, by the same functions on both backends.
    pub fn launch(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<LaunchReport> {
        let cfg = cfg.resolved_for(kernel)?;
        check_args(kernel, args)?;
        let layout = check_config(kernel, &cfg)?;
        self.check_arg_owners(kernel, args)?;
        match self {
            Device::Cuda(d) => d.launch(kernel, &cfg, &layout, args),
            Device::Sim(d) => d.launch(kernel, &cfg, args),
        }
    }
}

impl Device {
    /// Run `kernel` in the simulator and return its full report, findings included (a
    /// launch would turn error findings into `RuntimeError::Simulation`).
    pub fn simulate(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<sim::SimReport> {
        match self {
            Device::Sim(d) => {
                self.check_arg_owners(kernel, args)?;
                d.simulate(kernel, &cfg, args)
            }
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
                self.check_arg_owners(kernel, args)?;
                d.simulate_with(kernel, &cfg, args, sc)
            }
            Device::Cuda(_) => Err(self.needs_sim("Device::simulate_with")),
        }
    }

    fn needs_sim(&self, operation: &'static str) -> RuntimeError {
        RuntimeError::Unsupported { operation, needs: Backend::Sim, device: self.backend() }
    }
}

/// Whether a GPU of compute capability `(major, minor)` runs `k`'s code
/// ([`phaser_codegen::Target::runs_on`]): `RuntimeError::TargetMismatch` with the fix when it
/// cannot (sm_100a code on an sm_90 GPU). The GPU backend checks every launch with it; tools
/// that only JIT a kernel (bench_jit) ask it first and skip what the device cannot load.
pub fn check_target(k: &Kernel, (major, minor): (i32, i32)) -> Result<()> {
    let cc = (major * 10 + minor) as u32;
    if k.target.runs_on(cc) {
        return Ok(());
    }
    let (sm_major, sm_minor) = (k.target.sm() / 10, k.target.sm() % 10);
    let hint = if k.target.is_arch_specific() {
        format!("{} code runs only on compute capability {sm_major}.{sm_minor}", k.target)
    } else {
        format!("{} needs compute capability {sm_major}.{sm_minor} or newer", k.target)
    };
    Err(RuntimeError::TargetMismatch { kernel: k.name.clone(), target: k.target.to_string(), major, minor, hint })
}

/// Launch-shape and shared-memory checks, the same on both backends (the GPU never gets to
/// discover a bad shape); returns the launch's shared-memory layout.
pub fn check_config(k: &Kernel, cfg: &LaunchConfig) -> Result<SharedLayout> {
    // IR nested past the limit is refused before the simulator's recursive passes see it.
    phaser_codegen::arch::check_nesting(k)?;
    let bad = |problem: String| Err(RuntimeError::BadLaunch { kernel: k.name.clone(), problem });
    let limits = k.target.limits();
    if let Err(e) = cfg.validate() {
        return bad(e.to_string());
    }
    let threads = cfg.block.iter().map(|&b| b as u64).product::<u64>();
    if threads > limits.max_threads_per_block as u64 {
        return bad(format!("{threads} threads per block exceed {}", limits.max_threads_per_block));
    }
    for (what, dims, max) in [("block", cfg.block, limits.max_block_dims), ("grid", cfg.grid, limits.max_grid_dims)] {
        if let Some(d) = (0..3).find(|&d| dims[d] > max[d]) {
            return bad(format!("{what} {dims:?}: dimension {d} exceeds {} ({} limit)", max[d], k.target));
        }
    }
    if let Some(most) = k.bounds.maxntid {
        let most_threads: u64 = most.iter().map(|&m| m as u64).product();
        if threads > most_threads {
            return bad(format!(
                "{threads} threads per block exceed the kernel's maximum block {most:?} (.maxntid, {most_threads} threads)"
            ));
        }
    }
    if let Some(req) = k.bounds.reqntid {
        if req != cfg.block {
            return bad(format!("the kernel requires block {req:?} (.reqntid), launched with {:?}", cfg.block));
        }
    }
    if let Some(c) = k.bounds.cluster {
        for d in 0..3 {
            if !cfg.grid[d].is_multiple_of(c[d]) {
                return bad(format!("grid {:?} is not a multiple of the cluster shape {c:?}", cfg.grid));
            }
        }
    }
    if k.uses_dynamic_shared && cfg.dynamic_shared_bytes == 0 {
        return bad("the kernel uses dynamic shared memory but the launch gives it 0 bytes".into());
    }
    Ok(k.check_shared_launch(cfg.dynamic_shared_bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::KernelBuilder;
    use phaser_codegen::{Target, Type};

    fn empty(name: &str, target: Target) -> Kernel {
        KernelBuilder::new(name, target).finish().unwrap()
    }

    #[test]
    fn check_target_refuses_what_the_gpu_cannot_run() {
        let sm100a = empty("tcgen05_gemm", Target::Sm100a);
        match check_target(&sm100a, (9, 0)) {
            Err(RuntimeError::TargetMismatch { kernel, target, major: 9, minor: 0, hint }) => {
                assert_eq!((kernel.as_str(), target.as_str()), ("tcgen05_gemm", "sm_100a"));
                assert_eq!(hint, "sm_100a code runs only on compute capability 10.0");
            }
            other => panic!("sm_100a on sm_90: {other:?}"),
        }
        // Architecture-specific code runs on its own chip only; portable code on newer ones too.
        assert!(check_target(&sm100a, (10, 0)).is_ok());
        assert!(check_target(&empty("hopper", Target::Sm90a), (9, 0)).is_ok());
        assert!(check_target(&empty("hopper", Target::Sm90a), (10, 0)).is_err());
        let e = check_target(&empty("ampere", Target::Sm80), (7, 5)).unwrap_err().to_string();
        assert!(e.ends_with("sm_80 needs compute capability 8.0 or newer"), "{e}");
        assert!(check_target(&empty("ampere", Target::Sm80), (9, 0)).is_ok());
        assert!(Device::sim(Default::default()).check_target(&sm100a).is_ok(), "the simulator runs every target");
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

    #[test]
    fn launch_shape_limits_come_from_the_target_table() {
        let mut k = KernelBuilder::new("shape", Target::Sm90a);
        let x = k.param("x", Type::U32);
        k.probe("x", &[x]);
        let k = k.finish().unwrap();
        let problem = |grid: [u32; 3], block: [u32; 3]| match check_config(
            &k,
            &LaunchConfig { grid, block, ..LaunchConfig::linear(1, 1) },
        ) {
            Err(RuntimeError::BadLaunch { problem, .. }) => problem,
            other => panic!("expected BadLaunch, got {:?}", other.map(|_| ())),
        };
        assert_eq!(problem([1, 65536, 1], [32, 1, 1]), "grid [1, 65536, 1]: dimension 1 exceeds 65535 (sm_90a limit)");
        assert_eq!(problem([1, 1, 1], [1, 1, 65]), "block [1, 1, 65]: dimension 2 exceeds 64 (sm_90a limit)");
        assert_eq!(problem([1, 1, 1], [64, 32, 1]), "2048 threads per block exceed 1024");
        check_config(
            &k,
            &LaunchConfig { grid: [(1 << 31) - 1, 65535, 65535], block: [1024, 1, 1], ..LaunchConfig::linear(1, 1) },
        )
        .unwrap();
    }

    #[test]
    fn cluster_grid_must_be_a_multiple() {
        let mut k = KernelBuilder::new("c", Target::Sm90a);
        k.cluster(2, 1, 1);
        let x = k.param("x", Type::U32);
        k.probe("x", &[x]);
        let k = k.finish().unwrap();
        let e = check_config(&k, &LaunchConfig::linear(3, 32)).unwrap_err().to_string();
        assert!(e.contains("not a multiple of the cluster shape [2, 1, 1]"), "{e}");
        check_config(&k, &LaunchConfig::linear(4, 32)).unwrap();
    }
}
