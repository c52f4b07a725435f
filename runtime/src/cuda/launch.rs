//! Launching a kernel on the GPU: target check, cached PTX and module, arguments, timing,
//! fault mapping. Launch-shape and shared-memory checks ran before, in `Device::launch`
//! (the same checks as the simulator's).

use super::device::CudaDevice;
use super::driver_err;
use crate::args::{Arg, BufferArg};
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::{LaunchConfig, LaunchReport};
use crate::watchdog::{Watchdog, WatchdogRecord};
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{DeviceRepr, PushKernelArg};
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::ir::Kernel;
use phaser_codegen::EmitOptions;
use std::time::{Duration, Instant};

/// A `CUtensorMap` passed by value: 128 bytes, 64-byte aligned, like the PTX parameter.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct TensorMapParam(pub [u64; 16]);
// Safety: plain bytes with the layout the kernel parameter declares.
unsafe impl DeviceRepr for TensorMapParam {}

/// Longest a launch may take before the host gives up waiting (the device-side watchdog in
/// mbarrier waits normally traps a deadlocked kernel long before this; with the watchdog off
/// the host waits as long as the kernel runs).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(120);

/// One kernel parameter as cudarc pushes it.
enum Slot<'a> {
    U16(u16),
    U32(u32),
    U64(u64),
    Map(TensorMapParam),
    Buffer(&'a dyn super::CudaBufferArg),
}

