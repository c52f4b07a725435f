//! Tensor memory: per CTA, 128 lanes x 512 columns of 32-bit cells ("On architecture
//! `sm_100a`/`sm_100f`, the 5th generation TensorCore's Tensor Memory has a two-dimensional
//! structure of 512 columns and 128 rows per CTA, with each cell being 32-bits in size") with
//! its allocation state, and the per-thread state of the tcgen05 family the engine keeps: loads
//! waiting for `tcgen05.wait::ld`, shared-memory reads of MMAs waiting for a commit, and what
//! each commit in flight tracks.

use phaser_codegen::arch::tcgen05::{TMEM_COLUMNS, TMEM_LANES};
use std::collections::HashMap;

/// One live `tcgen05.alloc`.
#[derive(Clone, Debug)]
pub struct Allocation {
    pub col: u32,
    pub ncols: u32,
    /// The allocating warp (engine index) and its first lane's thread.
    pub warp: usize,
    pub by: u32,
    /// Where the address was written: (CTA, shared offset).
    pub slot: (usize, u32),
    pub pc: u32,
}

/// One CTA's tensor memory.
#[derive(Default)]
pub struct TensorMemory {
    /// `lane * 512 + column`; empty until the first allocation.
    pub cells: Vec<u32>,
    pub allocs: Vec<Allocation>,
    /// The `tcgen05.relinquish_alloc_permit` that ended this CTA's allocations (its pc).
    pub relinquished: Option<u32>,
    /// Columns of the previous allocation ("The number of columns allocated should not
    /// increase between any two allocations in the execution order within the CTA").
    pub last_ncols: Option<u32>,
}

impl TensorMemory {
    /// The lowest column, aligned to `ncols`, where `ncols` free columns start.
    pub fn find_free(&self, ncols: u32) -> Option<u32> {
        (0..TMEM_COLUMNS).step_by(ncols as usize).find(|&c| {
            c + ncols <= TMEM_COLUMNS && self.allocs.iter().all(|a| c + ncols <= a.col || a.col + a.ncols <= c)
        })
    }

    /// The allocation holding columns `[col, col + cols)`, if one holds all of them.
    pub fn covering(&self, col: u32, cols: u32) -> Option<&Allocation> {
        self.allocs.iter().find(|a| a.col <= col && col + cols <= a.col + a.ncols)
    }

    pub fn ensure_cells(&mut self) {
        if self.cells.is_empty() {
            self.cells = vec![0; (TMEM_LANES * TMEM_COLUMNS) as usize];
        }
    }

    #[inline]
    pub fn get(&self, lane: u32, col: u32) -> u32 {
        self.cells.get((lane * TMEM_COLUMNS + col) as usize).copied().unwrap_or(0)
    }

    #[inline]
    pub fn set(&mut self, lane: u32, col: u32, v: u32) {
        if let Some(c) = self.cells.get_mut((lane * TMEM_COLUMNS + col) as usize) {
            *c = v;
        }
    }

    /// `a-b, c-d` of the live allocations, for messages.
    pub fn describe(&self) -> String {
        if self.allocs.is_empty() {
            return "none".into();
        }
        self.allocs.iter().map(|a| format!("columns {}-{}", a.col, a.col + a.ncols - 1)).collect::<Vec<_>>().join(", ")
    }
}

/// The engine's tcgen05 state.
pub struct Tcgen05State {
    pub ctas: Vec<TensorMemory>,
    /// Per thread: its async tcgen05 ops whose shared-memory reads no commit published yet.
    pub unpublished_reads: Vec<Vec<u32>>,
    /// Per such op: the CTAs whose shared memory it read and no commit published yet.
    pub read_ctas: HashMap<u32, Vec<usize>>,
    /// Per commit op in flight: the tensor-memory accesses and async ops it tracks.
    pub commits: HashMap<u32, (Vec<u32>, Vec<u32>)>,
}

impl Tcgen05State {
    pub fn new(ctas: usize, threads: usize) -> Tcgen05State {
        Tcgen05State {
            ctas: (0..ctas).map(|_| TensorMemory::default()).collect(),
            unpublished_reads: vec![Vec::new(); threads],
            read_ctas: HashMap::new(),
            commits: HashMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(col: u32, ncols: u32) -> Allocation {
        Allocation { col, ncols, warp: 0, by: 0, slot: (0, 0), pc: 0 }
    }

    #[test]
    fn allocations_are_aligned_first_fit() {
        let mut t = TensorMemory::default();
        assert_eq!(t.find_free(512), Some(0));
        t.allocs.push(alloc(0, 128));
        assert_eq!(t.find_free(256), Some(256));
        assert_eq!(t.find_free(128), Some(128));
        t.allocs.push(alloc(256, 256));
        assert_eq!(t.find_free(256), None);
        assert_eq!(t.find_free(64), Some(128));
        assert!(t.covering(300, 100).is_some());
        assert!(t.covering(100, 100).is_none(), "straddles two allocations");
    }
}
