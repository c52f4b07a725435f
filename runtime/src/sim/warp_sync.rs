//! `bar.warp.sync membermask` (CUDA `__syncwarp`), exactly as PTX defines it for sm_70+:
//! a lane waits until every lane of `membermask` has executed a `bar.warp.sync` with the same
//! mask value (not necessarily the same instruction: diverged lanes may meet at different
//! program counters), and the barrier orders the memory accesses of the participating lanes
//! (everything a lane did before it happens-before what any participant does after it).
//!
//! Undefined behaviour in PTX that the checker reports (`Category::WarpSync`): the executing
//! lane is not in its mask, or a lane of the mask has exited (before the others arrived or
//! while they wait). The simulation then goes on as if the exited lane had arrived, so later
//! findings still show. A warp whose lanes never all arrive (some wait forever elsewhere, or
//! wait at a `bar.warp.sync` with another mask) is a deadlock and reported as one.
//!
//! Lanes that do not exist (past the end of a partial last warp) are ignored in the mask, as
//! the hardware does for `__syncwarp()` in a block whose size is not a multiple of 32.

use super::check::Checker;
use super::cluster::{ranges, Engine};
use super::finding::Category;
use super::warp::{lanes, WaitFor, WarpSyncRound};

impl<C: Checker> Engine<'_, C> {
    /// Lanes of warp `wi` that exist (a partial last warp has fewer than 32).
    pub fn existing_lanes(&self, wi: usize) -> u32 {
        let n = self.exec.threads_per_cta.saturating_sub(self.exec.warps[wi].base_tid).min(32);
        if n == 32 {
            u32::MAX
        } else {
            (1u32 << n) - 1
        }
    }

    /// Lane `l` of warp `wi` executes `bar.warp.sync mask` (or, with `elect: Some(dst)`,
    /// `elect.sync` with member mask `mask`) at `pc`.
    pub(crate) fn warp_sync_arrive(&mut self, wi: usize, l: usize, mask: u32, pc: u32, elect: Option<u32>) {
        let t = self.cluster_thread(wi, l);
        let cta = self.exec.warps[wi].cta;
        let bit = 1u32 << l;
        let what = WarpSyncRound { mask, arrived: 0, pc, elect }.what();
        if mask & bit == 0 {
            let msg = format!(
                "lane {l} executes `{what}`, whose mask does not include it \
                 (undefined behaviour in PTX); it does not wait"
            );
            self.finding(Category::WarpSync, cta, Some(t), None, Some(pc), msg);
            return;
        }
        let members = mask & self.existing_lanes(wi);
        let gone = members & self.exec.warps[wi].exited;
        if gone != 0 {
            let msg = format!(
                "lane {l} executes `{what}`, but lane(s) {} of the mask have exited \
                 (PTX: every thread of the mask must execute it; undefined behaviour)",
                ranges(&lanes(gone).map(|x| x as u32).collect::<Vec<_>>())
            );
            self.finding(Category::WarpSync, cta, Some(t), None, Some(pc), msg);
        }
        self.checker.on_warp_sync_arrive(t, wi, mask);
        let w = &mut self.exec.warps[wi];
        // `bar.warp.sync` lanes may converge from different instructions; an `elect.sync`
        // round is one instruction's.
        let same = |r: &WarpSyncRound| r.mask == mask && r.elect == elect && (elect.is_none() || r.pc == pc);
        let i = match w.warp_syncs.iter().position(same) {
            Some(i) => i,
            None => {
                w.warp_syncs.push(WarpSyncRound { mask, arrived: 0, pc, elect });
                w.warp_syncs.len() - 1
            }
        };
        w.warp_syncs[i].arrived |= bit;
        self.block_lane(wi, l, WaitFor::WarpSync { mask, pc });
        self.try_complete_warp_sync(wi, i);
    }

    /// Complete round `i` of warp `wi` if every live lane of its mask arrived: every
    /// participant acquires what all of them released, and runs on.
    fn try_complete_warp_sync(&mut self, wi: usize, i: usize) {
        let w = &self.exec.warps[wi];
        let round = &w.warp_syncs[i];
        let members = round.mask & self.existing_lanes(wi);
        if (round.arrived | w.exited) & members != members {
            return;
        }
        let round = self.exec.warps[wi].warp_syncs.swap_remove(i);
        if let Some(dst) = round.elect {
            let leader = self.sched.elect(round.arrived);
            let regs = &mut self.exec.warps[wi].regs;
            for l in lanes(round.arrived) {
                regs[dst as usize * 32 + l] = (l == leader) as u64;
            }
        }
        let threads: Vec<u32> = lanes(round.arrived).map(|l| self.cluster_thread(wi, l)).collect();
        self.checker.on_warp_sync_complete(wi, round.mask, &threads);
        for l in lanes(round.arrived) {
            let w = &mut self.exec.warps[wi];
            w.blocked &= !(1 << l);
            w.runnable |= 1 << l;
            w.wait[l] = WaitFor::Nothing;
        }
        self.time.effects += 1;
    }

    /// Lanes `gone` of warp `wi` exited: a `bar.warp.sync` waiting for them is undefined
    /// behaviour (reported), then completes without them.
    pub(crate) fn warp_sync_lanes_exited(&mut self, wi: usize, gone: u32) {
        let mut i = 0;
        while i < self.exec.warps[wi].warp_syncs.len() {
            let r = self.exec.warps[wi].warp_syncs[i].clone();
            let missing = r.mask & gone & !r.arrived;
            if missing != 0 {
                let cta = self.exec.warps[wi].cta;
                let first = lanes(missing).next().unwrap_or(0);
                let t = self.cluster_thread(wi, first);
                let msg = format!(
                    "lane(s) {} exited while lane(s) {} wait at `{}` \
                     (PTX: every thread of the mask must execute it; undefined behaviour)",
                    ranges(&lanes(missing).map(|x| x as u32).collect::<Vec<_>>()),
                    ranges(&lanes(r.arrived).map(|x| x as u32).collect::<Vec<_>>()),
                    r.what()
                );
                self.finding(Category::WarpSync, cta, Some(t), None, Some(r.pc), msg);
            }
            let before = self.exec.warps[wi].warp_syncs.len();
            self.try_complete_warp_sync(wi, i);
            if self.exec.warps[wi].warp_syncs.len() == before {
                i += 1;
            }
        }
    }

    /// For a deadlock report: what a lane blocked at `bar.warp.sync mask` waits for.
    pub(crate) fn describe_warp_sync_wait(&self, wi: usize, mask: u32) -> String {
        let w = &self.exec.warps[wi];
        let arrived = w.warp_syncs.iter().find(|r| r.mask == mask).map(|r| r.arrived).unwrap_or(0);
        let missing = mask & self.existing_lanes(wi) & !arrived & !w.exited;
        let list = |m: u32| ranges(&lanes(m).map(|x| x as u32).collect::<Vec<_>>());
        let mut elsewhere = Vec::new();
        for l in lanes(missing) {
            let what = match w.wait[l] {
                WaitFor::Nothing => continue,
                WaitFor::WarpSync { mask: m, .. } => format!("lane {l} waits at `bar.warp.sync 0x{m:08x}`"),
                WaitFor::Mbarrier { .. } => format!("lane {l} waits on an mbarrier"),
                WaitFor::NamedBarrier { id, .. } => format!("lane {l} waits at `bar.sync {id}`"),
                WaitFor::ClusterBarrier { .. } => format!("lane {l} waits at the cluster barrier"),
                WaitFor::GlobalAtomic { .. } => format!("lane {l} waits for its global atomic"),
                WaitFor::CpAsyncGroups { .. } | WaitFor::BulkGroups { .. } | WaitFor::WgmmaGroups { .. } => {
                    format!("lane {l} waits for an async group")
                }
                WaitFor::WgmmaConverge { .. } => {
                    format!("lane {l} waits for its warp at a wgmma instruction")
                }
            };
            elsewhere.push(what);
            if elsewhere.len() == 3 {
                break;
            }
        }
        let mut s = format!(
            "waits at `bar.warp.sync 0x{mask:08x}`: lane(s) {} arrived, lane(s) {} have not",
            list(arrived),
            list(missing)
        );
        if !elsewhere.is_empty() {
            s.push_str(&format!(" ({})", elsewhere.join("; ")));
        }
        s
    }
}
