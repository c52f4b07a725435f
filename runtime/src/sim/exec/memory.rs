//! Loads, stores and atomics (global and shared), shared/param addresses, `cp.async`.

use crate::report::finding::Category;
use crate::sim::agents::async_op::AsyncKind;
use crate::sim::check::global_order::{Conflict, Proxy};
use crate::sim::check::pdl::Touch;
use crate::sim::check::progress::GlobalAccess;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::global_view::PendingAtomic;
use crate::sim::engine::memory::{param_addr, SHARED_OFFSET_MASK};
use crate::sim::engine::warp::{lanes, WaitFor};
use phaser_codegen::ir::*;

/// The value an atomic leaves in memory (`old`: what was there; `v` the operand; `cmp` the
/// compare value of `cas`), with the element type's arithmetic. `atom.add.f32` on global
/// memory flushes subnormal inputs and results to sign-preserving zero (PTX ISA, `atom`);
/// on shared memory it does not.
pub(crate) fn atom_apply(op: AtomOp, ty: Type, space: Space, old: u64, v: u64, cmp: u64) -> u64 {
    let bits = |x: u64| phaser_codegen::ir::value::mask(x, ty.bit_type());
    let ftz = |x: u64| {
        let f = f32::from_bits(x as u32);
        if f.is_subnormal() {
            (x as u32 & 0x8000_0000) as u64
        } else {
            x
        }
    };
    match op {
        AtomOp::Add if ty == Type::F32 && space == Space::Global => {
            ftz(crate::sim::engine::arith::bin_fn(BinOp::Add, ty)(ftz(old), ftz(v)))
        }
        AtomOp::Add => crate::sim::engine::arith::bin_fn(BinOp::Add, ty)(old, v),
        AtomOp::Min => crate::sim::engine::arith::bin_fn(BinOp::Min, ty)(old, v),
        AtomOp::Max => crate::sim::engine::arith::bin_fn(BinOp::Max, ty)(old, v),
        AtomOp::And => bits(old & v),
        AtomOp::Or => bits(old | v),
        AtomOp::Xor => bits(old ^ v),
        AtomOp::Exch => v,
        AtomOp::Cas => {
            if bits(old) == bits(cmp) {
                v
            } else {
                old
            }
        }
    }
}

/// Where a vector access goes: `size` bytes at `addr` in `space`.
#[derive(Clone, Copy)]
struct VectorAccess {
    space: Space,
    addr: u64,
    size: u32,
}

