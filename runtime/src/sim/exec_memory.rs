//! Loads, stores and atomics (global and shared), shared/param addresses, `cp.async`.

use super::async_op::AsyncKind;
use super::check::Checker;
use super::cluster::Engine;
use super::global_view::PendingAtomic;
use super::memory::PARAM_BASE;
use super::warp::{lanes, WaitFor};
use phaser_codegen::ir::*;

impl<C: Checker> Engine<'_, C> {
    pub(crate) fn exec_memory(&mut self, wi: usize, mask: u32, pc: u32, op: &MemoryOp) {
        for l in lanes(mask) {
            if self.abort {
                return;
            }
            let t = self.cluster_thread(wi, l);
            let own = self.exec.warps[wi].cta;
            match op {
                MemoryOp::Ld { space, ty, dst, addr, offset, .. } => {
                    let size = ty.size().max(1);
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let v = match space {
                        Space::Global => {
                            let v = self.global.load(a, size as usize);
                            match v {
                                Some(v) => v,
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
                MemoryOp::St { space, ty, addr, offset, src, .. } => {
                    let size = ty.size().max(1);
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let v = self.val(wi, l, src);
                    match space {
                        Space::Global => {
                            if !self.global.store(a, size as usize, v) {
                                let d = self.global.describe(a);
                                self.fault(own, t, pc, format!("global store of {size} bytes at {d} is out of bounds"));
                                return;
                            }
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
                    self.set(wi, l, *dst, PARAM_BASE + param.0 as u64 * 256);
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
                MemoryOp::AtomAdd { space, ty, dst, addr, src } => {
                    let size = ty.size() as usize;
                    let a = self.val(wi, l, addr);
                    let v = self.val(wi, l, src);
                    let add = super::arith::bin_fn(BinOp::Add, *ty);
                    let old = match space {
                        Space::Global => {
                            let Some(old) = self.global.load(a, size) else {
                                let d = self.global.describe(a);
                                self.fault(own, t, pc, format!("atomic add of {size} bytes at {d} is out of bounds"));
                                return;
                            };
                            if self.global.defer_atomics {
                                // Other clusters run in this epoch: the atomic runs at its end.
                                let (warp, lane, dst, ty) = (wi, l, *dst, *ty);
                                self.global.atomics.push(PendingAtomic { warp, lane, dst, addr: a, ty, value: v });
                                self.block_lane(wi, l, WaitFor::GlobalAtomic { pc });
                                continue;
                            }
                            self.global.store(a, size, add(old, v));
                            old
                        }
                        Space::Shared | Space::SharedCluster => {
                            let a = a & 0xFFFF_FFFF;
                            let Some((c, off)) =
                                self.smem_addr(wi, l, *space == Space::SharedCluster, a, size as u32, pc)
                            else {
                                return;
                            };
                            self.checker.on_shared_atomic(t, c, off, size as u32);
                            let mut b = [0u8; 8];
                            b[..size].copy_from_slice(&self.exec.ctas[c].smem[off as usize..off as usize + size]);
                            let old = u64::from_le_bytes(b);
                            let new = add(old, v).to_le_bytes();
                            self.exec.ctas[c].smem[off as usize..off as usize + size].copy_from_slice(&new[..size]);
                            old
                        }
                    };
                    self.set(wi, l, *dst, old);
                }
            }
        }
    }
}
