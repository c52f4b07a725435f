//! Device-side timing with a pair of CUDA events around stream work.

use super::driver_err;
use crate::error::Result;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Timing events kept for reuse, so a launch does not create and destroy two events. An
/// event may be recorded again once nothing reads it any more (a wait placed on it captured
/// its state then), which holds for a launch's events once the launch is dropped.
#[derive(Default)]
pub(crate) struct EventPool(Mutex<Vec<CudaEvent>>);

/// Events kept at most (beyond that a returned event is destroyed).
const POOLED_EVENTS: usize = 256;

impl EventPool {
    fn take(&self, ctx: &Arc<CudaContext>) -> Result<CudaEvent> {
        let pooled = self.0.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(e) => Ok(e),
            None => ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver_err("creating a timing event")),
        }
    }

    fn give(&self, e: CudaEvent) {
        let mut pool = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOLED_EVENTS {
            pool.push(e);
        }
    }
}

pub(crate) struct EventTimer {
    start: CudaEvent,
    pub(crate) end: CudaEvent,
}

impl EventTimer {
    /// Record the start event on `stream`. Timing must be enabled explicitly: cudarc creates
    /// events with `CU_EVENT_DISABLE_TIMING` by default.
    pub(crate) fn start(ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<EventTimer> {
        let start =
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver_err("creating a timing event"))?;
        let end =
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver_err("creating a timing event"))?;
        start.record(stream).map_err(driver_err("recording a timing event"))?;
        Ok(EventTimer { start, end })
    }

    /// [`EventTimer::start`] with events from `pool`; [`EventTimer::recycle`] gives them back.
    pub(crate) fn start_pooled(pool: &EventPool, ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<EventTimer> {
        let (start, end) = (pool.take(ctx)?, pool.take(ctx)?);
        start.record(stream).map_err(driver_err("recording a timing event"))?;
        Ok(EventTimer { start, end })
    }

    /// Give the events back to `pool` (nothing may read them afterwards).
    pub(crate) fn recycle(self, pool: &EventPool) {
        pool.give(self.start);
        pool.give(self.end);
    }

    /// Record the end event on `stream` (the work in between is what gets timed).
    pub(crate) fn stop(&self, stream: &CudaStream) -> Result<()> {
        self.end.record(stream).map_err(driver_err("recording a timing event"))
    }

    /// Device time between the two events; call once the end event completed.
    pub(crate) fn elapsed(&self) -> Result<Duration> {
        let ms = self.start.elapsed_ms(&self.end).map_err(driver_err("reading the timing events"))?;
        Ok(Duration::from_secs_f64(ms as f64 / 1e3))
    }
}
