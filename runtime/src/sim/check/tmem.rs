//! Happens-before for tensor memory (`tcgen05`), after PTX ISA 9.7.16.6 ("Memory Consistency
//! Model for 5th generation of TensorCore operations").
//!
//! Every cell (lane, column) of a CTA's tensor memory remembers its last writing and last
//! reading *access*: one asynchronous tcgen05 operation (an MMA, copy or shift issued by one
//! thread; or one thread's part of a warp's `tcgen05.ld/st`). A later access must be ordered
//! after the earlier one, and the ISA's rules for that are specific:
//!
//! - "Pipelined tcgen05 instructions": an MMA after an MMA, copy or shift, and a shift after an
//!   MMA, "execute in the same order as the instructions that issued them" — in one thread by
//!   program order, across threads once the issue is ordered (`fence::before_thread_sync` +
//!   a thread sync + `fence::after_thread_sync`).
//! - "`tcgen05.commit` is used to track the completion" of MMAs, copies and shifts: a later
//!   non-pipelined access (a `tcgen05.ld` of the accumulator) must be ordered after a *commit*
//!   arrival's barrier phase — "reading TMEM before the commit's barrier phase completed" is a
//!   race. `tcgen05.wait::ld`/`::st` complete a thread's loads and stores.
//! - "The `tcgen05.fence::before_thread_sync` and `tcgen05.fence::after_thread_sync` composes
//!   with execution ordering instructions ... to establish an ordering between the `tcgen05`
//!   operations across threads": a thread's completed loads/stores are published by its
//!   `before_thread_sync` fence (a commit implies it for MMAs: "No explicit
//!   `tcgen05.fence::before_thread_sync` is needed as this is implicitly performed by
//!   `tcgen05.commit`"), and what a thread acquired through a wait or barrier orders its
//!   later asynchronous tcgen05 ops only after a `tcgen05.fence::after_thread_sync`.
//!
//! So each thread has, besides its vector clock, a *tcgen05 view*: its clock as of its last
//! `after_thread_sync` fence. An earlier access is ordered before a new one when one of its
//! publication epochs is covered by the new access's view. Covered by the clock but not by the
//! view: a missing `after_thread_sync`. A completed load/store of another thread that the clock
//! covers but no fence published: a missing `before_thread_sync`.

use super::Issue;
use crate::report::finding::Category;
use crate::sim::engine::memory::SmemLayout;

/// What a tensor-memory access is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TmemKind {
    Mma,
    Cp,
    Shift,
    Ld,
    St,
    Dealloc,
}

impl TmemKind {
    fn name(self) -> &'static str {
        match self {
            TmemKind::Mma => "tcgen05.mma",
            TmemKind::Cp => "tcgen05.cp",
            TmemKind::Shift => "tcgen05.shift",
            TmemKind::Ld => "tcgen05.ld",
            TmemKind::St => "tcgen05.st",
            TmemKind::Dealloc => "tcgen05.dealloc",
        }
    }
    /// Run by the tensor core and completed through `tcgen05.commit`.
    pub(crate) fn is_agent(self) -> bool {
        matches!(self, TmemKind::Mma | TmemKind::Cp | TmemKind::Shift)
    }
    /// Whether `later` executes in order after `self` once the issues are ordered (PTX ISA
    /// 9.7.16.6.2: mma->mma, cp->mma, shift->mma, shift->cp, mma->shift).
    fn pipelines_into(self, later: TmemKind) -> bool {
        matches!(
            (self, later),
            (TmemKind::Mma | TmemKind::Cp | TmemKind::Shift, TmemKind::Mma)
                | (TmemKind::Shift, TmemKind::Cp)
                | (TmemKind::Mma, TmemKind::Shift)
        )
    }
}

/// A rectangle of one CTA's tensor memory an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub cta: usize,
    pub lane0: u32,
    pub lanes: u32,
    pub col0: u32,
    pub cols: u32,
    pub read: bool,
    pub write: bool,
}

/// An epoch that publishes an access: a barrier phase a commit arrived on (`completion`), or
/// a thread's clock at its `before_thread_sync` fence (which orders only the issue of an MMA,
/// copy or shift, and the completion of a waited load or store).
#[derive(Clone, Copy, Debug)]
struct Publisher {
    cta: Option<usize>,
    component: u32,
    clock: u32,
    completion: bool,
    /// The barrier (for messages), if a commit published it.
    bar: Option<(usize, u32)>,
}

struct Access {
    by: u32,
    kind: TmemKind,
    pc: u32,
    /// The issuer's own clock when it issued the access.
    clock: u32,
    /// Complete: the tensor core ran it, or the issuer's `tcgen05.wait` returned.
    done: bool,
    publishers: Vec<Publisher>,
    /// Cells whose last read or write is this access.
    refs: u32,
}

