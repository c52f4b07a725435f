//! `Device`: one launch API over two backends, the CUDA GPU and the CPU simulator.

use crate::args::{check_args, Arg};
use crate::buffer::{Buffer, RawBuffer};
use crate::elem::{from_bytes, to_bytes, Elem};
use crate::error::{Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use crate::{cuda, sim};
use phaser_codegen::Kernel;
use std::marker::PhantomData;

pub enum Device {
    Cuda(cuda::CudaDevice),
    Sim(sim::SimDevice),
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

    pub fn describe(&self) -> String {
        match self {
            Device::Cuda(d) => d.describe(),
            Device::Sim(_) => "Phaser CPU simulator".into(),
        }
    }

    /// A zero-filled buffer of `len` elements.
    pub fn alloc<T: Elem>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len * T::TYPE.size() as usize;
        let raw = match self {
            Device::Cuda(d) => RawBuffer::Cuda(d.alloc(bytes)?),
            Device::Sim(d) => RawBuffer::Sim(d.alloc(bytes)?),
        };
        Ok(Buffer { raw, len, _t: PhantomData })
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Elem>(&self, data: &[T]) -> Result<Buffer<T>> {
        let b = self.alloc::<T>(data.len())?;
        self.write(&b, data)?;
        Ok(b)
    }

    pub fn write<T: Elem>(&self, buf: &Buffer<T>, data: &[T]) -> Result<()> {
        if data.len() != buf.len() {
            return Err(RuntimeError::BufferSize(format!(
                "writing {} elements into a buffer of {}",
                data.len(),
                buf.len()
            )));
        }
        let bytes = to_bytes(data);
        match (self, &buf.raw) {
            (Device::Cuda(d), RawBuffer::Cuda(s)) => d.write(s, &bytes),
            (Device::Sim(d), RawBuffer::Sim(s)) => d.write(s, &bytes),
            _ => Err(foreign_buffer()),
        }
    }

    /// Fill every element with `value` (used to poison outputs before a run).
    pub fn fill<T: Elem>(&self, buf: &Buffer<T>, value: T) -> Result<()> {
        self.write(buf, &vec![value; buf.len()])
    }

    pub fn download<T: Elem>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        let bytes = match (self, &buf.raw) {
            (Device::Cuda(d), RawBuffer::Cuda(s)) => d.read(s)?,
            (Device::Sim(d), RawBuffer::Sim(s)) => d.read(s),
            _ => return Err(foreign_buffer()),
        };
        Ok(from_bytes(&bytes))
    }

    /// Launch `kernel` and wait for it; arguments are checked against its parameters first.
    pub fn launch(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<LaunchReport> {
        check_args(kernel, args)?;
        check_config(kernel, &cfg)?;
        for a in args {
            let ok = match (self, a) {
                (Device::Cuda(_), Arg::Buffer { raw: RawBuffer::Sim(_), .. }) => false,
                (Device::Sim(_), Arg::Buffer { raw: RawBuffer::Cuda(_), .. }) => false,
                _ => true,
            };
            if !ok {
                return Err(foreign_buffer());
            }
        }
        match self {
            Device::Cuda(d) => d.launch(kernel, &cfg, args),
            Device::Sim(d) => d.launch(kernel, &cfg, args),
        }
    }
}

impl Device {
    /// Run `kernel` in the simulator and return its full report, findings included (a
    /// launch would turn error findings into `RuntimeError::Simulation`).
    pub fn simulate(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<sim::SimReport> {
        match self {
            Device::Sim(d) => d.simulate(kernel, &cfg, args),
            Device::Cuda(_) => Err(RuntimeError::Simulation("`simulate` needs the simulator device".into())),
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
            Device::Sim(d) => d.simulate_with(kernel, &cfg, args, sc),
            Device::Cuda(_) => Err(RuntimeError::Simulation("`simulate` needs the simulator device".into())),
        }
    }
}

fn foreign_buffer() -> RuntimeError {
    RuntimeError::BufferSize("the buffer belongs to another device".into())
}

/// Launch-shape checks shared by both backends.
pub fn check_config(k: &Kernel, cfg: &LaunchConfig) -> Result<()> {
    let bad = |problem: String| Err(RuntimeError::BadLaunch { kernel: k.name.clone(), problem });
    if cfg.grid.contains(&0) || cfg.block.contains(&0) {
        return bad(format!("grid {:?} and block {:?} must have no zero dimension", cfg.grid, cfg.block));
    }
    if cfg.threads_per_block() > 1024 {
        return bad(format!("{} threads per block exceed 1024", cfg.threads_per_block()));
    }
    if let Some(req) = k.bounds.reqntid {
        if req != cfg.block {
            return bad(format!("the kernel requires block {req:?} (.reqntid), launched with {:?}", cfg.block));
        }
    }
    if let Some(c) = k.bounds.cluster {
        for d in 0..3 {
            if cfg.grid[d] % c[d] != 0 {
                return bad(format!("grid {:?} is not a multiple of the cluster shape {c:?}", cfg.grid));
            }
        }
    }
    if cfg.dynamic_shared_bytes > 0 && !k.uses_dynamic_shared {
        // Harmless, but almost always a mistake worth naming.
    }
    if k.uses_dynamic_shared && cfg.dynamic_shared_bytes == 0 {
        return bad("the kernel uses dynamic shared memory but the launch gives it 0 bytes".into());
    }
    let total = k.static_shared_bytes() as u64 + cfg.dynamic_shared_bytes as u64;
    if total > 227 * 1024 {
        return bad(format!("{total} bytes of shared memory exceed the 227 KiB per-block maximum"));
    }
    Ok(())
}
