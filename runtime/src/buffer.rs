//! Typed device buffers; the storage belongs to one backend and one device.

pub use crate::device::Storage;
use crate::elem::Elem;
use crate::error::Backend;
use std::sync::{Arc, Condvar, Mutex};

/// A buffer of `len` elements of `T` on a [`crate::Device`]. Host writes take `&mut`.
///
/// Tensor maps view a buffer by address, so they share its [`Lifeline`]: a launch refuses a
/// map whose buffer is gone, and dropping a buffer waits for launches reading it through a
/// map to finish (on the GPU a freed buffer would be a use-after-free; in the simulator,
/// stale bytes).
pub struct Buffer<T: Elem> {
    pub(crate) storage: Storage<T>,
    pub(crate) len: usize,
    pub(crate) lifeline: Arc<Lifeline>,
}

impl<T: Elem> Buffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Size in bytes (it fits `usize`: `Device::alloc` refused any buffer whose size does not).
    pub fn bytes(&self) -> usize {
        self.len * T::TYPE.size() as usize
    }
    pub fn storage(&self) -> &Storage<T> {
        &self.storage
    }
    pub fn backend(&self) -> Backend {
        self.storage.backend()
    }
}

impl<T: Elem> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer<{}>({} elements on the {})", T::TYPE, self.len, self.backend())
    }
}

impl<T: Elem> Drop for Buffer<T> {
    fn drop(&mut self) {
        // Before the storage is freed (fields drop after this): no map reaches it any more.
        self.lifeline.end();
    }
}

/// Whether a buffer is alive, and how many launches are reading it through tensor maps.
#[derive(Debug, Default)]
pub struct Lifeline {
    state: Mutex<LifeState>,
    released: Condvar,
}

#[derive(Debug)]
struct LifeState {
    alive: bool,
    launches: usize,
}

impl Default for LifeState {
    fn default() -> Self {
        LifeState { alive: true, launches: 0 }
    }
}

impl Lifeline {
    fn state(&self) -> std::sync::MutexGuard<'_, LifeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keep the buffer alive for a launch: `None` if it was dropped already.
    pub(crate) fn hold(self: &Arc<Self>) -> Option<LaunchHold> {
        let mut s = self.state();
        if !s.alive {
            return None;
        }
        s.launches += 1;
        Some(LaunchHold(self.clone()))
    }

    /// The memory is going away (a buffer dropped, a cudarc tensor map's borrow ending):
    /// refuse new holds and wait for the current ones.
    pub(crate) fn end(&self) {
        let mut s = self.state();
        s.alive = false;
        while s.launches > 0 {
            s = self.released.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A launch's hold on a buffer it reads through a tensor map; released when dropped.
#[derive(Debug)]
pub struct LaunchHold(Arc<Lifeline>);

impl Drop for LaunchHold {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.launches -= 1;
        if s.launches == 0 {
            self.0.released.notify_all();
        }
    }
}
