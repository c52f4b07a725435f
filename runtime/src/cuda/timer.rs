//! Device-side timing with a pair of CUDA events around stream work.

use super::driver_err;
use crate::error::Result;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use std::sync::Arc;
use std::time::Duration;

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