/// Why an earlier access is not ordered before a later one.
enum Unordered {
    InFlight,
    MissingAfterFence(Publisher),
    MissingBeforeFence,
    Race,
}

/// The tensor-memory part of the checker's state.
pub(crate) struct TmemShadow {
    threads_per_cta: u32,
    ctas: usize,
    /// Per CTA: (last write, last read) access per cell, `lane * 512 + column`; allocated at
    /// the first access.
    cells: Vec<Vec<[u32; 2]>>,
    /// Accesses by id (0: none).
    accesses: Vec<Access>,
    /// Per thread: its MMAs, copies and shifts that cells still refer to (what its next
    /// commit publishes: "all prior async-tcgen05 operations initiated by the executing
    /// thread").
    agent_live: Vec<Vec<u32>>,
    /// Per thread: its loads and stores not yet published by a `before_thread_sync` fence.
    unpublished: Vec<Vec<u32>>,
    /// Per thread: its clock at its last `after_thread_sync` fence.
    view: Vec<Vec<u32>>,
    locs: Vec<Option<phaser_codegen::SourceLoc>>,
    layout: SmemLayout,
}

const COLS: u32 = phaser_codegen::arch::tcgen05::TMEM_COLUMNS;
const LANES: u32 = phaser_codegen::arch::tcgen05::TMEM_LANES;

/// An earlier access a new one may be unordered with: its index, and whether it wrote.
#[derive(Clone, Copy)]
struct Prior {
    index: u32,
    was_write: bool,
}

impl TmemShadow {
    pub(crate) fn new(
        threads: usize,
        threads_per_cta: u32,
        ctas: usize,
        layout: &SmemLayout,
        locs: &[Option<phaser_codegen::SourceLoc>],
    ) -> TmemShadow {
        TmemShadow {
            threads_per_cta,
            ctas,
            cells: vec![Vec::new(); ctas],
            accesses: vec![Access {
                by: 0,
                kind: TmemKind::Ld,
                pc: 0,
                clock: 0,
                done: true,
                publishers: Vec::new(),
                refs: 0,
            }],
            agent_live: vec![Vec::new(); threads],
            unpublished: vec![Vec::new(); threads],
            view: vec![Vec::new(); threads],
            locs: locs.to_vec(),
            layout: layout.clone(),
        }
    }

    fn who(&self, t: u32) -> String {
        if self.ctas > 1 {
            format!("thread {} of CTA rank {}", t % self.threads_per_cta, t / self.threads_per_cta)
        } else {
            format!("thread {}", t % self.threads_per_cta)
        }
    }

    fn at(&self, pc: u32) -> String {
        self.locs.get(pc as usize).copied().flatten().map(|l| format!(" at {l}")).unwrap_or_default()
    }

    fn bar_name(&self, (cta, off): (usize, u32)) -> String {
        let (name, index) = self.layout.name_of(off);
        crate::report::finding::BarrierRef { name, index, offset: off, cta_rank: cta as u32 }.to_string()
    }

    /// `tcgen05.fence::after_thread_sync` by `t`: its later tcgen05 ops are ordered after
    /// everything its clock has acquired.
    pub(crate) fn fence_after(&mut self, t: u32, row: &[u32]) {
        let v = &mut self.view[t as usize];
        v.clear();
        v.extend_from_slice(row);
    }

    /// `tcgen05.fence::before_thread_sync` by `t` at its own clock `clock`: its completed loads
    /// and stores, and the issue of its MMAs, copies and shifts, are published at `clock`.
    pub(crate) fn fence_before(&mut self, t: u32, clock: u32) {
        let p = Publisher { cta: None, component: t, clock, completion: true, bar: None };
        let mut keep = Vec::new();
        for id in std::mem::take(&mut self.unpublished[t as usize]) {
            let a = &mut self.accesses[id as usize];
            if a.done {
                a.publishers.push(p);
            } else {
                keep.push(id);
            }
        }
        self.unpublished[t as usize] = keep;
        for &id in &self.agent_live[t as usize] {
            self.accesses[id as usize].publishers.push(Publisher { completion: false, ..p });
        }
    }

    /// `tcgen05.wait::ld` (`st`: `::st`) by `t`: its earlier loads (stores) are complete.
    pub(crate) fn waited(&mut self, t: u32, st: bool) {
        let want = if st { TmemKind::St } else { TmemKind::Ld };
        for &id in &self.unpublished[t as usize] {
            let a = &mut self.accesses[id as usize];
            if a.kind == want {
                a.done = true;
            }
        }
    }

    /// The tensor core finished access `id`.
    pub(crate) fn completed(&mut self, id: u32) {
        if let Some(a) = self.accesses.get_mut(id as usize) {
            a.done = true;
        }
    }

