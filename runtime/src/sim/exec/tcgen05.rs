//! The tcgen05 family (PTX ISA 9.7.16): tensor-memory allocation per CTA, warp-collective
//! `tcgen05.ld/st/wait`, the tensor core as an asynchronous agent (`tcgen05.mma`, `cp`,
//! `shift` run when the scheduler says, in issue order per CTA — "the two asynchronous
//! operations are guaranteed to execute in the same order as the instructions that issued
//! them" for the pipelined pairs, which is every pair a kernel issues to one accumulator),
//! `tcgen05.commit` (an arrival once every earlier async tcgen05 op of its thread completed:
//! it "makes the mbarrier object track the completion of all prior async-tcgen05 operations
//! initiated by the executing thread") and the fences, which the checker reads.
//!
//! What is reported: tensor-memory allocation misuse and leaks (`TmemAlloc`, `TmemLeak`),
//! accesses outside the allocation or the warp's lanes (`TmemOutOfBounds`), unordered
//! tensor-memory accesses (`TmemRace`) and missing fences (`Tcgen05Fence`) by the checker, and
//! shared-memory hazards of the MMA's operand reads (`AsyncReadRace` when it reads a stage
//! whose copy it did not wait for, `AsyncWriteRace` when a copy refills a stage an MMA in
//! flight reads) through the shared-memory checker.
//!
//! Not modelled (a clear `Unsupported` finding): `.pack::16b`/`.unpack::16b`, the multicast and
//! decompressing shapes of `tcgen05.cp`, M = 128 with `.cta_group::2` (data-path Layout B),
//! sparse/block-scaled/integer MMAs; a `tcgen05.alloc` that does not fit is reported instead of
//! blocking until another warp frees columns.

use crate::report::finding::Category;
use crate::sim::agents::async_op::AsyncKind;
use crate::sim::check::{Checker, Region, SharedRange, TmemKind};
use crate::sim::engine::cluster::{ranges, Engine};
use crate::sim::engine::warp::lanes;
use crate::sim::tensor::tmem::Allocation;
use crate::sim::tensor::umma::{cp_span, operand_span, run_cp, run_mma, run_shift, ASource, MmaJob, TcKind, TcWork};
use phaser_codegen::arch::tcgen05::{alloc_columns_problem, instr_desc_problem, TMEM_LANES, TMEM_LANES_PER_WARP};
use phaser_codegen::ir::*;

/// The form of a `tcgen05.ld`/`tcgen05.st`: its shape, repetitions and 16-bit packing.
#[derive(Clone, Copy)]
struct LdStForm {
    shape: LdStShape,
    num: u32,
    packed: bool,
}

/// What an MMA accesses, collected while it is decoded: tensor-memory regions and
/// shared-memory operand reads `(cta, offset, bytes)`.
struct MmaAccesses<'a> {
    regions: &'a mut Vec<Region>,
    reads: &'a mut Vec<(usize, u32, u32)>,
}

