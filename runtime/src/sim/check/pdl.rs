//! Programmatic dependent launch (`LaunchConfig::programmatic_dependent_launch`): a dependent
//! grid may start before the launch before it on the stream finished, and only
//! `griddepcontrol.wait` orders it after that grid. PTX ISA (`griddepcontrol`): "`.wait`
//! modifier causes the executing thread to wait until all prerequisite grids in flight have
//! completed and all the memory operations from the prerequisite grids are performed and made
//! visible to the current grid". The simulator runs launches in order, so it checks what the
//! GPU may reorder instead:
//!
//! - every launch records the global bytes it read and wrote (`Accesses`, per cluster in its
//!   `Collector`, merged at the end; the device keeps the last launch's as `PreviousLaunch`);
//! - in a programmatic dependent launch, a global access by a thread that has not yet executed
//!   `griddepcontrol.wait` itself (the unit is the thread, as the ISA states the guarantee for
//!   the executing thread) that reads or writes bytes the previous launch wrote, or writes
//!   bytes it read, is an `EarlyDependentAccess`.
//!
//! The record is of the previous launch's execution in the simulator: where its accesses
//! depend on data or on the schedule, another execution may touch other bytes. A thread that
//! did not wait but is ordered after one that did (a `bar.sync` after another thread's wait)
//! is still reported: the ISA gives the guarantee to the waiting thread.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Bytes per line of a `ByteSet`.
const LINE: u64 = 64;

/// A line number's hash: one multiplication (every global access of every launch updates a
/// `ByteSet`; SipHash would cost more than the access).
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A set of global bytes: one bit mask per 64-byte line.
#[derive(Clone, Debug, Default)]
pub(crate) struct ByteSet {
    lines: HashMap<u64, u64, BuildHasherDefault<LineHasher>>,
}

/// The bits of line `line` that `[addr, end)` covers.
fn line_mask(line: u64, addr: u64, end: u64) -> u64 {
    let lo = addr.max(line * LINE) - line * LINE;
    let hi = end.min((line + 1) * LINE) - line * LINE;
    if hi - lo == 64 {
        u64::MAX
    } else {
        ((1u64 << (hi - lo)) - 1) << lo
    }
}

impl ByteSet {
    pub fn insert(&mut self, addr: u64, len: u32) {
        let end = addr + len as u64;
        for line in addr / LINE..end.div_ceil(LINE) {
            *self.lines.entry(line).or_insert(0) |= line_mask(line, addr, end);
        }
    }

    /// The lowest byte of `[addr, addr + len)` in the set.
    pub fn first_overlap(&self, addr: u64, len: u32) -> Option<u64> {
        let end = addr + len as u64;
        (addr / LINE..end.div_ceil(LINE)).find_map(|line| {
            let hit = self.lines.get(&line).copied().unwrap_or(0) & line_mask(line, addr, end);
            (hit != 0).then(|| line * LINE + hit.trailing_zeros() as u64)
        })
    }

    pub fn union(&mut self, other: ByteSet) {
        if self.lines.is_empty() {
            self.lines = other.lines;
            return;
        }
        for (line, m) in other.lines {
            *self.lines.entry(line).or_insert(0) |= m;
        }
    }
}

/// The global bytes a launch read and wrote (at the issue of each access: a TMA box's
/// in-bounds elements, a bulk copy's range, an atomic's operand both read and written).
#[derive(Clone, Debug, Default)]
pub(crate) struct Accesses {
    pub reads: ByteSet,
    pub writes: ByteSet,
}

impl Accesses {
    pub fn merge(&mut self, other: Accesses) {
        self.reads.union(other.reads);
        self.writes.union(other.writes);
    }
}

/// The launch before a programmatic dependent one: its kernel and what it touched.
#[derive(Debug, Default)]
pub(crate) struct PreviousLaunch {
    pub kernel: String,
    pub accesses: Accesses,
}

/// How an access touches its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Touch {
    Read,
    Write,
    ReadWrite,
}

impl Touch {
    pub fn reads(self) -> bool {
        self != Touch::Write
    }
    pub fn writes(self) -> bool {
        self != Touch::Read
    }
}

impl PreviousLaunch {
    /// The first byte of `[addr, addr + len)` an access `touch` conflicts on, and what the
    /// previous launch did to it: wrote (any access), read (a write).
    pub fn conflict(&self, addr: u64, len: u32, touch: Touch) -> Option<(u64, &'static str)> {
        if let Some(b) = self.accesses.writes.first_overlap(addr, len) {
            return Some((b, "wrote"));
        }
        if touch.writes() {
            return self.accesses.reads.first_overlap(addr, len).map(|b| (b, "read"));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_set_finds_the_first_shared_byte_across_lines() {
        let mut s = ByteSet::default();
        s.insert(100, 8);
        s.insert(190, 70);
        assert_eq!(s.first_overlap(0, 100), None);
        assert_eq!(s.first_overlap(96, 8), Some(100));
        assert_eq!(s.first_overlap(108, 82), None);
        assert_eq!(s.first_overlap(180, 20), Some(190));
        assert_eq!(s.first_overlap(259, 4), Some(259));
        assert_eq!(s.first_overlap(260, 4), None);
        let mut t = ByteSet::default();
        t.insert(0, 64);
        s.union(t);
        assert_eq!(s.first_overlap(63, 1), Some(63));
    }

    #[test]
    fn a_write_conflicts_with_reads_and_writes_a_read_only_with_writes() {
        let mut p = PreviousLaunch::default();
        p.accesses.reads.insert(0, 16);
        p.accesses.writes.insert(64, 16);
        assert_eq!(p.conflict(0, 4, Touch::Read), None);
        assert_eq!(p.conflict(0, 4, Touch::Write), Some((0, "read")));
        assert_eq!(p.conflict(60, 8, Touch::Read), Some((64, "wrote")));
        assert_eq!(p.conflict(8, 4, Touch::ReadWrite), Some((8, "read")));
    }
}