    /// What thread `t`'s commit tracks: its live MMAs, copies and shifts.
    pub(crate) fn commit_tracks(&mut self, t: u32) -> Vec<u32> {
        let accesses = &self.accesses;
        self.agent_live[t as usize].retain(|&id| accesses[id as usize].refs > 0);
        self.agent_live[t as usize].clone()
    }

    /// A commit's arrival on barrier `bar` of `cta` published `ids` at epoch
    /// (`component`, `clock`) for the cells of `cta`.
    pub(crate) fn published(&mut self, ids: &[u32], cta: usize, bar: (usize, u32), component: u32, clock: u32) {
        let p = Publisher { cta: Some(cta), component, clock, completion: true, bar: Some(bar) };
        for &id in ids {
            if let Some(a) = self.accesses.get_mut(id as usize) {
                a.publishers.push(p);
            }
        }
    }

    fn check(&self, id: u32, t: u32, cta: usize, kind: TmemKind, row: &[u32]) -> Result<(), Unordered> {
        let y = &self.accesses[id as usize];
        let pipelined = y.kind.pipelines_into(kind);
        if y.by == t {
            // Program order, completed loads/stores (`tcgen05.wait`), and pipelined pairs.
            if pipelined || (!y.kind.is_agent() && y.done) {
                return Ok(());
            }
        }
        if !pipelined && !y.done {
            return Err(Unordered::InFlight);
        }
        let view = &self.view[t as usize];
        let usable = |p: &&Publisher| (p.completion || pipelined) && p.cta.is_none_or(|c| c == cta);
        let covered = |v: &[u32], p: &Publisher| v.get(p.component as usize).is_some_and(|&c| c >= p.clock);
        if kind == TmemKind::Dealloc {
            // `tcgen05.dealloc` is synchronous: no `after_thread_sync` needed.
            if y.publishers.iter().filter(usable).any(|p| covered(row, p)) {
                return Ok(());
            }
        } else if y.publishers.iter().filter(usable).any(|p| covered(view, p)) {
            return Ok(());
        } else if let Some(p) = y.publishers.iter().filter(usable).find(|p| covered(row, p)) {
            return Err(Unordered::MissingAfterFence(*p));
        }
        if !y.kind.is_agent() && y.done && row.get(y.by as usize).is_some_and(|&c| c >= y.clock) {
            return Err(Unordered::MissingBeforeFence);
        }
        Err(Unordered::Race)
    }

    fn describe(&self, r: &Region) -> String {
        let lanes = if r.lanes == 1 {
            format!("lane {}", r.lane0)
        } else {
            format!("lanes {}-{}", r.lane0, r.lane0 + r.lanes - 1)
        };
        let cols = if r.cols == 1 {
            format!("column {}", r.col0)
        } else {
            format!("columns {}-{}", r.col0, r.col0 + r.cols - 1)
        };
        let cta = if self.ctas > 1 { format!(" of CTA rank {}", r.cta) } else { String::new() };
        format!("tensor memory {lanes}, {cols}{cta}")
    }

    fn issue(
        &self,
        t: u32,
        kind: TmemKind,
        pc: u32,
        r: &Region,
        Prior { index: prior, was_write }: Prior,
        why: Unordered,
    ) -> Issue {
        let y = &self.accesses[prior as usize];
        let verb = match kind {
            TmemKind::Dealloc => "frees",
            _ if r.write && !r.read => "writes",
            _ if r.write => "accumulates into",
            _ => "reads",
        };
        let prior_what = format!(
            "the {} {} by {}{}",
            y.kind.name(),
            if was_write { "write" } else { "read" },
            self.who(y.by),
            self.at(y.pc)
        );
        let (category, why) = match why {
            Unordered::InFlight => (
                Category::TmemRace,
                format!(
                    "{prior_what}, which is still in flight: {}",
                    if y.kind.is_agent() {
                        "nothing waited for the barrier phase its tcgen05.commit arrives on (reading TMEM before the commit's barrier phase completed)"
                    } else {
                        "its thread has not executed tcgen05.wait for it"
                    }
                ),
            ),
            Unordered::MissingAfterFence(p) => (
                Category::Tcgen05Fence,
                format!(
                    "{prior_what}: this thread is ordered after it only by a thread synchronization{} with no \
                     `tcgen05.fence::after_thread_sync` between that synchronization and this {} (PTX ISA 9.7.16.6.3: \
                     \"An asynchronous tcgen05 operation subsequent to a tcgen05.fence::after_thread_sync is ordered \
                     after all the prior tcgen05 and the execution ordering operations\")",
                    p.bar.map(|b| format!(" (a wait on {})", self.bar_name(b))).unwrap_or_default(),
                    kind.name()
                ),
            ),
            Unordered::MissingBeforeFence => (
                Category::Tcgen05Fence,
                format!(
                    "{prior_what}, which {} completed but never published with `tcgen05.fence::before_thread_sync` \
                     before the thread synchronization that orders it before this {} (PTX ISA 9.7.16.6.4: \
                     `tcgen05.wait::ld; tcgen05.fence::before_thread_sync; mbarrier.arrive`)",
                    self.who(y.by),
                    kind.name()
                ),
            ),
            Unordered::Race => (
                Category::TmemRace,
                if y.kind.is_agent() {
                    format!(
                        "{prior_what}, which is not ordered before it: no wait on a barrier phase that a tcgen05.commit \
                         tracking it arrived on (reading TMEM before the commit's barrier phase completed)"
                    )
                } else {
                    format!("{prior_what}, which is not ordered before it (no thread synchronization between them)")
                },
            ),
        };
        let message = format!("{} {verb} {} ({}), conflicting with {why}", self.who(t), self.describe(r), kind.name());
        Issue {
            category,
            cta: (t / self.threads_per_cta) as usize,
            thread: Some(t),
            barrier: None,
            phase: None,
            pc: Some(pc),
            message,
        }
    }

