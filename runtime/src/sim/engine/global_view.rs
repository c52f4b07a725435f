//! Global memory as one cluster sees it during an epoch of the grid (`grid.rs`): the memory
//! as it was when the epoch began, plus the cluster's own writes, which every thread of the
//! cluster sees at once and other clusters see from the next epoch on (the GPU orders nothing
//! between CTAs that do not synchronize, so this is one of its legal executions). Atomics of
//! a cluster that shares the grid with others wait for the epoch's end, where they run in
//! cluster order: every atomic sees every earlier one. Clusters therefore depend only on the
//! memory at the epoch's start, and can run on several cores with the same result.

use crate::sim::engine::memory::GlobalMemory;
use phaser_codegen::ir::{AtomOp, Reg, Type};
use std::collections::HashMap;
use std::sync::Arc;

/// Bytes per line of the write overlay.
const LINE: u64 = 64;

#[derive(Clone, Copy)]
struct Line {
    data: [u8; LINE as usize],
    /// Bytes of `data` written.
    mask: u64,
}

/// A global atomic waiting for the end of the epoch.
#[derive(Clone, Copy, Debug)]
pub struct PendingAtomic {
    pub warp: usize,
    pub lane: usize,
    /// The register receiving the old value (`None`: a `red`).
    pub dst: Option<Reg>,
    pub addr: u64,
    pub ty: Type,
    pub op: AtomOp,
    pub value: u64,
    /// `cas`'s compare value.
    pub cmp: u64,
}

#[derive(Default)]
pub struct GlobalView {
    base: Option<Arc<GlobalMemory>>,
    lines: HashMap<u64, Line>,
    /// Atomics wait for the epoch's end (other clusters run in the same epoch).
    pub defer_atomics: bool,
    pub atomics: Vec<PendingAtomic>,
    /// Writes of this cluster, ever.
    pub writes: u64,
    /// Of `writes`, those recorded in the footprint of a warp still watched
    /// (`check/progress.rs`): they end no other warp's repetition by themselves.
    pub watched_writes: u64,
}

impl GlobalView {
    /// Start an epoch on `base`.
    pub fn begin(&mut self, base: Arc<GlobalMemory>, defer_atomics: bool) {
        self.base = Some(base);
        self.defer_atomics = defer_atomics;
    }

    /// End the epoch: write this cluster's bytes into `mem` (which the view no longer holds).
    pub fn drop_base(&mut self) {
        self.base = None;
    }

    /// The writes that end repetitions: all but those in a watched warp's footprint.
    #[inline]
    pub fn public_writes(&self) -> u64 {
        self.writes - self.watched_writes
    }

    pub fn commit(&mut self, mem: &mut GlobalMemory) {
        for (line, l) in self.lines.drain() {
            for b in 0..LINE {
                if l.mask & (1 << b) != 0 {
                    if let Some(s) = mem.slice_mut(line * LINE + b, 1) {
                        s[0] = l.data[b as usize];
                    }
                }
            }
        }
    }

    /// The memory lent for the epoch, as a handle of its own (to describe addresses while the
    /// engine is borrowed).
    pub fn base_handle(&self) -> Arc<GlobalMemory> {
        Arc::clone(self.base.as_ref().expect("global memory is lent for the epoch"))
    }

    #[inline]
    pub fn base(&self) -> &GlobalMemory {
        self.base.as_deref().expect("global memory is lent for the epoch")
    }

    /// `[addr, addr+len)` as this cluster sees it; `None` outside every buffer.
    pub fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        let mut v = self.base().slice(addr, len)?.to_vec();
        if !self.lines.is_empty() {
            self.overlay(addr, &mut v);
        }
        Some(v)
    }

    fn overlay(&self, addr: u64, v: &mut [u8]) {
        let end = addr + v.len() as u64;
        for line in addr / LINE..end.div_ceil(LINE) {
            if let Some(l) = self.lines.get(&line) {
                for b in 0..LINE {
                    let a = line * LINE + b;
                    if a >= addr && a < end && l.mask & (1 << b) != 0 {
                        v[(a - addr) as usize] = l.data[b as usize];
                    }
                }
            }
        }
    }

    /// A load of `size` bytes (little-endian, zero-extended).
    #[inline]
    pub fn load(&self, addr: u64, size: usize) -> Option<u64> {
        if self.lines.is_empty() {
            return self.base().load(addr, size);
        }
        let v = self.read(addr, size)?;
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(&v);
        Some(u64::from_le_bytes(b))
    }

    /// Write `bytes` at `addr`; false outside every buffer.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> bool {
        if self.base().slice(addr, bytes.len()).is_none() {
            return false;
        }
        self.writes += 1;
        for (i, &byte) in bytes.iter().enumerate() {
            let a = addr + i as u64;
            let l = self.lines.entry(a / LINE).or_insert(Line { data: [0; LINE as usize], mask: 0 });
            l.data[(a % LINE) as usize] = byte;
            l.mask |= 1 << (a % LINE);
        }
        true
    }

    #[inline]
    pub fn store(&mut self, addr: u64, size: usize, v: u64) -> bool {
        self.write(addr, &v.to_le_bytes()[..size])
    }

    pub fn describe(&self, addr: u64) -> String {
        self.base().describe(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_sees_its_own_writes_at_once_and_the_others_after_the_commit() {
        let mut mem = GlobalMemory::default();
        let buf = mem.alloc(256);
        let mut mem = Arc::new(mem);
        let (mut a, mut b) = (GlobalView::default(), GlobalView::default());
        a.begin(Arc::clone(&mem), true);
        b.begin(Arc::clone(&mem), true);
        assert!(a.store(buf + 62, 4, 0xAABB_CCDD), "across a line boundary");
        assert_eq!(a.load(buf + 62, 4), Some(0xAABB_CCDD));
        assert_eq!(a.load(buf + 60, 8), Some(0xAABB_CCDD_0000));
        assert_eq!(b.load(buf + 62, 4), Some(0), "not yet visible to another cluster");
        assert!(!a.store(buf + 254, 4, 1), "out of bounds");
        a.drop_base();
        b.drop_base();
        a.commit(Arc::get_mut(&mut mem).unwrap());
        b.begin(Arc::clone(&mem), true);
        assert_eq!(b.load(buf + 62, 4), Some(0xAABB_CCDD));
    }
}
