//! Launching a kernel on the GPU: target check, PTX, arguments, timing, fault mapping.

use super::device::CudaDevice;
use super::driver_err;
use crate::args::Arg;
use crate::buffer::RawBuffer;
use crate::error::{Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{DeviceRepr, PushKernelArg};
use phaser_codegen::ir::Kernel;
use std::time::{Duration, Instant};

/// A `CUtensorMap` passed by value: 128 bytes, 64-byte aligned, like the PTX parameter.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct TensorMapParam(pub [u64; 16]);
// Safety: plain bytes with the layout the kernel parameter declares.
unsafe impl DeviceRepr for TensorMapParam {}

/// Longest a launch may take before the host gives up waiting (the device-side watchdog in
/// mbarrier waits normally traps a deadlocked kernel long before this).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(120);

enum Slot {
    U16(u16),
    U32(u32),
    U64(u64),
    Map(TensorMapParam),
}

impl CudaDevice {
    pub(crate) fn launch(&self, k: &Kernel, cfg: &LaunchConfig, args: &[Arg]) -> Result<LaunchReport> {
        let (major, minor) = self.cc;
        let cc = (major * 10 + minor) as u32;
        if !k.target.runs_on(cc) {
            let hint = if k.target.is_arch_specific() {
                format!(
                    "{} code runs only on compute capability {}.{}",
                    k.target,
                    k.target.sm() / 10,
                    k.target.sm() % 10
                )
            } else {
                format!("{} needs compute capability {}.{} or newer", k.target, k.target.sm() / 10, k.target.sm() % 10)
            };
            return Err(RuntimeError::TargetMismatch {
                kernel: k.name.clone(),
                target: k.target.to_string(),
                major,
                minor,
                hint,
            });
        }
        let ptx = phaser_codegen::emit_kernel(k)?;
        let f = self.modules.function(&self.ctx, &ptx, &k.name)?;
        let total_smem = cfg.dynamic_shared_bytes + k.static_shared_bytes();
        if total_smem > 48 * 1024 || cfg.dynamic_shared_bytes > 48 * 1024 {
            f.set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                cfg.dynamic_shared_bytes as i32,
            )
            .map_err(driver_err(format!(
                "raising the dynamic shared memory limit of `{}` to {} bytes",
                k.name, cfg.dynamic_shared_bytes
            )))?;
        }
        let slots: Vec<Slot> = args
            .iter()
            .map(|a| match a {
                Arg::Scalar { ty, bits } => match ty.size() {
                    2 => Slot::U16(*bits as u16),
                    4 => Slot::U32(*bits as u32),
                    _ => Slot::U64(*bits),
                },
                Arg::Buffer { raw: RawBuffer::Cuda(s), .. } => Slot::U64(self.device_ptr(s)),
                Arg::Buffer { .. } => Slot::U64(0),
                Arg::TensorMap(t) => Slot::Map(TensorMapParam(t.encoded.unwrap_or([0; 16]))),
            })
            .collect();
        for (a, p) in args.iter().zip(&k.params) {
            if let Arg::TensorMap(t) = a {
                if t.encoded.is_none() {
                    return Err(RuntimeError::TensorMap(format!(
                        "tensor map for `{}` was not encoded for the GPU",
                        p.name
                    )));
                }
            }
        }
        let lc = cudarc::driver::LaunchConfig {
            grid_dim: (cfg.grid[0], cfg.grid[1], cfg.grid[2]),
            block_dim: (cfg.block[0], cfg.block[1], cfg.block[2]),
            shared_mem_bytes: cfg.dynamic_shared_bytes,
        };
        let timer = super::timer::EventTimer::start(&self.ctx, &self.stream)?;
        {
            let mut b = self.stream.launch_builder(&f);
            for s in &slots {
                match s {
                    Slot::U16(v) => b.arg(v),
                    Slot::U32(v) => b.arg(v),
                    Slot::U64(v) => b.arg(v),
                    Slot::Map(v) => b.arg(v),
                };
            }
            // Safety: argument count and types were checked against the kernel's parameters.
            unsafe { b.launch(lc) }.map_err(driver_err(format!("launching `{}`", k.name)))?;
        }
        timer.stop(&self.stream)?;
        let t0 = Instant::now();
        loop {
            match timer.end.try_is_complete() {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(RuntimeError::KernelFault { kernel: k.name.clone(), message: format!("{e:?}") }),
            }
            if t0.elapsed() > HOST_TIMEOUT {
                return Err(RuntimeError::KernelFault {
                    kernel: k.name.clone(),
                    message: format!("still running after {HOST_TIMEOUT:?}"),
                });
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        self.stream
            .synchronize()
            .map_err(|e| RuntimeError::KernelFault { kernel: k.name.clone(), message: format!("{e:?}") })?;
        Ok(LaunchReport { elapsed: Some(timer.elapsed()?), sim: None })
    }
}
