//! Happens-before through global memory between the CTAs of a grid: the flag protocol of
//! tiles handed from CTA to CTA (stream-K, a GEMM that waits for its peer's all-gather).
//!
//! The PTX memory model's edges: a release store (or `red`/`atom` `.release`) read by an
//! acquire load (or `atom` `.acquire`) makes every write of the releasing CTA before it
//! visible after the load; `fence.acq_rel` then a relaxed store is a release, a relaxed load
//! then `fence.acq_rel` an acquire; both sides' scopes must include the other CTA (`.cta`
//! never does, `.cluster` within a cluster, `.gpu`/`.sys` on one device). A weak (plain) read
//! of global bytes another CTA wrote with no such edge, or a weak write of bytes another CTA
//! read or wrote with none (write-after-write: which value stays depends on the schedule), is
//! a finding naming both CTAs, both lines and what is missing.
//!
//! The unit is the CTA: a release by any thread publishes every earlier global write of its
//! CTA (the order inside a CTA, `bar.sync` and the like, is taken as given: a flag signalled
//! by thread 0 after a `__syncthreads()` publishes the CTA's tile). `barrier.cluster` joins
//! the clocks of its cluster's CTAs. Each CTA has a vector clock with one component per CTA
//! of the grid; each global byte a weak access touched keeps its last write and the reads
//! since, each flag location what an acquire reading its current value obtains.
//!
//! The epoch model (`engine/grid.rs`): every resident cluster runs on its own view
//! ([`GlobalOrderView`]: the committed [`GlobalOrder`] at the epoch's start plus its own
//! changes), as its memory does; at the epoch's end the views are committed in cluster order,
//! with the memory. Conflicts between clusters of one epoch are found at the commit (a read of
//! an earlier epoch's value that a cluster committed before it overwrote in the same epoch).
//! Clocks are exchanged only through flags, which is what the hardware allows too.
//!
//! Several devices (issue 24 §4, the multi-device runtime): a clock component per (device,
//! CTA) (`grid_index`), `MemScope::includes` told whether two CTAs share a device (`.gpu`
//! stops at the device, `.sys` does not), one `GlobalOrder` for all devices launched
//! together, committed for every device's clusters in one fixed order per epoch, and
//! addresses made canonical (a peer mapping's address as its owner's) before they key cells
//! and flags; the infinite-loop report's "no live thread stores to it" must then look at
//! every device's warps.
//!
//! The async proxy's reads of global memory (TMA tensor loads, bulk global→shared copies), and
//! Ampere's `cp.async` (its read is as asynchronous, `exec/memory.rs`), are
//! weak reads at their issue (`exec/tma.rs`): the copy may read any time after it, so a peer's
//! write must be acquired before the issue. `cp.async` is the generic proxy's and reads with
//! the CTA's clock; the async proxy reads with the clock of the CTA's last
//! `fence.proxy.async.global` (or `fence.proxy.async`, [`GlobalOrderView::proxy_fence`]): a
//! flag's acquire is the generic proxy's, and PTX's memory model orders the async proxy's
//! later reads after it only through that fence ([`Proxy`]).
//!
//! Cost: nothing unless the kernel has strong global loads or stores (`ld.acquire`,
//! `st.release`, `.relaxed` with a scope: [`uses_flags`]); the checker follows atomics and
//! fences only in such kernels.

use phaser_codegen::ir::{Access, AtomSem, Inst, MemOrder, MemScope, MemoryOp, Space};
use phaser_codegen::SourceLoc;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// A CTA's vector clock over the CTAs of the grid (grid-linear index).
type Clock = Arc<Vec<u32>>;

/// Which proxy a weak global read is made through: the clock it is ordered by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Proxy {
    /// Loads and `cp.async`: the CTA's clock.
    Generic,
    /// TMA loads and bulk copies: the clock at the CTA's last `fence.proxy.async.global`.
    Async,
}

/// Whether the kernel's instructions include a strong global load or store: the checker runs.
pub(crate) fn uses_flags(slow: &[Inst]) -> bool {
    slow.iter().any(|i| {
        matches!(
            i,
            Inst::Memory(
                MemoryOp::Ld { space: Space::Global, access: Access::Strong(_), .. }
                    | MemoryOp::St { space: Space::Global, access: Access::Strong(_), .. }
            )
        )
    })
}

fn join(into: &mut Clock, from: &[u32]) {
    if into.iter().zip(from).any(|(a, b)| b > a) {
        for (a, b) in Arc::make_mut(into).iter_mut().zip(from) {
            *a = (*a).max(*b);
        }
    }
}

#[derive(Clone, Debug)]
struct Write {
    cta: u32,
    tick: u32,
    pc: u32,
    clock: Clock,
    epoch: u64,
}

#[derive(Clone, Copy, Debug)]
struct Read {
    cta: u32,
    tick: u32,
    pc: u32,
    epoch: u64,
}

#[derive(Clone, Debug, Default)]
struct Cell {
    write: Option<Write>,
    /// The latest read of each CTA since `write`.
    reads: Vec<Read>,
}

impl Cell {
    fn add_read(&mut self, r: Read) {
        match self.reads.iter_mut().find(|x| x.cta == r.cta) {
            Some(x) => *x = r,
            None => self.reads.push(r),
        }
    }
}