    /// Thread `t` issues an access of `kind` to `regions` at `pc` with clock `row`: the first
    /// earlier access it is not ordered after, and the access's id.
    pub(crate) fn access(
        &mut self,
        t: u32,
        kind: TmemKind,
        regions: &[Region],
        pc: u32,
        row: &[u32],
    ) -> (u32, Option<Issue>) {
        let id = self.accesses.len() as u32;
        let mut found = None;
        let mut checked: Vec<u32> = Vec::new();
        for r in regions {
            if self.cells[r.cta].is_empty() {
                self.cells[r.cta] = vec![[0, 0]; (LANES * COLS) as usize];
            }
            for lane in r.lane0..(r.lane0 + r.lanes).min(LANES) {
                for col in r.col0..(r.col0 + r.cols).min(COLS) {
                    let [w, rd] = self.cells[r.cta][(lane * COLS + col) as usize];
                    let mut look = |prior: u32, was_write: bool, found: &mut Option<Issue>| {
                        if prior == 0 || checked.contains(&prior) {
                            return;
                        }
                        checked.push(prior);
                        if found.is_none() {
                            if let Err(why) = self.check(prior, t, r.cta, kind, row) {
                                *found = Some(self.issue(t, kind, pc, r, Prior { index: prior, was_write }, why));
                            }
                        }
                    };
                    look(w, true, &mut found);
                    if r.write || kind == TmemKind::Dealloc {
                        look(rd, false, &mut found);
                    }
                }
            }
        }
        if kind == TmemKind::Dealloc {
            // Freed cells forget their accesses.
            for r in regions {
                for lane in r.lane0..(r.lane0 + r.lanes).min(LANES) {
                    for col in r.col0..(r.col0 + r.cols).min(COLS) {
                        let i = (lane * COLS + col) as usize;
                        let old = std::mem::take(&mut self.cells[r.cta][i]);
                        for o in old {
                            if o != 0 {
                                self.accesses[o as usize].refs -= 1;
                            }
                        }
                    }
                }
            }
            return (0, found);
        }
        self.accesses.push(Access {
            by: t,
            kind,
            pc,
            clock: row[t as usize],
            done: false,
            publishers: Vec::new(),
            refs: 0,
        });
        for r in regions {
            for lane in r.lane0..(r.lane0 + r.lanes).min(LANES) {
                for col in r.col0..(r.col0 + r.cols).min(COLS) {
                    let i = (lane * COLS + col) as usize;
                    let cell = self.cells[r.cta][i];
                    let set = |slot: usize, accesses: &mut Vec<Access>, cells: &mut Vec<[u32; 2]>| {
                        let old = cell[slot];
                        if old == id {
                            return;
                        }
                        if old != 0 {
                            accesses[old as usize].refs -= 1;
                        }
                        accesses[id as usize].refs += 1;
                        cells[i][slot] = id;
                    };
                    if r.write {
                        set(0, &mut self.accesses, &mut self.cells[r.cta]);
                        // A write supersedes the reads before it.
                        let rd = self.cells[r.cta][i][1];
                        if rd != 0 && rd != id {
                            self.accesses[rd as usize].refs -= 1;
                            self.cells[r.cta][i][1] = 0;
                        }
                    }
                    if r.read && !r.write {
                        set(1, &mut self.accesses, &mut self.cells[r.cta]);
                    }
                }
            }
        }
        if kind.is_agent() {
            self.agent_live[t as usize].push(id);
        } else {
            self.unpublished[t as usize].push(id);
        }
        (id, found)
    }
}