impl<C: Checker> Engine<'_, C> {
    /// A conflict the global order found (`check/global_order.rs`), as a finding; `describe`
    /// names a global address.
    pub(crate) fn report_global_conflict(&mut self, c: Conflict, t: Option<u32>, describe: &dyn Fn(u64) -> String) {
        let msg = c.message(&self.cx.cta_space, self.cx.launch_index, describe);
        self.finding(Category::GlobalRace, c.rank, t, None, Some(c.pc), msg);
    }

    /// A global access of cluster thread `t` at `pc` in the global order, if it is checked.
    fn order_global(&mut self, t: u32, pc: u32, addr: u64, size: u32, write: bool, access: Access) {
        let own = (t / self.exec.threads_per_cta) as usize;
        // The cluster's own checker follows an acquire load and a release store through their
        // location, as it follows atomics (threads of a cluster may order shared memory by them).
        if let (true, Access::Strong(MemOrder { sem, .. })) = (C::ENABLED, access) {
            let (acquire, release) = (sem == AtomSem::Acquire && !write, sem == AtomSem::Release && write);
            if acquire || release {
                self.checker.on_atomic_sync(t, (usize::MAX, addr), acquire, release);
            }
        }
        let Some(go) = self.global_order.as_mut() else { return };
        let order = match access {
            Access::Weak => None,
            // PTX: `.volatile` is `.relaxed.sys`.
            Access::Volatile => Some(MemOrder { sem: AtomSem::Relaxed, scope: MemScope::Sys }),
            Access::Strong(o) => Some(o),
        };
        let c = match (order, write) {
            (None, false) => go.data_read(own, addr, size, pc, Proxy::Generic),
            (None, true) => go.data_write(own, addr, size, pc),
            (Some(o), false) => {
                go.flag_load(own, addr, o.sem, o.scope, pc);
                None
            }
            (Some(o), true) => {
                go.flag_store(own, addr, o.sem, o.scope, pc);
                None
            }
        };
        if let Some(c) = c {
            // The view is lent for the epoch: describe through a copy of its memory's handle.
            let base = self.global.base_handle();
            self.report_global_conflict(c, Some(t), &|a| base.describe(a));
        }
    }

    /// An async-proxy read of global memory (a TMA tensor load, a bulk global→shared copy)
    /// issued by cluster thread `t` at `pc`: a weak read of each of `runs` (`(addr, len)`) in
    /// the global order, at the issuing thread's clock (the copy may read any time after its
    /// issue, so what orders a peer's write before it must be acquired before the issue).
    /// `proxy`: `Async` for TMA and bulk copies (ordered by the CTA's last
    /// `fence.proxy.async.global`), `Generic` for `cp.async`.
    pub(crate) fn order_global_async_read(&mut self, t: u32, pc: u32, runs: &[(u64, u32)], proxy: Proxy) {
        let own = (t / self.exec.threads_per_cta) as usize;
        let Some(go) = self.global_order.as_mut() else { return };
        let found: Vec<Conflict> =
            runs.iter().filter_map(|&(addr, len)| go.data_read(own, addr, len, pc, proxy)).collect();
        let base = self.global.base_handle();
        for c in found {
            self.report_global_conflict(c, Some(t), &|a| base.describe(a));
        }
    }

    /// A global access (`touch`) of `runs` (`(addr, len)`) by cluster thread `t` at `pc`,
    /// named `what`: recorded for a programmatic dependent of this launch and, where this launch
    /// is one, checked against the previous launch's accesses until the thread executed
    /// `griddepcontrol.wait` (`check/pdl.rs`). Async copies are checked at their issue: what
    /// orders the copy after the previous grid is its issuing thread's wait.
    pub(crate) fn pdl_access(&mut self, t: u32, pc: u32, runs: &[(u64, u32)], touch: Touch, what: &str) {
        for &(a, n) in runs {
            if touch.reads() {
                self.out.accesses.reads.insert(a, n);
            }
            if touch.writes() {
                self.out.accesses.writes.insert(a, n);
            }
        }
        let Some(prev) = self.cx.previous else { return };
        if self.exec.grid_dep_waited[t as usize] {
            return;
        }
        let Some((a, n, (byte, did))) = runs.iter().find_map(|&(a, n)| prev.conflict(a, n, touch).map(|c| (a, n, c)))
        else {
            return;
        };
        let own = (t / self.exec.threads_per_cta) as usize;
        let msg = format!(
            "{what} of {n} bytes at {} before this thread's `griddepcontrol.wait`, in a programmatic dependent \
             launch: the previous launch (`{}`) {did} {}, and it may still be running (only \
             `griddepcontrol.wait` orders this thread after its completion and memory)",
            self.global.describe(a),
            prev.kernel,
            self.global.describe(byte),
        );
        self.finding(Category::EarlyDependentAccess, own, Some(t), None, Some(pc), msg);
    }

    /// Warp `wi` wrote (`write`) or observably read `bytes` at global `addr`: while it is
    /// watched (`check/progress.rs`) its footprint records it, and a write is counted as
    /// watched. Called after the access, which counted the write in `GlobalView::writes`.
    pub(crate) fn watch_global(&mut self, wi: usize, addr: u64, bytes: u32, write: bool) {
        match self.exec.warps[wi].cycle.global_access(addr, bytes, write) {
            GlobalAccess::Unwatched => {}
            GlobalAccess::Recorded => self.global.watched_writes += write as u64,
            GlobalAccess::Ended(published) => self.global.watched_writes -= published,
        }
    }

    /// One vector access of `size` bytes at `a` in `space`: read (`write: None`) or write them,
    /// through the checker. The address must be aligned to the access size (the GPU faults
    /// with a misaligned address otherwise). `None` after a fault.
    fn vector_access(
        &mut self,
        wi: usize,
        l: usize,
        pc: u32,
        VectorAccess { space, addr: a, size }: VectorAccess,
        write: Option<&[u8]>,
        observed: bool,
    ) -> Option<Vec<u8>> {
        let t = self.cluster_thread(wi, l);
        let own = self.exec.warps[wi].cta;
        let what = if write.is_some() { "store" } else { "load" };
        if !a.is_multiple_of(size as u64) {
            let msg = format!("a {size}-byte vector {what} at 0x{a:x} is not {size}-byte aligned");
            self.finding(Category::Misaligned, own, Some(t), None, Some(pc), msg);
            self.abort = true;
            return None;
        }
        match space {
            Space::Global => match write {
                Some(bytes) => {
                    self.touch_global(a, size);
                    if !self.global.write(a, bytes) {
                        let d = self.global.describe(a);
                        self.fault(own, t, pc, format!("global vector store of {size} bytes at {d} is out of bounds"));
                        return None;
                    }
                    self.watch_global(wi, a, size, true);
                    self.order_global(t, pc, a, size, true, Access::Weak);
                    self.pdl_access(t, pc, &[(a, size)], Touch::Write, "a global vector store");
                    Some(Vec::new())
                }
                None => match self.global.read(a, size as usize) {
                    Some(v) => {
                        self.touch_global(a, size);
                        if observed {
                            self.watch_global(wi, a, size, false);
                        }
                        self.order_global(t, pc, a, size, false, Access::Weak);
                        self.pdl_access(t, pc, &[(a, size)], Touch::Read, "a global vector load");
                        Some(v)
                    }
                    None => {
                        let d = self.global.describe(a);
                        self.fault(own, t, pc, format!("global vector load of {size} bytes at {d} is out of bounds"));
                        None
                    }
                },
            },
            Space::Shared | Space::SharedCluster => {
                let (c, off) = self.smem_addr(wi, l, space == Space::SharedCluster, a & 0xFFFF_FFFF, size, pc)?;
                let range = off as usize..(off + size) as usize;
                match write {
                    Some(bytes) => {
                        let issue = self.checker.on_shared_write(t, c, off, size, pc);
                        self.report_issue(issue);
                        self.exec.ctas[c].smem[range].copy_from_slice(bytes);
                        Some(Vec::new())
                    }
                    None => {
                        let issue = self.checker.on_shared_read(t, c, off, size, pc);
                        self.report_issue(issue);
                        Some(self.exec.ctas[c].smem[range].to_vec())
                    }
                }
            }
        }
    }

    pub(crate) fn exec_memory(&mut self, wi: usize, mask: u32, pc: u32, op: &MemoryOp) {
        for l in lanes(mask) {
            if self.abort {
                return;
            }
            let t = self.cluster_thread(wi, l);
            let own = self.exec.warps[wi].cta;
            match op {
                MemoryOp::Ld { space, ty, dst, addr, offset, access } => {
                    let size = ty.size().max(1);
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let v = match space {
                        Space::Global => {
                            self.touch_global(a, size);
                            let v = self.global.load(a, size as usize);
                            match v {
                                Some(v) => {
                                    if self.cx.program.is_observable(*dst) {
                                        self.watch_global(wi, a, size, false);
                                    }
                                    self.order_global(t, pc, a, size, false, *access);
                                    self.pdl_access(t, pc, &[(a, size)], Touch::Read, "a global load");
                                    v
                                }
                                None => {
                                    let d = self.global.describe(a);
                                    self.fault(
                                        own,
                                        t,
                                        pc,
                                        format!("global load of {size} bytes at {d} is out of bounds"),
                                    );
                                    return;
                                }
                            }
                        }
                        Space::Shared | Space::SharedCluster => {
                            let a = a & 0xFFFF_FFFF;
                            let Some((c, off)) = self.smem_addr(wi, l, *space == Space::SharedCluster, a, size, pc)
                            else {
                                return;
                            };
                            let issue = self.checker.on_shared_read(t, c, off, size, pc);
                            if issue.is_some() {
                                let cause = self.checker.cause_of_bad_read(t, c, off, size, pc);
                                self.report_issue(issue);
                                self.report_issue(cause);
                            }
                            let mut b = [0u8; 8];
                            b[..size as usize]
                                .copy_from_slice(&self.exec.ctas[c].smem[off as usize..(off + size) as usize]);
                            u64::from_le_bytes(b)
                        }
                    };
                    self.set(wi, l, *dst, v);
                }
                MemoryOp::St { space, ty, addr, offset, src, access } => {
                    let size = ty.size().max(1);
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let v = self.val(wi, l, src);
                    match space {
                        Space::Global => {
                            self.touch_global(a, size);
                            if !self.global.store(a, size as usize, v) {
                                let d = self.global.describe(a);
                                self.fault(own, t, pc, format!("global store of {size} bytes at {d} is out of bounds"));
                                return;
                            }
                            self.watch_global(wi, a, size, true);
                            self.order_global(t, pc, a, size, true, *access);
                            self.pdl_access(t, pc, &[(a, size)], Touch::Write, "a global store");
                        }
                        Space::Shared | Space::SharedCluster => {
                            let a = a & 0xFFFF_FFFF;
                            let Some((c, off)) = self.smem_addr(wi, l, *space == Space::SharedCluster, a, size, pc)
                            else {
                                return;
                            };
                            let issue = self.checker.on_shared_write(t, c, off, size, pc);
                            self.report_issue(issue);
                            self.exec.ctas[c].smem[off as usize..(off + size) as usize]
                                .copy_from_slice(&v.to_le_bytes()[..size as usize]);
                        }
                    }
                }
                MemoryOp::SharedAddr { dst, alloc } => {
                    let v = self.cx.layout.alloc_start(alloc.0 as usize) as u64;
                    self.set(wi, l, *dst, v);
                }
                MemoryOp::DynSharedAddr { dst } => {
                    let v = self.cx.layout.dynamic_base as u64;
                    self.set(wi, l, *dst, v);
                }
                MemoryOp::ParamAddr { dst, param } => {
                    self.set(wi, l, *dst, param_addr(param.0 as usize));
                }
                MemoryOp::CpAsync { dst, src, bytes } => {
                    let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                    let s = self.val(wi, l, src);
                    let Some((c, off)) = self.smem_addr(wi, l, false, d, *bytes, pc) else { return };
                    if self.global.base().slice(s, *bytes as usize).is_none() {
                        let ds = self.global.describe(s);
                        self.fault(own, t, pc, format!("cp.async source of {bytes} bytes at {ds} is out of bounds"));
                        return;
                    }
                    // Its read of global memory, as the async proxy's copies read theirs: at the
                    // issue, with the issuing CTA's clock.
                    self.order_global_async_read(t, pc, &[(s, *bytes)], Proxy::Generic);
                    self.pdl_access(t, pc, &[(s, *bytes)], Touch::Read, "a `cp.async` read");
                    let g = &mut self.async_ops.groups[t as usize].cp_async;
                    let group = g.committed.len();
                    g.open += 1;
                    let id = self.async_ops.next_id;
                    let issue = self.checker.on_async_write_issue(t, id, c, off, *bytes, pc);
                    self.report_issue(issue);
                    self.push_op(t, pc, AsyncKind::CpAsync { cta: c, off, src: s, bytes: *bytes, group });
                }
                MemoryOp::CpAsyncMbarrierArrive { bar, noinc } => self.cp_async_arrive_issue(wi, l, pc, bar, *noinc),
                MemoryOp::CpAsyncCommitGroup => self.async_ops.groups[t as usize].cp_async.commit(),
                MemoryOp::CpAsyncWaitGroup { n } => {
                    if !self.async_ops.groups[t as usize].cp_async.retired(*n) {
                        self.block_lane(wi, l, WaitFor::CpAsyncGroups { n: *n, pc });
                    }
                }
                MemoryOp::LdVec { space, ty, dsts, addr, offset, .. } => {
                    let size = ty.size() * dsts.len() as u32;
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let observed = dsts.iter().any(|d| self.cx.program.is_observable(*d));
                    let access = VectorAccess { space: *space, addr: a, size };
                    let Some(bytes) = self.vector_access(wi, l, pc, access, None, observed) else {
                        return;
                    };
                    let es = ty.size() as usize;
                    for (k, d) in dsts.iter().enumerate() {
                        let mut b = [0u8; 8];
                        b[..es].copy_from_slice(&bytes[k * es..(k + 1) * es]);
                        self.set(wi, l, *d, u64::from_le_bytes(b));
                    }
                }
                MemoryOp::StVec { space, ty, addr, offset, srcs } => {
                    let size = ty.size() * srcs.len() as u32;
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let es = ty.size() as usize;
                    let mut bytes = Vec::with_capacity(size as usize);
                    for s in srcs {
                        bytes.extend_from_slice(&self.val(wi, l, s).to_le_bytes()[..es]);
                    }
                    if self
                        .vector_access(wi, l, pc, VectorAccess { space: *space, addr: a, size }, Some(&bytes), false)
                        .is_none()
                    {
                        return;
                    }
                }
                MemoryOp::Atom { op, order, space, ty, dst, addr, src, cmp } => {
                    let size = ty.size() as usize;
                    let a = self.val(wi, l, addr);
                    // `.acquire`/`.release` atomics synchronize through their location (the
                    // shared-memory race checker follows them; a relaxed one orders nothing).
                    let acquire = matches!(order.sem, Some(AtomSem::Acquire | AtomSem::AcqRel));
                    let release = matches!(order.sem, Some(AtomSem::Release | AtomSem::AcqRel));
                    if C::ENABLED && (acquire || release) {
                        let loc = match space {
                            Space::Global => (usize::MAX, a),
                            Space::Shared => (own, a & 0xFFFF_FFFF),
                            Space::SharedCluster => {
                                let a = a & 0xFFFF_FFFF;
                                let hi = (a >> crate::sim::engine::memory::CLUSTER_SHIFT) as usize;
                                let cta = if hi == 0 { own } else { hi - 1 };
                                (cta, a & SHARED_OFFSET_MASK as u64)
                            }
                        };
                        self.checker.on_atomic_sync(t, loc, acquire, release);
                    }
                    let v = self.val(wi, l, src);
                    let c = cmp.as_ref().map_or(0, |c| self.val(wi, l, c));
                    let what = if dst.is_some() { "atom" } else { "red" };
                    if !a.is_multiple_of(size as u64) {
                        let msg = format!("`{what}.{}` at 0x{a:x} is not {size}-byte aligned", op.name());
                        self.finding(Category::Misaligned, own, Some(t), None, Some(pc), msg);
                        self.abort = true;
                        return;
                    }
                    let old = match space {
                        Space::Global => {
                            let Some(old) = self.global.load(a, size) else {
                                let d = self.global.describe(a);
                                self.fault(
                                    own,
                                    t,
                                    pc,
                                    format!("{what}.{} of {size} bytes at {d} is out of bounds", op.name()),
                                );
                                return;
                            };
                            let name = if dst.is_some() { "an `atom`" } else { "a `red`" };
                            self.pdl_access(t, pc, &[(a, size as u32)], Touch::ReadWrite, name);
                            if let Some(go) = self.global_order.as_mut() {
                                let sem = order.sem.unwrap_or(AtomSem::Relaxed);
                                let scope = order.scope.unwrap_or(MemScope::Gpu);
                                go.atomic(
                                    own,
                                    a,
                                    MemOrder { sem, scope },
                                    pc,
                                    dst.is_some(),
                                    self.global.defer_atomics,
                                );
                            }
                            if self.global.defer_atomics {
                                // Other clusters run in this epoch: the atomic runs at its end (the
                                // lane waits for it, so it sees its own update, as PTX's coherence
                                // order requires of a later access).
                                let (warp, lane, dst, ty, op) = (wi, l, *dst, *ty, *op);
                                self.global.atomics.push(PendingAtomic {
                                    warp,
                                    lane,
                                    dst,
                                    addr: a,
                                    ty,
                                    op,
                                    value: v,
                                    cmp: c,
                                });
                                self.block_lane(wi, l, WaitFor::GlobalAtomic { pc });
                                continue;
                            }
                            self.global.store(a, size, atom_apply(*op, *ty, Space::Global, old, v, c));
                            self.watch_global(wi, a, size as u32, true);
                            if dst.is_some_and(|d| self.cx.program.is_observable(d)) {
                                self.watch_global(wi, a, size as u32, false);
                            }
                            old
                        }
                        Space::Shared | Space::SharedCluster => {
                            let a = a & 0xFFFF_FFFF;
                            let Some((c_, off)) =
                                self.smem_addr(wi, l, *space == Space::SharedCluster, a, size as u32, pc)
                            else {
                                return;
                            };
                            self.checker.on_shared_atomic(t, c_, off, size as u32);
                            let mut b = [0u8; 8];
                            b[..size].copy_from_slice(&self.exec.ctas[c_].smem[off as usize..off as usize + size]);
                            let old = u64::from_le_bytes(b);
                            let new = atom_apply(*op, *ty, *space, old, v, c).to_le_bytes();
                            self.exec.ctas[c_].smem[off as usize..off as usize + size].copy_from_slice(&new[..size]);
                            old
                        }
                    };
                    if let Some(d) = dst {
                        self.set(wi, l, *d, old);
                    }
                }
            }
        }
    }
}