/// How a flag's last store was ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoreHow {
    Release,
    /// Relaxed, after a `fence.acq_rel` of the storing CTA: publishes what the fence did.
    FencedRelaxed,
    /// Relaxed with no fence before it: publishes nothing.
    Relaxed,
}

/// What an acquire reading a flag's current value obtains, and who stored it.
#[derive(Clone, Debug)]
struct Flag {
    published: Option<Clock>,
    scope: MemScope,
    by: u32,
    pc: u32,
    how: StoreHow,
}

/// The last flag a CTA read that another CTA stored: what a finding about that CTA names.
#[derive(Clone, Copy, Debug)]
struct FlagRead {
    addr: u64,
    store_pc: u32,
    how: StoreHow,
    load_pc: u32,
    load_sem: AtomSem,
    /// The store's scope.
    store_scope: MemScope,
    /// Whether both scopes include the two CTAs.
    in_scope: bool,
    /// Whether a fence followed the relaxed load (it then acquired).
    fenced_after: bool,
}

struct CtaOrder {
    grid: u32,
    ctaid: [u32; 3],
    now: Clock,
    /// The clock the last `fence.acq_rel` released, and its scope: a relaxed store publishes it.
    fenced: Option<(Clock, MemScope)>,
    /// What relaxed loads read since the last fence: the next fence acquires it.
    pending: Option<Clock>,
    /// Per storing CTA, the last flag read from it.
    flag_reads: HashMap<u32, FlagRead>,
    /// `now` at the last `fence.proxy.async.global` (or `fence.proxy.async`): what the async
    /// proxy's reads are ordered after.
    async_seen: Clock,
}

/// The committed state (between epochs).
#[derive(Default)]
pub(crate) struct GlobalOrder {
    cells: HashMap<u64, Cell>,
    flags: HashMap<u64, Flag>,
    epoch: u64,
}

/// Two accesses of one global location by different CTAs with no happens-before between them.
#[derive(Clone, Debug)]
pub(crate) struct Conflict {
    /// The access that found it: its CTA rank in its cluster and pc.
    pub rank: usize,
    pub pc: u32,
    pub addr: u64,
    /// What the later access is and what it meets: a read of data written earlier, a write
    /// over data read earlier, or a write over data written earlier.
    pub kind: ConflictKind,
    /// The other access: `%ctaid`, its index in the [`CtaSpace`] (which launch it is of: its
    /// pc is that launch's) and pc.
    pub other: [u32; 3],
    pub other_g: u32,
    pub other_pc: u32,
    /// The later access's own `%ctaid`.
    pub own: [u32; 3],
    /// Why no edge exists, as the checker knows it (the flag the reader read, if any).
    why: Why,
}

/// The two accesses of a [`Conflict`], the later first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConflictKind {
    ReadAfterWrite,
    WriteAfterRead,
    WriteAfterWrite,
}

#[derive(Clone, Debug)]
enum Why {
    /// The reader read a flag the writer stored.
    Flag(FlagRead),
    /// Nothing of the writer's was acquired.
    NoFlag,
    /// A write over a read of another CTA that never signalled the writer after it.
    NoSignalBack,
    /// An async-proxy read of data the reader acquired (through this flag, if one is known) in
    /// the generic proxy, with no `fence.proxy.async.global` between the acquire and the read.
    NoProxyFence(Option<FlagRead>),
}

/// A global atomic deferred to the epoch's end, and what it synchronizes.
struct DeferredSync {
    rank: usize,
    addr: u64,
    sem: AtomSem,
    scope: MemScope,
    pc: u32,
    /// What its release part publishes (the CTA's clock, or its fence's).
    publishes: Option<Clock>,
    how: StoreHow,
    reads: bool,
}

/// One cluster's view for an epoch (see the module doc).
pub(crate) struct GlobalOrderView {
    base: Option<Arc<GlobalOrder>>,
    cells: HashMap<u64, Cell>,
    flags: HashMap<u64, Flag>,
    ctas: Vec<CtaOrder>,
    space: Arc<CtaSpace>,
    deferred: VecDeque<DeferredSync>,
    /// `(pc, other pc)` pairs reported: one finding per pair of lines.
    reported: HashSet<(u32, u32)>,
}

fn grid_index(ctaid: [u32; 3], grid: [u32; 3]) -> u32 {
    ctaid[0] + grid[0] * (ctaid[1] + grid[1] * ctaid[2])
}

fn ctaid_of(g: u32, grid: [u32; 3]) -> [u32; 3] {
    [g % grid[0], (g / grid[0]) % grid[1], g / (grid[0] * grid[1])]
}

/// The CTAs the clocks index: every CTA of every launch that runs together (one launch, or
/// a group of several devices' launches, `engine/grid.rs`'s `run_group`), launch after
/// launch, each launch's CTAs grid-linear.
#[derive(Debug)]
pub(crate) struct CtaSpace {
    launches: Vec<LaunchSpan>,
}

#[derive(Clone, Debug)]
pub(crate) struct LaunchSpan {
    pub base: u32,
    pub grid: [u32; 3],
    pub cluster_dim: [u32; 3],
    /// The device it runs on (`.gpu` scope reaches no other).
    pub device: u32,
    /// Its program's source lines by pc (what a finding names of another launch's access).
    pub locs: Vec<Option<SourceLoc>>,
}