impl CudaDevice {
    pub(crate) fn launch(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        args: &[Arg],
    ) -> Result<LaunchReport> {
        crate::device::check_target(k, self.cc)?;
        // Held until the launch returns: the buffers tensor maps view cannot be freed meanwhile.
        let _maps = crate::tensor_map::hold_tensor_maps(
            k,
            args,
            crate::tensor_map::DeviceKey::Cuda(self.ctx.cu_ctx() as usize),
        )?;
        let mut slots = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(k.params()) {
            slots.push(match a {
                Arg::Scalar { ty, bits } => match ty.size() {
                    2 => Slot::U16(*bits as u16),
                    4 => Slot::U32(*bits as u32),
                    _ => Slot::U64(*bits),
                },
                Arg::Buffer { storage: BufferArg::Cuda(s), .. } => Slot::Buffer(*s),
                Arg::Buffer { storage: BufferArg::Sim(_), .. } => {
                    return Err(RuntimeError::BackendMismatch { buffer: Backend::Sim, device: Backend::Cuda })
                }
                Arg::TensorMap(t) => match t.encoded {
                    Some(bytes) => Slot::Map(TensorMapParam(bytes)),
                    None => {
                        return Err(RuntimeError::TensorMap(format!(
                            "tensor map for `{}` was not encoded for the GPU",
                            p.name
                        )))
                    }
                },
            });
        }
        let watchdog = cfg.watchdog.or(k.watchdog()).unwrap_or(self.watchdog);
        let opts = EmitOptions { wait_timeout_ns: watchdog.timeout_ns(), ..EmitOptions::default() };
        let ptx = k.ptx_with(&opts)?;
        // Held until the kernel finished: one launch at a time owns the record.
        let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        // The entry's PTX symbol: a name that is not a PTX identifier is escaped by the printer.
        let symbol = phaser_codegen::emit::entry_symbol(k.name());
        let f = self.modules.function_with_record(&self.ctx, &self.stream, &ptx, &symbol, record.device_addr)?;
        // Without the opt-in a block gets 48 KiB, the static limit; the target's full limit
        // was checked already.
        let limits = k.target().limits();
        if layout.total(cfg.dynamic_shared_bytes) > limits.max_static_shared as u64 {
            f.set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                cfg.dynamic_shared_bytes as i32,
            )
            .map_err(driver_err(format!(
                "raising the dynamic shared memory limit of `{}` to {} bytes",
                k.name(),
                cfg.dynamic_shared_bytes
            )))?;
        }
        if let Some(c) = k.bounds().cluster {
            if c.iter().product::<u32>() > limits.max_cluster_ctas {
                f.set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                    .map_err(driver_err(format!("allowing the non-portable cluster shape {c:?} of `{}`", k.name())))?;
            }
        }
        let lc = cudarc::driver::LaunchConfig {
            grid_dim: (cfg.grid[0], cfg.grid[1], cfg.grid[2]),
            block_dim: (cfg.block[0], cfg.block[1], cfg.block[2]),
            shared_mem_bytes: cfg.dynamic_shared_bytes,
        };
        record.clear();
        let timer = super::timer::EventTimer::start(&self.ctx, &self.stream)?;
        if cfg.programmatic_dependent_launch {
            self.launch_dependent(&f, cfg, &slots).map_err(driver_err(format!("launching `{}`", k.name())))?;
        } else {
            let mut b = self.stream.launch_builder(&f);
            for s in &slots {
                match s {
                    Slot::U16(v) => {
                        b.arg(v);
                    }
                    Slot::U32(v) => {
                        b.arg(v);
                    }
                    Slot::U64(v) => {
                        b.arg(v);
                    }
                    Slot::Map(v) => {
                        b.arg(v);
                    }
                    Slot::Buffer(s) => s.push_arg(&mut b),
                }
            }
            // Safety: `check_args` matched the argument count, kinds and types against the
            // kernel's parameters, every buffer belongs to this context (`Device::launch`),
            // and the slots outlive the launch call that reads them.
            unsafe { b.launch(lc) }.map_err(driver_err(format!("launching `{}`", k.name())))?;
        }
        timer.stop(&self.stream)?;
        // After a fault the record (host memory) is still readable: it names the starved wait.
        let fault = |message: String, source| RuntimeError::KernelFault {
            kernel: k.name().to_owned(),
            message,
            watchdog: WatchdogRecord::decode(k, &record.read()).map(Box::new),
            source,
        };
        let t0 = Instant::now();
        loop {
            match timer.end.try_is_complete() {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(fault(e.to_string(), Some(e))),
            }
            // With the watchdog off the kernel may wait forever, as asked (a debugger session).
            if watchdog != Watchdog::Off && t0.elapsed() > HOST_TIMEOUT {
                return Err(fault(format!("still running after {HOST_TIMEOUT:?}"), None));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        self.stream.synchronize().map_err(|e| fault(e.to_string(), Some(e)))?;
        Ok(LaunchReport { elapsed: Some(timer.elapsed()?), sim: None })
    }

    /// `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (cudarc's
    /// launch builder has no launch attributes).
    fn launch_dependent(
        &self,
        f: &cudarc::driver::CudaFunction,
        cfg: &LaunchConfig,
        slots: &[Slot],
    ) -> std::result::Result<(), cudarc::driver::DriverError> {
        use cudarc::driver::sys;
        use std::ffi::c_void;
        self.ctx.bind_to_thread()?;
        // Each parameter's bytes live in `values` (scalars, buffer addresses) or in the slot
        // (tensor maps) until the call returns; `params` points at them.
        let mut values: Vec<u64> = Vec::with_capacity(slots.len());
        let mut guards = Vec::new();
        for s in slots {
            values.push(match s {
                Slot::U16(v) => *v as u64,
                Slot::U32(v) => *v as u64,
                Slot::U64(v) => *v,
                Slot::Map(_) => 0,
                Slot::Buffer(b) => {
                    let (addr, guard) = b.device_addr(&self.stream);
                    guards.push(guard);
                    addr
                }
            });
        }
        let mut params: Vec<*mut c_void> = slots
            .iter()
            .zip(values.iter_mut())
            .map(|(s, v)| match s {
                Slot::Map(m) => m as *const TensorMapParam as *mut c_void,
                // Little-endian: a u16/u32 parameter reads the low bytes of its u64.
                _ => v as *mut u64 as *mut c_void,
            })
            .collect();
        // Safety: the attribute is a plain C union whose `programmaticStreamSerializationAllowed`
        // member is the one the id selects; zeroed padding is valid.
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid[0],
            gridDimY: cfg.grid[1],
            gridDimZ: cfg.grid[2],
            blockDimX: cfg.block[0],
            blockDimY: cfg.block[1],
            blockDimZ: cfg.block[2],
            sharedMemBytes: cfg.dynamic_shared_bytes,
            hStream: self.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: 1,
        };
        // Safety: `check_args` matched the argument count, kinds and types against the
        // kernel's parameters (as for the plain launch); `params` points at one live value per
        // parameter, of the parameter's size (scalars are little-endian in a u64, tensor maps
        // are the 128-byte slot), all outliving the call, which copies them; `config` and
        // `attr` outlive it too, and the buffers belong to this context.
        unsafe {
            sys::cuLaunchKernelEx(&config, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()).result()?;
        }
        drop(guards);
        Ok(())
    }
}
