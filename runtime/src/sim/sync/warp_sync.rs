//! Warp collective rounds: `bar.warp.sync membermask` (CUDA `__syncwarp`), `elect.sync` and the
//! collectives that compute from every lane's operands (`shfl.sync`, `vote.sync`, `redux.sync`,
//! `match.sync`, `ldmatrix`, `stmatrix`), exactly as PTX defines them for sm_70+: a lane waits
//! until every lane of `membermask` has executed the instruction with the same mask, then the
//! result is computed from all of them. The simulator's lane groups may reach the instruction
//! separately (a warp split by the random scheduler, or diverged lanes): the round collects
//! each lane's operands as it arrives and completes when the last member arrives.
//!
//! `bar.warp.sync` lanes may meet at different program counters (diverged lanes of one mask),
//! and the barrier orders the memory accesses of the participants (everything a lane did
//! before it happens-before what any participant does after it). The other collectives are
//! one instruction's (same pc) and exchange registers only.
//!
//! Undefined behaviour in PTX that the checker reports (`Category::WarpSync`): the executing
//! lane is not in its mask; for `bar.warp.sync` and `elect.sync` a lane of the mask has exited
//! (before the others arrived or while they wait); for `ldmatrix`/`stmatrix` any lane of the
//! warp has exited; a shuffle reading a lane that does not take part. `shfl`, `vote`, `redux`
//! and `match` count only the non-exited lanes of their mask (PTX: "all non-exited threads"),
//! so an exited lane there is not an error. The simulation then goes on as if the exited lane
//! had arrived, so later findings still show. A warp whose lanes never all arrive (some wait
//! forever elsewhere, or at the same instruction with another mask) is a deadlock.
//!
//! Lanes that do not exist (past the end of a partial last warp) are ignored in the mask, as
//! the hardware does for `__syncwarp()` in a block whose size is not a multiple of 32.