impl CtaSpace {
    /// The launches' spans, from `(grid, cluster_dim, device, locs)` of each.
    pub(crate) fn new(
        launches: impl IntoIterator<Item = ([u32; 3], [u32; 3], u32, Vec<Option<SourceLoc>>)>,
    ) -> CtaSpace {
        let mut base = 0;
        let launches = launches
            .into_iter()
            .map(|(grid, cluster_dim, device, locs)| {
                let span = LaunchSpan { base, grid, cluster_dim, device, locs };
                base += grid[0] * grid[1] * grid[2];
                span
            })
            .collect();
        CtaSpace { launches }
    }

    fn total(&self) -> u32 {
        self.launches.last().map_or(0, |l| l.base + l.grid[0] * l.grid[1] * l.grid[2])
    }

    fn span(&self, g: u32) -> &LaunchSpan {
        self.launches.iter().rev().find(|l| l.base <= g).expect("a CTA of the space")
    }

    fn ctaid(&self, g: u32) -> [u32; 3] {
        let l = self.span(g);
        ctaid_of(g - l.base, l.grid)
    }

    fn same_device(&self, a: u32, b: u32) -> bool {
        self.span(a).device == self.span(b).device
    }

    fn same_cluster(&self, a: u32, b: u32) -> bool {
        let (la, lb) = (self.span(a), self.span(b));
        if la.base != lb.base {
            return false;
        }
        let (a, b) = (ctaid_of(a - la.base, la.grid), ctaid_of(b - lb.base, lb.grid));
        (0..3).all(|d| a[d] / la.cluster_dim[d] == b[d] / la.cluster_dim[d])
    }
}

/// Whether `scope` reaches from one CTA to another: `.gpu` stops at its device, `.sys` does
/// not.
fn reaches(scope: MemScope, same_cta: bool, same_cluster: bool, same_device: bool) -> bool {
    (same_device || scope == MemScope::Sys) && scope.includes(same_cta, same_cluster)
}

impl GlobalOrderView {
    /// The view of the cluster whose CTAs have `ctaids` (rank order), of launch `launch` of
    /// `space`.
    pub fn new(ctaids: &[[u32; 3]], space: Arc<CtaSpace>, launch: usize) -> Self {
        let n = space.total() as usize;
        let (base, grid) = (space.launches[launch].base, space.launches[launch].grid);
        let grid_index = |ctaid: [u32; 3], grid: [u32; 3]| base + grid_index(ctaid, grid);
        // A CTA's own component starts at 1: its first writes are not covered by the zero
        // clocks of the others.
        let start = |g: u32| {
            let mut c = vec![0; n];
            c[g as usize] = 1;
            Arc::new(c)
        };
        let ctas = ctaids
            .iter()
            .map(|&ctaid| CtaOrder {
                grid: grid_index(ctaid, grid),
                ctaid,
                now: start(grid_index(ctaid, grid)),
                fenced: None,
                pending: None,
                flag_reads: HashMap::new(),
                async_seen: start(grid_index(ctaid, grid)),
            })
            .collect();
        GlobalOrderView {
            base: None,
            cells: HashMap::new(),
            flags: HashMap::new(),
            ctas,
            space,
            deferred: VecDeque::new(),
            reported: HashSet::new(),
        }
    }

    pub fn begin(&mut self, base: Arc<GlobalOrder>) {
        self.base = Some(base);
    }

    pub fn drop_base(&mut self) {
        self.base = None;
    }

    fn base(&self) -> &GlobalOrder {
        self.base.as_deref().expect("the global order is lent for the epoch")
    }

    fn epoch(&self) -> u64 {
        self.base().epoch
    }

    fn same_cluster(&self, a: u32, b: u32) -> bool {
        self.space.same_cluster(a, b)
    }

    fn flag(&self, addr: u64) -> Option<&Flag> {
        self.flags.get(&addr).or_else(|| self.base().flags.get(&addr))
    }

    fn last_write(&self, b: u64) -> Option<&Write> {
        match self.cells.get(&b) {
            Some(c) if c.write.is_some() => c.write.as_ref(),
            _ => self.base().cells.get(&b).and_then(|c| c.write.as_ref()),
        }
    }

    fn first_report(&mut self, pc: u32, other_pc: u32) -> bool {
        self.reported.insert((pc, other_pc))
    }

    /// A weak read of `[addr, addr + len)` by CTA `rank` at `pc` through `proxy`.
    pub fn data_read(&mut self, rank: usize, addr: u64, len: u32, pc: u32, proxy: Proxy) -> Option<Conflict> {
        let (me, epoch) = (self.ctas[rank].grid, self.epoch());
        let tick = self.ctas[rank].now[me as usize];
        let seen = match proxy {
            Proxy::Generic => Arc::clone(&self.ctas[rank].now),
            Proxy::Async => Arc::clone(&self.ctas[rank].async_seen),
        };
        let mut found = None;
        for b in addr..addr + len as u64 {
            if found.is_none() {
                if let Some(w) = self.last_write(b) {
                    if w.cta != me && seen[w.cta as usize] < w.tick {
                        // Ordered for the generic proxy: only the proxy fence is missing.
                        let generic_ordered = self.ctas[rank].now[w.cta as usize] >= w.tick;
                        found = Some((w.cta, w.pc, generic_ordered));
                    }
                }
            }
            self.cells.entry(b).or_default().add_read(Read { cta: me, tick, pc, epoch });
        }
        let (writer, wpc, generic_ordered) = found?;
        if !self.first_report(pc, wpc) {
            return None;
        }
        let flag = self.ctas[rank].flag_reads.get(&writer).copied();
        let why = match (generic_ordered, flag) {
            (true, f) => Why::NoProxyFence(f),
            (false, Some(f)) => Why::Flag(f),
            (false, None) => Why::NoFlag,
        };
        let own = self.ctas[rank].ctaid;
        let other = self.space.ctaid(writer);
        let kind = ConflictKind::ReadAfterWrite;
        Some(Conflict { rank, pc, addr, kind, other, other_g: writer, other_pc: wpc, own, why })
    }

