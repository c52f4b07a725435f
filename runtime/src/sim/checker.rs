//! The protocol checker: vector clocks for happens-before, per-byte shadow state of shared
//! memory for races between threads and async agents, barrier misuse checks at each use,
//! and end-of-kernel checks of every barrier.
//!
//! Happens-before edges: an arrive (or an async copy's `complete_tx`) releases the arriving
//! thread's clock into the barrier's current phase; a successful wait acquires the clock of
//! the phase it observed; `bar.sync`, `bar.warp.sync` and the cluster barrier join all
//! participants; an async copy carries its issuer's clock at issue. A TMA store's source stays
//! marked read by the store until its issuer's `cp.async.bulk.wait_group` observes it.

use super::engine::{Engine, StoreRead, WaitTarget};
use super::finding::Category;

/// Shadow state of one shared-memory byte.
#[derive(Clone, Copy, Default, Debug)]
pub struct Shadow {
    /// Last write epoch (`ASYNC` set when an async copy wrote it), 0 if never written.
    pub w: u64,
    /// Last read epoch, 0 if none since the last write.
    pub r: u64,
    /// In-flight async copy that will write this byte (op id), 0 if none.
    pub pend: u32,
    /// In-flight TMA store reading this byte (op id), 0 if none.
    pub pend_read: u32,
}

const ASYNC: u64 = 1 << 63;

#[inline]
fn epoch(t: u32, clk: u32) -> u64 {
    ((t as u64 + 1) << 32) | clk as u64
}
#[inline]
fn ep_tid(e: u64) -> u32 {
    (((e & !ASYNC) >> 32) - 1) as u32
}
#[inline]
fn ep_clk(e: u64) -> u32 {
    e as u32
}

/// `dst = max(dst, src)` element-wise (`src` may be shorter, e.g. empty).
pub fn join(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        if *s > *d {
            *d = *s;
        }
    }
}

/// Release `row` into an accumulating clock.
pub fn release_to(acc: &mut Vec<u32>, row: &[u32]) {
    if acc.len() < row.len() {
        acc.resize(row.len(), 0);
    }
    join(acc, row);
}

enum Conflict {
    InFlightWrite(u32),
    InFlightRead(u32),
    Thread { other: u32, was_write: bool, async_write: bool },
    Proxy { writer: u32 },
}

