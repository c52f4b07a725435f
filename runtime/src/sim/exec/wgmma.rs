//! The tensor core: `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group` and
//! `wgmma.mma_async` as an asynchronous agent. The fragment ops that get results out are
//! ordinary instructions elsewhere: `cvt.rn.bf16x2.f32` and `stmatrix` in `exec_warp.rs`
//! (`stmatrix` as a warp collective round), vector stores in `exec_memory.rs`.
//!
//! Semantics (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
//! - Every instruction here is `.sync.aligned`: the warp's lanes meet at it (lanes that arrive
//!   first wait for the rest) and execute it once together.
//! - `mma_async` is one instruction of the whole warpgroup: the k-th `mma_async` of each of its
//!   four warps. Each warp contributes its accumulator fragment (read when it issues, or the
//!   result of the pending wgmma on the same registers it continues) and, for A in registers,
//!   its A fragment. Once all four issued, the wgmma is in flight; the warpgroup's wgmmas
//!   complete in issue order, each reading A and B from shared memory through its descriptors
//!   *when it completes* (so a stage overwritten too early feeds it wrong data, as on the GPU).
//! - `commit_group` closes the warp's uncommitted wgmmas into a group (possibly empty);
//!   `wait_group N` waits until at most N of its groups are pending and every older group has
//!   completed; only then are the accumulator registers written with the results.
//! - Checks: an ordinary instruction touching a register of a wgmma the warp has not retired
//!   (`WgmmaRegisterRace`); a wgmma touching registers an ordinary instruction touched since the
//!   last `wgmma.fence`, or a warp's first wgmma without any fence (`MissingWgmmaFence`);
//!   operand bytes overwritten before the retirement (the checker, `check/tensor_reads.rs`).

use crate::report::finding::Category;
use crate::sim::agents::async_op::AsyncKind;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::{ranges, Engine};
use crate::sim::engine::program::Op;
use crate::sim::engine::warp::{lanes, WaitFor};
use crate::sim::tensor::mma::{chunk_ranges, mma, read_operand, M};
use crate::sim::tensor::wgmma_state::{MmaId, MmaIssue, PendingMma, WarpPart};
use phaser_codegen::arch::fragment;
use phaser_codegen::ir::*;

/// A warp of a warpgroup: the warpgroup's index, the warp's rank in it, its first warp.
#[derive(Clone, Copy)]
struct WarpgroupPos {
    wg: usize,
    rank: usize,
    first_warp: usize,
}