    /// A weak write of `[addr, addr + len)` by CTA `rank` at `pc`.
    pub fn data_write(&mut self, rank: usize, addr: u64, len: u32, pc: u32) -> Option<Conflict> {
        let (me, epoch) = (self.ctas[rank].grid, self.epoch());
        let clock = Arc::clone(&self.ctas[rank].now);
        let mut found = None;
        for b in addr..addr + len as u64 {
            if found.is_none() {
                let delta = self.cells.get(&b);
                let mut reads: Vec<Read> = delta.map(|c| c.reads.clone()).unwrap_or_default();
                if delta.is_none_or(|c| c.write.is_none()) {
                    reads.extend(self.base().cells.get(&b).map(|c| c.reads.clone()).unwrap_or_default());
                }
                let unordered_read = reads.into_iter().find(|r| r.cta != me && clock[r.cta as usize] < r.tick);
                found = unordered_read.map(|r| (ConflictKind::WriteAfterRead, r.cta, r.pc)).or_else(|| {
                    // Write-after-write: the last write is another CTA's and this CTA acquired
                    // nothing it released after it.
                    let w = self.last_write(b)?;
                    (w.cta != me && clock[w.cta as usize] < w.tick).then_some((
                        ConflictKind::WriteAfterWrite,
                        w.cta,
                        w.pc,
                    ))
                });
            }
            let tick = clock[me as usize];
            self.cells.insert(
                b,
                Cell { write: Some(Write { cta: me, tick, pc, clock: Arc::clone(&clock), epoch }), reads: Vec::new() },
            );
        }
        let (kind, them, their_pc) = found?;
        if !self.first_report(pc, their_pc) {
            return None;
        }
        let (own, other) = (self.ctas[rank].ctaid, self.space.ctaid(them));
        let why = match kind {
            ConflictKind::WriteAfterWrite => {
                self.ctas[rank].flag_reads.get(&them).map_or(Why::NoFlag, |f| Why::Flag(*f))
            }
            _ => Why::NoSignalBack,
        };
        Some(Conflict { rank, pc, addr, kind, other, other_g: them, other_pc: their_pc, own, why })
    }

    /// What a store with `sem` by CTA `rank` publishes (its release part): the CTA's clock
    /// (then it advances), its last fence's, or nothing.
    fn release_part(&mut self, rank: usize, sem: AtomSem) -> (Option<Clock>, StoreHow) {
        let c = &mut self.ctas[rank];
        if matches!(sem, AtomSem::Release | AtomSem::AcqRel) {
            let snap = Arc::clone(&c.now);
            Arc::make_mut(&mut c.now)[c.grid as usize] += 1;
            return (Some(snap), StoreHow::Release);
        }
        match &c.fenced {
            Some((clock, _)) => (Some(Arc::clone(clock)), StoreHow::FencedRelaxed),
            None => (None, StoreHow::Relaxed),
        }
    }

    /// A strong store to flag `addr` (`.volatile`: relaxed at system scope).
    pub fn flag_store(&mut self, rank: usize, addr: u64, sem: AtomSem, scope: MemScope, pc: u32) {
        let (published, how) = self.release_part(rank, sem);
        let scope = match (how, &self.ctas[rank].fenced) {
            (StoreHow::FencedRelaxed, Some((_, fence))) => narrower(*fence, scope),
            _ => scope,
        };
        let by = self.ctas[rank].grid;
        self.flags.insert(addr, Flag { published, scope, by, pc, how });
    }

    /// A strong load of flag `addr` (or an atomic's read) by CTA `rank`.
    pub fn flag_load(&mut self, rank: usize, addr: u64, sem: AtomSem, scope: MemScope, pc: u32) {
        let Some(f) = self.flag(addr).cloned() else { return };
        let me = self.ctas[rank].grid;
        if f.by == me {
            return;
        }
        let (same_cta, same_cluster, same_device) =
            (false, self.same_cluster(me, f.by), self.space.same_device(me, f.by));
        let in_scope = reaches(f.scope, same_cta, same_cluster, same_device)
            && reaches(scope, same_cta, same_cluster, same_device);
        let c = &mut self.ctas[rank];
        let acquire = matches!(sem, AtomSem::Acquire | AtomSem::AcqRel);
        if let (true, Some(p)) = (in_scope, &f.published) {
            if acquire {
                join(&mut c.now, p);
            } else {
                match &mut c.pending {
                    Some(q) => join(q, p),
                    None => c.pending = Some(Arc::clone(p)),
                }
            }
        }
        let read = FlagRead {
            addr,
            store_pc: f.pc,
            how: f.how,
            load_pc: pc,
            load_sem: sem,
            store_scope: f.scope,
            in_scope,
            fenced_after: false,
        };
        c.flag_reads.insert(f.by, read);
    }

