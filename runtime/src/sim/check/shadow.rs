//! Per-byte shadow state of shared memory: the last write and read (as epochs: thread and its
//! clock), the async op about to write or read the byte.

/// Shadow state of one shared-memory byte.
#[derive(Clone, Copy, Default, Debug)]
pub struct Shadow {
    /// Last write epoch (`ASYNC` set when an async copy wrote it, `UNORDERED` for atomics), 0 if
    /// never written in this launch.
    pub w: u64,
    /// Last read epoch, 0 if none since the last write.
    pub r: u64,
    /// In-flight async copy that will write this byte (op id), 0 if none.
    pub pend: u32,
    /// In-flight TMA store reading this byte (op id), 0 if none.
    pub pend_read: u32,
}

/// The write was by an async copy (the epoch names its publisher).
pub const ASYNC: u64 = 1 << 63;
/// The write was an atomic: the byte is initialized, but atomics are not ordered with anything.
pub const UNORDERED: u64 = 1 << 62;

#[inline]
pub fn epoch(t: u32, clk: u32) -> u64 {
    ((t as u64 + 1) << 32) | clk as u64
}
#[inline]
pub fn ep_tid(e: u64) -> u32 {
    (((e & !(ASYNC | UNORDERED)) >> 32) - 1) as u32
}
#[inline]
pub fn ep_clk(e: u64) -> u32 {
    e as u32
}
