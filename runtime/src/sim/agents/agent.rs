//! Async agents at work: each op is issued by a thread, sits in flight, and progresses when
//! the scheduler says.
//!
//! Loads land in pieces (16-byte multiples, up to four, in an order the scheduler picks), each
//! piece doing its own `complete_tx` on its barrier, as the hardware does: a phase whose
//! `expect_tx` registered fewer bytes than its copies deliver completes while bytes are still
//! in flight, and that is reported (`EarlyPhaseCompletion`) instead of only showing up as a
//! tx-count imbalance at the end.

use crate::error::Result;
use crate::report::finding::Category;
use crate::sim::agents::async_op::{for_box, swizzle, AsyncKind, AsyncOp, LoadSrc, StoreDst};
use crate::sim::check::{Checker, Issue, Publisher, SharedRange};
use crate::sim::engine::cluster::Engine;
use crate::sim::sync::barrier::Actor;
use crate::tensor_map::{BoxRows, Swizzle};

impl<C: Checker> Engine<'_, C> {
    pub fn push_op(&mut self, issuer: u32, pc: u32, kind: AsyncKind) {
        let id = self.async_ops.next_id;
        self.async_ops.next_id += 1;
        let snapshot = self.checker.snapshot_for_async(issuer);
        self.out.stats.async_ops += 1;
        self.time.effects += 1;
        let counters = self.loop_counters(issuer, pc);
        let actor = self.name_async_op(issuer);
        let round = self.time.round;
        self.async_ops.in_flight.push(AsyncOp { id, issuer, snapshot, round, pc, counters, kind, actor });
    }

    /// Whether async op `i` may progress now: a `cp.async.mbarrier.arrive` only once the
    /// copies it tracks have landed.
    pub(crate) fn async_op_ready(&self, i: usize) -> bool {
        if let Some(ready) = self.tcgen05_ready(i) {
            return ready;
        }
        match &self.async_ops.in_flight[i].kind {
            AsyncKind::CpAsyncArrive { after, .. } => {
                !self.async_ops.in_flight[..i].iter().any(|o| after.contains(&o.id))
            }
            // A warpgroup's wgmmas execute in issue order.
            AsyncKind::Wgmma { wg, .. } => !self.async_ops.in_flight[..i]
                .iter()
                .any(|o| matches!(o.kind, AsyncKind::Wgmma { wg: w, .. } if w == *wg)),
            _ => true,
        }
    }

    /// Advance op `i`: one piece of a load, or the whole of any other op. Returns whether
    /// the op is finished (and removed).
    pub fn complete_next_piece(&mut self, i: usize) -> Result<bool> {
        self.time.effects += 1;
        if let AsyncKind::Load { pieces, .. } = &mut self.async_ops.in_flight[i].kind {
            let k = self.sched.piece(pieces.len());
            let piece = pieces.remove(k);
            self.land_piece(i, piece);
            let AsyncKind::Load { pieces, .. } = &self.async_ops.in_flight[i].kind else { unreachable!("a load") };
            if !pieces.is_empty() {
                return Ok(false);
            }
            self.out.stats.async_completed += 1;
            self.async_ops.in_flight.remove(i);
            return Ok(true);
        }
        let op = self.async_ops.in_flight.remove(i);
        self.complete_op(op)?;
        Ok(true)
    }

    /// The hardware counts bytes as they land, in granules much finer than our pieces: when
    /// the first destination's barrier has no arrival pending and its tx-count (a multiple of
    /// 16) is smaller than the piece, the tx-count passes through 0 inside the piece. Split it
    /// there, so the phase completes with the rest of the bytes still in flight.
    fn split_at_tx_zero(&mut self, i: usize, (start, len): (u32, u32)) -> (u32, u32) {
        let AsyncKind::Load { dsts, .. } = &self.async_ops.in_flight[i].kind else { return (start, len) };
        let Some(d) = dsts.first().copied() else { return (start, len) };
        let Some(b) = self.exec.ctas[d.cta].barriers.get(self.cx.layout, d.bar) else { return (start, len) };
        let tx = b.tx;
        if !(b.usable() && b.pending == 0 && tx > 0 && tx < len as i64 && tx % 16 == 0) {
            return (start, len);
        }
        if let AsyncKind::Load { pieces, .. } = &mut self.async_ops.in_flight[i].kind {
            pieces.insert(0, (start + tx as u32, len - tx as u32));
        }
        // The cut depends on the barrier's pending count (had an arrival come later, the
        // piece would pass the tx-count below 0 whole): the head is no plain count-down step.
        self.touch_changed(d.cta, d.bar);
        (start, tx as u32)
    }

    /// Read a load's source (once, at its first piece); `None` after a fault.
    fn load_data(&mut self, i: usize) -> Option<()> {
        let (issuer, pc) = (self.async_ops.in_flight[i].issuer, self.async_ops.in_flight[i].pc);
        let AsyncKind::Load { src, bytes, data, .. } = &self.async_ops.in_flight[i].kind else { return None };
        if data.is_some() {
            return Some(());
        }
        let bytes = *bytes;
        let gmem = &self.global;
        let read = match src {
            LoadSrc::Bulk(a) => gmem.read(*a, bytes as usize).ok_or(*a),
            // Read when the first piece lands: the source must not change while the copy is in
            // flight (the checker sees a write to it as a race with the copy's read).
            LoadSrc::Shared { cta, off } => {
                Ok(self.exec.ctas[*cta].smem[*off as usize..(*off + bytes) as usize].to_vec())
            }
            LoadSrc::Tensor { map, coords } => {
                let desc = self.cx.tmaps[*map].as_ref().expect("tensor map");
                let es = desc.dtype.size() as usize;
                let mut buf = vec![0u8; bytes as usize];
                let mut oob = None;
                for_box(desc, coords, |o, a| {
                    if let Some(a) = a {
                        match gmem.read(a, es) {
                            Some(s) => buf[o..o + es].copy_from_slice(&s),
                            None => oob = Some(a),
                        }
                    }
                });
                match oob {
                    Some(a) => Err(a),
                    None => Ok(buf),
                }
            }
        };
        let shared_src = match src {
            LoadSrc::Shared { cta, off } => Some((*cta, *off)),
            _ => None,
        };
        match read {
            Ok(buf) => {
                let op = &mut self.async_ops.in_flight[i];
                if let AsyncKind::Load { data, .. } = &mut op.kind {
                    *data = Some(buf);
                }
                if let Some((cta, off)) = shared_src {
                    let op = &self.async_ops.in_flight[i];
                    self.checker.on_async_read_done(op.issuer, &op.snapshot, op.id, cta, off, bytes);
                }
                Some(())
            }
            Err(a) => {
                let msg = format!(
                    "{}: its source element at {} is outside every buffer (bad base, dims or strides)",
                    src.what(),
                    gmem.describe(a)
                );
                let icta = (issuer / self.exec.threads_per_cta) as usize;
                self.finding(Category::OutOfBounds, icta, Some(issuer), None, Some(pc), msg);
                self.abort = true;
                None
            }
        }
    }

    /// Land bytes `[start, start+len)` of load `i` in every destination and complete tx.
    fn land_piece(&mut self, i: usize, piece: (u32, u32)) {
        if self.load_data(i).is_none() {
            return;
        }
        let (start, len) = self.split_at_tx_zero(i, piece);
        let op = &self.async_ops.in_flight[i];
        let (id, issuer, pc) = (op.id, op.issuer, op.pc);
        let AsyncKind::Load { dsts, src, data: Some(data), .. } = &op.kind else { return };
        // Tensor boxes: the swizzle, and where each packed byte lies (rows may be padded).
        let unpacked = BoxRows { inner: 1, pitch: 1 };
        let (swz, rows) = match src {
            LoadSrc::Bulk(_) | LoadSrc::Shared { .. } => (Swizzle::None, unpacked),
            LoadSrc::Tensor { map, .. } => {
                self.cx.tmaps[*map].as_ref().map_or((Swizzle::None, unpacked), |d| (d.swizzle, d.smem_rows()))
            }
        };
        let padded = rows.padded();
        let place = |o: u32| rows.offset(o);
        let kind = match src {
            LoadSrc::Bulk(_) => "bulk copy",
            LoadSrc::Shared { .. } => "CTA-to-CTA bulk copy",
            LoadSrc::Tensor { .. } => "TMA load",
        };
        let dsts = dsts.clone();
        let piece = data[start as usize..(start + len) as usize].to_vec();
        for d in dsts {
            if self.exec.ctas[d.cta].exited == self.exec.threads_per_cta {
                let msg = format!(
                    "a {kind} issued by thread {} lands in CTA rank {}, which has already exited (undefined \
                     behaviour: nothing kept that CTA alive until its copies landed)",
                    issuer % self.exec.threads_per_cta,
                    d.cta
                );
                let icta = (issuer / self.exec.threads_per_cta) as usize;
                self.finding(Category::ExitedCtaAccess, icta, Some(issuer), None, Some(pc), msg);
                continue;
            }
            let smem = &mut self.exec.ctas[d.cta].smem;
            if swz == Swizzle::None && !padded {
                smem[(d.off + start) as usize..(d.off + start + len) as usize].copy_from_slice(&piece);
            } else {
                for k in (0..len).step_by(16) {
                    let p = swizzle(d.off + place(start + k), swz) as usize;
                    let n = 16.min(len - k) as usize;
                    if p + n <= smem.len() {
                        smem[p..p + n].copy_from_slice(&piece[k as usize..k as usize + n]);
                    }
                }
            }
            // The data is published by the barrier phase this piece completes tx on: a reader
            // must have observed that phase (directly or through a release chain).
            let usable =
                self.exec.ctas[d.cta].barriers.get(self.cx.layout, d.bar).filter(|b| b.usable()).map(|b| b.phase);
            let by = match usable {
                Some(phase) => Publisher::Phase { bar: self.barrier_key(d.cta, d.bar), phase },
                None => Publisher::Issuer,
            };
            let snap = &self.async_ops.in_flight[i].snapshot;
            if padded {
                // Rows at a padded pitch: each 16-byte chunk where it landed (before the swizzle,
                // which permutes chunks within the tile, as for unpadded boxes).
                for k in (0..len).step_by(16) {
                    let chunk = SharedRange { cta: d.cta, off: d.off + place(start + k), len: 16.min(len - k) };
                    self.checker.on_async_land(id, issuer, snap, chunk, by);
                }
            } else {
                self.checker.on_async_land(id, issuer, snap, SharedRange { cta: d.cta, off: d.off + start, len }, by);
            }
            if usable.is_some() {
                let key = self.barrier_key(d.cta, d.bar);
                let snap = &self.async_ops.in_flight[i].snapshot;
                self.checker.on_agent_release(snap, key);
                self.complete_tx_on(d.cta, d.bar, len, Actor::Agent { kind, issuer }, pc);
            } else {
                let msg = format!("a {kind} landed but its barrier is not initialized (or was invalidated)");
                self.finding(Category::Uninitialized, d.cta, Some(issuer), Some((d.cta, d.bar)), Some(pc), msg);
            }
        }
    }

    /// A phase of `(cta, off)` completed: copies that will still complete tx on it mean the
    /// phase's expect_tx registered fewer bytes than its copies deliver.
    pub(crate) fn check_early_completion(&mut self, cta: usize, off: u32, phase: u64) {
        let mut late = None;
        for op in &self.async_ops.in_flight {
            if let AsyncKind::Load { dsts, pieces, src, .. } = &op.kind {
                if !pieces.is_empty() && dsts.iter().any(|d| d.cta == cta && d.bar == off) {
                    let left: u32 = pieces.iter().map(|p| p.1).sum();
                    late = Some((op.issuer, op.pc, left, src.what()));
                    break;
                }
            }
        }
        let Some((issuer, copy_pc, left, what)) = late else { return };
        let Some(bar) = self.exec.ctas[cta].barriers.get(self.cx.layout, off) else { return };
        let sites = bar.completed_tx_sites.clone();
        let registered: u64 = sites.iter().map(|s| s.registered).sum();
        let delivered: u64 = sites.iter().map(|s| s.delivered).sum();
        let expect = sites.iter().find(|s| s.registered > 0).copied();
        let tpc = self.exec.threads_per_cta;
        let list = |f: &dyn Fn(&crate::sim::sync::barrier::TxSite) -> u64| {
            sites
                .iter()
                .filter(|s| f(s) > 0)
                .map(|s| format!("{} bytes at {}", f(s), s.loc.map_or("?".to_string(), |l| l.to_string())))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let message = format!(
            "phase {phase} completed (tx-count reached 0) while {left} bytes of the {what} issued by thread {}{} had \
             not landed: the phase's expect_tx registered {registered} bytes ({}) but its copies deliver more ({} \
             landed in this phase, {left} still in flight). Waiters of this phase are released before every byte \
             landed (a race on hardware)",
            issuer % tpc,
            self.loc(copy_pc).map(|l| format!(" at {l}")).unwrap_or_default(),
            list(&|s| s.registered),
            if delivered > 0 { format!("{delivered} bytes") } else { "0 bytes".into() },
        );
        let (thread, pc) = match expect.map(|s| s.actor) {
            Some(Actor::Thread(t)) => (t, expect.map_or(copy_pc, |s| s.pc)),
            _ => (issuer, copy_pc),
        };
        let issue = Issue {
            category: Category::EarlyPhaseCompletion,
            cta: (thread / tpc) as usize,
            thread: Some(thread),
            barrier: Some((cta, off)),
            phase: Some(phase),
            pc: Some(pc),
            message,
        };
        self.report(issue);
    }

    pub fn complete_op(&mut self, op: AsyncOp<C::Snapshot>) -> Result<()> {
        self.out.stats.async_completed += 1;
        let AsyncOp { id, issuer, pc, kind, snapshot, .. } = op;
        let icta = (issuer / self.exec.threads_per_cta) as usize;
        match kind {
            AsyncKind::Load { .. } => unreachable!("loads complete piece by piece"),
            AsyncKind::CpAsync { cta, off, src, bytes, group } => {
                let data = self.global.read(src, bytes as usize);
                if let Some(s) = data {
                    self.exec.ctas[cta].smem[off as usize..(off + bytes) as usize].copy_from_slice(&s);
                }
                self.checker.on_async_land(
                    id,
                    issuer,
                    &snapshot,
                    SharedRange { cta, off, len: bytes },
                    Publisher::Issuer,
                );
                self.async_ops.groups[issuer as usize].cp_async.complete(group);
            }
            AsyncKind::Store { cta, off, dst, bytes, group } => {
                let data = self.exec.ctas[cta].smem[off as usize..(off + bytes) as usize].to_vec();
                match dst {
                    StoreDst::Bulk(a) => {
                        self.global.write(a, &data);
                    }
                    StoreDst::Tensor { map, coords } => {
                        let desc = self.cx.tmaps[map].as_ref().expect("tensor map");
                        let es = desc.dtype.size() as usize;
                        let swz = desc.swizzle;
                        let mut writes = Vec::new();
                        for_box(desc, &coords, |o, a| {
                            if let Some(a) = a {
                                let o = desc.smem_rows().offset(o as u32);
                                let p = if swz == Swizzle::None { o } else { swizzle(off + o, swz) - off } as usize;
                                writes.push((a, p));
                            }
                        });
                        for (a, p) in writes {
                            let src: Vec<u8> = data.get(p..p + es).map(|s| s.to_vec()).unwrap_or_default();
                            if src.len() != es || !self.global.write(a, &src) {
                                {
                                    let msg = format!("TMA store to {} is out of bounds", self.global.describe(a));
                                    self.finding(Category::OutOfBounds, icta, Some(issuer), None, Some(pc), msg);
                                    self.abort = true;
                                    break;
                                }
                            }
                        }
                    }
                }
                self.checker.on_store_complete(issuer, id, group, cta, off, bytes);
                self.async_ops.groups[issuer as usize].bulk.complete(group);
            }
            AsyncKind::Tcgen05(work) => self.complete_tcgen05(issuer, pc, *work),
            AsyncKind::Commit { cta, off } => {
                self.tcgen05_commit_fired(id, issuer, cta, off, &snapshot);
                if self.exec.ctas[cta].barriers.get(self.cx.layout, off).is_some_and(|b| b.usable()) {
                    let key = self.barrier_key(cta, off);
                    self.checker.on_agent_release(&snapshot, key);
                    let actor = Actor::Agent { kind: "tcgen05.commit", issuer };
                    self.arrive_on(cta, off, 1, false, actor, pc);
                }
            }
            AsyncKind::Wgmma { wg, mma } => self.complete_wgmma(wg, *mma, pc),
            AsyncKind::CpAsyncArrive { cta, off, .. } => {
                if self.exec.ctas[cta].barriers.get(self.cx.layout, off).is_some_and(|b| b.usable()) {
                    let key = self.barrier_key(cta, off);
                    self.checker.on_agent_release(&snapshot, key);
                    let actor = Actor::Agent { kind: "cp.async.mbarrier.arrive", issuer };
                    self.arrive_on(cta, off, 1, false, actor, pc);
                } else {
                    let msg =
                        "a cp.async.mbarrier.arrive fired but its barrier is not initialized (or was invalidated)";
                    self.finding(Category::Uninitialized, cta, Some(issuer), Some((cta, off)), Some(pc), msg.into());
                }
            }
        }
        Ok(())
    }
}
