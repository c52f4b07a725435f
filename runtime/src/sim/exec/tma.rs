//! TMA and bulk-copy issue: tensor and bulk loads (multicast), stores, bulk groups.

use crate::report::finding::Category;
use crate::sim::agents::async_op::{for_box, pieces, AsyncKind, LoadDst, LoadSrc, StoreDst};
use crate::tensor_map::TensorMapDesc;
use crate::sim::check::global_order::Proxy;
use crate::sim::check::pdl::Touch;
use crate::sim::check::{Checker, SharedRange};
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::memory::{cluster_shared_addr, param_index, SHARED_OFFSET_MASK};
use crate::sim::engine::warp::WaitFor;
use phaser_codegen::arch::limits::tma_inner_coord_problem;
use phaser_codegen::ir::*;

/// A multicast copy's operands, as the issuing thread computed them: `what` names it in a
/// fault, `mask` sets the CTA ranks it lands in, `dst` and `bar` are shared addresses, `bytes`
/// the destination's footprint.
struct Multicast {
    what: &'static str,
    mask: u16,
    dst: u64,
    bar: u64,
    bytes: u32,
}

impl<C: Checker> Engine<'_, C> {
    /// The GPU faults (`CUDA_ERROR_MISALIGNED_ADDRESS`) when a TMA operand is misaligned:
    /// report it and stop, as the kernel would. Returns whether `addr` is aligned.
    fn require_aligned(&mut self, cta: usize, t: u32, pc: u32, what: &str, addr: u64, align: u64) -> bool {
        if addr.is_multiple_of(align) {
            return true;
        }
        let msg = format!("{what} 0x{addr:x} is not {align}-byte aligned (the GPU faults with a misaligned address)");
        self.finding(Category::Misaligned, cta, Some(t), None, Some(pc), msg);
        self.abort = true;
        false
    }

    /// The GPU faults on a tensor copy whose innermost coordinate is not a whole number of
    /// 16-byte units ([`phaser_codegen::arch::limits::TMA_INNER_COORD_ALIGN`]; measured on loads, applied to every tensor
    /// copy): report it and stop, as the kernel would. Returns whether it is aligned.
    fn require_inner_coord(&mut self, cta: usize, t: u32, pc: u32, what: &str, map: usize, coords: &[i32]) -> bool {
        let elem = self.cx.tmaps[map].as_ref().expect("tensor map").dtype;
        let Some(p) = coords.first().and_then(|&c| tma_inner_coord_problem(c as i64, elem)) else { return true };
        self.finding(Category::Misaligned, cta, Some(t), None, Some(pc), format!("{what}: {p}"));
        self.abort = true;
        false
    }

    /// A bulk load's shared destination and global source must be 16-byte aligned (the GPU
    /// faults): see [`Self::require_aligned`].
    fn require_bulk_load_aligned(&mut self, cta: usize, t: u32, pc: u32, dst: u64, src: u64) -> bool {
        let shared = dst & SHARED_OFFSET_MASK as u64;
        self.require_aligned(cta, t, pc, "the bulk copy's shared destination", shared, 16)
            && self.require_aligned(cta, t, pc, "the bulk copy's global source", src, 16)
    }

    /// A bulk load's global source must lie in one buffer: the GPU faults otherwise. Returns
    /// whether it does.
    fn require_bulk_source(&mut self, cta: usize, t: u32, pc: u32, src: u64, bytes: u32) -> bool {
        if self.global.base().slice(src, bytes as usize).is_some() {
            return true;
        }
        let ds = self.global.describe(src);
        self.fault(cta, t, pc, format!("bulk copy source of {bytes} bytes at {ds} is out of bounds"));
        false
    }

    /// PTX requires a bulk copy's size to be a multiple of 16 bytes; the copy is still modelled.
    fn check_bulk_size(&mut self, cta: usize, t: u32, pc: u32, bytes: u32) {
        if !bytes.is_multiple_of(16) {
            let msg = format!("bulk copy of {bytes} bytes: the size must be a multiple of 16");
            self.finding(Category::Unsupported, cta, Some(t), None, Some(pc), msg);
        }
    }

    fn tmap_index(&mut self, wi: usize, l: usize, v: &Value, pc: u32) -> Option<usize> {
        let a = self.val(wi, l, v);
        let idx = param_index(a);
        match idx {
            Some(i) if self.cx.tmaps.get(i).is_some_and(|m| m.is_some()) => Some(i),
            _ => {
                let t = self.cluster_thread(wi, l);
                let c = self.exec.warps[wi].cta;
                let msg = format!("0x{a:x} is not the address of a tensor-map parameter");
                self.finding(Category::Unsupported, c, Some(t), None, Some(pc), msg);
                self.abort = true;
                None
            }
        }
    }

    /// The destinations of a multicast copy: the same shared offsets of its destination and
    /// of its barrier in each CTA whose rank the mask sets. A rank outside the cluster faults,
    /// as on the GPU (`None`, as does an address `smem_addr` refuses).
    fn multicast_dsts(&mut self, wi: usize, l: usize, pc: u32, copy: Multicast) -> Option<Vec<LoadDst>> {
        let Multicast { what, mask, dst, bar, bytes } = copy;
        let (doff, boff) = (dst as u32 & SHARED_OFFSET_MASK, bar as u32 & SHARED_OFFSET_MASK);
        let mut dsts = Vec::new();
        for r in 0..16usize {
            if mask & (1 << r) == 0 {
                continue;
            }
            if r >= self.exec.ctas.len() {
                let (own, t) = (self.exec.warps[wi].cta, self.cluster_thread(wi, l));
                self.fault(own, t, pc, format!("{what} mask 0x{mask:x} names CTA rank {r}, outside the cluster"));
                return None;
            }
            let cl = cluster_shared_addr(r as u32, 0);
            let dd = self.smem_addr(wi, l, true, cl | doff as u64, bytes, pc)?;
            let bb = self.smem_addr(wi, l, true, cl | boff as u64, 8, pc)?;
            dsts.push(LoadDst { cta: dd.0, off: dd.1, bar: bb.1 });
        }
        Some(dsts)
    }

    pub(crate) fn exec_tma(&mut self, wi: usize, l: usize, pc: u32, op: &TmaOp) {
        let t = self.cluster_thread(wi, l);
        let own = self.exec.warps[wi].cta;
        match op {
            TmaOp::LoadTensor { dst, tmap, coords, bar, multicast, .. } => {
                let Some(map) = self.tmap_index(wi, l, tmap, pc) else { return };
                let desc = self.cx.tmaps[map].as_ref().expect("tensor map");
                let bytes = desc.box_bytes();
                // The shared memory the box occupies (rows may be padded to the swizzle span).
                let footprint = desc.smem_box_bytes();
                if coords.len() != desc.rank() {
                    let msg = format!("a rank-{} tensor map used with {} coordinates", desc.rank(), coords.len());
                    self.finding(Category::Unsupported, own, Some(t), None, Some(pc), msg);
                    self.abort = true;
                    return;
                }
                let cs: Vec<i32> = coords.iter().map(|c| self.val(wi, l, c) as u32 as i32).collect();
                let what = if multicast.is_some() { "TMA multicast tensor load" } else { "TMA tensor load" };
                if !self.require_inner_coord(own, t, pc, what, map, &cs) {
                    return;
                }
                let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                if !self.require_aligned(
                    own,
                    t,
                    pc,
                    "the TMA tensor load's shared destination",
                    d & SHARED_OFFSET_MASK as u64,
                    128,
                ) {
                    return;
                }
                let b = self.val(wi, l, bar) & 0xFFFF_FFFF;
                let dsts = match multicast {
                    Some(m) => {
                        let mask = self.val(wi, l, m) as u16;
                        let copy = Multicast { what: "TMA multicast", mask, dst: d, bar: b, bytes: footprint };
                        let Some(dsts) = self.multicast_dsts(wi, l, pc, copy) else { return };
                        dsts
                    }
                    None => {
                        let Some(dd) = self.smem_addr(wi, l, true, d, footprint, pc) else { return };
                        let Some(bb) = self.bar_addr(wi, l, bar, true, pc) else { return };
                        if bb.0 != dd.0 {
                            let msg = "TMA load into one CTA completing on another CTA's barrier".to_string();
                            self.finding(Category::Unsupported, own, Some(t), None, Some(pc), msg);
                        }
                        vec![LoadDst { cta: dd.0, off: dd.1, bar: bb.1 }]
                    }
                };
                let runs = box_runs(self.cx.tmaps[map].as_ref().expect("tensor map"), &cs);
                if self.global_order.is_some() {
                    self.order_global_async_read(t, pc, &runs, Proxy::Async);
                }
                self.pdl_access(t, pc, &runs, Touch::Read, "a TMA tensor load");
                self.issue_load_footprint(t, pc, dsts, LoadSrc::Tensor { map, coords: cs }, bytes, footprint);
            }
            TmaOp::LoadBulk { dst, src, bytes, bar } => {
                let n = self.val(wi, l, bytes) as u32;
                let s = self.val(wi, l, src);
                let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                if !self.require_bulk_load_aligned(own, t, pc, d, s) {
                    return;
                }
                self.check_bulk_size(own, t, pc, n);
                if !self.require_bulk_source(own, t, pc, s, n) {
                    return;
                }
                let Some(dd) = self.smem_addr(wi, l, true, d, n, pc) else { return };
                let Some(bb) = self.bar_addr(wi, l, bar, true, pc) else { return };
                self.order_global_async_read(t, pc, &[(s, n)], Proxy::Async);
                self.pdl_access(t, pc, &[(s, n)], Touch::Read, "a bulk copy's global read");
                self.issue_load(t, pc, vec![LoadDst { cta: dd.0, off: dd.1, bar: bb.1 }], LoadSrc::Bulk(s), n);
            }
            TmaOp::LoadBulkMulticast { dst, src, bytes, bar, cta_mask } => {
                let n = self.val(wi, l, bytes) as u32;
                let s = self.val(wi, l, src);
                let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                if !self.require_bulk_load_aligned(own, t, pc, d, s) {
                    return;
                }
                if !self.require_bulk_source(own, t, pc, s, n) {
                    return;
                }
                let mask = self.val(wi, l, cta_mask) as u16;
                let b = self.val(wi, l, bar) & 0xFFFF_FFFF;
                let copy = Multicast { what: "bulk multicast", mask, dst: d, bar: b, bytes: n };
                let Some(dsts) = self.multicast_dsts(wi, l, pc, copy) else { return };
                self.order_global_async_read(t, pc, &[(s, n)], Proxy::Async);
                self.pdl_access(t, pc, &[(s, n)], Touch::Read, "a multicast bulk copy's global read");
                self.issue_load(t, pc, dsts, LoadSrc::Bulk(s), n);
            }
            TmaOp::CopyBulkCluster { dst, src, bytes, bar } => {
                let n = self.val(wi, l, bytes) as u32;
                let s = self.val(wi, l, src) & 0xFFFF_FFFF;
                let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                if !self.require_aligned(
                    own,
                    t,
                    pc,
                    "the CTA-to-CTA copy's destination",
                    d & SHARED_OFFSET_MASK as u64,
                    16,
                ) || !self.require_aligned(
                    own,
                    t,
                    pc,
                    "the CTA-to-CTA copy's source",
                    s & SHARED_OFFSET_MASK as u64,
                    16,
                ) {
                    return;
                }
                self.check_bulk_size(own, t, pc, n);
                let Some((sc, soff)) = self.smem_addr(wi, l, false, s, n, pc) else { return };
                let Some(dd) = self.smem_addr(wi, l, true, d, n, pc) else { return };
                let Some(bb) = self.bar_addr(wi, l, bar, true, pc) else { return };
                if bb.0 != dd.0 {
                    let msg = format!(
                        "a CTA-to-CTA bulk copy into CTA rank {} completes on a barrier of CTA rank {} (PTX: the \
                         destination and its mbarrier must be in the same CTA)",
                        dd.0, bb.0
                    );
                    self.finding(Category::Unsupported, own, Some(t), None, Some(pc), msg);
                    self.abort = true;
                    return;
                }
                let id = self.async_ops.next_id;
                let issue = self.checker.on_async_read_issue(
                    t,
                    id,
                    "CTA-to-CTA bulk copy",
                    SharedRange { cta: sc, off: soff, len: n },
                    pc,
                );
                self.report_issue(issue);
                self.issue_load(
                    t,
                    pc,
                    vec![LoadDst { cta: dd.0, off: dd.1, bar: bb.1 }],
                    LoadSrc::Shared { cta: sc, off: soff },
                    n,
                );
            }
            TmaOp::StoreTensor { tmap, coords, src } => {
                let Some(map) = self.tmap_index(wi, l, tmap, pc) else { return };
                let desc = self.cx.tmaps[map].as_ref().expect("tensor map");
                // The store reads the box's shared footprint (rows may be padded).
                let bytes = desc.smem_box_bytes();
                let cs: Vec<i32> = coords.iter().map(|c| self.val(wi, l, c) as u32 as i32).collect();
                if !self.require_inner_coord(own, t, pc, "TMA tensor store (rule measured on loads)", map, &cs) {
                    return;
                }
                let s = self.val(wi, l, src) & 0xFFFF_FFFF;
                if !self.require_aligned(own, t, pc, "the TMA tensor store's shared source", s, 128) {
                    return;
                }
                let Some((c, off)) = self.smem_addr(wi, l, false, s, bytes, pc) else { return };
                let runs = box_runs(self.cx.tmaps[map].as_ref().expect("tensor map"), &cs);
                self.pdl_access(t, pc, &runs, Touch::Write, "a TMA tensor store");
                self.issue_store(t, pc, c, off, StoreDst::Tensor { map, coords: cs }, bytes);
            }
            TmaOp::StoreBulk { dst, src, bytes } => {
                let n = self.val(wi, l, bytes) as u32;
                let d = self.val(wi, l, dst);
                if self.global.base().slice(d, n as usize).is_none() {
                    let ds = self.global.describe(d);
                    self.fault(own, t, pc, format!("bulk store destination of {n} bytes at {ds} is out of bounds"));
                    return;
                }
                let s = self.val(wi, l, src) & 0xFFFF_FFFF;
                if !self.require_aligned(own, t, pc, "the bulk store's shared source", s, 16)
                    || !self.require_aligned(own, t, pc, "the bulk store's global destination", d, 16)
                {
                    return;
                }
                let Some((c, off)) = self.smem_addr(wi, l, false, s, n, pc) else { return };
                self.pdl_access(t, pc, &[(d, n)], Touch::Write, "a bulk store");
                self.issue_store(t, pc, c, off, StoreDst::Bulk(d), n);
            }
            TmaOp::CommitGroup => self.async_ops.groups[t as usize].bulk.commit(),
            TmaOp::WaitGroup { n, .. } => {
                let g = &mut self.async_ops.groups[t as usize].bulk;
                if g.retired(*n) {
                    let retired = g.committed.len().saturating_sub(*n as usize);
                    self.checker.on_stores_observed(t, retired);
                } else {
                    self.block_lane(wi, l, WaitFor::BulkGroups { n: *n, pc });
                }
            }
            TmaOp::PrefetchTensor { tmap, coords } => {
                // Only the coordinate rule applies: a prefetch moves nothing the kernel sees.
                let Some(map) = self.tmap_index(wi, l, tmap, pc) else { return };
                let cs: Vec<i32> = coords.iter().map(|c| self.val(wi, l, c) as u32 as i32).collect();
                self.require_inner_coord(own, t, pc, "TMA tensor prefetch (rule measured on loads)", map, &cs);
            }
        }
    }

    fn issue_load(&mut self, t: u32, pc: u32, dsts: Vec<LoadDst>, src: LoadSrc, bytes: u32) {
        self.issue_load_footprint(t, pc, dsts, src, bytes, bytes)
    }

    /// A load of `bytes` (its tx) that occupies `footprint` bytes of each destination.
    fn issue_load_footprint(&mut self, t: u32, pc: u32, dsts: Vec<LoadDst>, src: LoadSrc, bytes: u32, footprint: u32) {
        let what = format!("issues a {} completing on", src.what());
        for d in &dsts {
            if !self.check_barrier_use(t, d.cta, d.bar, pc, &what) {
                return;
            }
        }
        for d in &dsts {
            self.check_copy_after_bare_arrival(t, d.cta, d.bar, pc);
        }
        let id = self.async_ops.next_id;
        // The bytes the copy writes: the whole footprint, or each row of a padded box.
        let rows: Vec<(u32, u32)> = match (&src, footprint != bytes) {
            (LoadSrc::Tensor { map, .. }, true) => {
                let desc = self.cx.tmaps[*map].as_ref().expect("tensor map");
                let rows = desc.smem_rows();
                (0..bytes / rows.inner).map(|r| (r * rows.pitch, rows.inner)).collect()
            }
            _ => vec![(0, footprint)],
        };
        for d in &dsts {
            for &(start, len) in &rows {
                let issue = self.checker.on_async_write_issue(t, id, d.cta, d.off + start, len, pc);
                self.report_issue(issue);
            }
        }
        self.push_op(t, pc, AsyncKind::Load { dsts, src, bytes, pieces: pieces(bytes), data: None });
    }

    fn issue_store(&mut self, t: u32, pc: u32, c: usize, off: u32, dst: StoreDst, bytes: u32) {
        let id = self.async_ops.next_id;
        let kind = match dst {
            StoreDst::Bulk(_) => "bulk store (cp.async.bulk)",
            StoreDst::Tensor { .. } => "TMA tensor store",
        };
        let issue = self.checker.on_async_read_issue(t, id, kind, SharedRange { cta: c, off, len: bytes }, pc);
        self.report_issue(issue);
        let g = &mut self.async_ops.groups[t as usize].bulk;
        let group = g.committed.len();
        g.open += 1;
        self.push_op(t, pc, AsyncKind::Store { cta: c, off, dst, bytes, group });
    }
}

/// The global bytes a tensor box at `coords` reads, as runs of contiguous addresses (the
/// elements inside the tensor; TMA zero-fills the rest without reading).
fn box_runs(desc: &TensorMapDesc, coords: &[i32]) -> Vec<(u64, u32)> {
    let es = desc.dtype.size();
    let mut runs: Vec<(u64, u32)> = Vec::new();
    for_box(desc, coords, |_, a| {
        let Some(a) = a else { return };
        match runs.last_mut() {
            Some((start, len)) if *start + *len as u64 == a => *len += es,
            _ => runs.push((a, es)),
        }
    });
    runs
}