    /// `fence.acq_rel.scope` by CTA `rank`: acquires what relaxed loads read before it,
    /// releases to relaxed stores after it.
    pub fn fence(&mut self, rank: usize, scope: MemScope) {
        if scope == MemScope::Cta {
            return;
        }
        let c = &mut self.ctas[rank];
        if let Some(p) = c.pending.take() {
            join(&mut c.now, &p);
        }
        for f in c.flag_reads.values_mut() {
            f.fenced_after = true;
        }
        c.fenced = Some((Arc::clone(&c.now), scope));
        Arc::make_mut(&mut c.now)[c.grid as usize] += 1;
    }

    /// `fence.proxy.async.global` (or `fence.proxy.async`) by CTA `rank`: the async proxy's
    /// later reads are ordered after everything the CTA acquired so far.
    pub fn proxy_fence(&mut self, rank: usize) {
        let c = &mut self.ctas[rank];
        c.async_seen = Arc::clone(&c.now);
    }

    /// A global atomic by CTA `rank` (`reads`: it returns the old value). `deferred`: it runs at
    /// the epoch's end (`commit_atomic` applies it then).
    pub fn atomic(&mut self, rank: usize, addr: u64, order: MemOrder, pc: u32, reads: bool, deferred: bool) {
        let MemOrder { sem, scope } = order;
        let (publishes, how) = self.release_part(rank, sem);
        if deferred {
            self.deferred.push_back(DeferredSync { rank, addr, sem, scope, pc, publishes, how, reads });
            return;
        }
        if reads {
            self.flag_load(rank, addr, sem, scope, pc);
        }
        let by = self.ctas[rank].grid;
        let old = self.flag(addr).cloned();
        self.flags.insert(addr, rmw(old, publishes, scope, by, pc, how));
    }

    /// `barrier.cluster` completed: every CTA of the cluster has seen what every other did.
    pub fn cluster_barrier(&mut self) {
        let mut all = Arc::clone(&self.ctas[0].now);
        for c in &self.ctas[1..] {
            join(&mut all, &c.now);
        }
        for c in &mut self.ctas {
            c.now = Arc::clone(&all);
            Arc::make_mut(&mut c.now)[c.grid as usize] += 1;
        }
    }
}

/// The narrower of two scopes (a fenced relaxed store reaches what both reach).
fn narrower(a: MemScope, b: MemScope) -> MemScope {
    let rank = |s: MemScope| match s {
        MemScope::Cta => 0,
        MemScope::Cluster => 1,
        MemScope::Gpu => 2,
        MemScope::Sys => 3,
    };
    if rank(a) <= rank(b) {
        a
    } else {
        b
    }
}

/// A read-modify-write continues the release sequence of the value it replaces.
fn rmw(old: Option<Flag>, publishes: Option<Clock>, scope: MemScope, by: u32, pc: u32, how: StoreHow) -> Flag {
    let published = match (old.and_then(|f| f.published), publishes) {
        (Some(mut a), Some(b)) => {
            join(&mut a, &b);
            Some(a)
        }
        (a, b) => a.or(b),
    };
    Flag { published, scope, by, pc, how }
}

impl GlobalOrder {
    /// Commit a cluster's view (in cluster order, with its memory): its conflicts with what
    /// clusters committed before it in this epoch.
    pub fn commit(&mut self, view: &mut GlobalOrderView) -> Vec<Conflict> {
        let mut found = Vec::new();
        let epoch = self.epoch;
        // In address order: the findings do not depend on the map's order.
        let mut cells: Vec<(u64, Cell)> = view.cells.drain().collect();
        cells.sort_unstable_by_key(|c| c.0);
        for (b, d) in cells {
            let cell = self.cells.entry(b).or_default();
            match d.write {
                Some(w) => {
                    let racing_read = cell
                        .reads
                        .iter()
                        .find(|r| r.epoch == epoch && r.cta != w.cta && w.clock[r.cta as usize] < r.tick)
                        .map(|r| (ConflictKind::WriteAfterRead, r.cta, r.pc, Why::NoSignalBack));
                    // Another cluster of this epoch wrote the bytes, committed before this one:
                    // unordered unless this write's CTA acquired a release after it.
                    let racing_write = || {
                        let p = cell.write.as_ref().filter(|p| p.epoch == epoch)?;
                        (p.cta != w.cta && w.clock[p.cta as usize] < p.tick).then_some((
                            ConflictKind::WriteAfterWrite,
                            p.cta,
                            p.pc,
                            Why::NoFlag,
                        ))
                    };
                    if let Some((kind, them, their_pc, why)) = racing_read.or_else(racing_write) {
                        if view.reported.insert((w.pc, their_pc)) {
                            let rank = view.ctas.iter().position(|c| c.grid == w.cta).unwrap_or(0);
                            found.push(Conflict {
                                rank,
                                pc: w.pc,
                                addr: b,
                                kind,
                                other: view.space.ctaid(them),
                                other_g: them,
                                other_pc: their_pc,
                                own: view.space.ctaid(w.cta),
                                why,
                            });
                        }
                    }
                    *cell = Cell { write: Some(w), reads: d.reads };
                }
                None => {
                    let overwritten = cell.write.as_ref().filter(|w| w.epoch == epoch).cloned();
                    for r in d.reads {
                        match &overwritten {
                            // Read the value before this epoch's write of another cluster.
                            Some(w) if w.cta != r.cta => {
                                if w.clock[r.cta as usize] < r.tick && view.reported.insert((r.pc, w.pc)) {
                                    let rank = view.ctas.iter().position(|c| c.grid == r.cta).unwrap_or(0);
                                    found.push(Conflict {
                                        rank,
                                        pc: r.pc,
                                        addr: b,
                                        kind: ConflictKind::ReadAfterWrite,
                                        other: view.space.ctaid(w.cta),
                                        other_g: w.cta,
                                        other_pc: w.pc,
                                        own: view.space.ctaid(r.cta),
                                        why: Why::NoFlag,
                                    });
                                }
                            }
                            _ => cell.add_read(r),
                        }
                    }
                }
            }
        }
        self.flags.extend(view.flags.drain());
        found
    }

