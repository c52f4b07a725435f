//! The watchdog's record buffer: pinned host memory mapped into the device's address space.
//! A kernel that traps poisons its context, after which no copy from device memory works;
//! host memory the kernel wrote through the mapping is still there to read.

use super::driver_err;
use crate::error::Result;
use cudarc::driver::{sys, CudaContext};
use phaser_codegen::emit::watchdog::RECORD_WORDS;
use std::sync::Arc;

pub(crate) struct RecordBuffer {
    host: *mut u32,
    /// The address kernels write to (`cuMemHostGetDevicePointer`).
    pub(crate) device_addr: u64,
    ctx: Arc<CudaContext>,
}

// Safety: the buffer is plain host memory owned by this value; the host reads and writes it
// with volatile word accesses, and `CudaDevice` keeps it in a mutex that a launch (the only
// way a kernel writes it) holds until its kernel finished, so no two threads touch it at once.
unsafe impl Send for RecordBuffer {}
unsafe impl Sync for RecordBuffer {}

impl RecordBuffer {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<RecordBuffer> {
        ctx.bind_to_thread().map_err(driver_err("binding the CUDA context"))?;
        let bytes = RECORD_WORDS * 4;
        let mut host = std::ptr::null_mut();
        // Safety: `host` receives a fresh allocation of `bytes` bytes; DEVICEMAP maps it into
        // the device's address space, PORTABLE into every context.
        unsafe {
            sys::cuMemHostAlloc(&mut host, bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE)
        }
        .result()
        .map_err(driver_err("allocating the watchdog record (mapped pinned host memory)"))?;
        let mut device_addr = 0;
        // Safety: `host` is the mapped allocation made above; flags must be 0.
        let mapped = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device_addr, host, 0) }.result();
        let buf = RecordBuffer { host: host.cast(), device_addr, ctx: ctx.clone() };
        mapped.map_err(driver_err("mapping the watchdog record into the device's address space"))?;
        buf.clear();
        Ok(buf)
    }

    /// Zero every word (before a launch: a record found afterwards is that launch's).
    pub(crate) fn clear(&self) {
        for i in 0..RECORD_WORDS {
            // Safety: `i` < RECORD_WORDS, the allocation's length in words.
            unsafe { self.host.add(i).write_volatile(0) };
        }
    }

    /// The words as the device left them.
    pub(crate) fn read(&self) -> [u32; RECORD_WORDS] {
        let mut w = [0u32; RECORD_WORDS];
        for (i, x) in w.iter_mut().enumerate() {
            // Safety: as in `clear`.
            *x = unsafe { self.host.add(i).read_volatile() };
        }
        w
    }
}

impl Drop for RecordBuffer {
    fn drop(&mut self) {
        // A poisoned context may refuse; the process is about to restart GPU work anyway.
        let _ = self.ctx.bind_to_thread();
        // Safety: `host` came from cuMemHostAlloc and is freed once, here.
        let _ = unsafe { sys::cuMemFreeHost(self.host.cast()) }.result();
    }
}