impl<C: Checker> Engine<'_, C> {
    fn warpgroup_pos(&self, wi: usize) -> WarpgroupPos {
        let per_cta = self.exec.threads_per_cta.div_ceil(32) as usize;
        let (cta, w) = (wi / per_cta, wi % per_cta);
        let wg = cta * per_cta.div_ceil(4) + w / 4;
        WarpgroupPos { wg, rank: w % 4, first_warp: cta * per_cta + w / 4 * 4 }
    }

    /// A misuse finding at lane `l`'s thread, stopping the run (the GPU's behaviour is
    /// undefined, so nothing after it means anything).
    fn wgmma_misuse(&mut self, wi: usize, l: usize, pc: u32, msg: String) {
        let t = self.cluster_thread(wi, l);
        let cta = self.exec.warps[wi].cta;
        self.finding(Category::WgmmaMisuse, cta, Some(t), None, Some(pc), msg);
        self.abort = true;
    }

    /// Lanes `mask` of warp `wi` reach the `.sync.aligned` instruction at `pc`: the lanes to
    /// execute it with once every live lane of the warp is there (lanes that came earlier are
    /// released), `None` while some are missing (these lanes wait for them).
    fn converge(&mut self, wi: usize, mask: u32, pc: u32, what: &str) -> Option<u32> {
        let existing = self.existing_lanes(wi);
        let live = existing & !self.exec.warps[wi].exited;
        let first = lanes(mask).next().unwrap_or(0);
        if live != existing {
            let gone = ranges(&lanes(existing & !live).map(|x| x as u32).collect::<Vec<_>>());
            let msg =
                format!("`{what}` is .sync.aligned (every thread of the warp executes it), but lane(s) {gone} exited");
            self.wgmma_misuse(wi, first, pc, msg);
            return None;
        }
        let (at, arrived) = self.async_ops.wgmma.warps[wi].gather.unwrap_or((pc, 0));
        if at != pc {
            let msg = format!(
                "the warp's lanes reached two different .sync.aligned wgmma instructions ({}and this `{what}`): PTX \
                 requires them to execute each one together",
                self.loc(at).map(|l| format!("at {l} ")).unwrap_or_default()
            );
            self.wgmma_misuse(wi, first, pc, msg);
            return None;
        }
        let arrived = arrived | mask;
        if arrived & live != live {
            self.async_ops.wgmma.warps[wi].gather = Some((pc, arrived));
            for l in lanes(mask) {
                self.block_lane(wi, l, WaitFor::WgmmaConverge { pc });
            }
            return None;
        }
        self.async_ops.wgmma.warps[wi].gather = None;
        let w = &mut self.exec.warps[wi];
        for l in lanes(arrived & !mask) {
            w.blocked &= !(1 << l);
            w.runnable |= 1 << l;
            w.wait[l] = WaitFor::Nothing;
        }
        Some(arrived)
    }

    pub(crate) fn exec_wgmma(&mut self, wi: usize, mask: u32, pc: u32, op: &WgmmaOp) {
        let what = op.mnemonic();
        let Some(mask) = self.converge(wi, mask, pc, &what) else { return };
        if !self.exec.threads_per_cta.is_multiple_of(128) {
            let msg = format!(
                "`{what}` needs whole warpgroups (128 threads), but the CTA has {} threads",
                self.exec.threads_per_cta
            );
            self.wgmma_misuse(wi, lanes(mask).next().unwrap_or(0), pc, msg);
            return;
        }
        match op {
            WgmmaOp::Fence => {
                let w = &mut self.async_ops.wgmma.warps[wi];
                w.fenced = true;
                w.touched.clear();
            }
            WgmmaOp::CommitGroup => {
                let w = &mut self.async_ops.wgmma.warps[wi];
                let group = std::mem::take(&mut w.uncommitted);
                w.groups.push(group);
            }
            WgmmaOp::WaitGroup { n } => {
                if !self.wgmma_retire(wi, *n, mask) {
                    for l in lanes(mask) {
                        self.block_lane(wi, l, WaitFor::WgmmaGroups { n: *n, pc });
                    }
                }
            }
            WgmmaOp::MmaAsync(m) => self.issue_mma(wi, mask, pc, m),
        }
    }

    /// Whether every wgmma of warp `wi`'s groups older than its `n` most recent completed (a
    /// `wait_group n` may retire them), asked without changing anything.
    pub(crate) fn wgmma_groups_complete(&self, wi: usize, n: u32) -> bool {
        let w = &self.async_ops.wgmma.warps[wi];
        let old = w.groups.len().saturating_sub(n as usize);
        w.groups[..old].iter().flatten().all(|id| w.results.contains_key(id))
    }

    /// Retire warp `wi`'s groups older than its `n` most recent if they completed: their
    /// results go into the registers of lanes `mask`. Returns whether the wait is over.
    fn wgmma_retire(&mut self, wi: usize, n: u32, mask: u32) -> bool {
        if !self.wgmma_groups_complete(wi, n) {
            return false;
        }
        let w = &self.async_ops.wgmma.warps[wi];
        let old = w.groups.len().saturating_sub(n as usize);
        if old == 0 {
            return true;
        }
        let retired: Vec<MmaId> = self.async_ops.wgmma.warps[wi].groups.drain(..old).flatten().collect();
        let base = self.cluster_thread(wi, 0);
        for id in retired {
            self.touch_wgmma_retired(wi, id);
            let w = &mut self.async_ops.wgmma.warps[wi];
            let result = w.results.remove(&id).expect("completed");
            let Some(p) = w.pending.iter().position(|p| p.id == id) else { continue };
            let p = w.pending.remove(p);
            let nregs = p.d.len();
            let regs = &mut self.exec.warps[wi].regs;
            for l in lanes(mask) {
                for (i, &r) in p.d.iter().enumerate() {
                    regs[r as usize * 32 + l] = result[l * nregs + i].to_bits() as u64;
                }
            }
            self.checker.on_wgmma_retired(base, mask, id);
        }
        self.async_ops.wgmma.warps[wi].refresh_pending_regs();
        self.time.effects += 1;
        true
    }

    /// Whether the lanes of warp `wi` blocked in `wgmma.wait_group n` may go on (retiring the
    /// groups the first time it is so).
    pub(crate) fn wgmma_wait_ready(&mut self, wi: usize, n: u32) -> bool {
        let w = &self.exec.warps[wi];
        let waiting = lanes(w.blocked)
            .filter(|&l| matches!(w.wait[l], WaitFor::WgmmaGroups { .. }))
            .fold(0u32, |m, l| m | 1 << l);
        self.wgmma_retire(wi, n, waiting)
    }

    /// Warp `wi`'s part of a `wgmma.mma_async`; the wgmma goes in flight with the fourth.
    fn issue_mma(&mut self, wi: usize, mask: u32, pc: u32, m: &MmaAsync) {
        let pos = self.warpgroup_pos(wi);
        let l0 = lanes(mask).next().unwrap_or(0);
        let (a_desc, b_desc, scale_d) = (
            match &m.a {
                WgmmaA::Desc(d) => self.val(wi, l0, d),
                WgmmaA::Regs(_) => 0,
            },
            self.val(wi, l0, &m.b_desc),
            self.val(wi, l0, &m.scale_d) != 0,
        );
        // Uniform operands: the warp's lanes agree.
        for l in lanes(mask) {
            let a = match &m.a {
                WgmmaA::Desc(d) => self.val(wi, l, d),
                WgmmaA::Regs(_) => 0,
            };
            if (a, self.val(wi, l, &m.b_desc), self.val(wi, l, &m.scale_d) != 0) != (a_desc, b_desc, scale_d) {
                let msg = format!(
                    "lane {l} passes other descriptors or scale-d than lane {l0} to `{}` (they must be the same for \
                     the whole warpgroup)",
                    m.shape()
                );
                self.wgmma_misuse(wi, l, pc, msg);
                return;
            }
        }
        self.check_fence(wi, l0, pc, m);
        let tensor = &self.cx.program.tensor;
        let d: Vec<u32> = m.d.iter().map(|r| r.id).collect();
        let regs: Vec<u32> =
            crate::sim::tensor::regs::wgmma_regs(m).into_iter().filter_map(|id| tensor.dense(id)).collect();
        let w = &mut self.async_ops.wgmma.warps[wi];
        // A wgmma on the accumulator of one still pending continues it (the ISA orders the two).
        let chain = w.pending.iter().rev().find(|p| p.d == d).map(|p| p.id);
        let seq = w.issued;
        w.issued += 1;
        let nregs = d.len();
        let d_in = (scale_d && chain.is_none()).then(|| {
            let r = &self.exec.warps[wi].regs;
            (0..32).flat_map(|l| d.iter().map(move |&id| f32::from_bits(r[id as usize * 32 + l] as u32))).collect()
        });
        let a_regs = match &m.a {
            WgmmaA::Regs(a) => Some(
                (0..32).flat_map(|l| a.iter().map(move |v| (l, *v))).map(|(l, v)| self.val(wi, l, &v) as u32).collect(),
            ),
            WgmmaA::Desc(_) => None,
        };
        let part = WarpPart { d_in, chain, a_regs, a_desc, b_desc, scale_d };
        debug_assert!(d.len() == nregs);
        // The warpgroup's k-th wgmma.
        let group = &mut self.async_ops.wgmma.warpgroups[pos.wg];
        let idx = match group.partial.iter().position(|p| p.seq == seq) {
            Some(i) => i,
            None => {
                let id = self.async_ops.wgmma.next_id;
                self.async_ops.wgmma.next_id += 1;
                let group = &mut self.async_ops.wgmma.warpgroups[pos.wg];
                group.partial.push(MmaIssue { id, seq, pc, arrived: 0, parts: Default::default() });
                group.partial.len() - 1
            }
        };
        let issue = &self.async_ops.wgmma.warpgroups[pos.wg].partial[idx];
        if issue.pc != pc {
            let msg = format!(
                "warps of a warpgroup issue different wgmma.mma_async instructions as their {}-th ({}and here): \
                 every warp must execute the same one",
                seq + 1,
                self.loc(issue.pc).map(|l| format!("{l} ")).unwrap_or_default()
            );
            self.wgmma_misuse(wi, l0, pc, msg);
            return;
        }
        let id = issue.id;
        if let Some(other) = issue.parts.iter().flatten().next() {
            if (other.a_desc, other.b_desc, other.scale_d) != (a_desc, b_desc, scale_d) {
                let msg =
                    "the warps of a warpgroup pass different descriptors or scale-d to one wgmma.mma_async (they \
                           must be the same for the whole warpgroup)"
                        .to_string();
                self.wgmma_misuse(wi, l0, pc, msg);
                return;
            }
        }
        let snap = self.checker.snapshot_for_async(self.cluster_thread(wi, l0));
        self.async_ops.wgmma.snaps.entry(id).or_default().push(snap);
        let w = &mut self.async_ops.wgmma.warps[wi];
        w.uncommitted.push(id);
        w.pending.push(PendingMma { id, pc, regs, d });
        w.refresh_pending_regs();
        let issue = &mut self.async_ops.wgmma.warpgroups[pos.wg].partial[idx];
        issue.parts[pos.rank] = Some(part);
        issue.arrived |= 1 << pos.rank;
        let launches = issue.arrived == 0b1111;
        self.touch_wgmma_part(wi, seq);
        if launches {
            let issue = self.async_ops.wgmma.warpgroups[pos.wg].partial.remove(idx);
            self.launch_mma(pos, issue, m);
        }
    }

    /// All four warps issued: check the operand bytes, and put the wgmma in flight.
    fn launch_mma(&mut self, pos: WarpgroupPos, issue: MmaIssue, m: &MmaAsync) {
        let cta = self.exec.warps[pos.first_warp].cta;
        let base = self.cluster_thread(pos.first_warp, 0);
        let snaps = self.async_ops.wgmma.snaps.remove(&issue.id).unwrap_or_default();
        if C::ENABLED {
            let part = issue.parts[0].as_ref().expect("four parts");
            let smem = &self.exec.ctas[cta].smem;
            let k = m.k();
            let mut chunks = Vec::new();
            if let WgmmaA::Desc(_) = m.a {
                if let Ok(a) = read_operand(smem, part.a_desc, major(m.trans_a), m.a_ty, M as u32, k, false) {
                    chunks.extend(a.chunks);
                }
            }
            if let Ok(b) = read_operand(smem, part.b_desc, major(m.trans_b), m.b_ty, m.n, k, false) {
                chunks.extend(b.chunks);
            }
            chunks.sort_unstable();
            chunks.dedup();
            let reads = chunk_ranges(&chunks);
            let found = self.checker.on_wgmma_issue(issue.id, (base, base + 128), &snaps, cta, &reads, issue.pc);
            self.report_issue(found);
        }
        let pc = issue.pc;
        self.push_op(base, pc, AsyncKind::Wgmma { wg: pos.wg, mma: Box::new(issue) });
    }

    /// `wgmma.fence` rules for warp `wi`'s `mma_async` at `pc`.
    fn check_fence(&mut self, wi: usize, l0: usize, pc: u32, m: &MmaAsync) {
        let t = self.cluster_thread(wi, l0);
        let cta = self.exec.warps[wi].cta;
        let w = &self.async_ops.wgmma.warps[wi];
        let msg = if !w.fenced {
            Some(
                "the warp's first wgmma.mma_async has no wgmma.fence before it (PTX requires one before the first \
                  wgmma of a warpgroup)"
                    .to_string(),
            )
        } else {
            let tensor = &self.cx.program.tensor;
            crate::sim::tensor::regs::wgmma_regs(m).into_iter().find_map(|id| {
                let r = tensor.dense(id)?;
                let at = *w.touched.get(&r)?;
                Some(format!(
                    "register {} of this wgmma.mma_async was accessed by an ordinary instruction{} with no \
                     wgmma.fence in between (PTX requires the fence between them)",
                    phaser_codegen::emit::operand::reg(tensor.regs[r as usize]),
                    self.loc(at).map(|l| format!(" at {l}")).unwrap_or_default()
                ))
            })
        };
        if let Some(msg) = msg {
            self.finding(Category::MissingWgmmaFence, cta, Some(t), None, Some(pc), msg);
        }
    }

    /// A wgmma completes: it reads its operands now and computes; each warp gets its rows of
    /// the result, for its `wait_group` to write into the registers.
    pub(crate) fn complete_wgmma(&mut self, wg: usize, issue: MmaIssue, pc: u32) {
        let prog = self.cx.program;
        let Op::Slow(i) = prog.ops[pc as usize] else { unreachable!("a wgmma's pc is a slow op") };
        let Inst::Wgmma(WgmmaOp::MmaAsync(m)) = &prog.slow[i as usize] else { unreachable!("a wgmma") };
        let per_cta = self.exec.threads_per_cta.div_ceil(32) as usize;
        let wg_per_cta = per_cta.div_ceil(4);
        let first_warp = wg / wg_per_cta * per_cta + wg % wg_per_cta * 4;
        let cta = self.exec.warps[first_warp].cta;
        let (n, k) = (m.n as usize, m.k() as usize);
        let nregs = m.d.len();
        if self.cx.config.skeleton {
            // The skeleton keeps the completion and skips the math (`SimConfig::skeleton`).
            for rank in 0..4 {
                self.async_ops.wgmma.warps[first_warp + rank].results.insert(issue.id, vec![0f32; 32 * nregs]);
            }
            self.checker.on_wgmma_done(issue.id);
            return;
        }
        let p0 = issue.parts[0].clone().expect("four parts");
        let smem = &self.exec.ctas[cta].smem;
        let a = match &m.a {
            WgmmaA::Desc(_) => read_operand(smem, p0.a_desc, major(m.trans_a), m.a_ty, M as u32, k as u32, m.negate_a)
                .map(|o| o.values),
            WgmmaA::Regs(_) => Ok(a_from_registers(&issue, m)),
        };
        let b = read_operand(smem, p0.b_desc, major(m.trans_b), m.b_ty, m.n, k as u32, m.negate_b).map(|o| o.values);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                let t = self.cluster_thread(first_warp, 0);
                self.fault(cta, t, pc, format!("wgmma.mma_async.{}: {e}", m.shape()));
                return;
            }
        };
        // The accumulator's input, gathered from the four warps' fragments.
        let mut d = vec![0f32; M * n];
        if p0.scale_d {
            for (rank, part) in issue.parts.iter().enumerate() {
                let part = part.as_ref().expect("four parts");
                let wi = first_warp + rank;
                let chained = part.chain.and_then(|c| self.async_ops.wgmma.warps[wi].results.get(&c).cloned());
                let values: Vec<f32> = match (&part.d_in, chained) {
                    (Some(v), _) => v.clone(),
                    (None, Some(v)) => v,
                    // Continues a wgmma retired meanwhile: its result is in the registers.
                    (None, None) => {
                        let r = &self.exec.warps[wi].regs;
                        (0..32)
                            .flat_map(|l| m.d.iter().map(move |reg| f32::from_bits(r[reg.id as usize * 32 + l] as u32)))
                            .collect()
                    }
                };
                for l in 0..32 {
                    for i in 0..nregs {
                        let (row, col) = fragment::d_element(rank as u32 * 32 + l as u32, i as u32);
                        d[row as usize * n + col as usize] = values[l * nregs + i];
                    }
                }
            }
        }
        mma(&a, &b, &mut d, n, k, p0.scale_d);
        for rank in 0..4 {
            let mut rows = vec![0f32; 32 * nregs];
            for l in 0..32 {
                for i in 0..nregs {
                    let (row, col) = fragment::d_element(rank as u32 * 32 + l as u32, i as u32);
                    rows[l * nregs + i] = d[row as usize * n + col as usize];
                }
            }
            self.async_ops.wgmma.warps[first_warp + rank].results.insert(issue.id, rows);
        }
        self.checker.on_wgmma_done(issue.id);
    }

    /// Before an ordinary instruction touching wgmma registers (`Op::TensorRegs`): a finding
    /// if the warp has a wgmma using one of them that it has not retired; the access is
    /// remembered until the next `wgmma.fence`.
    pub(crate) fn tensor_regs_access(&mut self, wi: usize, mask: u32, pc: u32, check: u32) {
        let prog = self.cx.program;
        let touched = &prog.tensor.checks[check as usize];
        let w = &mut self.async_ops.wgmma.warps[wi];
        let mut race = None;
        for &r in touched {
            w.touched.insert(r, pc);
            if race.is_none() && w.pending_regs.contains(r) {
                race = w.pending.iter().find(|p| p.regs.contains(&r)).map(|p| (r, p.pc));
            }
        }
        let Some((r, at)) = race else { return };
        let reg = prog.tensor.regs[r as usize];
        let l = lanes(mask).next().unwrap_or(0);
        let t = self.cluster_thread(wi, l);
        let cta = self.exec.warps[wi].cta;
        // Which element it holds, when it is an accumulator register.
        let w = &self.async_ops.wgmma.warps[wi];
        let element =
            w.pending.iter().find(|p| p.pc == at).and_then(|p| p.d.iter().position(|&d| d == reg.id)).map(|i| {
                let (row, col) = fragment::d_element(self.warpgroup_pos(wi).rank as u32 * 32 + l as u32, i as u32);
                format!(" (element ({row}, {col}) of lane {l}'s accumulator tile)")
            });
        let msg = format!(
            "this instruction accesses {}{}, which the wgmma.mma_async{} writes, before a wgmma.wait_group of this \
             warp retired that wgmma: its value is undefined until then (wait with `wgmma.wait_group` first)",
            phaser_codegen::emit::operand::reg(reg),
            element.unwrap_or_else(|| " (A fragment)".into()),
            self.loc(at).map(|l| format!(" at {l}")).unwrap_or_default()
        );
        self.finding(Category::WgmmaRegisterRace, cta, Some(t), None, Some(pc), msg);
    }

    /// For a deadlock report: what warp `wi` blocked in `wgmma.wait_group n` waits for.
    pub(crate) fn describe_wgmma_wait(&self, wi: usize, n: u32) -> String {
        let w = &self.async_ops.wgmma.warps[wi];
        let old = w.groups.len().saturating_sub(n as usize);
        let waiting: Vec<MmaId> =
            w.groups[..old].iter().flatten().filter(|id| !w.results.contains_key(id)).copied().collect();
        let pos = self.warpgroup_pos(wi);
        let unissued = self.async_ops.wgmma.warpgroups[pos.wg].partial.iter().find(|p| waiting.contains(&p.id));
        let why = match unissued {
            Some(p) => {
                let missing: Vec<String> =
                    (0..4).filter(|r| p.arrived & (1 << r) == 0).map(|r| (pos.first_warp + r).to_string()).collect();
                format!(
                    ": the wgmma.mma_async{} has not been issued by warp(s) {} of the warpgroup (all four must)",
                    self.loc(p.pc).map(|l| format!(" at {l}")).unwrap_or_default(),
                    missing.join(", ")
                )
            }
            None => String::new(),
        };
        format!("blocked at `wgmma.wait_group {n}`: {} wgmma(s) of older groups not complete{why}", waiting.len())
    }

    /// For a deadlock report: lanes of warp `wi` waiting for the rest at a wgmma instruction.
    pub(crate) fn describe_wgmma_converge(&self, wi: usize) -> String {
        let (pc, arrived) = self.async_ops.wgmma.warps[wi].gather.unwrap_or((0, 0));
        let missing = self.existing_lanes(wi) & !arrived;
        format!(
            "waits at a .sync.aligned wgmma instruction{} for lane(s) {} of its warp, which never reach it",
            self.loc(pc).map(|l| format!(" ({l})")).unwrap_or_default(),
            ranges(&lanes(missing).map(|x| x as u32).collect::<Vec<_>>())
        )
    }
}

fn major(trans: bool) -> Major {
    if trans {
        Major::MN
    } else {
        Major::K
    }
}

/// A (64 x K) from the four warps' A fragments (`arch::fragment::a_element`).
fn a_from_registers(issue: &MmaIssue, m: &MmaAsync) -> Vec<f32> {
    let k = m.k() as usize;
    let bytes = m.a_ty.bytes();
    let per_reg = (4 / bytes) as usize;
    let mut a = vec![0f32; M * k];
    for (rank, part) in issue.parts.iter().enumerate() {
        let Some(regs) = part.as_ref().and_then(|p| p.a_regs.as_ref()) else { continue };
        for l in 0..32 {
            for reg in 0..4 {
                let word = regs[l * 4 + reg];
                for part in 0..per_reg {
                    let bits = (word >> (8 * bytes as usize * part)) & ((1u64 << (8 * bytes)) - 1) as u32;
                    let (row, col) = fragment::a_element(rank as u32 * 32 + l as u32, reg as u32, part as u32, bytes);
                    let sign = if m.negate_a { -1.0 } else { 1.0 };
                    a[row as usize * k + col as usize] = sign * crate::sim::tensor::mma::element(m.a_ty, bits);
                }
            }
        }
    }
    a
}