    /// Apply the sync of the next deferred atomic of `view` (`commit_atomic` runs in the order
    /// the atomics were issued, as the memory's `commit` does).
    pub fn commit_atomic(&mut self, view: &mut GlobalOrderView) {
        let Some(a) = view.deferred.pop_front() else { return };
        let by = view.ctas[a.rank].grid;
        let old = self.flags.get(&a.addr).cloned();
        if a.reads {
            if let Some(f) = &old {
                let (same_cluster, acquire) =
                    (view.same_cluster(by, f.by), matches!(a.sem, AtomSem::Acquire | AtomSem::AcqRel));
                let same_device = view.space.same_device(by, f.by);
                let in_scope = reaches(f.scope, false, same_cluster, same_device)
                    && reaches(a.scope, false, same_cluster, same_device);
                if let (true, true, Some(p), false) = (in_scope, acquire, &f.published, f.by == by) {
                    join(&mut view.ctas[a.rank].now, p);
                }
            }
        }
        self.flags.insert(a.addr, rmw(old, a.publishes, a.scope, by, a.pc, a.how));
    }

    /// Every cluster of the epoch committed.
    pub fn end_epoch(&mut self) {
        self.epoch += 1;
    }
}

impl Conflict {
    /// The finding's text: both CTAs, both lines, what is missing. `describe`: a global
    /// address as a buffer and byte.
    /// `space`: every launch's CTAs and lines (`launch`: the reporting CTA's), so the other
    /// access's line is read in its own program and, with several devices, each CTA is named
    /// with its device.
    pub fn message(&self, space: &CtaSpace, launch: usize, describe: &dyn Fn(u64) -> String) -> String {
        let (mine, theirs) = (&space.launches[launch], space.span(self.other_g));
        let at_in = |locs: &[Option<SourceLoc>], pc: u32| {
            locs.get(pc as usize).copied().flatten().map(|l| format!(" at {l}")).unwrap_or_default()
        };
        let at = |pc: u32| at_in(&mine.locs, pc);
        // The flag's store and the other access are the other CTA's.
        let at_other = |pc: u32| at_in(&theirs.locs, pc);
        let several = space.launches.len() > 1;
        let cta = |c: [u32; 3], device: u32| {
            let on = if several { format!(" on device {device}") } else { String::new() };
            format!("CTA ({}, {}, {}){on}", c[0], c[1], c[2])
        };
        let (own, other) = (cta(self.own, mine.device), cta(self.other, theirs.device));
        let (addr, here, there) = (describe(self.addr), at(self.pc), at_other(self.other_pc));
        let head = match self.kind {
            ConflictKind::ReadAfterWrite if matches!(self.why, Why::NoProxyFence(_)) => format!(
                "{own}'s TMA load or bulk copy (the async proxy) reads global {addr}{here} that {other} wrote{there}, \
                 ordered before it only for the generic proxy"
            ),
            ConflictKind::ReadAfterWrite => format!(
                "{own} reads global {addr}{here} that {other} wrote{there}, with nothing ordering the write before the read"
            ),
            ConflictKind::WriteAfterRead => format!(
                "{own} overwrites global {addr}{here} that {other} read{there}, with nothing ordering the read before the write"
            ),
            ConflictKind::WriteAfterWrite => format!(
                "{own} writes global {addr}{here} that {other} also wrote{there}, with nothing ordering the two writes \
                 (write-after-write: which value the bytes keep depends on the schedule)"
            ),
        };
        let why = match &self.why {
            Why::Flag(f) => {
                let flag = describe(f.addr);
                if !f.in_scope {
                    format!(
                        "the flag {flag} it read{} was stored{} with a scope that does not include both CTAs \
                         (`.cta`, or `.cluster` across clusters): use `.gpu` (`.sys` for a peer's memory)",
                        at(f.load_pc),
                        at_other(f.store_pc)
                    )
                } else if f.how == StoreHow::Relaxed {
                    format!(
                        "the flag {flag} it read{} was stored by {other}{} with a relaxed store and no \
                         `fence.acq_rel` before it, which publishes nothing: missing release (make the store \
                         `.release`, `T.flag.signal`, or put `T.ptx.fence.acq_rel(\"{}\")` between the data stores \
                         and the flag store)",
                        at(f.load_pc),
                        at_other(f.store_pc),
                        f.store_scope.name()
                    )
                } else if f.load_sem == AtomSem::Relaxed && !f.fenced_after {
                    format!(
                        "the flag {flag} was read{} with a relaxed load and no `fence.acq_rel` after it, which \
                         acquires nothing: missing acquire (make the load `.acquire`, `T.flag.wait`)",
                        at(f.load_pc)
                    )
                } else {
                    format!(
                        "the last value of the flag {flag} it read{} was stored{} before this data was written: a \
                         flag reused without a new value (the wait passed on an earlier round's signal; signal \
                         each round with a new value, the round + 1, and wait for it)",
                        at(f.load_pc),
                        at_other(f.store_pc)
                    )
                }
            }
            Why::NoFlag => format!(
                "{own} read no flag {other} released after the write (a release store, or `fence.acq_rel` then a \
                 relaxed store, read by an acquire load)"
            ),
            Why::NoProxyFence(flag) => {
                let acquired = flag
                    .map(|f| format!(" the acquire{} of the flag {}", at(f.load_pc), describe(f.addr)))
                    .unwrap_or_else(|| " the acquire".to_string());
                format!(
                    "missing `fence.proxy.async.global` between{acquired} and the copy: the acquire is the generic \
                     proxy's, and PTX's memory model orders the async proxy's reads after a generic-proxy acquire \
                     only through a proxy fence (put `T.ptx.fence.proxy_async(\"global\")` after the flag wait, \
                     before the TMA load or bulk copy)"
                )
            }
            Why::NoSignalBack => format!(
                "{other} signalled nothing after its read that {own} acquired before the write (a flag reused \
                 without a new value lets the reader read before the writer's next round; or the buffer needs a \
                 flag back to the writer)"
            ),
        };
        format!("{head}: {why}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: [u32; 3] = [2, 1, 1];
    const ONE: [u32; 3] = [1, 1, 1];

    /// Two clusters of one CTA in one epoch, then the next epoch.
    fn two() -> (GlobalOrder, GlobalOrderView, GlobalOrderView) {
        let space = Arc::new(CtaSpace::new([(G, ONE, 0, Vec::new())]));
        (
            GlobalOrder::default(),
            GlobalOrderView::new(&[[0, 0, 0]], space.clone(), 0),
            GlobalOrderView::new(&[[1, 0, 0]], space, 0),
        )
    }

    /// One epoch: `run` on the views (the conflicts it found), then the commits' conflicts.
    fn epoch(
        o: &mut Arc<GlobalOrder>,
        views: &mut [&mut GlobalOrderView],
        run: impl FnOnce(&mut [&mut GlobalOrderView]) -> Vec<Conflict>,
    ) -> Vec<Conflict> {
        for v in views.iter_mut() {
            v.begin(Arc::clone(o));
        }
        let mut found = run(views);
        for v in views.iter_mut() {
            v.drop_base();
        }
        let base = Arc::get_mut(o).unwrap();
        for v in views.iter_mut() {
            found.extend(base.commit(v));
        }
        base.end_epoch();
        found
    }

    /// CTA 0 writes data and stores a flag; in the next epoch CTA 1 loads the flag and reads.
    fn handoff(store: AtomSem, fence: bool, load: AtomSem) -> Vec<Conflict> {
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        let mut found = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            let w = v[0].data_write(0, 0x100, 4, 1);
            if fence {
                v[0].fence(0, MemScope::Gpu);
            }
            v[0].flag_store(0, 0x200, store, MemScope::Gpu, 2);
            w.into_iter().collect()
        });
        found.extend(epoch(&mut o, &mut [&mut a, &mut b], |v| {
            v[1].flag_load(0, 0x200, load, MemScope::Gpu, 3);
            v[1].data_read(0, 0x100, 4, 4, Proxy::Generic).into_iter().collect()
        }));
        found
    }

