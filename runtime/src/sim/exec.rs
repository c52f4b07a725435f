//! Instructions other than arithmetic and control flow, executed per lane: memory, mbarrier,
//! CTA/cluster barriers, TMA issue, probes.

use super::agent::{AsyncKind, AsyncOp, LoadSrc, StoreDst};
use super::barrier::{Actor, Barrier};
use super::checker::release_to;
use super::engine::{Block, Engine, ThreadAux, WaitTarget};
use super::finding::Category;
use super::interp::lanes;
use super::memory::{CLUSTER_SHIFT, PARAM_BASE};
use super::trace::TraceKind;
use crate::error::Result;
use phaser_codegen::ir::*;

impl Engine<'_> {
    #[inline]
    pub fn val(&self, wi: usize, l: usize, v: &Value) -> u64 {
        match *v {
            Value::Reg(r) => self.warps[wi].regs[r.id as usize * 32 + l],
            Value::Imm { bits, .. } => bits,
        }
    }
    #[inline]
    pub fn set(&mut self, wi: usize, l: usize, r: Reg, v: u64) {
        self.warps[wi].regs[r.id as usize * 32 + l] = v;
    }

    fn fault(&mut self, cta: usize, t: u32, pc: u32, msg: String) {
        self.finding(Category::OutOfBounds, cta, Some(t), None, Some(pc), msg);
        self.abort = true;
    }

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

    /// Resolve a shared address: `.shared::cta` names this CTA; a `.shared::cluster` address
    /// may name any CTA of the cluster. Checks `[off, off+len)` lies in shared memory.
    pub fn smem_addr(
        &mut self,
        wi: usize,
        l: usize,
        cluster: bool,
        addr: u64,
        len: u32,
        pc: u32,
    ) -> Option<(usize, u32)> {
        let own = self.warps[wi].cta;
        let t = self.gtid(wi, l);
        let a = addr as u32;
        let hi = a >> CLUSTER_SHIFT;
        let (cta, off) = if hi == 0 && addr >> 32 == 0 {
            (own, a)
        } else if cluster && addr >> 32 == 0 && ((hi - 1) as usize) < self.ctas.len() {
            ((hi - 1) as usize, a & ((1 << CLUSTER_SHIFT) - 1))
        } else {
            self.fault(own, t, pc, format!("shared address 0x{addr:x} names no shared memory of this cluster"));
            return None;
        };
        if off as u64 + len as u64 > self.ctas[cta].smem.len() as u64 {
            let size = self.ctas[cta].smem.len();
            self.fault(
                own,
                t,
                pc,
                format!(
                    "shared access of {len} bytes at offset {off} is outside the CTA's {size} bytes of shared memory"
                ),
            );
            return None;
        }
        Some((cta, off))
    }

    /// Resolve a barrier address (8-byte aligned, inside shared memory).
    pub fn bar_addr(&mut self, wi: usize, l: usize, v: &Value, cluster: bool, pc: u32) -> Option<(usize, u32)> {
        let a = self.val(wi, l, v);
        let (cta, off) = self.smem_addr(wi, l, cluster, a, 8, pc)?;
        if off % 8 != 0 {
            let t = self.gtid(wi, l);
            let msg = format!("mbarrier address {} is not 8-byte aligned", self.layout.describe(off));
            self.finding(Category::Unsupported, cta, Some(t), None, Some(pc), msg);
            self.abort = true;
            return None;
        }
        Some((cta, off))
    }

    pub fn trace_bar(&mut self, cta: usize, off: u32, thread: Option<u32>, kind: TraceKind) {
        if !self.cfg.trace {
            return;
        }
        let (pending, tx, phase) =
            self.ctas[cta].barriers.get(&off).map(|b| (b.pending, b.tx, b.phase)).unwrap_or((0, 0, 0));
        let ctaid = self.ctas[cta].ctaid;
        self.out.trace.push(self.tick, ctaid, off, thread.map(|t| t % self.tpc), kind, pending, tx, phase);
    }

    /// `count` arrivals on `(cta, off)` releasing `vc` (thread `t`'s own clock when `None`).
    #[allow(clippy::too_many_arguments)]
    pub fn arrive_on(
        &mut self,
        t: u32,
        cta: usize,
        off: u32,
        count: u32,
        drop: bool,
        actor: Actor,
        vc: Option<&[u32]>,
        pc: u32,
    ) -> u64 {
        let n = self.m;
        let loc = self.loc(pc);
        let tick = self.tick;
        let bar = self.ctas[cta].barriers.get_mut(&off).expect("checked barrier");
        match vc {
            Some(v) => release_to(&mut bar.acc, v),
            None => release_to(&mut bar.acc, &self.vc[t as usize * n..(t as usize + 1) * n]),
        }
        let (pending, tx, expected) = (bar.pending, bar.tx, bar.expected);
        let o = bar.arrive(count, drop, actor, loc, tick);
        if vc.is_none() {
            self.tick_clock(t);
        }
        self.futile = 0;
        if o.overflow {
            let msg = format!(
                "{count} arrival(s) on a phase with only {pending} pending (expected {expected} per phase, tx-count {tx}): \
                 more arrivals than the phase expects"
            );
            self.finding(Category::ArrivalOverflow, cta, Some(t), Some((cta, off)), Some(pc), msg);
        }
        self.trace_bar(cta, off, Some(t), TraceKind::Arrive { count });
        if o.completed {
            self.stamp_phase(cta, off);
            self.trace_bar(cta, off, None, TraceKind::PhaseComplete);
        }
        o.token
    }

    fn tx_overflow(&mut self, t: u32, cta: usize, off: u32, pc: u32) {
        let tx = self.ctas[cta].barriers.get(&off).map(|b| b.tx).unwrap_or(0);
        let msg = format!("tx-count reached {tx}, outside the PTX range of +-(2^20-1)");
        self.finding(Category::TxOverflow, cta, Some(t), Some((cta, off)), Some(pc), msg);
    }

    pub fn expect_tx_on(&mut self, t: u32, cta: usize, off: u32, bytes: u32, pc: u32) {
        let loc = self.loc(pc);
        let tick = self.tick;
        let bar = self.ctas[cta].barriers.get_mut(&off).expect("checked barrier");
        let over = bar.expect_tx(bytes, Actor::Thread(t), loc, tick);
        self.futile = 0;
        if over {
            self.tx_overflow(t, cta, off, pc);
        }
        self.trace_bar(cta, off, Some(t), TraceKind::ExpectTx { bytes });
    }

    pub fn complete_tx_on(
        &mut self,
        t: u32,
        cta: usize,
        off: u32,
        bytes: u32,
        actor: Actor,
        vc: Option<&[u32]>,
        pc: u32,
    ) {
        let n = self.m;
        let loc = self.loc(pc);
        let tick = self.tick;
        let bar = self.ctas[cta].barriers.get_mut(&off).expect("checked barrier");
        match vc {
            Some(v) => release_to(&mut bar.acc, v),
            None => release_to(&mut bar.acc, &self.vc[t as usize * n..(t as usize + 1) * n]),
        }
        let (over, done) = bar.complete_tx(bytes, actor, loc, tick);
        if vc.is_none() {
            self.tick_clock(t);
        }
        self.futile = 0;
        if over {
            self.tx_overflow(t, cta, off, pc);
        }
        self.trace_bar(cta, off, Some(t), TraceKind::CompleteTx { bytes });
        if done {
            self.stamp_phase(cta, off);
            self.trace_bar(cta, off, None, TraceKind::PhaseComplete);
        }
    }

    fn wait_target(&self, wi: usize, l: usize, on: &WaitOn) -> WaitTarget {
        match on {
            WaitOn::Parity(p) => WaitTarget::Parity(self.val(wi, l, p) & 1),
            WaitOn::State(s) => WaitTarget::Phase(self.val(wi, l, s) >> 32),
        }
    }

    fn satisfied(&self, cta: usize, off: u32, target: WaitTarget) -> bool {
        match self.ctas[cta].barriers.get(&off) {
            Some(b) => match target {
                WaitTarget::Parity(p) => b.parity_done(p),
                WaitTarget::Phase(k) => b.usable() && b.phase > k,
            },
            None => false,
        }
    }

    fn begin_wait(
        &mut self,
        wi: usize,
        l: usize,
        cta: usize,
        off: u32,
        target: WaitTarget,
        done: Option<u32>,
        pc: u32,
    ) {
        let t = self.gtid(wi, l);
        let parity = match target {
            WaitTarget::Parity(p) => p,
            WaitTarget::Phase(k) => k & 1,
        };
        self.trace_bar(cta, off, Some(t), TraceKind::WaitBegin { parity });
        let since = self.tick;
        self.block_lane(wi, l, Block::Mbar { cta: cta as u32, off, target, done, pc, since });
    }

    pub(crate) fn exec_slow(&mut self, wi: usize, mask: u32, pc: u32, inst: &Inst) -> Result<()> {
        match inst {
            Inst::Memory(op) => self.exec_memory(wi, mask, pc, op),
            Inst::Mbarrier(op) => {
                for l in lanes(mask) {
                    self.exec_mbarrier(wi, l, pc, op);
                    if self.abort {
                        break;
                    }
                }
            }
            Inst::Sync(op) => self.exec_sync(wi, mask, pc, op),
            Inst::Tma(op) => {
                for l in lanes(mask) {
                    self.exec_tma(wi, l, pc, op);
                    if self.abort {
                        break;
                    }
                }
            }
            Inst::Tcgen05(Tcgen05Op::Commit { bar, multicast }) => {
                for l in lanes(mask) {
                    let t = self.gtid(wi, l);
                    let mut targets = Vec::new();
                    match multicast {
                        Some(m) => {
                            let Some((_, off)) = self.bar_addr(wi, l, bar, true, pc) else { break };
                            let m = self.val(wi, l, m) as u16;
                            for r in 0..self.ctas.len().min(16) {
                                if m & (1 << r) != 0 {
                                    targets.push((r, off));
                                }
                            }
                        }
                        None => {
                            let Some(b) = self.bar_addr(wi, l, bar, true, pc) else { break };
                            targets.push(b);
                        }
                    }
                    for (c, off) in targets {
                        if self.check_barrier_use(t, c, off, pc, "commits tcgen05 work to") {
                            self.push_op(t, pc, AsyncKind::Commit { cta: c, off });
                        }
                    }
                }
            }
            Inst::Tcgen05(Tcgen05Op::Fence { .. }) => {}
            Inst::Probe { tag, values } => {
                for l in lanes(mask) {
                    let vals: Vec<(u64, Type)> = values.iter().map(|v| (self.val(wi, l, v), v.ty())).collect();
                    let t = self.gtid(wi, l) % self.tpc;
                    let ctaid = self.ctas[self.warps[wi].cta].ctaid;
                    self.out.probe(tag, ctaid, t, self.tick, vals, self.cfg.max_probes);
                }
            }
            // Not simulated yet (wgmma as an asynchronous tensor-core agent comes with the
            // simulator's async-agent rework): a clear finding that stops the run.
            Inst::Wgmma(_) | Inst::Fragment(_) => {
                let what = match inst {
                    Inst::Wgmma(op) => op.mnemonic(),
                    Inst::Fragment(op) => op.mnemonic(),
                    _ => String::new(),
                };
                let l = lanes(mask).next().unwrap_or(0);
                let t = self.gtid(wi, l);
                let cta = self.warps[wi].cta;
                let msg = format!("unsupported op `{what}`: the simulator does not model it yet (run it on the GPU)");
                self.finding(Category::Unsupported, cta, Some(t), None, Some(pc), msg);
                self.abort = true;
            }
            // Lowered to fast ops.
            Inst::Arith(_) | Inst::ReadSpecial { .. } => unreachable!("fast op in the slow path"),
        }
        Ok(())
    }

    fn exec_memory(&mut self, wi: usize, mask: u32, pc: u32, op: &MemoryOp) {
        for l in lanes(mask) {
            if self.abort {
                return;
            }
            let t = self.gtid(wi, l);
            let own = self.warps[wi].cta;
            match op {
                MemoryOp::Ld { space, ty, dst, addr, offset, .. } => {
                    let size = ty.size().max(1);
                    let a = self.val(wi, l, addr).wrapping_add(*offset as i64 as u64);
                    let v = match space {
                        Space::Global => match self.gmem.load(a, size as usize) {
                            Some(v) => v,
                            None => {
                                let d = self.gmem.describe(a);
                                self.fault(own, t, pc, format!("global load of {size} bytes at {d} is out of bounds"));
                                return;
                            }
                        },
                        Space::Shared | Space::SharedCluster => {
                            let a = a & 0xFFFF_FFFF;
                            let Some((c, off)) = self.smem_addr(wi, l, *space == Space::SharedCluster, a, size, pc)
                            else {
                                return;
                            };
                            self.check_read(t, c, off, size, pc);
                            let mut b = [0u8; 8];
                            b[..size as usize].copy_from_slice(&self.ctas[c].smem[off as usize..(off + size) as usize]);
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
                            if !self.gmem.store(a, size as usize, v) {
                                let d = self.gmem.describe(a);
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
                            self.check_write(t, c, off, size, pc);
                            self.ctas[c].smem[off as usize..(off + size) as usize]
                                .copy_from_slice(&v.to_le_bytes()[..size as usize]);
                        }
                    }
                }
                MemoryOp::SharedAddr { dst, alloc } => {
                    let v = self.layout.alloc_start(alloc.0 as usize) as u64;
                    self.set(wi, l, *dst, v);
                }
                MemoryOp::DynSharedAddr { dst } => {
                    let v = self.layout.dynamic_base as u64;
                    self.set(wi, l, *dst, v);
                }
                MemoryOp::ParamAddr { dst, param } => {
                    self.set(wi, l, *dst, PARAM_BASE + param.0 as u64 * 256);
                }
                MemoryOp::CpAsync { dst, src, bytes } => {
                    let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                    let s = self.val(wi, l, src);
                    let Some((c, off)) = self.smem_addr(wi, l, false, d, *bytes, pc) else { return };
                    if self.gmem.slice(s, *bytes as usize).is_none() {
                        let ds = self.gmem.describe(s);
                        self.fault(own, t, pc, format!("cp.async source of {bytes} bytes at {ds} is out of bounds"));
                        return;
                    }
                    let a = &mut self.aux[t as usize];
                    let group = a.cp_groups.len();
                    a.cp_open += 1;
                    let id = self.next_op;
                    self.async_write_issue(t, c, off, *bytes, id, pc);
                    self.push_op(t, pc, AsyncKind::CpAsync { cta: c, off, src: s, bytes: *bytes, group });
                }
                MemoryOp::CpAsyncMbarrierArrive { bar, noinc } => self.cp_async_arrive_issue(wi, l, pc, bar, *noinc),
                MemoryOp::CpAsyncCommitGroup => {
                    let a = &mut self.aux[t as usize];
                    let open = std::mem::take(&mut a.cp_open);
                    a.cp_groups.push(open);
                }
                MemoryOp::CpAsyncWaitGroup { n } => {
                    let a = &mut self.aux[t as usize];
                    if !ThreadAux::groups_retired(&a.cp_groups, &mut a.cp_first, *n) {
                        self.block_lane(wi, l, Block::CpAsync { n: *n, pc });
                    }
                }
                MemoryOp::AtomAdd { space, ty, dst, addr, src } => {
                    let size = ty.size() as usize;
                    let a = self.val(wi, l, addr);
                    let v = self.val(wi, l, src);
                    let add = super::interp::bin_fn(BinOp::Add, *ty);
                    let old = match space {
                        Space::Global => {
                            let Some(old) = self.gmem.load(a, size) else {
                                let d = self.gmem.describe(a);
                                self.fault(own, t, pc, format!("atomic add of {size} bytes at {d} is out of bounds"));
                                return;
                            };
                            self.gmem.store(a, size, add(old, v));
                            old
                        }
                        Space::Shared | Space::SharedCluster => {
                            let a = a & 0xFFFF_FFFF;
                            let Some((c, off)) =
                                self.smem_addr(wi, l, *space == Space::SharedCluster, a, size as u32, pc)
                            else {
                                return;
                            };
                            let mut b = [0u8; 8];
                            b[..size].copy_from_slice(&self.ctas[c].smem[off as usize..off as usize + size]);
                            let old = u64::from_le_bytes(b);
                            let new = add(old, v).to_le_bytes();
                            self.ctas[c].smem[off as usize..off as usize + size].copy_from_slice(&new[..size]);
                            old
                        }
                    };
                    self.set(wi, l, *dst, old);
                }
            }
        }
    }

    fn exec_mbarrier(&mut self, wi: usize, l: usize, pc: u32, op: &MbarrierOp) {
        let t = self.gtid(wi, l);
        match op {
            MbarrierOp::Init { bar, count } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let count = self.val(wi, l, count) as u32;
                let clock = self.row(t)[t as usize];
                let loc = self.loc(pc);
                let n = self.m;
                self.ctas[c].barriers.entry(off).or_insert_with(Barrier::new_uninit).init(count, t, clock, loc, n);
                self.tick_clock(t);
                self.futile = 0;
                self.trace_bar(c, off, Some(t), TraceKind::Init { count });
            }
            MbarrierOp::Inval { bar } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                if self.check_barrier_use(t, c, off, pc, "invalidates") {
                    self.ctas[c].barriers.get_mut(&off).expect("barrier").invalidate();
                    self.trace_bar(c, off, Some(t), TraceKind::Inval);
                }
            }
            MbarrierOp::Arrive { bar, count, space, state, drop, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let n = count.map(|v| self.val(wi, l, &v) as u32).unwrap_or(1);
                if self.check_barrier_use(t, c, off, pc, "arrives on") {
                    let token = self.arrive_on(t, c, off, n, *drop, Actor::Thread(t), None, pc);
                    if let Some(s) = state {
                        self.set(wi, l, *s, token);
                    }
                }
            }
            MbarrierOp::ArriveExpectTx { bar, bytes, space, state, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let b = self.val(wi, l, bytes) as u32;
                if self.check_barrier_use(t, c, off, pc, "arrives (expect_tx) on") {
                    self.expect_tx_on(t, c, off, b, pc);
                    let token = self.arrive_on(t, c, off, 1, false, Actor::Thread(t), None, pc);
                    if let Some(s) = state {
                        self.set(wi, l, *s, token);
                    }
                }
            }
            MbarrierOp::ExpectTx { bar, bytes, space, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let b = self.val(wi, l, bytes) as u32;
                if self.check_barrier_use(t, c, off, pc, "expects tx on") {
                    self.expect_tx_on(t, c, off, b, pc);
                }
            }
            MbarrierOp::CompleteTx { bar, bytes, space, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, *space == BarSpace::Cluster, pc) else { return };
                let b = self.val(wi, l, bytes) as u32;
                if self.check_barrier_use(t, c, off, pc, "completes tx on") {
                    self.complete_tx_on(t, c, off, b, Actor::Thread(t), None, pc);
                }
            }
            MbarrierOp::TestWait { done, bar, on, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let target = self.wait_target(wi, l, on);
                let ok = self.check_barrier_use(t, c, off, pc, "test_waits on") && self.satisfied(c, off, target);
                if ok {
                    self.wait_succeeded(t, c, off, target, false, Some(pc));
                    let w = &mut self.warps[wi];
                    w.spinning &= !(1 << l);
                    w.poll_armed &= !(1 << l);
                } else {
                    self.poll_failed();
                    // The same test_wait failing twice with nothing else done in between:
                    // the lane is in a polling loop (a one-off probe that fails is not).
                    let w = &mut self.warps[wi];
                    w.yielded |= 1 << l;
                    if w.poll_armed & (1 << l) != 0 && w.last_failed_poll[l] == pc {
                        w.spinning |= 1 << l;
                    } else {
                        w.poll_armed |= 1 << l;
                        w.last_failed_poll[l] = pc;
                    }
                }
                self.set(wi, l, *done, ok as u64);
            }
            MbarrierOp::TryWait { done, bar, on, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let target = self.wait_target(wi, l, on);
                if !self.check_barrier_use(t, c, off, pc, "waits on") {
                    self.set(wi, l, *done, 0);
                    self.warps[wi].yielded |= 1 << l;
                    self.poll_failed();
                    return;
                }
                if self.satisfied(c, off, target) {
                    if self.sched.spurious_try_wait() {
                        self.set(wi, l, *done, 0);
                        self.warps[wi].yielded |= 1 << l;
                        self.poll_failed();
                    } else {
                        self.wait_succeeded(t, c, off, target, true, Some(pc));
                        self.set(wi, l, *done, 1);
                    }
                } else {
                    self.set(wi, l, *done, 0);
                    self.begin_wait(wi, l, c, off, target, Some(done.id), pc);
                }
            }
            MbarrierOp::Wait { bar, on, .. } => {
                let Some((c, off)) = self.bar_addr(wi, l, bar, false, pc) else { return };
                let target = self.wait_target(wi, l, on);
                let usable = self.check_barrier_use(t, c, off, pc, "waits on");
                if usable && self.satisfied(c, off, target) {
                    self.wait_succeeded(t, c, off, target, true, Some(pc));
                } else {
                    self.begin_wait(wi, l, c, off, target, None, pc);
                }
            }
            MbarrierOp::PendingCount { dst, state } => {
                let v = self.val(wi, l, state) & 0xFFFF_FFFF;
                self.set(wi, l, *dst, v);
            }
        }
    }

    fn exec_sync(&mut self, wi: usize, mask: u32, pc: u32, op: &SyncOp) {
        let c = self.warps[wi].cta;
        for l in lanes(mask) {
            let t = self.gtid(wi, l);
            match op {
                SyncOp::BarSync { id, count } => self.bar_arrive(wi, l, t, c, id, count.as_ref(), true, pc),
                SyncOp::BarArrive { id, count } => self.bar_arrive(wi, l, t, c, id, Some(count), false, pc),
                SyncOp::FenceMbarrierInit | SyncOp::MemBar { .. } | SyncOp::SetMaxNReg { .. } => {}
                SyncOp::FenceProxyAsync { .. } => {
                    let clock = self.tick_clock(t);
                    if self.cfg.race_check {
                        let row = self.row(t).to_vec();
                        let a = &mut self.aux[t as usize];
                        a.fence_clock = clock;
                        a.fence_vc = row;
                    }
                }
                SyncOp::ElectSync { .. } => unreachable!("lowered to a fast op"),
                SyncOp::Mapa { dst, addr, cta } => {
                    let a = self.val(wi, l, addr) as u32 & ((1 << CLUSTER_SHIFT) - 1);
                    let r = self.val(wi, l, cta) as u32;
                    if r as usize >= self.ctas.len() {
                        self.fault(c, t, pc, format!("mapa to CTA rank {r} in a cluster of {} CTAs", self.ctas.len()));
                        return;
                    }
                    self.set(wi, l, *dst, (((r + 1) << CLUSTER_SHIFT) | a) as u64);
                }
                SyncOp::ClusterArrive { relaxed } => {
                    if !relaxed {
                        let n = self.m;
                        release_to(&mut self.cluster_bar.acc, &self.vc[t as usize * n..(t as usize + 1) * n]);
                        self.tick_clock(t);
                    }
                    self.aux[t as usize].cluster_arrived = Some(self.cluster_bar.gen);
                    self.cluster_bar.arrived += 1;
                    self.check_cluster_bar();
                }
                SyncOp::ClusterWait => {
                    let gen = self.aux[t as usize].cluster_arrived.take().unwrap_or(self.cluster_bar.gen);
                    self.block_lane(wi, l, Block::Cluster { gen, pc });
                }
                SyncOp::WarpSync { mask } => self.warp_sync_arrive(wi, l, *mask, pc),
                SyncOp::Trap => {
                    self.finding(Category::Trap, c, Some(t), None, Some(pc), "the kernel executed `trap`".into());
                    self.abort = true;
                    return;
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn bar_arrive(
        &mut self,
        wi: usize,
        l: usize,
        t: u32,
        c: usize,
        id: &Value,
        count: Option<&Value>,
        wait: bool,
        pc: u32,
    ) {
        let id = self.val(wi, l, id) as usize;
        if id >= 16 {
            self.finding(Category::Unsupported, c, Some(t), None, Some(pc), format!("`bar.sync {id}`: ids are 0-15"));
            self.abort = true;
            return;
        }
        let cnt = count.map(|v| self.val(wi, l, v) as u32);
        let n = self.m;
        let nb = &mut self.ctas[c].named[id];
        if let Some(k) = cnt {
            nb.expected = Some(k);
        }
        release_to(&mut nb.acc, &self.vc[t as usize * n..(t as usize + 1) * n]);
        nb.arrived += 1;
        let gen = nb.gen;
        if wait {
            nb.waiters.push(t);
        }
        self.tick_clock(t);
        if wait {
            self.block_lane(wi, l, Block::Bar { id: id as u8, gen, pc });
        }
        self.check_named(c, id);
    }

    pub fn push_op(&mut self, issuer: u32, pc: u32, kind: AsyncKind) {
        let id = self.next_op;
        self.next_op += 1;
        let issue_clock = self.row(issuer)[issuer as usize];
        let vc = self.row(issuer).to_vec();
        self.tick_clock(issuer);
        self.out.stats.async_ops += 1;
        self.agents.push(AsyncOp { id, issuer, issue_clock, vc, round: self.round, pc, kind });
    }

    fn tmap_index(&mut self, wi: usize, l: usize, v: &Value, pc: u32) -> Option<usize> {
        let a = self.val(wi, l, v);
        let idx = a.checked_sub(PARAM_BASE).filter(|r| r % 256 == 0).map(|r| (r / 256) as usize);
        match idx {
            Some(i) if self.tmaps.get(i).is_some_and(|m| m.is_some()) => Some(i),
            _ => {
                let t = self.gtid(wi, l);
                let c = self.warps[wi].cta;
                let msg = format!("0x{a:x} is not the address of a tensor-map parameter");
                self.finding(Category::Unsupported, c, Some(t), None, Some(pc), msg);
                self.abort = true;
                None
            }
        }
    }

    fn exec_tma(&mut self, wi: usize, l: usize, pc: u32, op: &TmaOp) {
        let t = self.gtid(wi, l);
        let own = self.warps[wi].cta;
        match op {
            TmaOp::LoadTensor { dst, tmap, coords, bar, multicast, .. } => {
                let Some(map) = self.tmap_index(wi, l, tmap, pc) else { return };
                let desc = self.tmaps[map].as_ref().expect("tensor map");
                let bytes = desc.box_bytes();
                if coords.len() != desc.rank() {
                    let msg = format!("a rank-{} tensor map used with {} coordinates", desc.rank(), coords.len());
                    self.finding(Category::Unsupported, own, Some(t), None, Some(pc), msg);
                    self.abort = true;
                    return;
                }
                let cs: Vec<i32> = coords.iter().map(|c| self.val(wi, l, c) as u32 as i32).collect();
                let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                if !self.require_aligned(own, t, pc, "the TMA tensor load's shared destination", d & 0xFF_FFFF, 128) {
                    return;
                }
                let b = self.val(wi, l, bar) & 0xFFFF_FFFF;
                let mut dsts = Vec::new();
                match multicast {
                    Some(m) => {
                        let m = self.val(wi, l, m) as u16;
                        let (doff, boff) = (d as u32 & 0xFF_FFFF, b as u32 & 0xFF_FFFF);
                        for r in 0..16usize {
                            if m & (1 << r) == 0 {
                                continue;
                            }
                            if r >= self.ctas.len() {
                                self.fault(
                                    own,
                                    t,
                                    pc,
                                    format!("TMA multicast mask 0x{m:x} names CTA rank {r}, outside the cluster"),
                                );
                                return;
                            }
                            let cl = ((r as u64) + 1) << CLUSTER_SHIFT;
                            let Some(dd) = self.smem_addr(wi, l, true, cl | doff as u64, bytes, pc) else { return };
                            let Some(bb) = self.smem_addr(wi, l, true, cl | boff as u64, 8, pc) else { return };
                            dsts.push((dd.0, dd.1, bb.1));
                        }
                    }
                    None => {
                        let Some(dd) = self.smem_addr(wi, l, true, d, bytes, pc) else { return };
                        let Some(bb) = self.bar_addr(wi, l, bar, true, pc) else { return };
                        if bb.0 != dd.0 {
                            let msg = "TMA load into one CTA completing on another CTA's barrier".to_string();
                            self.finding(Category::Unsupported, own, Some(t), None, Some(pc), msg);
                        }
                        dsts.push((dd.0, dd.1, bb.1));
                    }
                }
                self.issue_load(t, pc, dsts, LoadSrc::Tensor { map, coords: cs }, bytes);
            }
            TmaOp::LoadBulk { dst, src, bytes, bar } => {
                let n = self.val(wi, l, bytes) as u32;
                let s = self.val(wi, l, src);
                let d = self.val(wi, l, dst) & 0xFFFF_FFFF;
                if !self.require_aligned(own, t, pc, "the bulk copy's shared destination", d & 0xFF_FFFF, 16)
                    || !self.require_aligned(own, t, pc, "the bulk copy's global source", s, 16)
                {
                    return;
                }
                if !n.is_multiple_of(16) {
                    let msg = format!("bulk copy of {n} bytes: the size must be a multiple of 16");
                    self.finding(Category::Unsupported, own, Some(t), None, Some(pc), msg);
                }
                if self.gmem.slice(s, n as usize).is_none() {
                    let ds = self.gmem.describe(s);
                    self.fault(own, t, pc, format!("bulk copy source of {n} bytes at {ds} is out of bounds"));
                    return;
                }
                let Some(dd) = self.smem_addr(wi, l, true, d, n, pc) else { return };
                let Some(bb) = self.bar_addr(wi, l, bar, true, pc) else { return };
                self.issue_load(t, pc, vec![(dd.0, dd.1, bb.1)], LoadSrc::Bulk(s), n);
            }
            TmaOp::StoreTensor { tmap, coords, src } => {
                let Some(map) = self.tmap_index(wi, l, tmap, pc) else { return };
                let desc = self.tmaps[map].as_ref().expect("tensor map");
                let bytes = desc.box_bytes();
                let cs: Vec<i32> = coords.iter().map(|c| self.val(wi, l, c) as u32 as i32).collect();
                let s = self.val(wi, l, src) & 0xFFFF_FFFF;
                if !self.require_aligned(own, t, pc, "the TMA tensor store's shared source", s, 128) {
                    return;
                }
                let Some((c, off)) = self.smem_addr(wi, l, false, s, bytes, pc) else { return };
                self.issue_store(t, pc, c, off, StoreDst::Tensor { map, coords: cs }, bytes);
            }
            TmaOp::StoreBulk { dst, src, bytes } => {
                let n = self.val(wi, l, bytes) as u32;
                let d = self.val(wi, l, dst);
                if self.gmem.slice(d, n as usize).is_none() {
                    let ds = self.gmem.describe(d);
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
                self.issue_store(t, pc, c, off, StoreDst::Bulk(d), n);
            }
            TmaOp::CommitGroup => {
                let a = &mut self.aux[t as usize];
                let open = std::mem::take(&mut a.bulk_open);
                a.bulk_groups.push(open);
            }
            TmaOp::WaitGroup { n, .. } => {
                let a = &mut self.aux[t as usize];
                if ThreadAux::groups_retired(&a.bulk_groups, &mut a.bulk_first, *n) {
                    self.observe_stores(t, *n);
                } else {
                    self.block_lane(wi, l, Block::Bulk { n: *n, pc });
                }
            }
            TmaOp::PrefetchTensor { .. } => {}
        }
    }

    fn issue_load(&mut self, t: u32, pc: u32, dsts: Vec<(usize, u32, u32)>, src: LoadSrc, bytes: u32) {
        for &(c, _, boff) in &dsts {
            if !self.check_barrier_use(t, c, boff, pc, "issues a TMA load completing on") {
                return;
            }
        }
        let id = self.next_op;
        for &(c, off, _) in &dsts {
            self.async_write_issue(t, c, off, bytes, id, pc);
        }
        self.push_op(t, pc, AsyncKind::Load { dsts, src, bytes });
    }

    fn issue_store(&mut self, t: u32, pc: u32, c: usize, off: u32, dst: StoreDst, bytes: u32) {
        let id = self.next_op;
        self.async_read_issue(t, c, off, bytes, id, pc);
        let a = &mut self.aux[t as usize];
        let group = a.bulk_groups.len();
        a.bulk_open += 1;
        self.push_op(t, pc, AsyncKind::Store { cta: c, off, dst, bytes, group });
    }
}
