//! Events: points in a stream's work that other streams wait for, the host waits for, and
//! device time is measured between.

use crate::error::{Backend, Result, RuntimeError};
use crate::cuda::driver_err;
use std::time::Duration;

/// A point recorded in a [`crate::Stream`]'s work ([`crate::Stream::record`]).
///
/// On the GPU it is a CUDA event created with timing enabled. In the simulator a stream's
/// work has run by the time the launch returns, so an event is complete when recorded and
/// the simulator has no device clock to time with.
pub struct Event {
    pub(crate) inner: EventInner,
}

pub(crate) enum EventInner {
    Cuda(cudarc::driver::CudaEvent),
    /// Recorded on the simulator of this id.
    Sim(u64),
}

impl Event {
    /// Device time from `start` to this event, both recorded and complete (waits for this
    /// one). Refused in the simulator, which has no device clock.
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        match (&start.inner, &self.inner) {
            (EventInner::Cuda(a), EventInner::Cuda(b)) => {
                b.synchronize().map_err(driver_err("waiting for an event"))?;
                let ms = a.elapsed_ms(b).map_err(driver_err("reading the time between two events"))?;
                Ok(Duration::from_secs_f64(ms as f64 / 1e3))
            }
            (EventInner::Sim(_), EventInner::Sim(_)) => {
                Err(RuntimeError::Unsupported { operation: "Event::elapsed_since", needs: Backend::Cuda, device: Backend::Sim })
            }
            (EventInner::Cuda(_), EventInner::Sim(_)) | (EventInner::Sim(_), EventInner::Cuda(_)) => {
                Err(RuntimeError::Config("the time between two events of different backends was asked for".into()))
            }
        }
    }

    /// Wait on the host until the work before the event is done.
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            EventInner::Cuda(e) => e.synchronize().map_err(driver_err("waiting for an event")),
            EventInner::Sim(_) => Ok(()),
        }
    }

    /// Whether the work before the event is done (never blocks).
    pub fn is_complete(&self) -> Result<bool> {
        match &self.inner {
            EventInner::Cuda(e) => e.try_is_complete().map_err(driver_err("querying an event")),
            EventInner::Sim(_) => Ok(true),
        }
    }

    pub fn backend(&self) -> Backend {
        match &self.inner {
            EventInner::Cuda(_) => Backend::Cuda,
            EventInner::Sim(_) => Backend::Sim,
        }
    }

    /// The cudarc event (GPU only), for waits and timing in the application's own cudarc code.
    pub fn as_cuda(&self) -> Option<&cudarc::driver::CudaEvent> {
        match &self.inner {
            EventInner::Cuda(e) => Some(e),
            EventInner::Sim(_) => None,
        }
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event(on the {})", self.backend())
    }
}