    /// Where CTA 1's `fence.proxy.async.global` stands around its acquire of CTA 0's flag.
    #[derive(Clone, Copy)]
    enum ProxyFence {
        None,
        BeforeAcquire,
        AfterAcquire,
    }

    /// `handoff`'s release and acquire, with CTA 1 reading the data through `proxy`.
    fn proxy_handoff(proxy: Proxy, fence: ProxyFence) -> Vec<Conflict> {
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        let mut found = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            let w = v[0].data_write(0, 0x100, 4, 1);
            v[0].flag_store(0, 0x200, AtomSem::Release, MemScope::Gpu, 2);
            w.into_iter().collect()
        });
        found.extend(epoch(&mut o, &mut [&mut a, &mut b], |v| {
            if let ProxyFence::BeforeAcquire = fence {
                v[1].proxy_fence(0);
            }
            v[1].flag_load(0, 0x200, AtomSem::Acquire, MemScope::Gpu, 3);
            if let ProxyFence::AfterAcquire = fence {
                v[1].proxy_fence(0);
            }
            v[1].data_read(0, 0x100, 4, 4, proxy).into_iter().collect()
        }));
        found
    }

    /// The async proxy's read is ordered after a generic-proxy acquire only by a proxy fence
    /// between the two; the generic proxy's read needs none.
    #[test]
    fn an_async_proxy_read_after_an_acquire_needs_a_proxy_fence_between_them() {
        assert!(proxy_handoff(Proxy::Async, ProxyFence::AfterAcquire).is_empty());
        assert!(proxy_handoff(Proxy::Generic, ProxyFence::None).is_empty());
        for fence in [ProxyFence::None, ProxyFence::BeforeAcquire] {
            let c = proxy_handoff(Proxy::Async, fence);
            assert_eq!(c.len(), 1, "{c:?}");
            assert!(matches!(c[0].why, Why::NoProxyFence(Some(FlagRead { addr: 0x200, load_pc: 3, .. }))), "{c:?}");
            assert_eq!((c[0].kind, c[0].pc, c[0].other_pc), (ConflictKind::ReadAfterWrite, 4, 1));
        }
        // Nothing acquired: the missing acquire is named, not the fence.
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        epoch(&mut o, &mut [&mut a, &mut b], |v| v[0].data_write(0, 0x100, 4, 1).into_iter().collect());
        let c = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            v[1].proxy_fence(0);
            v[1].data_read(0, 0x100, 4, 4, Proxy::Async).into_iter().collect()
        });
        assert!(c.len() == 1 && matches!(c[0].why, Why::NoFlag), "{c:?}");
    }

    /// A group's CTAs: launch after launch, each named by its own grid; clusters never span
    /// launches; `.gpu` stops at its device, `.sys` does not.
    #[test]
    fn a_group_of_launches_indexes_every_cta_and_scopes_stop_at_their_device() {
        let space = CtaSpace::new([([2, 2, 1], [2, 1, 1], 1, Vec::new()), ([3, 1, 1], ONE, 0, Vec::new())]);
        assert_eq!(space.total(), 7);
        assert_eq!((space.ctaid(3), space.ctaid(4), space.ctaid(6)), ([1, 1, 0], [0, 0, 0], [2, 0, 0]));
        assert!(space.same_cluster(2, 3) && !space.same_cluster(1, 2) && !space.same_cluster(3, 4));
        assert!(space.same_device(0, 3) && !space.same_device(3, 4));
        assert!(reaches(MemScope::Gpu, false, false, true) && !reaches(MemScope::Gpu, false, false, false));
        assert!(reaches(MemScope::Sys, false, false, false) && !reaches(MemScope::Cluster, false, false, true));
    }

    #[test]
    fn a_release_read_by_an_acquire_orders_the_data_and_a_relaxed_store_does_not() {
        assert!(handoff(AtomSem::Release, false, AtomSem::Acquire).is_empty());
        assert!(handoff(AtomSem::Relaxed, true, AtomSem::Acquire).is_empty(), "fence then relaxed store");
        let c = handoff(AtomSem::Relaxed, false, AtomSem::Acquire);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(matches!(c[0].why, Why::Flag(FlagRead { how: StoreHow::Relaxed, .. })), "{c:?}");
        let c = handoff(AtomSem::Release, false, AtomSem::Relaxed);
        assert!(
            matches!(c[0].why, Why::Flag(FlagRead { load_sem: AtomSem::Relaxed, fenced_after: false, .. })),
            "{c:?}"
        );
    }

    #[test]
    fn a_read_overwritten_in_the_same_epoch_by_another_cluster_is_a_conflict() {
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        let found = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            assert!(v[0].data_write(0, 0x100, 4, 1).is_none());
            assert!(v[1].data_read(0, 0x100, 4, 2, Proxy::Generic).is_none(), "it reads the value before the write");
            Vec::new()
        });
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].kind == ConflictKind::ReadAfterWrite && found[0].own == [1, 0, 0] && found[0].other == [0, 0, 0]
        );
    }

    #[test]
    fn two_writes_of_one_byte_by_different_ctas_need_an_edge_between_them() {
        // In one epoch, two clusters: found at the second cluster's commit.
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        let found = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            assert!(v[0].data_write(0, 0x100, 4, 1).is_none());
            assert!(v[1].data_write(0, 0x102, 4, 2).is_none(), "the views do not see each other");
            Vec::new()
        });
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].kind, found[0].own, found[0].other, found[0].pc),
            (ConflictKind::WriteAfterWrite, [1, 0, 0], [0, 0, 0], 2)
        );
        // Across epochs: found at the write.
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        assert!(
            epoch(&mut o, &mut [&mut a, &mut b], |v| v[0].data_write(0, 0x100, 4, 1).into_iter().collect()).is_empty()
        );
        let found = epoch(&mut o, &mut [&mut a, &mut b], |v| v[1].data_write(0, 0x100, 1, 2).into_iter().collect());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].kind, found[0].other_pc), (ConflictKind::WriteAfterWrite, 1));
        // A release by the first writer acquired by the second orders them.
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        let first = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            let w = v[0].data_write(0, 0x100, 4, 1);
            v[0].flag_store(0, 0x200, AtomSem::Release, MemScope::Gpu, 2);
            w.into_iter().collect()
        });
        let second = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            v[1].flag_load(0, 0x200, AtomSem::Acquire, MemScope::Gpu, 3);
            v[1].data_write(0, 0x100, 4, 4).into_iter().collect()
        });
        assert!(first.is_empty() && second.is_empty(), "{first:?} {second:?}");
        // The same CTA writing twice is ordered by program order.
        let (o, mut a, mut b) = two();
        let mut o = Arc::new(o);
        let found = epoch(&mut o, &mut [&mut a, &mut b], |v| {
            v[0].data_write(0, 0x100, 4, 1).into_iter().chain(v[0].data_write(0, 0x100, 4, 2)).collect()
        });
        assert!(found.is_empty(), "{found:?}");
    }
}