use crate::report::finding::Category;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::{ranges, Engine};
use crate::sim::engine::warp::{lanes, LaneInputs, RoundKind, WaitFor, WarpSyncRound};

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

    /// The instruction at `pc`, for messages.
    pub(crate) fn collective_name(&self, kind: RoundKind, mask: u32, pc: u32) -> String {
        match kind {
            RoundKind::WarpSync => format!("bar.warp.sync 0x{mask:08x}"),
            RoundKind::Elect { .. } => "elect.sync".into(),
            RoundKind::Collective => match self.cx.program.ops.get(pc as usize) {
                Some(crate::sim::engine::program::Op::Slow(i)) => match &self.cx.program.slow[*i as usize] {
                    phaser_codegen::ir::Inst::Warp(op) => op.mnemonic(),
                    phaser_codegen::ir::Inst::Fragment(op) => op.mnemonic(),
                    other => other.mnemonic().into(),
                },
                _ => "a warp collective".into(),
            },
        }
    }

    /// Lanes of the mask that must arrive before the round completes, and whether an exited
    /// one among them is undefined behaviour.
    fn members(&self, wi: usize, kind: RoundKind, mask: u32, pc: u32) -> (u32, bool) {
        let members = mask & self.existing_lanes(wi);
        match kind {
            RoundKind::WarpSync | RoundKind::Elect { .. } => (members, true),
            // `ldmatrix`/`stmatrix` are `.aligned` over the whole warp.
            RoundKind::Collective => (members, self.is_matrix_collective(pc)),
        }
    }

    /// Lane `l` of warp `wi` executes the warp collective `kind` with member mask `mask` at
    /// `pc`, bringing its operands `inputs` (collectives). It waits until every member arrived.
    pub(crate) fn collective_arrive(
        &mut self,
        wi: usize,
        l: usize,
        mask: u32,
        pc: u32,
        kind: RoundKind,
        inputs: LaneInputs,
    ) {
        let t = self.cluster_thread(wi, l);
        let cta = self.exec.warps[wi].cta;
        let bit = 1u32 << l;
        let what = self.collective_name(kind, mask, pc);
        if mask & bit == 0 {
            let msg = format!(
                "lane {l} executes `{what}`, whose mask does not include it (mask 0x{mask:08x}; \
                 undefined behaviour in PTX); it does not wait"
            );
            self.finding(Category::WarpSync, cta, Some(t), None, Some(pc), msg);
            if kind != RoundKind::WarpSync {
                // Its result is undefined; it gets its own operand (a shuffle) or nothing.
                self.collective_alone(wi, l, pc, kind, inputs);
            }
            return;
        }
        let (members, exit_is_ub) = self.members(wi, kind, mask, pc);
        let gone = members & self.exec.warps[wi].exited;
        if gone != 0 && exit_is_ub {
            let msg = format!(
                "lane {l} executes `{what}`, but lane(s) {} of the mask have exited \
                 (PTX: every thread of the mask must execute it; undefined behaviour)",
                ranges(&lanes(gone).map(|x| x as u32).collect::<Vec<_>>())
            );
            self.finding(Category::WarpSync, cta, Some(t), None, Some(pc), msg);
        }
        let w = &mut self.exec.warps[wi];
        // `bar.warp.sync` lanes may converge from different instructions; every other
        // collective round is one instruction's.
        let same = |r: &WarpSyncRound| {
            r.mask == mask && r.kind == kind && (kind == RoundKind::WarpSync || r.pc == pc) && r.arrived & bit == 0
        };
        let i = match w.warp_syncs.iter().position(same) {
            Some(i) => i,
            None => {
                let inputs = if kind == RoundKind::Collective { vec![[0; 5]; 32] } else { Vec::new() };
                w.warp_syncs.push(WarpSyncRound { mask, arrived: 0, pc, kind, inputs });
                w.warp_syncs.len() - 1
            }
        };
        let round = &mut w.warp_syncs[i];
        round.arrived |= bit;
        if let Some(slot) = round.inputs.get_mut(l) {
            *slot = inputs;
        }
        if round.orders_memory() {
            self.checker.on_warp_sync_arrive(t, wi, mask);
        }
        self.block_lane(wi, l, WaitFor::WarpSync { mask, pc });
        self.try_complete_warp_sync(wi, i);
    }

    /// Complete round `i` of warp `wi` if every live member arrived: compute the collective's
    /// results, let every participant acquire what all of them released (memory-ordering
    /// rounds), and run on.
    fn try_complete_warp_sync(&mut self, wi: usize, i: usize) {
        let w = &self.exec.warps[wi];
        let round = &w.warp_syncs[i];
        let (members, _) = self.members(wi, round.kind, round.mask, round.pc);
        if (round.arrived | w.exited) & members != members {
            return;
        }
        let round = self.exec.warps[wi].warp_syncs.swap_remove(i);
        match round.kind {
            RoundKind::Elect { dst } => {
                let leader = elected_lane(round.arrived);
                let regs = &mut self.exec.warps[wi].regs;
                for l in lanes(round.arrived) {
                    regs[dst as usize * 32 + l] = (l == leader) as u64;
                }
            }
            RoundKind::Collective => self.complete_collective(wi, &round),
            RoundKind::WarpSync => {}
        }
        if round.orders_memory() {
            let threads: Vec<u32> = lanes(round.arrived).map(|l| self.cluster_thread(wi, l)).collect();
            self.checker.on_warp_sync_complete(wi, round.mask, &threads);
        }
        for l in lanes(round.arrived) {
            let w = &mut self.exec.warps[wi];
            w.blocked &= !(1 << l);
            w.runnable |= 1 << l;
            w.wait[l] = WaitFor::Nothing;
        }
        self.time.effects += 1;
    }

    /// Lanes `gone` of warp `wi` exited: a round waiting for them either completes without
    /// them (the collectives that count non-exited lanes only) or is undefined behaviour
    /// (reported), then completes without them.
    pub(crate) fn warp_sync_lanes_exited(&mut self, wi: usize, gone: u32) {
        let mut i = 0;
        while i < self.exec.warps[wi].warp_syncs.len() {
            let r = self.exec.warps[wi].warp_syncs[i].clone();
            let (members, exit_is_ub) = self.members(wi, r.kind, r.mask, r.pc);
            let missing = members & gone & !r.arrived;
            if missing != 0 && exit_is_ub {
                let cta = self.exec.warps[wi].cta;
                let first = lanes(missing).next().unwrap_or(0);
                let t = self.cluster_thread(wi, first);
                let msg = format!(
                    "lane(s) {} exited while lane(s) {} wait at `{}` \
                     (PTX: every thread of the mask must execute it; undefined behaviour)",
                    ranges(&lanes(missing).map(|x| x as u32).collect::<Vec<_>>()),
                    ranges(&lanes(r.arrived).map(|x| x as u32).collect::<Vec<_>>()),
                    self.collective_name(r.kind, r.mask, r.pc)
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

    /// For a deadlock report: what a lane blocked at a collective with `mask` at `pc` waits for.
    pub(crate) fn describe_warp_sync_wait(&self, wi: usize, mask: u32, pc: u32) -> String {
        let w = &self.exec.warps[wi];
        let round = w.warp_syncs.iter().find(|r| r.mask == mask && (r.kind == RoundKind::WarpSync || r.pc == pc));
        let arrived = round.map(|r| r.arrived).unwrap_or(0);
        let kind = round.map(|r| r.kind).unwrap_or(RoundKind::WarpSync);
        let what = self.collective_name(kind, mask, pc);
        let missing = mask & self.existing_lanes(wi) & !arrived & !w.exited;
        let list = |m: u32| ranges(&lanes(m).map(|x| x as u32).collect::<Vec<_>>());
        let mut elsewhere = Vec::new();
        for l in lanes(missing) {
            let what = match w.wait[l] {
                WaitFor::Nothing => continue,
                WaitFor::WarpSync { mask: m, pc: p } => {
                    let k = w
                        .warp_syncs
                        .iter()
                        .find(|r| r.mask == m && r.arrived & (1 << l) != 0)
                        .map_or(RoundKind::WarpSync, |r| r.kind);
                    format!("lane {l} waits at `{}`", self.collective_name(k, m, p))
                }
                WaitFor::Mbarrier { .. } => format!("lane {l} waits on an mbarrier"),
                WaitFor::NamedBarrier { id, .. } => format!("lane {l} waits at `bar.sync {id}`"),
                WaitFor::ClusterBarrier { .. } => format!("lane {l} waits at the cluster barrier"),
                WaitFor::GlobalAtomic { .. } => format!("lane {l} waits for its global atomic"),
                WaitFor::CpAsyncGroups { .. } | WaitFor::BulkGroups { .. } | WaitFor::WgmmaGroups { .. } => {
                    format!("lane {l} waits for an async group")
                }
                WaitFor::RegisterPool { count, .. } => {
                    format!("lane {l} waits at `setmaxnreg.inc` for {count} registers")
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
        let mut s = format!("waits at `{what}`: lane(s) {} arrived, lane(s) {} have not", list(arrived), list(missing));
        if !elsewhere.is_empty() {
            s.push_str(&format!(" ({})", elsewhere.join("; ")));
        }
        s
    }
}

/// The lane `elect.sync` elects among the lanes `members` that executed it. Not a scheduling
/// choice: "election of a leader thread happens deterministically, i.e. the same leader thread
/// is elected for the same membermask every time" (PTX ISA, `elect.sync`), and the hardware
/// elects the lowest one, which code such as CUTLASS's (`is_leader = thread % 128 == 0` beside
/// `elect_one_sync()`) relies on.
fn elected_lane(members: u32) -> usize {
    members.trailing_zeros() as usize
}
