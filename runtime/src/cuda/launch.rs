//! Launching a kernel on the GPU: cached PTX and module, arguments, timing, fault mapping.
//! The target, launch-shape, shared-memory and argument checks ran before, in
//! `Device::launch` (the same checks as the simulator's), which also holds the buffers the
//! tensor maps view.

use super::device::CudaDevice;
use super::driver_err_with;
use super::ffi::{self, Slot, TensorMapParam};
use super::launch_function::LaunchFunction;
use super::launch_queue::LaunchQueue;
use super::record::RecordBuffer;
use crate::args::ResolvedArg;
use crate::error::{BackendError, Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::watchdog::{Watchdog, WatchdogReport};
use cudarc::driver::CudaEvent;
use cudarc::driver::CudaStream;
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::ir::{Kernel, Param};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest a launch may take before the host gives up waiting (the device-side watchdog in
/// mbarrier waits normally traps a deadlocked kernel long before this; with the watchdog off
/// the host waits as long as the kernel runs).
pub const HOST_TIMEOUT: Duration = Duration::from_secs(120);

/// A launch argument as the GPU takes it: buffers are this device's.
pub(crate) type CudaArg<'a> = ResolvedArg<'a, super::CudaBuf<'a>>;

/// A kernel submitted to a stream, and what waiting for it needs. It counts as in flight (the
/// device's record is not cleared under it) until dropped.
pub(crate) struct Submitted {
    /// The events around the kernel when the launch was timed (`LaunchConfig::timed`, every
    /// `Device::launch`); given back to the pool in `drop`.
    timer: Option<super::timer::EventTimer>,
    /// The launch's place in its stream's order: what an untimed launch is waited for by
    /// (`LaunchQueue::fence`).
    ticket: u64,
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
    args.into_iter().zip(k.params()).map(|(a, p)| slot(a, p)).collect()
}

/// The driver's parameter slot of one resolved argument, for parameter `p`.
pub(crate) fn slot<'a>(a: CudaArg<'a>, p: &Param) -> Result<Slot<'a>> {
    Ok(match a {
        ResolvedArg::Scalar { ty, bits } => match ty.size() {
            2 => Slot::U16(bits as u16),
            4 => Slot::U32(bits as u32),
            _ => Slot::U64(bits),
        },
        ResolvedArg::Buffer(s) => Slot::Buffer(s),
        ResolvedArg::TensorMap(t) => match t.encoded {
            Some(bytes) => Slot::Map(TensorMapParam(bytes)),
            None => {
                return Err(RuntimeError::TensorMap(format!("tensor map for `{}` was not encoded for the GPU", p.name)))
            }
        },
    })
}

/// The event a wait polls: the launch's own end event, or a fence of its stream.
enum Done<'s> {
    Timed(&'s CudaEvent),
    Fence(Arc<CudaEvent>),
}

impl std::ops::Deref for Done<'_> {
    type Target = CudaEvent;
    fn deref(&self) -> &CudaEvent {
        match self {
            Done::Timed(e) => e,
            Done::Fence(e) => e,
        }
    }
}

impl Submitted {
    /// Whether the kernel ended (a fault counts: `wait` reports it). An untimed launch asks
    /// a fence of `queue`, which may record one: it is done once the work queued before this
    /// question is.
    pub(crate) fn is_done(&self, queue: &LaunchQueue) -> bool {
        match self.done(queue) {
            Ok(e) => !matches!(e.try_is_complete(), Ok(false)),
            Err(_) => true,
        }
    }

