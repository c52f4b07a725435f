//! Launching a kernel on the GPU: cached PTX and module, arguments, timing, fault mapping.
//! The target, launch-shape, shared-memory and argument checks ran before, in
//! `Device::launch` (the same checks as the simulator's), which also holds the buffers the
//! tensor maps view.

use super::device::CudaDevice;
use super::driver_err;
use super::ffi::{self, Slot, TensorMapParam};
use crate::args::ResolvedArg;
use crate::error::{BackendError, Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::watchdog::{Watchdog, WatchdogRecord};
use cudarc::driver::sys::CUfunction_attribute_enum;
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::ir::Kernel;
use std::time::{Duration, Instant};

/// Longest a launch may take before the host gives up waiting (the device-side watchdog in
/// mbarrier waits normally traps a deadlocked kernel long before this; with the watchdog off
/// the host waits as long as the kernel runs).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(120);

/// A launch argument as the GPU takes it: buffers are this device's.
pub(crate) type CudaArg<'a> = ResolvedArg<'a, &'a dyn super::CudaBufferArg>;

impl CudaDevice {
    /// Launch (checked by the device) and wait: the kernel's time on the device.
    pub(crate) fn launch(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        args: &[CudaArg],
    ) -> Result<Duration> {
        let mut slots = Vec::with_capacity(args.len());
        for (a, p) in args.iter().zip(k.params()) {
            slots.push(match a {
                ResolvedArg::Scalar { ty, bits } => match ty.size() {
                    2 => Slot::U16(*bits as u16),
                    4 => Slot::U32(*bits as u32),
                    _ => Slot::U64(*bits),
                },
                ResolvedArg::Buffer(s) => Slot::Buffer(*s),
                ResolvedArg::TensorMap(t) => match t.encoded {
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
        let opts = super::policy::emit_options(watchdog, self.wait_loop);
        let ptx = k.ptx_with(&opts)?;
        // Held until the kernel finished: one launch at a time owns the record.
        let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        // The entry's PTX symbol: a name that is not a PTX identifier is escaped by the printer.
        let symbol = phaser_codegen::emit::entry_symbol(k.name());
        let f = self.modules.function_with_record(&self.ctx, &self.stream, &ptx, &symbol, record.device_addr())?;
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
        record.clear();
        let timer = super::timer::EventTimer::start(&self.ctx, &self.stream)?;
        let launched = if cfg.programmatic_dependent_launch {
            ffi::launch_dependent(&self.ctx, &self.stream, &f, k.params(), &slots, cfg)
        } else {
            ffi::launch(&self.stream, &f, k.params(), &slots, cfg)
        };
        launched.map_err(driver_err(format!("launching `{}`", k.name())))?;
        timer.stop(&self.stream)?;
        // After a fault the record (host memory) is still readable: it names the starved wait.
        let fault = |message: String, source: Option<BackendError>| RuntimeError::KernelFault {
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
                Err(e) => return Err(fault(e.to_string(), Some(e.into()))),
            }
            // With the watchdog off the kernel may wait forever, as asked (a debugger session).
            if watchdog != Watchdog::Off && t0.elapsed() > HOST_TIMEOUT {
                return Err(fault(format!("still running after {HOST_TIMEOUT:?}"), None));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        self.stream.synchronize().map_err(|e| fault(e.to_string(), Some(e.into())))?;
        timer.elapsed()
    }
}