impl Engine<'_> {
    #[inline]
    pub fn row(&self, t: u32) -> &[u32] {
        &self.vc[t as usize * self.m..(t as usize + 1) * self.m]
    }

    /// Own clock of thread `t`, then advance it (after a release).
    pub fn tick_clock(&mut self, t: u32) -> u32 {
        let i = t as usize * self.m + t as usize;
        let c = self.vc[i];
        self.vc[i] = c + 1;
        c
    }

    fn op_issuer(&self, op: u32) -> Option<u32> {
        self.agents.iter().find(|o| o.id == op).map(|o| o.issuer)
    }

    fn describe_conflict(&self, c: &Conflict) -> String {
        let tpc = self.tpc;
        match *c {
            Conflict::InFlightWrite(op) => match self.op_issuer(op) {
                Some(i) => format!("an async copy issued by thread {} that has not landed yet", i % tpc),
                None => "an in-flight async copy".into(),
            },
            Conflict::InFlightRead(op) => match (self.op_issuer(op), self.store_issuer(op)) {
                (Some(i), _) => format!("an in-flight TMA store issued by thread {} (source not read yet)", i % tpc),
                (None, Some(i)) => format!(
                    "a TMA store issued by thread {} whose completion was not observed (no \
                     `cp.async.bulk.wait_group.read` by its issuer ordered before this access)",
                    i % tpc
                ),
                (None, None) => "an in-flight TMA store".into(),
            },
            Conflict::Thread { other, .. } if other as usize >= self.n => {
                let (c, off) = self.bar_comps[other as usize - self.n];
                format!(
                    "an async copy completing on barrier {}, whose phase this thread never observed (no wait on it, \
                     and no release chain from a thread that waited)",
                    self.barrier_ref(c, off)
                )
            }
            Conflict::Thread { other, was_write, async_write } => {
                let cta = other / tpc;
                let who = if self.ctas.len() > 1 {
                    format!("thread {} of CTA rank {cta}", other % tpc)
                } else {
                    format!("thread {}", other % tpc)
                };
                if async_write {
                    format!("the async copy issued by {who}, whose completion this thread never waited for")
                } else if was_write {
                    format!("a write by {who}, not ordered before this access")
                } else {
                    format!("a read by {who}, not ordered before this access (no release from {who} reached here)")
                }
            }
            Conflict::Proxy { writer } => format!(
                "a generic-proxy write by thread {} with no `fence.proxy.async` between it and the async-proxy read",
                writer % tpc
            ),
        }
    }

    /// A thread reads `[off, off+len)` of CTA `cta`'s shared memory.
    pub fn check_read(&mut self, t: u32, cta: usize, off: u32, len: u32, pc: u32) {
        if !self.cfg.race_check {
            return;
        }
        let n = self.m;
        let row = &self.vc[t as usize * n..(t as usize + 1) * n];
        let me = epoch(t, row[t as usize]);
        let mut conflict = None;
        for s in &mut self.ctas[cta].shadow[off as usize..(off + len) as usize] {
            if s.pend != 0 {
                conflict = Some((Category::AsyncReadRace, Conflict::InFlightWrite(s.pend)));
            } else if s.w != 0 {
                let u = ep_tid(s.w);
                if u != t && row[u as usize] < ep_clk(s.w) {
                    let a = s.w & ASYNC != 0;
                    let cat = if a { Category::AsyncReadRace } else { Category::SharedRace };
                    conflict = Some((cat, Conflict::Thread { other: u, was_write: true, async_write: a }));
                }
            }
            s.r = me;
        }
        if let Some((cat, c)) = conflict {
            let what = self.describe_conflict(&c);
            let msg =
                format!("thread {} reads {} ({len} bytes) written by {what}", t % self.tpc, self.layout.describe(off));
            self.finding(cat, cta, Some(t), None, Some(pc), msg);
        }
    }

    /// A thread writes `[off, off+len)`.
    pub fn check_write(&mut self, t: u32, cta: usize, off: u32, len: u32, pc: u32) {
        if !self.cfg.race_check {
            return;
        }
        let n = self.m;
        let row = &self.vc[t as usize * n..(t as usize + 1) * n];
        let me = epoch(t, row[t as usize]);
        let mut conflict = None;
        for s in &mut self.ctas[cta].shadow[off as usize..(off + len) as usize] {
            if s.pend != 0 {
                conflict = Some((Category::AsyncWriteRace, Conflict::InFlightWrite(s.pend)));
            } else if s.pend_read != 0 {
                conflict = Some((Category::AsyncWriteRace, Conflict::InFlightRead(s.pend_read)));
            } else {
                if s.w != 0 {
                    let u = ep_tid(s.w);
                    if u != t && row[u as usize] < ep_clk(s.w) {
                        let a = s.w & ASYNC != 0;
                        let cat = if a { Category::AsyncWriteRace } else { Category::SharedRace };
                        conflict = Some((cat, Conflict::Thread { other: u, was_write: true, async_write: a }));
                    }
                }
                if s.r != 0 {
                    let u = ep_tid(s.r);
                    if u != t && row[u as usize] < ep_clk(s.r) {
                        conflict = Some((
                            Category::SharedRace,
                            Conflict::Thread { other: u, was_write: false, async_write: false },
                        ));
                    }
                }
            }
            s.w = me;
            s.r = 0;
        }
        if let Some((cat, c)) = conflict {
            let what = self.describe_conflict(&c);
            let msg = format!(
                "thread {} writes {} ({len} bytes), conflicting with {what}",
                t % self.tpc,
                self.layout.describe(off)
            );
            self.finding(cat, cta, Some(t), None, Some(pc), msg);
        }
    }

    /// Thread `i` issues an async copy (op `op`) that will write `[off, off+len)` of CTA `cta`.
    pub fn async_write_issue(&mut self, i: u32, cta: usize, off: u32, len: u32, op: u32, pc: u32) {
        if !self.cfg.race_check {
            return;
        }
        let n = self.m;
        let row = &self.vc[i as usize * n..(i as usize + 1) * n];
        let mut conflict = None;
        for s in &mut self.ctas[cta].shadow[off as usize..(off + len) as usize] {
            if s.pend != 0 && s.pend != op {
                conflict = Some(Conflict::InFlightWrite(s.pend));
            }
            if s.pend_read != 0 {
                conflict = Some(Conflict::InFlightRead(s.pend_read));
            }
            if s.w != 0 {
                let u = ep_tid(s.w);
                if u != i && row[u as usize] < ep_clk(s.w) {
                    conflict = Some(Conflict::Thread { other: u, was_write: true, async_write: s.w & ASYNC != 0 });
                }
            }
            if s.r != 0 {
                let u = ep_tid(s.r);
                if u != i && row[u as usize] < ep_clk(s.r) {
                    conflict = Some(Conflict::Thread { other: u, was_write: false, async_write: false });
                }
            }
            s.pend = op;
        }
        if let Some(c) = conflict {
            let what = self.describe_conflict(&c);
            let hint = if matches!(c, Conflict::Thread { was_write: false, .. }) {
                "\n(the stage is refilled before its consumer released it: a missing or wrong wait on the empty barrier?)"
            } else {
                ""
            };
            let msg = format!(
                "async copy issued by thread {} overwrites {} ({len} bytes), conflicting with {what}{hint}",
                i % self.tpc,
                self.layout.describe(off)
            );
            self.finding(Category::AsyncWriteRace, cta, Some(i), None, Some(pc), msg);
        }
    }

    /// The async copy `op` issued by `issuer` at `clk` landed in `[off, off+len)`.
    pub fn async_land(&mut self, cta: usize, off: u32, len: u32, op: u32, issuer: u32, clk: u32) {
        if !self.cfg.race_check {
            return;
        }
        let e = ASYNC | epoch(issuer, clk);
        for s in &mut self.ctas[cta].shadow[off as usize..(off + len) as usize] {
            if s.pend == op {
                s.pend = 0;
            }
            s.w = e;
            s.r = 0;
        }
    }

    /// Thread `i` issues a TMA store (op `op`) reading `[off, off+len)` of its CTA.
    pub fn async_read_issue(&mut self, i: u32, cta: usize, off: u32, len: u32, op: u32, pc: u32) {
        if !self.cfg.race_check {
            return;
        }
        let n = self.m;
        let mut conflict = None;
        for b in off..off + len {
            let s = self.ctas[cta].shadow[b as usize];
            if s.pend != 0 {
                conflict = Some((Category::AsyncReadRace, Conflict::InFlightWrite(s.pend)));
            } else if s.w != 0 && s.w & ASYNC == 0 {
                let u = ep_tid(s.w);
                let c = ep_clk(s.w);
                if u != i && self.vc[i as usize * n + u as usize] < c {
                    conflict = Some((
                        Category::AsyncReadRace,
                        Conflict::Thread { other: u, was_write: true, async_write: false },
                    ));
                } else {
                    let own_fence = self.aux[u as usize].fence_clock >= c && self.aux[u as usize].fence_clock > 0;
                    let issuer_fence = self.aux[i as usize].fence_vc.get(u as usize).is_some_and(|&f| f >= c);
                    if !own_fence && !issuer_fence {
                        conflict = Some((Category::ProxyFence, Conflict::Proxy { writer: u }));
                    }
                }
            }
            self.ctas[cta].shadow[b as usize].pend_read = op;
        }
        if let Some((cat, c)) = conflict {
            let what = self.describe_conflict(&c);
            let msg = format!(
                "TMA store issued by thread {} reads {} ({len} bytes): {what}",
                i % self.tpc,
                self.layout.describe(off)
            );
            self.finding(cat, cta, Some(i), None, Some(pc), msg);
        }
    }

    /// Thread `t` passed `cp.async.bulk.wait_group n`: its completed TMA stores in groups older
    /// than the `n` most recent have observably finished reading their source, which from now
    /// on counts as read by `t` itself (others must be ordered after `t` to rewrite it).
    pub fn observe_stores(&mut self, t: u32, n: u32) {
        if !self.cfg.race_check || self.aux[t as usize].unobserved_stores.is_empty() {
            return;
        }
        let a = &mut self.aux[t as usize];
        let retired = a.bulk_groups.len().saturating_sub(n as usize);
        let (seen, kept): (Vec<StoreRead>, Vec<StoreRead>) =
            a.unobserved_stores.drain(..).partition(|r| r.group < retired);
        a.unobserved_stores = kept;
        let me = epoch(t, self.row(t)[t as usize]);
        for r in seen {
            for s in &mut self.ctas[r.cta].shadow[r.off as usize..(r.off + r.len) as usize] {
                if s.pend_read == r.op {
                    s.pend_read = 0;
                    s.r = me;
                }
            }
        }
    }

    /// The thread that issued TMA store `op`, in flight or completed but not yet observed.
    fn store_issuer(&self, op: u32) -> Option<u32> {
        self.op_issuer(op)
            .or_else(|| self.aux.iter().position(|a| a.unobserved_stores.iter().any(|r| r.op == op)).map(|t| t as u32))
    }

    /// Whether thread `t` may use barrier `(cta, off)`: it exists and is initialized (else an
    /// `Uninitialized` finding), and its init is ordered before this use (else `InitVisibility`).
    pub fn check_barrier_use(&mut self, t: u32, cta: usize, off: u32, pc: u32, what: &str) -> bool {
        let (usable, invalidated, init_by, init_clock, warned, init_loc) = match self.ctas[cta].barriers.get(&off) {
            Some(b) => (b.usable(), b.invalidated, b.init_by, b.init_clock, b.init_warned, b.init_loc),
            None => (false, false, 0, 0, false, None),
        };
        if !usable {
            let why = if invalidated { "after `mbarrier.inval`" } else { "that was never initialized" };
            let msg = format!("thread {} {what} a barrier {why}", t % self.tpc);
            self.finding(Category::Uninitialized, cta, Some(t), Some((cta, off)), Some(pc), msg);
            return false;
        }
        if init_by != t && !warned && self.row(t)[init_by as usize] <= init_clock {
            let at = init_loc.map(|l| format!(" at {l}")).unwrap_or_default();
            let msg = format!(
                "thread {} {what} the barrier, but nothing orders its initialization by thread {}{at} before this use \
                 (missing `bar.sync`/`fence.mbarrier_init` + cluster barrier after `mbarrier.init`?)",
                t % self.tpc,
                init_by % self.tpc
            );
            if let Some(b) = self.ctas[cta].barriers.get_mut(&off) {
                b.init_warned = true;
            }
            self.finding(Category::InitVisibility, cta, Some(t), Some((cta, off)), Some(pc), msg);
        }
        true
    }

    /// A wait of thread `t` on `(cta, off)` succeeded: acquire the observed phase's clock and
    /// check the thread does not consume a phase it already consumed (stale parity, ABA).
    pub fn wait_succeeded(
        &mut self,
        t: u32,
        cta: usize,
        off: u32,
        target: WaitTarget,
        stale_check: bool,
        pc: Option<u32>,
    ) {
        let n = self.m;
        let Some(bar) = self.ctas[cta].barriers.get_mut(&off) else { return };
        let w = match target {
            WaitTarget::Parity(p) => bar.observed_for_parity(p),
            WaitTarget::Phase(k) => k as i64,
        };
        join(&mut self.vc[t as usize * n..(t as usize + 1) * n], bar.done_vc(w));
        if !stale_check {
            return;
        }
        if bar.seen.len() < n {
            bar.seen.resize(n, i64::MIN);
        }
        let seen = bar.seen[t as usize];
        bar.seen[t as usize] = seen.max(w);
        if seen != i64::MIN && w <= seen {
            let (phase, parity) = (
                bar.phase,
                match target {
                    WaitTarget::Parity(p) => p & 1,
                    WaitTarget::Phase(k) => k & 1,
                },
            );
            let msg = format!(
                "thread {} waited on parity {parity} while the barrier is in phase {phase}: the wait returned at once, \
                 observing phase {w}, which this thread had already consumed (it last observed phase {seen}); \
                 the parity is stale (a missing `phase ^= 1`, or a wait two phases behind)",
                t % self.tpc
            );
            self.finding(Category::StaleParity, cta, Some(t), Some((cta, off)), pc, msg);
        }
    }

    /// End-of-kernel checks of every barrier of the cluster.
    pub fn finish_checks(&mut self) {
        if self.abort {
            return;
        }
        for c in 0..self.ctas.len() {
            let mut offs: Vec<u32> = self.ctas[c].barriers.keys().copied().collect();
            offs.sort_unstable();
            for off in offs {
                let b = &self.ctas[c].barriers[&off];
                if !b.usable() {
                    continue;
                }
                let (tx, received, expected, phase) = (b.tx, b.received, b.expected, b.phase);
                let last = b.last.back().map(|a| self.describe_arrival(a)).unwrap_or_default();
                let (init_by, init_loc) = (b.init_by, b.init_loc);
                let pc = init_loc.and_then(|l| self.prog.locs.iter().position(|x| *x == Some(l))).map(|p| p as u32);
                if tx > 0 {
                    let msg = format!(
                        "the kernel ended with tx-count {tx} in phase {phase}: {tx} bytes registered with expect_tx \
                         never arrived (last update: {last})"
                    );
                    self.finding(Category::TxImbalance, c, Some(init_by), Some((c, off)), pc, msg);
                } else if tx < 0 {
                    let msg = format!(
                        "the kernel ended with tx-count {tx} in phase {phase}: {} more bytes arrived than were \
                         registered with expect_tx (last update: {last})",
                        -tx
                    );
                    self.finding(Category::TxImbalance, c, Some(init_by), Some((c, off)), pc, msg);
                } else if received > 0 {
                    let msg = format!(
                        "the kernel ended in phase {phase} with {received} of {expected} arrivals: the phase never \
                         completed (an extra arrival, or a wrong init count?) (last: {last})"
                    );
                    self.finding(Category::IncompletePhase, c, Some(init_by), Some((c, off)), pc, msg);
                }
            }
        }
    }
}