    fn done<'s>(&'s self, queue: &LaunchQueue) -> std::result::Result<Done<'s>, cudarc::driver::DriverError> {
        match &self.timer {
            Some(t) => Ok(Done::Timed(&t.end)),
            None => queue.fence(self.ticket).map(Done::Fence),
        }
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
        let slots = slots(k, args)?;
        let submitted = self.submit(&self.stream, None, k, cfg, layout, slots, true)?;
        let timer = submitted.timer.as_ref().expect("a synchronous launch is timed");
        self.wait_with(k, submitted.watchdog, || Ok(Done::Timed(&timer.end)), &record)?;
        timer.elapsed()
    }

    /// Launch (checked by the device) on `queue`'s stream and return at once, timed when `cfg`
    /// asks (else no driver call beyond the launch's own). The record is cleared
    /// when no other launch of this device is in flight; while several are, a starved wait's
    /// record is the first that trapped, which may be another kernel's (the fault poisons the
    /// context for all of them).
    pub(crate) fn launch_async(
        &self,
        queue: &LaunchQueue,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        slots: Vec<Slot>,
    ) -> Result<Submitted> {
        {
            let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
            if self.in_flight.load(Ordering::Acquire) == 0 {
                record.clear();
            }
        }
        self.submit(queue.stream(), Some(queue), k, cfg, layout, slots, cfg.timed)
    }

    /// Wait for a kernel submitted to `queue`: its time on the device when it was timed, or
    /// its fault with the watchdog's record.
    pub(crate) fn wait(&self, k: &Kernel, s: &Submitted, queue: &LaunchQueue) -> Result<Option<Duration>> {
        let record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        self.wait_with(k, s.watchdog, || s.done(queue), &record)?;
        s.timer.as_ref().map(|t| t.elapsed()).transpose()
    }

    /// Queue the kernel on `stream` (numbered in `queue` when it is a `Stream`'s), between a
    /// pair of timing events when `timed`.
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &self,
        stream: &Arc<CudaStream>,
        queue: Option<&LaunchQueue>,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
        mut slots: Vec<Slot>,
        timed: bool,
    ) -> Result<Submitted> {
        let (f, watchdog) = self.prepare(k, cfg, layout)?;
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let in_flight = InFlight(self.in_flight.clone());
        let timer =
            if timed { Some(super::timer::EventTimer::start_pooled(&self.events, &self.ctx, stream)?) } else { None };
        // Given back to the pool if the launch fails (the submission never forms).
        let recycle = |t: Option<super::timer::EventTimer>| {
            if let Some(t) = t {
                t.recycle(&self.events)
            }
        };
        if let Err(e) = self.enqueue(stream, k, cfg, &f.f, &mut slots) {
            recycle(timer);
            return Err(e);
        }
        // Counted once queued: a fence that counts it is recorded after it.
        let ticket = queue.map_or(0, LaunchQueue::ticket);
        if let Some(t) = &timer {
            t.stop(stream)?;
        }
        Ok(Submitted { timer, ticket, watchdog, pool: self.events.clone(), _in_flight: in_flight })
    }

    /// The launch's function (its module loaded, its attributes set) and its watchdog.
    pub(crate) fn prepare(
        &self,
        k: &Kernel,
        cfg: &LaunchConfig,
        layout: &SharedLayout,
    ) -> Result<(LaunchFunction, Watchdog)> {
        let watchdog = cfg.watchdog.or(k.watchdog()).unwrap_or(self.watchdog);
        let opts = super::policy::emit_options(watchdog, self.wait_loop);
        let ptx = k.ptx_with(&opts)?;
        // The entry's PTX symbol: a name that is not a PTX identifier is escaped by the printer.
        let symbol = phaser_codegen::emit::entry_symbol(k.name());
        let f = self.modules.launch_function(&self.ctx, &self.stream, &ptx, &symbol, self.record_addr)?;
        // Without the opt-in a block gets 48 KiB, the static limit; the target's full limit
        let limits = k.target().limits();
        // was checked already. Set once per function (`LaunchFunction`), not per launch.
        if layout.total(cfg.dynamic_shared_bytes) > limits.max_static_shared as u64 {
            f.allow_dynamic_shared(cfg.dynamic_shared_bytes, k.name())?;
        }
        if let Some(c) = k.bounds().cluster {
            if c.iter().product::<u32>() > limits.max_cluster_ctas {
                f.allow_non_portable_cluster(c, k.name())?;
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
        launched.map_err(driver_err_with(|| format!("launching `{}`", k.name())))
    }

    /// Poll the event `done` gives until it completes: a fault (the event's query, or `done`
    /// itself failing after one) is reported with the watchdog's record.
    fn wait_with<'s>(
        &self,
        k: &Kernel,
        watchdog: Watchdog,
        done: impl FnOnce() -> std::result::Result<Done<'s>, cudarc::driver::DriverError>,
        record: &RecordBuffer,
    ) -> Result<()> {
        // After a fault the record (host memory) is still readable: it names the starved wait.
        let fault = |message: String, source: Option<BackendError>| RuntimeError::KernelFault {
            kernel: k.name().to_owned(),
            message,
            watchdog: WatchdogReport::decode(k, &record.read()).map(Box::new),
            source,
        };
        let done = done().map_err(|e| fault(e.to_string(), Some(e.into())))?;
        let t0 = Instant::now();
        loop {
            match done.try_is_complete() {
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
        // The event completed: the kernel ended (a fault shows in the query above, or here).
        done.synchronize().map_err(|e| fault(e.to_string(), Some(e.into())))
    }
}
