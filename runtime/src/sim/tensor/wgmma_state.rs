//! The bookkeeping of `wgmma` per warp and per warpgroup: a `wgmma.mma_async` is issued by
//! each of the warpgroup's four warps (the k-th of each warp is one instruction); once all four
//! did, it is an async op in flight (`AsyncKind::Wgmma`). Each warp commits its uncommitted
//! wgmmas into groups and retires them with `wgmma.wait_group` (PTX: per executing thread;
//! `.sync.aligned`, so per warp here), which is when the accumulator registers get the result.
//! The registers the wgmmas access are tracked per warp, for the checks of `exec_wgmma.rs`:
//! ordinary instructions touching them before the retiring `wait_group`, and `wgmma.fence`
//! missing between an ordinary access and a wgmma.

use std::collections::HashMap;

/// A wgmma's identity (shared by the four warps' instructions and the async op).
pub type MmaId = u32;

/// A dense set of tensor registers (indices into `Program::tensor.regs`).
#[derive(Clone, Default, Debug)]
pub struct RegSet(Vec<u64>);

impl RegSet {
    pub fn insert(&mut self, i: u32) {
        let w = i as usize / 64;
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (i % 64);
    }
    pub fn contains(&self, i: u32) -> bool {
        self.0.get(i as usize / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    pub fn clear(&mut self) {
        self.0.iter_mut().for_each(|w| *w = 0);
    }
}

/// A wgmma of this warp not retired yet.
#[derive(Clone, Debug)]
pub struct PendingMma {
    pub id: MmaId,
    pub pc: u32,
    /// Tensor registers it accesses (dense indices): the accumulator, and A's fragment.
    pub regs: Vec<u32>,
    /// The accumulator's register ids, in fragment order (where a retirement writes).
    pub d: Vec<u32>,
}

/// One warp's view of its warpgroup's wgmmas.
#[derive(Clone, Default, Debug)]
pub struct WarpMma {
    /// `wgmma.mma_async` instructions this warp executed (the next one's number).
    pub issued: u64,
    /// Issued, not in a group yet.
    pub uncommitted: Vec<MmaId>,
    /// Committed groups, oldest first (retired groups are removed).
    pub groups: Vec<Vec<MmaId>>,
    /// Not retired by a `wait_group` of this warp.
    pub pending: Vec<PendingMma>,
    /// Results of completed wgmmas, written into the registers when a `wait_group` retires
    /// them: per lane, the accumulator's values (`lane * regs + i`).
    pub results: HashMap<MmaId, Vec<f32>>,
    /// A `wgmma.fence` was executed (ever).
    pub fenced: bool,
    /// Tensor registers an ordinary instruction accessed since the last `wgmma.fence`, with
    /// that instruction's pc.
    pub touched: HashMap<u32, u32>,
    /// `pending`'s registers, for the per-instruction check.
    pub pending_regs: RegSet,
    /// A `.sync.aligned` instruction some lanes reached while others have not yet: its pc and
    /// the lanes there (parked until the rest arrive).
    pub gather: Option<(u32, u32)>,
}

impl WarpMma {
    /// Rebuild `pending_regs` from `pending`.
    pub fn refresh_pending_regs(&mut self) {
        self.pending_regs.clear();
        for p in &self.pending {
            for &r in &p.regs {
                self.pending_regs.insert(r);
            }
        }
    }
}

/// What one warp contributed to a wgmma: the accumulator's input (captured at issue, unless it
/// continues a wgmma of the same accumulator still pending: `chain`), A's fragment when A comes
/// from registers, and its descriptors / scale-d as read by its first lane.
#[derive(Clone, Debug, Default)]
pub struct WarpPart {
    pub d_in: Option<Vec<f32>>,
    pub chain: Option<MmaId>,
    pub a_regs: Option<Vec<u32>>,
    pub a_desc: u64,
    pub b_desc: u64,
    pub scale_d: bool,
}

/// A wgmma being issued (not all four warps yet) or in flight.
#[derive(Clone, Debug)]
pub struct MmaIssue {
    pub id: MmaId,
    /// The instruction's number in each warp (`WarpMma::issued` when issued).
    pub seq: u64,
    pub pc: u32,
    /// Warps (0..4 of the warpgroup) that issued it.
    pub arrived: u8,
    pub parts: [Option<WarpPart>; 4],
}

/// A warpgroup's wgmmas not issued by all of its warps yet.
#[derive(Clone, Default, Debug)]
pub struct WarpgroupMma {
    pub partial: Vec<MmaIssue>,
}

/// Every warp's and warpgroup's wgmma state of a cluster; `S` is the checker's clock snapshot.
pub struct WgmmaAgents<S> {
    pub warps: Vec<WarpMma>,
    pub warpgroups: Vec<WarpgroupMma>,
    pub next_id: MmaId,
    /// Per wgmma being issued: each warp's clock at its `mma_async` (for the checker).
    pub snaps: HashMap<MmaId, Vec<S>>,
}

impl<S> WgmmaAgents<S> {
    /// For `ctas` CTAs of `warps_per_cta` warps (warpgroups never span CTAs).
    pub fn new(ctas: usize, warps_per_cta: usize) -> WgmmaAgents<S> {
        WgmmaAgents {
            warps: vec![WarpMma::default(); ctas * warps_per_cta],
            warpgroups: vec![WarpgroupMma::default(); ctas * warps_per_cta.div_ceil(4)],
            next_id: 1,
            snaps: HashMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RegSet;

    #[test]
    fn reg_sets_hold_what_was_inserted() {
        let mut s = RegSet::default();
        for i in [0, 63, 64, 200] {
            s.insert(i);
        }
        assert!(s.contains(0) && s.contains(63) && s.contains(64) && s.contains(200));
        assert!(!s.contains(1) && !s.contains(199) && !s.contains(1000));
        s.clear();
        assert!(!s.contains(64));
    }
}
