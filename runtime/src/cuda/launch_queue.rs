//! A CUDA stream as `Stream` launches use it, and when a launch on it is done, known without
//! an event of its own.
//!
//! A stream's work runs in order, so an event recorded after a launch completes only after
//! it. The stream numbers its launches (a ticket each, taken once the launch is queued); a
//! wait for a launch records one event, a fence, covering every launch queued by then, and
//! later waits for launches it covers reuse it. A launch that is not timed so costs no
//! driver call beyond the launch itself, and a thousand guards waited for in order cost one
//! event. What a fence says is "this launch and the stream's work queued before the wait
//! began are done": never earlier than the launch, at most later by work already queued.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream, DriverError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A stream and the fences of its launches.
pub(crate) struct LaunchQueue {
    stream: Arc<CudaStream>,
    fences: Fences<Arc<CudaEvent>>,
}

impl LaunchQueue {
    pub(crate) fn new(stream: Arc<CudaStream>) -> LaunchQueue {
        LaunchQueue { stream, fences: Fences::default() }
    }

    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Count a launch that was just queued (call after the launch call returned): its ticket.
    pub(crate) fn ticket(&self) -> u64 {
        self.fences.ticket()
    }

    /// An event that completes once launch `ticket` (and what was queued before it) is done.
    /// The driver's error is returned as is: after a fault it is the fault, which the caller
    /// reports.
    pub(crate) fn fence(&self, ticket: u64) -> Result<Arc<CudaEvent>, DriverError> {
        self.fences
            .fence(ticket, || self.stream.record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING)).map(Arc::new))
    }
}

/// Tickets of launches, and the latest fence (of type `F`: an event) with the count of
/// launches it covers.
struct Fences<F> {
    /// Launches queued so far; a launch's ticket is the count once it was queued.
    queued: AtomicU64,
    latest: Mutex<Option<(u64, F)>>,
}

impl<F> Default for Fences<F> {
    fn default() -> Self {
        Fences { queued: AtomicU64::new(0), latest: Mutex::new(None) }
    }
}

impl<F: Clone> Fences<F> {
    fn ticket(&self) -> u64 {
        // A fence that reads this count (Acquire) is recorded after the launch was queued.
        self.queued.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// The latest fence when it covers `ticket`, else a new one from `record` (which records
    /// it on the stream now).
    fn fence<E>(&self, ticket: u64, record: impl FnOnce() -> Result<F, E>) -> Result<F, E> {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, f)) = latest.as_ref().filter(|(covers, _)| *covers >= ticket) {
            return Ok(f.clone());
        }
        // Read before the record, under the lock: every launch counted here was queued
        // before the fence, and fences are kept in the order they were recorded.
        let covers = self.queued.load(Ordering::Acquire);
        let f = record()?;
        *latest = Some((covers, f.clone()));
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn one_fence_covers_every_launch_queued_before_it() {
        let fences = Fences::<u32>::default();
        let records = Cell::new(0);
        let record = || -> Result<u32, ()> {
            records.set(records.get() + 1);
            Ok(records.get())
        };
        let (a, b) = (fences.ticket(), fences.ticket());
        assert_eq!((a, b), (1, 2));
        assert_eq!(fences.fence(a, record), Ok(1), "the first wait records a fence");
        assert_eq!(fences.fence(b, record), Ok(1), "which covers the launch queued before it");
        let c = fences.ticket();
        assert_eq!(fences.fence(a, record), Ok(1), "an older launch keeps the fence");
        assert_eq!(fences.fence(c, record), Ok(2), "a launch after the fence gets a new one");
        assert_eq!(fences.fence(b, record), Ok(2), "the newest fence covers everything before it");
        assert_eq!(records.get(), 2);
    }

    #[test]
    fn a_failed_record_keeps_no_fence() {
        let fences = Fences::<u32>::default();
        let t = fences.ticket();
        assert_eq!(fences.fence(t, || Err::<u32, _>("fault")), Err("fault"));
        assert_eq!(fences.fence(t, || Ok::<_, ()>(7)), Ok(7), "the next wait records again");
    }
}
