//! The watchdog's record buffer: pinned host memory mapped into the device's address space.
//! A kernel that traps poisons its context, after which no copy from device memory works;
//! host memory the kernel wrote through the mapping is still there to read.

use super::driver_err;
use super::ffi::MappedWords;
use crate::error::Result;
use cudarc::driver::CudaContext;
use phaser_codegen::emit::watchdog::{self, RECORD_WORDS};
use std::sync::Arc;

/// The record's words. It is `Send` (its memory is owned, see [`MappedWords`]) but not `Sync`:
/// `CudaDevice` keeps it in a mutex that a launch (the only way a kernel writes it) holds
/// until its kernel finished, and a `Mutex<T>` is `Sync` whenever `T` is `Send`.
pub(crate) struct RecordBuffer(MappedWords<RECORD_WORDS>);

impl RecordBuffer {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<RecordBuffer> {
        MappedWords::new(ctx)
            .map(RecordBuffer)
            .map_err(driver_err("allocating the watchdog record (pinned host memory mapped into the device)"))
    }

    /// The address kernels write to (`cuMemHostGetDevicePointer`).
    pub(crate) fn device_addr(&self) -> u64 {
        self.0.device_addr()
    }

    /// Zero the header and every entry's marker (before a launch: a record found afterwards
    /// is that launch's); the other words mean nothing without them.
    pub(crate) fn clear(&self) {
        self.0.zero(watchdog::words_cleared_before_launch())
    }

    /// The words as the device left them.
    pub(crate) fn read(&self) -> [u32; RECORD_WORDS] {
        self.0.read()
    }
}
