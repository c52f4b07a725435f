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
use crate::watchdog::{Watchdog, WatchdogReport};
use cudarc::driver::sys::CUfunction_attribute_enum;
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::ir::Kernel;
use super::record::RecordBuffer;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use cudarc::driver::CudaStream;

/// Longest a launch may take before the host gives up waiting (the device-side watchdog in
/// mbarrier waits normally traps a deadlocked kernel long before this; with the watchdog off
/// the host waits as long as the kernel runs).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(120);

/// A launch argument as the GPU takes it: buffers are this device's.
pub(crate) type CudaArg<'a> = ResolvedArg<'a, super::CudaBuf<'a>>;

/// A kernel submitted to a stream: the events around it, and what waiting for it needs. It
/// counts as in flight (the device's record is not cleared under it) until dropped.
pub(crate) struct Submitted {
    /// `None` once given back to the pool (in `drop`).
    timer: Option<super::timer::EventTimer>,
    watchdog: Watchdog,
    pool: Arc<super::timer::EventPool>,
    _in_flight: InFlight,
}

impl Drop for Submitted {
    fn drop(&mut self) {
        // Nothing reads the events after this: `wait` and `is_done` borrow the submission.
        if let Some(t) = self.timer.take() {
            t.recycle(&self.pool);
        }
    }
}

/// One launch in flight on a device, counted while this lives.
struct InFlight(Arc<AtomicUsize>);

/// The driver's parameter slots of resolved arguments.
pub(crate) fn slots<'a>(k: &Kernel, args: Vec<CudaArg<'a>>) -> Result<Vec<Slot<'a>>> {
    let mut slots = Vec::with_capacity(args.len());
    for (a, p) in args.into_iter().zip(k.params()) {
        slots.push(match a {
            ResolvedArg::Scalar { ty, bits } => match ty.size() {
                2 => Slot::U16(bits as u16),
                4 => Slot::U32(bits as u32),
                _ => Slot::U64(bits),
            },
            ResolvedArg::Buffer(s) => Slot::Buffer(s),
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
    Ok(slots)
}

impl Submitted {
    /// Whether the kernel ended (a fault counts: `wait` reports it).
    pub(crate) fn is_done(&self) -> bool {
        !matches!(self.timer().end.try_is_complete(), Ok(false))
    }

    fn timer(&self) -> &super::timer::EventTimer {
        self.timer.as_ref().expect("the events are given back only when the submission drops")
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl CudaDevice {
    /// Launch (checked by the device) on the device's stream and wait: the kernel's time on
    /// the device. The record stays locked until the kernel finished, so a record found is
    /// this launch's.
    pub(crate) fn launch(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        args: Vec<CudaArg>,
    ) -> Result<Duration> {
        let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        record.clear();
        let submitted = self.submit(&self.stream, k, cfg, layout, args)?;
        self.wait_with(k, &submitted, &record)
    }

    /// Launch (checked by the device) on `stream` and return at once. The record is cleared
    /// when no other launch of this device is in flight; while several are, a starved wait's
    /// record is the first that trapped, which may be another kernel's (the fault poisons the
    /// context for all of them).
    pub(crate) fn launch_async(
        &self,
        stream: &Arc<CudaStream>,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        args: Vec<CudaArg>,
    ) -> Result<Submitted> {
        {
            let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
            if self.in_flight.load(Ordering::Acquire) == 0 {
                record.clear();
            }
        }
        self.submit(stream, k, cfg, layout, args)
    }

    /// Wait for a submitted kernel: its time on the device, or its fault with the watchdog's
    /// record.
    pub(crate) fn wait(&self, k: &Kernel, s: &Submitted) -> Result<Duration> {
        let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        self.wait_with(k, s, &record)
    }

    fn submit(
        &self,
        stream: &Arc<CudaStream>,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        args: Vec<CudaArg>,
    ) -> Result<Submitted> {
        let mut slots = slots(k, args)?;
        let (f, watchdog) = self.prepare(k, cfg, layout)?;
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let in_flight = InFlight(self.in_flight.clone());
        let timer = super::timer::EventTimer::start_pooled(&self.events, &self.ctx, stream)?;
        self.enqueue(stream, k, cfg, &f, &mut slots)?;
        timer.stop(stream)?;
        Ok(Submitted { timer: Some(timer), watchdog, pool: self.events.clone(), _in_flight: in_flight })
    }

    /// The launch's function (its module loaded, its attributes set) and its watchdog.
    pub(crate) fn prepare(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
    ) -> Result<(cudarc::driver::CudaFunction, Watchdog)> {
        let watchdog = cfg.watchdog.or(k.watchdog()).unwrap_or(self.watchdog);
        let opts = super::policy::emit_options(watchdog, self.wait_loop);
        let ptx = k.ptx_with(&opts)?;
        // The entry's PTX symbol: a name that is not a PTX identifier is escaped by the printer.
        let symbol = phaser_codegen::emit::entry_symbol(k.name());
        let f = self.modules.launch_function(&self.ctx, &self.stream, &ptx, &symbol, self.record_addr)?;
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
        Ok((f, watchdog))
    }

    /// Queue the prepared function on `stream` (plain or programmatic-dependent launch).
    pub(crate) fn enqueue(
        &self,
        stream: &Arc<CudaStream>,
        k: &Kernel,
        cfg: &LaunchConfig,
        f: &cudarc::driver::CudaFunction,
        slots: &mut [Slot],
    ) -> Result<()> {
        let launched = if cfg.programmatic_dependent_launch {
            ffi::launch_dependent(&self.ctx, stream, f, k.params(), slots, cfg)
        } else {
            ffi::launch(stream, f, k.params(), slots, cfg)
        };
        launched.map_err(driver_err(format!("launching `{}`", k.name())))
    }

    fn wait_with(&self, k: &Kernel, s: &Submitted, record: &RecordBuffer) -> Result<Duration> {
        // After a fault the record (host memory) is still readable: it names the starved wait.
        let fault = |message: String, source: Option<BackendError>| RuntimeError::KernelFault {
            kernel: k.name().to_owned(),
            message,
            watchdog: WatchdogReport::decode(k, &record.read()).map(Box::new),
            source,
        };
        let t0 = Instant::now();
        loop {
            match s.timer().end.try_is_complete() {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(fault(e.to_string(), Some(e.into()))),
            }
            // With the watchdog off the kernel may wait forever, as asked (a debugger session).
            if s.watchdog != Watchdog::Off && t0.elapsed() > HOST_TIMEOUT {
                return Err(fault(format!("still running after {HOST_TIMEOUT:?}"), None));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        // The end event completed: the kernel ended (a fault shows in the query above, or here).
        s.timer().end.synchronize().map_err(|e| fault(e.to_string(), Some(e.into())))?;
        s.timer().elapsed()
    }
}