impl<C: Checker> Engine<'_, C> {
    pub(crate) fn exec_tcgen05(&mut self, wi: usize, mask: u32, pc: u32, op: &Tcgen05Op) {
        match op {
            Tcgen05Op::Alloc { .. }
            | Tcgen05Op::Dealloc { .. }
            | Tcgen05Op::RelinquishAllocPermit { .. }
            | Tcgen05Op::Ld { .. }
            | Tcgen05Op::St { .. }
            | Tcgen05Op::Wait { .. } => {
                if self.converged(wi, mask, pc, op) {
                    self.exec_collective(wi, mask, pc, op);
                }
            }
            Tcgen05Op::Mma(_) | Tcgen05Op::Cp { .. } | Tcgen05Op::Shift { .. } => {
                for l in lanes(mask) {
                    self.issue_tc_work(wi, l, pc, op);
                    if self.abort {
                        break;
                    }
                }
            }
            Tcgen05Op::Commit { bar, multicast, .. } => {
                for l in lanes(mask) {
                    self.tcgen05_commit(wi, l, pc, bar, multicast.as_ref());
                    if self.abort {
                        break;
                    }
                }
            }
            Tcgen05Op::Fence { after } => {
                for l in lanes(mask) {
                    let t = self.cluster_thread(wi, l);
                    self.checker.on_tcgen05_fence(t, *after);
                }
            }
        }
    }

    /// A `.sync.aligned` instruction runs once every live lane of the warp is at it: lanes that
    /// come early wait for the others (`bar.warp.sync` with the warp's mask) and then execute
    /// it together. A lane of the warp that exited is undefined behaviour ("or if any thread
    /// in the warp has exited"), reported.
    fn converged(&mut self, wi: usize, mask: u32, pc: u32, op: &Tcgen05Op) -> bool {
        let existing = self.existing_lanes(wi);
        let live = existing & !self.exec.warps[wi].exited;
        if mask & live == live {
            let gone = existing & self.exec.warps[wi].exited;
            if gone != 0 {
                let t = self.cluster_thread(wi, mask.trailing_zeros() as usize);
                let msg = format!(
                    "`{}` is .sync.aligned: every thread of the warp must execute it, but lane(s) {} exited \
                     (undefined behaviour)",
                    op.mnemonic(),
                    ranges(&lanes(gone).map(|x| x as u32).collect::<Vec<_>>())
                );
                let cta = self.exec.warps[wi].cta;
                self.finding(Category::WarpSync, cta, Some(t), None, Some(pc), msg);
            }
            return true;
        }
        self.exec.warps[wi].set_pc(mask, pc);
        for l in lanes(mask) {
            self.collective_arrive(wi, l, live, pc, crate::sim::engine::warp::RoundKind::WarpSync, [0; 5]);
        }
        false
    }

    fn tc_finding(&mut self, category: Category, t: u32, pc: u32, msg: String, abort: bool) {
        let cta = (t / self.exec.threads_per_cta) as usize;
        self.finding(category, cta, Some(t), None, Some(pc), msg);
        if abort {
            self.abort = true;
        }
    }

    /// The CTAs of `cta`'s pair, even first (`.cta_group::2`), or `cta` alone; `None` (reported)
    /// when the peer does not exist or has exited ("the peer CTA should be active and should
    /// not have exited").
    fn tc_ctas(&mut self, cta: usize, group: CtaGroup, t: u32, pc: u32, what: &str) -> Option<Vec<usize>> {
        if group == CtaGroup::One {
            return Some(vec![cta]);
        }
        let peer = cta ^ 1;
        if peer >= self.exec.ctas.len() {
            let msg = format!(
                "{what}.cta_group::2 needs the peer CTA (cluster rank {peer}), but the cluster has {} CTA(s)",
                self.exec.ctas.len()
            );
            self.tc_finding(Category::Unsupported, t, pc, msg, true);
            return None;
        }
        if self.exec.ctas[peer].exited == self.exec.threads_per_cta {
            let msg = format!("{what}.cta_group::2 while the peer CTA (cluster rank {peer}) has already exited");
            self.tc_finding(Category::ExitedCtaAccess, t, pc, msg, true);
            return None;
        }
        Some(vec![cta.min(peer), cta.max(peer)])
    }

    /// Columns `[col, col + cols)` of every CTA of `ctas` lie in one allocation (reported and
    /// stopped otherwise).
    fn tc_columns(&mut self, ctas: &[usize], col: u32, cols: u32, t: u32, pc: u32, what: &str) -> bool {
        for &c in ctas {
            if self.tcgen05.ctas[c].covering(col, cols).is_none() {
                let in_cta = if self.exec.ctas.len() > 1 { format!(" of CTA rank {c}") } else { String::new() };
                let msg = format!(
                    "{what} accesses tensor-memory columns {col}-{}{in_cta}, outside every allocation (allocated: {})",
                    col + cols - 1,
                    self.tcgen05.ctas[c].describe()
                );
                self.tc_finding(Category::TmemOutOfBounds, t, pc, msg, true);
                return false;
            }
        }
        true
    }

    fn exec_collective(&mut self, wi: usize, mask: u32, pc: u32, op: &Tcgen05Op) {
        let l0 = mask.trailing_zeros() as usize;
        let t0 = self.cluster_thread(wi, l0);
        let cta = self.exec.warps[wi].cta;
        match op {
            Tcgen05Op::Alloc { cta_group, dst, ncols } => {
                let n = self.val(wi, l0, ncols) as u32;
                if let Some(p) = alloc_columns_problem(n) {
                    self.tc_finding(Category::TmemAlloc, t0, pc, format!("tcgen05.alloc: {p}"), true);
                    return;
                }
                if self.tc_ctas(cta, *cta_group, t0, pc, "tcgen05.alloc").is_none() {
                    return;
                }
                let addr = self.val(wi, l0, dst) & 0xFFFF_FFFF;
                let Some((scta, soff)) = self.smem_addr(wi, l0, false, addr, 4, pc) else { return };
                let tm = &self.tcgen05.ctas[cta];
                if let Some(at) = tm.relinquished {
                    let at = self.loc(at).map(|l| format!(" at {l}")).unwrap_or_default();
                    let msg = format!(
                        "tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit{at} (\"it is illegal for a \
                         CTA to perform tcgen05.alloc after any of its constituent threads execute \
                         tcgen05.relinquish_alloc_permit\")"
                    );
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, true);
                    return;
                }
                if let Some(prev) = tm.last_ncols.filter(|&p| n > p) {
                    let msg = format!(
                        "tcgen05.alloc of {n} columns after one of {prev}: \"The number of columns allocated should not \
                         increase between any two allocations in the execution order within the CTA\""
                    );
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, false);
                }
                let doubled = self.tcgen05.ctas[cta].allocs.iter().find(|a| a.slot == (scta, soff)).cloned();
                if let Some(a) = doubled {
                    let at = self.loc(a.pc).map(|l| format!(" at {l}")).unwrap_or_default();
                    let msg = format!(
                        "double allocation: this tcgen05.alloc writes its address into {}, which holds the address of \
                         columns {}-{} allocated{at} and not freed (that allocation can no longer be deallocated)",
                        self.cx.layout.describe(soff),
                        a.col,
                        a.col + a.ncols - 1
                    );
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, false);
                }
                let Some(col) = self.tcgen05.ctas[cta].find_free(n) else {
                    let msg = format!(
                        "tcgen05.alloc of {n} columns does not fit: this CTA holds {} of its 512 (the hardware would \
                         block until another warp frees columns; the simulator does not model that)",
                        self.tcgen05.ctas[cta].describe()
                    );
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, true);
                    return;
                };
                let tm = &mut self.tcgen05.ctas[cta];
                tm.ensure_cells();
                tm.allocs.push(Allocation { col, ncols: n, warp: wi, by: t0, slot: (scta, soff), pc });
                tm.last_ncols = Some(n);
                // "The store operation in tcgen05.alloc is treated as a weak memory operation".
                let issue = self.checker.on_shared_write(t0, scta, soff, 4, pc);
                self.report_issue(issue);
                let bytes = tmem_addr(0, col).to_le_bytes();
                self.exec.ctas[scta].smem[soff as usize..soff as usize + 4].copy_from_slice(&bytes);
            }
            Tcgen05Op::Dealloc { cta_group, taddr, ncols } => {
                let n = self.val(wi, l0, ncols) as u32;
                let (lane, col) = tmem_lane_col(self.val(wi, l0, taddr) as u32);
                if self.tc_ctas(cta, *cta_group, t0, pc, "tcgen05.dealloc").is_none() {
                    return;
                }
                let tm = &self.tcgen05.ctas[cta];
                let Some(i) = tm.allocs.iter().position(|a| a.col == col && lane == 0) else {
                    let msg = format!(
                        "tcgen05.dealloc of {n} columns at address {:#x} (lane {lane}, column {col}), which is not an \
                         allocation of this CTA (allocated: {})",
                        tmem_addr(lane, col),
                        tm.describe()
                    );
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, false);
                    return;
                };
                let a = tm.allocs[i].clone();
                if a.ncols != n {
                    let msg =
                        format!("tcgen05.dealloc of {n} columns at column {col}, but {} were allocated there", a.ncols);
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, false);
                }
                if a.warp != wi {
                    let tpc = self.exec.threads_per_cta;
                    let at = self.loc(a.pc).map(|l| format!(" at {l}")).unwrap_or_default();
                    let msg = format!(
                        "tcgen05.dealloc by warp {} of columns {}-{} that warp {} allocated{at}: the warp that allocates \
                         tensor memory deallocates it",
                        self.exec.warps[wi].base_tid / 32,
                        a.col,
                        a.col + a.ncols - 1,
                        (a.by % tpc) / 32
                    );
                    self.tc_finding(Category::TmemAlloc, t0, pc, msg, false);
                }
                let region =
                    Region { cta, lane0: 0, lanes: TMEM_LANES, col0: a.col, cols: a.ncols, read: true, write: true };
                let (_, issue) = self.checker.on_tmem_access(t0, TmemKind::Dealloc, &[region], pc);
                self.report_issue(issue);
                self.tcgen05.ctas[cta].allocs.remove(i);
            }
            Tcgen05Op::RelinquishAllocPermit { .. } => {
                let tm = &mut self.tcgen05.ctas[cta];
                tm.relinquished.get_or_insert(pc);
            }
            Tcgen05Op::Ld { shape, num, pack16, dst, taddr } => {
                let Some((lane, col, cols)) = self.ld_st_target(
                    wi,
                    mask,
                    pc,
                    "tcgen05.ld",
                    LdStForm { shape: *shape, num: *num, packed: *pack16 },
                    taddr,
                ) else {
                    return;
                };
                let _ = cols;
                for l in lanes(mask) {
                    let t = self.cluster_thread(wi, l);
                    let mut regions = Vec::new();
                    for (i, r) in dst.iter().enumerate() {
                        let (dl, dc) = shape.cell(l as u32, i as u32);
                        // The value is the registers' at once: "For `tcgen05.ld`, an intra-thread
                        // ordering through true register dependency will be respected regardless
                        // of the presence or absence of other forms of synchronization" (PTX ISA
                        // 9.7.16.6.4.5). What `tcgen05.wait::ld` adds is memory ordering: "a
                        // register dependency does not imply that a dependee instruction's memory
                        // accesses will be performed before a dependent instruction's memory
                        // accesses. To enforce such memory orderings and avoiding anti-dependency
                        // hazards around `tcgen05.ld`, `tcgen05.wait::ld` must be used." So the
                        // read stays in flight for the checker until the wait (a later write of
                        // these cells, a dealloc, or a thread sync publishing them is a finding).
                        let v = self.tcgen05.ctas[cta].get(lane + dl, col + dc) as u64;
                        self.exec.warps[wi].regs[r.id as usize * 32 + l] = v;
                        push_cell(&mut regions, cta, lane + dl, col + dc, true, false);
                    }
                    let (_, issue) = self.checker.on_tmem_access(t, TmemKind::Ld, &regions, pc);
                    self.report_issue(issue);
                }
            }
            Tcgen05Op::St { shape, num, unpack16, taddr, src } => {
                let Some((lane, col, _)) = self.ld_st_target(
                    wi,
                    mask,
                    pc,
                    "tcgen05.st",
                    LdStForm { shape: *shape, num: *num, packed: *unpack16 },
                    taddr,
                ) else {
                    return;
                };
                for l in lanes(mask) {
                    let t = self.cluster_thread(wi, l);
                    let mut regions = Vec::new();
                    for (i, v) in src.iter().enumerate() {
                        let (dl, dc) = shape.cell(l as u32, i as u32);
                        let bits = self.val(wi, l, v) as u32;
                        self.tcgen05.ctas[cta].set(lane + dl, col + dc, bits);
                        push_cell(&mut regions, cta, lane + dl, col + dc, false, true);
                    }
                    let (_, issue) = self.checker.on_tmem_access(t, TmemKind::St, &regions, pc);
                    self.report_issue(issue);
                }
            }
            Tcgen05Op::Wait { st } => {
                for l in lanes(mask) {
                    let t = self.cluster_thread(wi, l);
                    self.checker.on_tmem_wait(t, *st);
                }
            }
            _ => unreachable!("not a collective tcgen05 op"),
        }
    }

    /// Where a warp's `tcgen05.ld/st` goes: (lane, column, columns spanned), after checking
    /// that every lane names the same address, that the lanes are the warp's ("warp `w % 4`
    /// accesses lanes `32 (w % 4)` to `32 (w % 4) + 31`") and that the columns are allocated.
    fn ld_st_target(
        &mut self,
        wi: usize,
        mask: u32,
        pc: u32,
        what: &str,
        LdStForm { shape, num, packed }: LdStForm,
        taddr: &Value,
    ) -> Option<(u32, u32, u32)> {
        let l0 = mask.trailing_zeros() as usize;
        let t0 = self.cluster_thread(wi, l0);
        let cta = self.exec.warps[wi].cta;
        if packed {
            let msg = format!("{what} with .pack::16b/.unpack::16b: the simulator does not model it yet");
            self.tc_finding(Category::Unsupported, t0, pc, msg, true);
            return None;
        }
        let a = self.val(wi, l0, taddr) as u32;
        if let Some(l) = lanes(mask).find(|&l| self.val(wi, l, taddr) as u32 != a) {
            let msg = format!(
                "{what}: lane {l} names tensor-memory address {:#x} but lane {l0} {a:#x} (every thread of the warp must \
                 use the same address)",
                self.val(wi, l, taddr) as u32
            );
            self.tc_finding(Category::Unsupported, t0, pc, msg, true);
            return None;
        }
        let (lane, col) = tmem_lane_col(a);
        let quarter = (self.exec.warps[wi].base_tid / 32) % 4;
        let (lo, hi) = (quarter * TMEM_LANES_PER_WARP, (quarter + 1) * TMEM_LANES_PER_WARP);
        if lane < lo || lane + shape.lanes() > hi {
            let msg = format!(
                "{what}{}: warp {} (warp {quarter} of its warpgroup) accesses lanes {lane}-{}, but it may access only \
                 lanes {lo}-{} (PTX ISA 9.7.16.8.1 \"Access restrictions\")",
                shape.ptx(),
                self.exec.warps[wi].base_tid / 32,
                lane + shape.lanes() - 1,
                hi - 1
            );
            self.tc_finding(Category::TmemOutOfBounds, t0, pc, msg, true);
            return None;
        }
        let regs = shape.regs_per_num() * num;
        let span = (0..32).flat_map(|t| (0..regs).map(move |i| shape.cell(t, i).1)).max().unwrap_or(0) + 1;
        if !self.tc_columns(&[cta], col, span, t0, pc, what) {
            return None;
        }
        Some((lane, col, span))
    }

    /// Issue an MMA, copy or shift by the thread of lane `l`: decode and check its operands,
    /// register its reads and writes with the checker, and hand it to the tensor core.
    fn issue_tc_work(&mut self, wi: usize, l: usize, pc: u32, op: &Tcgen05Op) {
        let t = self.cluster_thread(wi, l);
        let cta = self.exec.warps[wi].cta;
        let group = op.cta_group().unwrap_or(CtaGroup::One);
        let what = match op {
            Tcgen05Op::Mma(m) => format!("tcgen05.mma{}", m.kind.ptx()),
            other => other.mnemonic(),
        };
        let Some(ctas) = self.tc_ctas(cta, group, t, pc, &what) else { return };
        let op_id = self.async_ops.next_id;
        let mut regions = Vec::new();
        let mut reads: Vec<(usize, u32, u32)> = Vec::new();
        let (kind, tk) = match op {
            Tcgen05Op::Mma(m) => {
                let Some(job) =
                    self.decode_mma(wi, l, pc, m, &ctas, MmaAccesses { regions: &mut regions, reads: &mut reads })
                else {
                    return;
                };
                (TmemKind::Mma, TcKind::Mma(job))
            }
            Tcgen05Op::Cp { shape, taddr, s_desc, .. } => {
                if !matches!(shape, CpShape::S128x256b | CpShape::S4x256b | CpShape::S128x128b) {
                    let msg =
                        format!("tcgen05.cp{}: the simulator does not model warp-multicast copies yet", shape.ptx());
                    self.tc_finding(Category::Unsupported, t, pc, msg, true);
                    return;
                }
                let (lane, col) = tmem_lane_col(self.val(wi, l, taddr) as u32);
                let desc = match UmmaDescriptor::decode(self.val(wi, l, s_desc)) {
                    Ok(d) => d,
                    Err(e) => return self.tc_finding(Category::Unsupported, t, pc, format!("tcgen05.cp: {e}"), true),
                };
                let (rows, bytes) = shape.rows_bytes();
                if lane + rows > TMEM_LANES {
                    let msg = format!("tcgen05.cp{} at lane {lane} runs past lane 127", shape.ptx());
                    return self.tc_finding(Category::TmemOutOfBounds, t, pc, msg, true);
                }
                if !self.tc_columns(&ctas, col, bytes / 4, t, pc, "tcgen05.cp") {
                    return;
                }
                let (lo, hi) = cp_span(*shape, &desc);
                for &c in &ctas {
                    reads.push((c, lo, hi - lo));
                    regions.push(Region {
                        cta: c,
                        lane0: lane,
                        lanes: rows,
                        col0: col,
                        cols: bytes / 4,
                        read: false,
                        write: true,
                    });
                }
                (TmemKind::Cp, TcKind::Cp { shape: *shape, desc, lane, col })
            }
            Tcgen05Op::Shift { taddr, .. } => {
                let (lane, col) = tmem_lane_col(self.val(wi, l, taddr) as u32);
                if lane % 32 != 0 || lane + 32 > TMEM_LANES {
                    let msg = format!(
                        "tcgen05.shift at lane {lane}: \"The lane of the address operand taddr must be aligned to \
                         32\", and its 32 lanes lie in the 128"
                    );
                    return self.tc_finding(Category::TmemOutOfBounds, t, pc, msg, true);
                }
                if !self.tc_columns(&ctas, col, 8, t, pc, "tcgen05.shift") {
                    return;
                }
                for &c in &ctas {
                    regions.push(Region {
                        cta: c,
                        lane0: lane,
                        lanes: 32,
                        col0: col,
                        cols: 8,
                        read: true,
                        write: true,
                    });
                }
                (TmemKind::Shift, TcKind::Shift { lane, col })
            }
            _ => unreachable!("not a tensor-core op"),
        };
        for &(c, lo, len) in &reads {
            if lo as usize + len as usize > self.exec.ctas[c].smem.len() {
                let msg = format!(
                    "{what} reads shared bytes {lo}..{} of CTA rank {c}, past its {} bytes (a bad descriptor?)",
                    lo + len,
                    self.exec.ctas[c].smem.len()
                );
                return self.tc_finding(Category::OutOfBounds, t, pc, msg, true);
            }
        }
        for &(c, lo, len) in &reads {
            let issue =
                self.checker.on_async_read_issue(t, op_id, "tcgen05.mma", SharedRange { cta: c, off: lo, len }, pc);
            self.report_issue(issue);
        }
        if !reads.is_empty() {
            let mut cs: Vec<usize> = reads.iter().map(|r| r.0).collect();
            cs.dedup();
            self.tcgen05.read_ctas.insert(op_id, cs);
            self.tcgen05.unpublished_reads[t as usize].push(op_id);
        }
        let (access, issue) = self.checker.on_tmem_access(t, kind, &regions, pc);
        self.report_issue(issue);
        self.push_op(t, pc, AsyncKind::Tcgen05(Box::new(TcWork { cta, ctas, access, kind: tk })));
    }

    /// The run-time operands of an MMA, checked: the instruction descriptor (PTX ISA Table 42)
    /// against `.kind` and Table 39, the data-path layout and lane alignment of `D` (and `A`
    /// in tensor memory), the allocation of their columns, the shared-memory descriptors.
    fn decode_mma(
        &mut self,
        wi: usize,
        l: usize,
        pc: u32,
        m: &Mma,
        ctas: &[usize],
        MmaAccesses { regions, reads }: MmaAccesses,
    ) -> Option<MmaJob> {
        let t = self.cluster_thread(wi, l);
        let bits = self.val(wi, l, &m.idesc) as u32;
        let desc = match InstrDesc::decode(m.kind, bits) {
            Ok(d) => d,
            Err(e) => {
                self.tc_finding(Category::Unsupported, t, pc, format!("tcgen05.mma{}: {e}", m.kind.ptx()), true);
                return None;
            }
        };
        if let Some(p) = instr_desc_problem(&desc, m.cta_group) {
            let msg = format!("tcgen05.mma{}: instruction descriptor {bits:#010x}: {p}", m.cta_group.ptx());
            self.tc_finding(Category::Unsupported, t, pc, msg, true);
            return None;
        }
        let per = ctas.len() as u32;
        let m_per = desc.m / per;
        if m.cta_group == CtaGroup::Two && desc.m == 128 {
            let msg = "tcgen05.mma.cta_group::2 with M = 128 (data-path Layout B): the simulator does not model it yet";
            self.tc_finding(Category::Unsupported, t, pc, msg.into(), true);
            return None;
        }
        let lanes_ok = |lane: u32| if m_per == 64 { lane == 0 || lane == 16 } else { lane == 0 };
        let (d_lane, d_col) = tmem_lane_col(self.val(wi, l, &m.d_tmem) as u32);
        if !lanes_ok(d_lane) {
            let msg = format!(
                "tcgen05.mma with {m_per} rows per CTA writes D at lane {d_lane}: the data path's lane alignment is {}",
                if m_per == 64 { "0 or 16" } else { "0" }
            );
            self.tc_finding(Category::TmemOutOfBounds, t, pc, msg, true);
            return None;
        }
        if !self.tc_columns(ctas, d_col, desc.n, t, pc, "tcgen05.mma (D)") {
            return None;
        }
        let accumulate = self.val(wi, l, &m.enable_input_d) != 0;
        let rows = |lane: u32| -> Vec<(u32, u32)> {
            if m_per == 64 {
                (0..4).map(|g| (lane + 32 * g, 16)).collect()
            } else {
                vec![(lane, m_per)]
            }
        };
        for &c in ctas {
            for (lane0, lanes) in rows(d_lane) {
                regions.push(Region { cta: c, lane0, lanes, col0: d_col, cols: desc.n, read: accumulate, write: true });
            }
        }
        let b = match UmmaDescriptor::decode(self.val(wi, l, &m.b_desc)) {
            Ok(d) => d,
            Err(e) => {
                self.tc_finding(Category::Unsupported, t, pc, format!("tcgen05.mma (B): {e}"), true);
                return None;
            }
        };
        let (lo, hi) = operand_span(&b, desc.b_major, desc.b, desc.n / per, desc.k());
        for &c in ctas {
            reads.push((c, lo, hi - lo));
        }
        let a = match &m.a {
            MmaA::Desc(v) => match UmmaDescriptor::decode(self.val(wi, l, v)) {
                Ok(d) => {
                    let (lo, hi) = operand_span(&d, desc.a_major, desc.a, m_per, desc.k());
                    for &c in ctas {
                        reads.push((c, lo, hi - lo));
                    }
                    ASource::Smem(d)
                }
                Err(e) => {
                    self.tc_finding(Category::Unsupported, t, pc, format!("tcgen05.mma (A): {e}"), true);
                    return None;
                }
            },
            MmaA::Tmem(v) => {
                let (lane, col) = tmem_lane_col(self.val(wi, l, v) as u32);
                if !lanes_ok(lane) {
                    let msg = format!("tcgen05.mma reads A at lane {lane}: the lane alignment must match D's layout");
                    self.tc_finding(Category::TmemOutOfBounds, t, pc, msg, true);
                    return None;
                }
                if !self.tc_columns(ctas, col, 8, t, pc, "tcgen05.mma (A in tensor memory)") {
                    return None;
                }
                for &c in ctas {
                    for (lane0, lanes) in rows(lane) {
                        regions.push(Region { cta: c, lane0, lanes, col0: col, cols: 8, read: true, write: false });
                    }
                }
                ASource::Tmem { lane, col }
            }
        };
        Some(MmaJob { desc, a, b, d_lane, d_col, accumulate })
    }

    /// `tcgen05.commit` by the thread of lane `l`: one arrival on each target barrier once the
    /// thread's earlier async tcgen05 ops completed (`tcgen05_ready` holds it back), carrying
    /// what it tracks for the checker.
    fn tcgen05_commit(&mut self, wi: usize, l: usize, pc: u32, bar: &Value, multicast: Option<&Value>) {
        let t = self.cluster_thread(wi, l);
        let mut targets = Vec::new();
        match multicast {
            Some(m) => {
                let Some((_, off)) = self.bar_addr(wi, l, bar, true, pc) else { return };
                let m = self.val(wi, l, m) as u16;
                for r in 0..16usize {
                    if m & (1 << r) == 0 {
                        continue;
                    }
                    if r >= self.exec.ctas.len() {
                        let msg =
                            format!("tcgen05.commit multicast mask 0x{m:x} names CTA rank {r}, outside the cluster");
                        let cta = self.exec.warps[wi].cta;
                        self.fault(cta, t, pc, msg);
                        return;
                    }
                    targets.push((r, off));
                }
            }
            None => {
                let Some(b) = self.bar_addr(wi, l, bar, true, pc) else { return };
                targets.push(b);
            }
        }
        let tracked = self.checker.on_tcgen05_commit(t);
        let reads = self.tcgen05.unpublished_reads[t as usize].clone();
        for (c, off) in targets {
            if self.check_barrier_use(t, c, off, pc, "commits tcgen05 work to") {
                let id = self.async_ops.next_id;
                self.tcgen05.commits.insert(id, (tracked.clone(), reads.clone()));
                self.push_op(t, pc, AsyncKind::Commit { cta: c, off });
            }
        }
    }

    /// Whether async op `i` may run now, for the tcgen05 ops (`None` for others): the tensor
    /// core of a CTA runs its ops in issue order, and a commit fires only once every earlier
    /// tcgen05 op of its thread completed.
    pub(crate) fn tcgen05_ready(&self, i: usize) -> Option<bool> {
        let ops = &self.async_ops.in_flight;
        match &ops[i].kind {
            AsyncKind::Tcgen05(w) => {
                Some(!ops[..i].iter().any(|o| matches!(&o.kind, AsyncKind::Tcgen05(x) if x.cta == w.cta)))
            }
            AsyncKind::Commit { .. } => {
                let t = ops[i].issuer;
                Some(!ops[..i].iter().any(|o| o.issuer == t && matches!(o.kind, AsyncKind::Tcgen05(_))))
            }
            _ => None,
        }
    }

    /// The tensor core runs `w` (issued by `issuer` at `pc`).
    pub(crate) fn complete_tcgen05(&mut self, issuer: u32, pc: u32, w: TcWork) {
        let tpc = self.exec.threads_per_cta;
        for &c in &w.ctas {
            if self.exec.ctas[c].exited == tpc {
                let msg = format!(
                    "the {} issued by thread {} runs on CTA rank {c}, which has already exited (nothing kept it alive \
                     until the tensor core was done)",
                    w.what(),
                    issuer % tpc
                );
                self.tc_finding(Category::ExitedCtaAccess, issuer, pc, msg, false);
                self.checker.on_tmem_complete(w.access);
                return;
            }
        }
        let smem: Vec<&[u8]> = w.ctas.iter().map(|&c| &self.exec.ctas[c].smem[..]).collect();
        let mut tmem: Vec<&mut Vec<u32>> = self
            .tcgen05
            .ctas
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| w.ctas.contains(i))
            .map(|(_, t)| &mut t.cells)
            .collect();
        for cells in tmem.iter_mut() {
            if cells.is_empty() {
                **cells = vec![0; (TMEM_LANES * phaser_codegen::arch::tcgen05::TMEM_COLUMNS) as usize];
            }
        }
        match &w.kind {
            // The skeleton keeps the completion and skips the math (`SimConfig::skeleton`).
            TcKind::Mma(_) if self.cx.config.skeleton => {}
            TcKind::Mma(job) => run_mma(job, &smem, &mut tmem),
            TcKind::Cp { shape, desc, lane, col } => {
                for (s, t) in smem.iter().zip(tmem.iter_mut()) {
                    run_cp(*shape, desc, *lane, *col, s, t);
                }
            }
            TcKind::Shift { lane, col } => {
                for t in tmem.iter_mut() {
                    run_shift(*lane, *col, t);
                }
            }
        }
        self.checker.on_tmem_complete(w.access);
    }

    /// Commit op `id` arrives on `(cta, off)` now: what it tracks becomes visible to observers
    /// of the barrier's current phase.
    pub(crate) fn tcgen05_commit_fired(&mut self, id: u32, issuer: u32, cta: usize, off: u32, snap: &C::Snapshot) {
        let Some((ids, reads)) = self.tcgen05.commits.remove(&id) else { return };
        let Some(phase) = self.exec.ctas[cta].barriers.get(self.cx.layout, off).filter(|b| b.usable()).map(|b| b.phase)
        else {
            return;
        };
        let key = self.barrier_key(cta, off);
        self.checker.on_tcgen05_commit_arrive(snap, key, phase, &ids, &reads);
        for op in reads {
            if let Some(cs) = self.tcgen05.read_ctas.get_mut(&op) {
                cs.retain(|&c| c != cta);
                if cs.is_empty() {
                    self.tcgen05.read_ctas.remove(&op);
                    self.tcgen05.unpublished_reads[issuer as usize].retain(|&o| o != op);
                }
            }
        }
    }

    /// Every thread of `cta` exited: tensor memory still allocated leaked ("All of the Tensor
    /// Memory that was allocated in a kernel, must be explicitly deallocated before the kernel
    /// exits").
    pub(crate) fn tcgen05_cta_exited(&mut self, cta: usize) {
        for a in std::mem::take(&mut self.tcgen05.ctas[cta].allocs) {
            let msg = format!(
                "tensor-memory columns {}-{} allocated here were not freed with tcgen05.dealloc before the CTA exited \
                 (\"All of the Tensor Memory that was allocated in a kernel, must be explicitly deallocated before the \
                 kernel exits\")",
                a.col,
                a.col + a.ncols - 1
            );
            self.finding(Category::TmemLeak, cta, Some(a.by), None, Some(a.pc), msg);
        }
    }
}

/// Add cell (`lane`, `col`) to a thread's regions, merging it into the previous region of the
/// same lane when it is the next column.
fn push_cell(regions: &mut Vec<Region>, cta: usize, lane: u32, col: u32, read: bool, write: bool) {
    if let Some(r) = regions.iter_mut().find(|r| r.lane0 == lane && r.lanes == 1 && r.col0 + r.cols == col) {
        r.cols += 1;
        return;
    }
    regions.push(Region { cta, lane0: lane, lanes: 1, col0: col, cols: 1, read, write });
}
