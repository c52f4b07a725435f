//! The step mode: instead of rounds in which every warp runs a quantum, each round runs one
//! actor the step chooser names (`chooser.rs`): a warp (it wakes what its waits allow, runs
//! its thread-local instructions and at most one instruction other actors can observe) or an
//! async op (one piece of a copy lands, or the op completes). What each step touched is
//! recorded for the explorer's partial-order reduction (`sim/explore/footprint.rs`).
//!
//! Lanes of one warp run together where they agree (one representative step for a
//! warp-uniform instruction); lane groups of a diverged warp run lowest program counter first.

use crate::error::{Result, RuntimeError};
use crate::report::schedule::Actor;
use crate::sim::agents::async_op::{box_global_span, AsyncKind, LoadSrc, StoreDst};
use crate::sim::check::Checker;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::run_loop::RoundEnd;
use crate::sim::engine::warp::{lanes, WaitFor};
use crate::sim::explore::footprint::{Footprint, Object};
use crate::tensor_map::Swizzle;
use phaser_codegen::ir::{
    Access, BarrierAction, GroupAction, Inst, MbarrierOp, MemSpace, MemoryOp, SideEffect, Space, SyncEffect,
};

/// Warp-instructions one step may run without an instruction other actors observe (a loop
/// of arithmetic is cut into steps of this size; the grid's progress check still sees it).
const STEP_BUDGET: u32 = 4096;

/// What the running step touched, filled in by the engine's hooks.
#[derive(Default)]
pub(crate) struct StepRecord {
    /// Shared-memory bytes resolved (addresses of accesses and barriers), `(cta, off, len)`.
    pub shared: Vec<(usize, u32, u32)>,
    /// The slow-path instruction the warp ran (an index into `Program::slow`) and its lanes.
    pub slow: Option<(u32, u32)>,
    /// The plain count-down steps on mbarriers (`Object::MbarArrival`), and the mbarriers the
    /// step changed otherwise (`changed`: raised the tx-count, overflowed, dropped, passed the
    /// tx-count below 0, an arrival whose token's count is read): those write the barrier.
    pub count_downs: Vec<CountDown>,
    pub changed: Vec<(usize, u32)>,
    /// Mbarriers a copy was issued on (what the issue read of them, `CopyIssue`).
    pub copy_issues: Vec<CopyIssue>,
    /// Mbarriers a wait or probe passed on, with the completed phase it observed (`-1`: the
    /// phase before phase 0): it reads `Object::MbarPhase` and acquires that phase's arrivals.
    pub observed: Vec<(usize, u32, i64)>,
    /// Arrivals (one per lane) and exits counted toward rounds of the cluster barrier.
    pub cluster: Vec<ClusterTouch>,
    /// A `barrier.cluster.wait` of a thread that had not arrived: it waits for the current
    /// round, so it read the barrier's generation (every `Object::ClusterRound`).
    pub cluster_generation_read: bool,
    /// Global bytes `(addr, len)` of the step's thread accesses (`ld`, `st` and their vector
    /// forms): a weak access touches only these (`Object::GlobalRange`).
    pub global: Vec<(u64, u32)>,
    /// Named-barrier rounds arrived on (or an exit counted toward), one per lane.
    pub named: Vec<NamedTouch>,
    /// Tensor-core registers were touched: dependent with everything.
    pub opaque: bool,
    /// Lanes exited (they count toward the CTA's named barriers and the cluster barrier).
    pub exited: bool,
    /// The CTA's last threads exited (its end-of-CTA checks: copies still landing in it,
    /// remote accesses, tensor memory).
    pub cta_ended: bool,
    /// The async ops the step issued.
    pub spawned: Vec<Actor>,
    /// An async op's step: what kind of op (the explorer's race counts name it).
    pub agent_kind: &'static str,
    /// Wgmmas `(warp, id)` whose results a `wgmma.wait_group` retired.
    pub wgmma_retired: Vec<(usize, u32)>,
    /// Warp parts `(warp, seq)` of `wgmma.mma_async`s issued (`Object::WgmmaPart`).
    pub wgmma_parts: Vec<(usize, u64)>,
    /// What a `setmaxnreg` did to the CTA's register pool (`None`: no `setmaxnreg`, or the
    /// pool is not modelled).
    pub register_pool: Option<PoolStep>,
    /// The warp's step woke lanes while others could run, or lanes waiting on different
    /// things: some of its work could have run earlier, so none of its acquires is
    /// `Footprint::after`.
    pub mixed_wake: bool,
}

/// What a `setmaxnreg` step did to its CTA's register pool (`Object::RegisterTake`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolStep {
    /// A `.dec` to at most what the warp held: it only frees registers.
    Freed,
    /// The warp's count rose or stayed: an `.inc` that fit, or a `.dec` above what the warp
    /// held (not checked against the pool).
    Took,
    /// An `.inc` that did not fit: its lanes wait (their wake is the take).
    Blocked,
    /// An `.inc` to fewer registers than the warp held, or lanes that did different things.
    Other,
}

/// A plain count-down step on the mbarrier at `(cta, off)` in phase `phase` (see
/// `Object::MbarArrival`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CountDown {
    pub cta: usize,
    pub off: u32,
    pub phase: u64,
    /// The step completed the phase.
    pub completed: bool,
}

/// A copy issued on the mbarrier at `(cta, off)` in phase `phase`. The issue changes nothing
/// of the barrier: it reads its phase (the bare-arrival check looks at the completed phase,
/// and a phase completing with the copy in flight is a finding), and, only where that check
/// may fire (`Barrier::completed_bare_with_arrival_of`), whether the current phase is still
/// untouched, i.e. its count-down steps (`reads_count`). So a copy's issue commutes with the
/// pieces of the other copies of its phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CopyIssue {
    pub cta: usize,
    pub off: u32,
    pub phase: u64,
    pub reads_count: bool,
}

/// One lane's arrival (or exit) counted toward a round of a named barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NamedTouch {
    pub cta: usize,
    pub id: u8,
    /// The round (the barrier's generation) the arrival counted toward.
    pub round: u64,
    /// The round waits for the whole CTA, so exited threads count toward it.
    pub counts_exits: bool,
    /// The arrival completed the round (else it only counted).
    pub completed: bool,
}

/// A lane's arrival, or a warp's exit while arrivals were pending, counted toward round
/// `round` of the cluster barrier (`Object::ClusterArrival`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClusterTouch {
    pub round: u64,
    /// An arrival (else an exit): an arrival reads every exit, which counts toward its round.
    pub arrival: bool,
    /// It completed the round (else it only counted).
    pub completed: bool,
}

/// The step mode's state of a cluster.
#[derive(Default)]
pub(crate) struct StepState {
    /// Per warp: async ops issued so far (their names, `a<warp>.<n>`).
    pub async_issued: Vec<u32>,
    /// Per warp: parked at this progress mark (its last step only failed a poll), so it does
    /// not poll again before something else happened.
    pub parked: Vec<Option<u64>>,
    /// Steps that did something besides failing a poll.
    pub progress: u64,
    /// Steps taken.
    pub taken: u64,
    /// The chooser ended the execution early: the end-of-kernel checks do not apply.
    pub cut: bool,
    /// Back edges taken per `(loop start, warp)`, per lane: each loop's trip counts.
    pub trips: std::collections::HashMap<(u32, usize), [u32; 32]>,
}

impl StepState {
    /// Lanes `mask` of warp `wi` took the back edge to the loop starting at `start`.
    pub fn count_trip(&mut self, wi: usize, start: u32, mask: u32) {
        let counts = self.trips.entry((start, wi)).or_insert([0; 32]);
        lanes(mask).for_each(|l| counts[l] += 1);
    }
}

impl<C: Checker> Engine<'_, C> {
    /// Record that the running step (if the engine runs steps) resolved shared bytes
    /// `[off, off + len)` of CTA `cta`.
    #[inline]
    pub fn touch_shared(&mut self, cta: usize, off: u32, len: u32) {
        if let Some(s) = &mut self.step {
            s.shared.push((cta, off, len));
        }
    }

    /// Record that the running step counted mbarrier `(cta, off)` down in phase `phase`, a
    /// plain arrival or piece (`Object::MbarArrival`), and whether that completed the phase.
    #[inline]
    pub fn touch_count_down(&mut self, cta: usize, off: u32, phase: u64, completed: bool) {
        if let Some(s) = &mut self.step {
            s.count_downs.push(CountDown { cta, off, phase, completed });
        }
    }

    /// Record what a `setmaxnreg` lane of the running step did to its CTA's register pool.
    #[inline]
    pub fn touch_register_pool(&mut self, step: PoolStep) {
        if let Some(s) = &mut self.step {
            s.register_pool = Some(match s.register_pool {
                Some(before) if before != step => PoolStep::Other,
                Some(_) | None => step,
            });
        }
    }

    /// Record that the running step issued a copy completing on an mbarrier.
    #[inline]
    pub fn touch_copy_issue(&mut self, issue: CopyIssue) {
        if let Some(s) = &mut self.step {
            s.copy_issues.push(issue);
        }
    }

    /// Record that a wait or probe of the running step passed on mbarrier `(cta, off)`,
    /// observing completed phase `observed`.
    #[inline]
    pub fn touch_observed(&mut self, cta: usize, off: u32, observed: i64) {
        if let Some(s) = &mut self.step {
            s.observed.push((cta, off, observed));
        }
    }

    /// Record that the running step changed mbarrier `(cta, off)` beyond counting an arrival
    /// (its tx-count, its phase, an overflow, a drop).
    #[inline]
    pub fn touch_changed(&mut self, cta: usize, off: u32) {
        if let Some(s) = &mut self.step {
            s.changed.push((cta, off));
        }
    }

    /// Record that the running step retired wgmma `mma` of warp `wi` (`Object::WgmmaDone`).
    #[inline]
    pub fn touch_wgmma_retired(&mut self, wi: usize, mma: u32) {
        if let Some(s) = &mut self.step {
            s.wgmma_retired.push((wi, mma));
        }
    }

    /// Record that warp `wi` issued its part of its `seq`-th `wgmma.mma_async`.
    #[inline]
    pub fn touch_wgmma_part(&mut self, wi: usize, seq: u64) {
        if let Some(s) = &mut self.step {
            s.wgmma_parts.push((wi, seq));
        }
    }

    /// Record that the running step counted toward a round of the cluster barrier.
    #[inline]
    pub fn touch_cluster(&mut self, touch: ClusterTouch) {
        if let Some(s) = &mut self.step {
            s.cluster.push(touch);
        }
    }

    /// Record that a `barrier.cluster.wait` of the running step read the barrier's generation.
    #[inline]
    pub fn touch_cluster_generation(&mut self) {
        if let Some(s) = &mut self.step {
            s.cluster_generation_read = true;
        }
    }

    /// Record that a thread access of the running step touched global bytes `[addr, addr + len)`.
    #[inline]
    pub fn touch_global(&mut self, addr: u64, len: u32) {
        if let Some(s) = &mut self.step {
            s.global.push((addr, len));
        }
    }

    /// Record that the running step arrived on a round of a named barrier (or exited while a
    /// whole-CTA round had arrivals pending).
    #[inline]
    pub fn touch_named(&mut self, touch: NamedTouch) {
        if let Some(s) = &mut self.step {
            s.named.push(touch);
        }
    }

    /// The execution's loop trip counts, `(loop's line, loop start, warp, iterations)`: a
    /// warp's count is its lanes' most.
    pub(crate) fn loop_trips(&self) -> Vec<(Option<phaser_codegen::SourceLoc>, u32, u32, u32)> {
        let mut out: Vec<_> = self
            .steps
            .trips
            .iter()
            .map(|(&(start, wi), lanes)| {
                let loc = self.cx.program.loops.iter().find(|lp| lp.start == start).and_then(|lp| lp.loc);
                (loc, start, wi as u32, lanes.iter().copied().max().unwrap_or(0))
            })
            .collect();
        out.sort_by_key(|&(_, start, wi, _)| (start, wi));
        out
    }

    /// The step-schedule name of an async op `issuer` issues now.
    pub(crate) fn name_async_op(&mut self, issuer: u32) -> Actor {
        let (wi, _) = self.warp_of(issuer);
        let issued = &mut self.steps.async_issued;
        if issued.len() < self.exec.warps.len() {
            issued.resize(self.exec.warps.len(), 0);
        }
        let actor = Actor::Agent { warp: wi as u32, seq: issued[wi] };
        issued[wi] += 1;
        if let Some(s) = &mut self.step {
            s.spawned.push(actor);
        }
        actor
    }

    /// Whether warp `wi` can take a step: a lane can run, or may wake, and it is not parked.
    fn warp_enabled(&self, wi: usize) -> bool {
        let w = &self.exec.warps[wi];
        if w.live() == 0 || self.steps.parked.get(wi).copied().flatten() == Some(self.steps.progress) {
            return false;
        }
        w.runnable != 0 || lanes(w.blocked).any(|l| self.wait_done(wi, l))
    }

    /// The actors that can take a step now, sorted.
    fn enabled_actors(&self) -> Vec<Actor> {
        let mut out: Vec<Actor> =
            (0..self.exec.warps.len()).filter(|&wi| self.warp_enabled(wi)).map(|wi| Actor::Warp(wi as u32)).collect();
        for i in 0..self.async_ops.in_flight.len() {
            if self.async_op_ready(i) {
                out.push(self.async_ops.in_flight[i].actor);
            }
        }
        out.sort();
        out
    }

    /// One step-mode round.
    pub fn step_round(&mut self) -> Result<RoundEnd> {
        if self.abort || (self.exec.live_threads == 0 && self.async_ops.in_flight.is_empty()) {
            return Ok(RoundEnd::Finished);
        }
        self.time.round += 1;
        let enabled = self.enabled_actors();
        if enabled.is_empty() {
            // Lanes waiting for their global atomics go on at the epoch's end.
            if !self.global.atomics.is_empty() || self.timeout_try_waits() {
                return Ok(RoundEnd::Running);
            }
            let spinning = self
                .steps
                .parked
                .iter()
                .enumerate()
                .any(|(wi, p)| p.is_some_and(|at| at == self.steps.progress) && self.exec.warps[wi].live() != 0);
            self.report_deadlock(spinning);
            return Ok(RoundEnd::Finished);
        }
        let stepper = self.sched.stepper().expect("the step mode has a step chooser");
        let actor = match stepper.next(&enabled) {
            Ok(Some(a)) => a,
            Ok(None) => {
                self.steps.cut = true;
                self.abort = true;
                return Ok(RoundEnd::Finished);
            }
            Err(problem) => {
                return Err(RuntimeError::InvalidSetting(phaser_codegen::InvalidSetting::new(
                    "SimConfig::schedule",
                    format!("step {}", self.steps.taken + 1),
                    problem,
                )))
            }
        };
        self.steps.taken += 1;
        self.step = Some(StepRecord::default());
        let footprint = match actor {
            Actor::Warp(wi) => self.warp_step(wi as usize)?,
            Actor::Agent { .. } => self.agent_step(actor)?,
        };
        let record = self.step.take().unwrap_or_default();
        let mut footprint = footprint;
        if record.mixed_wake {
            footprint.after.clear();
        }
        let kind = match (actor, record.slow) {
            (Actor::Agent { .. }, _) => record.agent_kind,
            (Actor::Warp(_), Some((slow, _))) => self.cx.program.slow[slow as usize].variant_name(),
            (Actor::Warp(_), None) if record.exited => "exit",
            (Actor::Warp(_), None) => "wake or local",
        };
        self.sched.stepper().expect("the step mode has a step chooser").done(footprint, record.spawned, kind);
        Ok(RoundEnd::Running)
    }

    /// Warp `wi` wakes what it can and runs up to one observable instruction.
    fn warp_step(&mut self, wi: usize) -> Result<Footprint> {
        let mut fp = Footprint { warp_cta: Some(self.exec.warps[wi].cta), ..Footprint::default() };
        let cta = self.exec.warps[wi].cta;
        let (blocked, runnable) = (self.exec.warps[wi].blocked, self.exec.warps[wi].runnable);
        let waits: Vec<(usize, Option<Object>)> = lanes(blocked).map(|l| (l, self.wait_object(wi, l))).collect();
        let waiting_for: Vec<WaitFor> = lanes(blocked).map(|l| self.exec.warps[wi].wait[l]).collect();
        self.wake(wi);
        // What a woken lane's wait read orders the step after the step it waited for. A lane
        // that stays blocked is not recorded: whether it wakes in this step of its warp or in
        // the next is the order of the warp's lane groups, fixed (`explore::FIXED_CHOICES`).
        let woken = blocked & !self.exec.warps[wi].blocked;
        // Its acquires are `Footprint::after` only if nothing of the step could have run before
        // what woke it: no lane was runnable, and every woken lane waited on the same thing.
        let mut woken_waits = lanes(blocked).zip(&waiting_for).filter(|(l, _)| woken & (1 << l) != 0).map(|(_, w)| w);
        let one_cause = woken_waits.next().is_none_or(|first| woken_waits.all(|o| o == first));
        if woken != 0 && (runnable != 0 || !one_cause) {
            self.step.as_mut().expect("a step is running").mixed_wake = true;
        }
        for (l, o) in waits {
            match o {
                _ if woken & (1 << l) == 0 => {}
                Some(o @ Object::AsyncOf { .. }) => fp.write(o),
                // A named barrier's waiter goes on after every arrival of its round.
                Some(o @ Object::NamedArrival { .. }) => fp.acquire_after(o),
                // A cluster barrier's waiter read its round's completion, and goes on after
                // every arrival of the round.
                Some(o @ Object::ClusterArrival { round, .. }) => {
                    fp.read(Object::ClusterRound { round: Some(round) });
                    fp.acquire_after(o);
                }
                // A `setmaxnreg.inc` that fits on waking is a take, decided on every take (one
                // that ran first may have taken the room).
                Some(o @ Object::RegisterTake { cta, .. }) => {
                    fp.write(o);
                    fp.read(Object::RegisterTake { cta, warp: None });
                    fp.read(Object::Registers { cta });
                }
                Some(o) => fp.read(o),
                None => {}
            }
        }
        let (polls, effects) = (self.time.polls_failed, self.time.slow_effects);
        self.run_warp(wi, STEP_BUDGET)?;
        // Parked only when its lanes spin: they failed the same poll twice with nothing else
        // in between (a single probe goes on, and its next step is a different one).
        let ran = self.step.as_ref().and_then(|s| s.slow).map_or(0, |(_, mask)| mask);
        let spins = ran != 0 && self.exec.warps[wi].spinning & ran == ran;
        let only_failed_polls = spins && self.time.polls_failed > polls && self.time.slow_effects == effects;
        if self.steps.parked.len() < self.exec.warps.len() {
            self.steps.parked.resize(self.exec.warps.len(), None);
        }
        if only_failed_polls {
            self.steps.parked[wi] = Some(self.steps.progress);
        } else {
            self.steps.progress += 1;
            self.steps.parked[wi] = None;
        }
        let record = self.step.as_ref().expect("a step is running");
        let barriers_only = self.cx.config.explore_barriers_only;
        // The wgmmas a `wait_group` retired (at its instruction or when its lanes woke): it
        // retires only completed wgmmas, so it follows each completion (`Object::WgmmaDone`).
        for &(w, mma) in &record.wgmma_retired {
            fp.acquire_after(Object::WgmmaDone { warp: w, mma });
        }
        // The warp's parts of wgmmas it issued, which their completions acquire.
        for &(w, seq) in &record.wgmma_parts {
            fp.write(Object::WgmmaPart { warp: w, seq });
        }
        // Wgmma registers in flight: anything, except in barriers-only mode, where what the
        // access is checked against (the warp's pending wgmmas) is the warp's own state: only
        // its own issues and `wait_group`s change it, and a completion only fills the results
        // its `wait_group` reads (`AsyncOf`).
        if record.opaque && !barriers_only {
            fp.write(Object::Everything);
            return Ok(fp);
        }
        // Exits only count up (the CTA's exited threads, the registers exited warps free for
        // `setmaxnreg`): each writes its own exit, which what decides on the exits reads (an
        // arrival on a barrier that counts exits), and reads the register pool, which only
        // frees commute on. The last exit ends the CTA (below): whichever warp exits last, the
        // CTA ends in the same state.
        if record.exited {
            fp.write(Object::Exited { cta, warp: Some(wi as u32) });
            fp.read(Object::Registers { cta });
        }
        // A named barrier's round (`Object::NamedArrival`): an arrival writes its own arrival
        // and reads the round before's, so a round's arrivals commute whichever completes it,
        // and one that could land in either of two rounds is ordered with the other round's;
        // the completing one writes the round's arrivals for the sleep sets (an actor asleep on
        // its arrival would now land in the next round); waiters acquire them on waking.
        // Exited threads count toward whole-CTA rounds, and toward every later round at once:
        // an arrival on such a round reads every exit (so it is ordered with each exit, and its
        // round's other arrivals still commute with it).
        let me = wi as u32;
        for t in &record.named {
            let (c, id, round) = (t.cta, t.id, t.round);
            if let Some(before) = round.checked_sub(1) {
                fp.read(Object::NamedArrival { cta: c, id, round: before, warp: None });
            }
            fp.write(Object::NamedArrival { cta: c, id, round, warp: Some(me) });
            if t.completed {
                fp.sleep_write(Object::NamedArrival { cta: c, id, round, warp: None });
            }
            if t.counts_exits {
                fp.read(Object::Exited { cta: c, warp: None });
            }
        }
        // An mbarrier's phase: the same rule (`Object::MbarArrival`).
        // A `test_wait` that saw a phase complete could have run before it (its observations
        // are acquires only, not `Footprint::after`).
        let probed = record.slow.is_some_and(|(slow, _)| {
            matches!(self.cx.program.slow[slow as usize], Inst::Mbarrier(MbarrierOp::TestWait { .. }))
        });
        count_down_footprint(&mut fp, record, Actor::Warp(me), probed);
        // The cluster barrier's round: the same rule (`Object::ClusterArrival`). Exited
        // threads count toward every round after their exit, so an arrival reads every exit.
        for t in &record.cluster {
            if let Some(before) = t.round.checked_sub(1) {
                fp.read(Object::ClusterArrival { round: before, warp: None });
            }
            fp.write(Object::ClusterArrival { round: t.round, warp: Some(me) });
            if t.completed {
                fp.write(Object::ClusterRound { round: Some(t.round) });
                fp.sleep_write(Object::ClusterArrival { round: t.round, warp: None });
            }
            if t.arrival {
                (0..self.exec.ctas.len()).for_each(|c| fp.read(Object::Exited { cta: c, warp: None }));
            }
        }
        if record.cluster_generation_read {
            fp.read(Object::ClusterRound { round: None });
        }
        // Whichever warp exits last ends the CTA: its other warps' steps all ran before
        // (`Footprint::end_writes`).
        if record.cta_ended {
            fp.acquire_after(Object::Exited { cta, warp: None });
            fp.end_writes.extend([Object::Ended { cta }, Object::AllShared { cta }, Object::Tensor { cta }]);
            let warps = (0..self.exec.warps.len()).filter(|&w| self.exec.warps[w].cta == cta);
            fp.end_writes.extend(warps.map(|w| Object::AsyncOf { warp: w }));
        }
        let Some((slow, mask)) = record.slow else { return Ok(fp) };
        let inst = &self.cx.program.slow[slow as usize];
        let ctas = self.exec.ctas.len();
        let e = inst.effects();
        // A blocking wait that blocked changed nothing but its own lanes: when they wake (a
        // later step of this warp) they read the barrier then, and that read is what orders
        // them with the barrier's arrivals. The wait's own read would only add the order
        // "wait, then arrival" already covered by "arrival, then wake".
        let blocked = self.exec.warps[wi].blocked & mask == mask;
        // The same for a wait on async groups (`wgmma.wait_group`, `cp.async.bulk.wait_group`):
        // its lanes retire the groups when they wake (`AsyncOf`, written there).
        let blocking_wait = matches!(
            e.sync,
            Some(
                SyncEffect::Mbarrier { action: BarrierAction::Wait { blocking: true }, .. }
                    | SyncEffect::Group { action: GroupAction::Wait { .. }, .. }
            )
        );
        if blocked && blocking_wait {
            return Ok(fp);
        }
        // A step that changes what others observe writes the bytes it resolved; else it reads.
        let writes = !e.writes.is_empty() || e.launch.is_some() || e.sync.is_some_and(|s| s.signals());
        // Barriers-only mode leaves plain data to the race checker; atomics and volatile
        // accesses synchronize, so their bytes stay.
        let data_orders = !barriers_only
            || matches!(inst, Inst::Memory(MemoryOp::Atom { .. }))
            || e.side == Some(SideEffect::Volatile);
        // A wait or probe reads the barrier's phase (and acquires the phase it observed, in
        // `count_down_footprint`), not its count.
        let polls = matches!(
            inst,
            Inst::Mbarrier(MbarrierOp::Wait { .. } | MbarrierOp::TestWait { .. } | MbarrierOp::TryWait { .. })
        );
        for &(c, off, len) in &record.shared {
            if len == 8 && counted_down_only(record, c, off) {
                continue;
            }
            if len == 8 && polls && !record.changed.contains(&(c, off)) && self.is_mbarrier(c, off, len) {
                fp.read(Object::MbarPhase { cta: c, off });
                continue;
            }
            if len == 8 && issued_copy_only(record, c, off) {
                continue;
            }
            if !data_orders && !self.is_mbarrier(c, off, len) {
                continue;
            }
            let o = Object::Shared { cta: c, off, len };
            if writes {
                fp.write(o)
            } else {
                fp.read(o)
            }
        }
        // What an async op reads and writes, it does when it completes (its own steps); issuing
        // it touches only the addresses resolved above.
        let thread_spaces = if e.launch.is_some() { vec![] } else { vec![(e.reads, false), (e.writes, true)] };
        for (spaces, write) in thread_spaces {
            for s in spaces.iter() {
                let objects: Vec<Object> = match s {
                    // A weak access touches only its bytes (bench/exhaustive.md, run 9).
                    MemSpace::Global if data_orders && weak_global_access(inst) => {
                        record.global.iter().map(|&(addr, len)| Object::GlobalRange { addr, len: len as u64 }).collect()
                    }
                    MemSpace::Global if data_orders => vec![Object::Global],
                    MemSpace::Global => vec![],
                    // Addresses resolved by `smem_addr` are in `record.shared`.
                    MemSpace::Shared | MemSpace::SharedCluster | MemSpace::Param => vec![],
                    MemSpace::Tensor => (0..ctas).map(|c| Object::Tensor { cta: c }).collect(),
                };
                for o in objects {
                    if write {
                        fp.write(o)
                    } else {
                        fp.read(o)
                    }
                }
            }
        }
        match e.sync {
            // The ids arrived on are written above (none resolved: an id out of range, every one).
            Some(SyncEffect::CtaBarrier { .. }) if record.named.is_empty() => fp.write(Object::AllNamed { cta }),
            Some(SyncEffect::CtaBarrier { .. }) => {}
            // Its arrivals and a wait's read of the generation (above).
            Some(SyncEffect::ClusterBarrier { .. }) => {}
            // Waiting on groups retires them (a write the completions, which only read the
            // groups, are ordered with); committing commutes with every completion.
            // A wgmma wait: the results it retired (above).
            Some(SyncEffect::Group { action: GroupAction::Wait { .. }, .. }) if matches!(inst, Inst::Wgmma(_)) => {}
            Some(SyncEffect::Group { action: GroupAction::Wait { .. }, .. } | SyncEffect::TensorMemoryWait { .. }) => {
                fp.write(Object::AsyncOf { warp: wi })
            }
            Some(SyncEffect::Group { action: GroupAction::Commit, .. }) => {}
            // Barriers are shared bytes (above); the rest orders only the warp's own threads.
            Some(
                SyncEffect::Mbarrier { .. }
                | SyncEffect::WarpBarrier
                | SyncEffect::Fence(_)
                | SyncEffect::GridDependency { .. },
            )
            | None => {}
        }
        // An op issued happens after its issue (the explorer orders its steps after this one).
        match e.side {
            Some(SideEffect::Trap | SideEffect::Opaque) => fp.write(Object::Everything),
            Some(SideEffect::TensorAllocation) => (0..ctas).for_each(|c| fp.write(Object::Tensor { cta: c })),
            // `setmaxnreg`: what it did to the pool (below); a sleep changes nothing another
            // actor observes.
            Some(SideEffect::Scheduling) => {}
            Some(SideEffect::Volatile | SideEffect::Print | SideEffect::Probe) | None => {}
        }
        register_pool_footprint(&mut fp, record.register_pool, cta, me);
        // Wgmma and tcgen05 read shared memory through descriptors, which are not resolved by
        // `smem_addr`: dependent with everything.
        // Barriers-only mode: their operands are data (the race checker's). A wgmma's fence,
        // commit and issue change only the warp's own state and its warpgroup's issue, which
        // is the same whichever of the four warps issues last (the op it launches is named
        // after the warpgroup's first warp, `name_async_op`): they commute with every other
        // step; its `wait_group` retires groups (`AsyncOf`, above). Tcgen05: the warp's async
        // work and the tensor memory.
        match inst {
            Inst::Wgmma(_) if barriers_only => {}
            Inst::Tcgen05(_) if barriers_only => {
                fp.write(Object::AsyncOf { warp: wi });
                (0..ctas).for_each(|c| fp.write(Object::Tensor { cta: c }));
            }
            Inst::Wgmma(_) | Inst::Tcgen05(_) => fp.write(Object::Everything),
            Inst::Memory(_)
            | Inst::Mbarrier(_)
            | Inst::Sync(_)
            | Inst::Warp(_)
            | Inst::Fragment(_)
            | Inst::Printf(_)
            | Inst::Tma(_)
            | Inst::Probe { .. }
            | Inst::FlagSpin(_)
            | Inst::Asm(_)
            | Inst::Arith(_)
            | Inst::ReadSpecial { .. } => {}
        }
        Ok(fp)
    }

    /// Whether shared bytes `[off, off + len)` of CTA `cta` are an mbarrier.
    fn is_mbarrier(&self, cta: usize, off: u32, len: u32) -> bool {
        len == 8 && self.exec.ctas[cta].barriers.get(self.cx.layout, off).is_some()
    }

    /// What the wait of lane `l` of warp `wi` reads to decide it may go on.
    fn wait_object(&self, wi: usize, l: usize) -> Option<Object> {
        let cta = self.exec.warps[wi].cta;
        match self.exec.warps[wi].wait[l] {
            // The wake's acquire of the phase it observed is recorded by `touch_observed`.
            WaitFor::Mbarrier { cta, off, .. } => Some(Object::MbarPhase { cta: cta as usize, off }),
            WaitFor::NamedBarrier { id, generation, .. } => {
                Some(Object::NamedArrival { cta, id, round: generation, warp: None })
            }
            // The wake also reads its round's completion (`Object::ClusterRound`, in `warp_step`).
            WaitFor::ClusterBarrier { generation, .. } => {
                Some(Object::ClusterArrival { round: generation, warp: None })
            }
            // Waking retires the groups: a write (see `warp_step`).
            WaitFor::CpAsyncGroups { .. } | WaitFor::BulkGroups { .. } => Some(Object::AsyncOf { warp: wi }),
            // Waking retires the results it waited for (`Object::WgmmaDone`, recorded there).
            WaitFor::WgmmaGroups { .. } => None,
            WaitFor::RegisterPool { .. } => Some(Object::RegisterTake { cta, warp: Some(wi as u32) }),
            WaitFor::GlobalAtomic { .. } => Some(Object::Global),
            // Released by the warp's own lanes.
            WaitFor::Nothing | WaitFor::WarpSync { .. } | WaitFor::WgmmaConverge { .. } => None,
        }
    }

    /// The global bytes a tensor box of map `map` at `coords` reads or writes: the span of its
    /// in-bounds elements (TMA touches no other), or nothing when none is in bounds.
    fn tensor_box_global(&self, map: usize, coords: &[i32]) -> Object {
        let Some(desc) = self.cx.tmaps[map].as_ref() else { return Object::Global };
        match box_global_span(desc, coords) {
            Some((addr, len)) => Object::GlobalRange { addr, len },
            None => Object::GlobalRange { addr: desc.base, len: 0 },
        }
    }

    /// The async op named `actor` progresses: one piece of a copy lands, or the op completes.
    fn agent_step(&mut self, actor: Actor) -> Result<Footprint> {
        let Some(i) = self.async_ops.in_flight.iter().position(|o| o.actor == actor) else {
            unreachable!("only enabled async ops are chosen")
        };
        let op = &self.async_ops.in_flight[i];
        let issuer_warp = self.warp_of(op.issuer).0;
        let barriers_only = self.cx.config.explore_barriers_only;
        let mut fp = Footprint::default();
        // Barriers-only mode: the data a copy moves is the race checker's.
        let mut data = Footprint::default();
        // The barriers a load's piece completes bytes on.
        let mut bars: Vec<(usize, u32)> = Vec::new();
        match &op.kind {
            AsyncKind::Load { dsts, src, bytes, .. } => {
                for d in dsts {
                    // A tensor box may be swizzled (within its 1024-byte-aligned tiles) or padded
                    // (anywhere in the CTA's shared memory); other copies land where they say.
                    let map = match src {
                        LoadSrc::Tensor { map, .. } => {
                            self.cx.tmaps[*map].as_ref().map(|m| (m.swizzle, m.smem_rows().padded()))
                        }
                        LoadSrc::Bulk(_) | LoadSrc::Shared { .. } => Some((Swizzle::None, false)),
                    };
                    match map {
                        Some((Swizzle::None, false)) => {
                            data.write(Object::Shared { cta: d.cta, off: d.off, len: *bytes })
                        }
                        Some((_, false)) => {
                            let lo = d.off & !1023;
                            let hi = (d.off + bytes).next_multiple_of(1024);
                            data.write(Object::Shared { cta: d.cta, off: lo, len: hi - lo });
                        }
                        Some((_, true)) | None => data.write(Object::AllShared { cta: d.cta }),
                    }
                    // Its barrier: what the landing did to it, below.
                    bars.push((d.cta, d.bar));
                    // Landing in an exited CTA is a finding: the exit count is read.
                    fp.read(Object::Ended { cta: d.cta });
                }
                match src {
                    LoadSrc::Bulk(addr) => data.read(Object::GlobalRange { addr: *addr, len: *bytes as u64 }),
                    LoadSrc::Tensor { map, coords } => data.read(self.tensor_box_global(*map, coords)),
                    LoadSrc::Shared { cta, off } => data.read(Object::Shared { cta: *cta, off: *off, len: *bytes }),
                }
            }
            AsyncKind::CpAsync { cta, off, bytes, src, .. } => {
                data.write(Object::Shared { cta: *cta, off: *off, len: *bytes });
                data.read(Object::GlobalRange { addr: *src, len: *bytes as u64 });
                // Completions of a thread's ops commute with each other; its waits retire them.
                fp.read(Object::AsyncOf { warp: issuer_warp });
            }
            AsyncKind::Store { cta, off, bytes, dst, .. } => {
                match dst {
                    StoreDst::Bulk(addr) => {
                        data.read(Object::Shared { cta: *cta, off: *off, len: *bytes });
                        data.write(Object::GlobalRange { addr: *addr, len: *bytes as u64 });
                    }
                    // A tensor box may be swizzled within its 1024-byte-aligned tiles.
                    StoreDst::Tensor { map, coords } => {
                        let lo = off & !1023;
                        let hi = (off + bytes).next_multiple_of(1024);
                        data.read(Object::Shared { cta: *cta, off: lo, len: hi - lo });
                        data.write(self.tensor_box_global(*map, coords));
                    }
                }
                fp.read(Object::AsyncOf { warp: issuer_warp });
            }
            AsyncKind::CpAsyncArrive { cta, off, .. } => {
                fp.write(Object::Shared { cta: *cta, off: *off, len: 8 });
                fp.write(Object::AsyncOf { warp: issuer_warp });
            }
            // The tensor cores: descriptors, tensor memory, warpgroup order.
            // Barriers-only mode: a wgmma completing fills its result for each of its warpgroup's
            // four warps (what the `wait_group` that retires it acquires), after the warpgroup's
            // earlier wgmmas; a completion in an ended CTA is a finding.
            AsyncKind::Wgmma { mma, .. } if barriers_only => {
                (issuer_warp..issuer_warp + 4).for_each(|w| fp.write(Object::WgmmaDone { warp: w, mma: mma.id }));
                // After the warpgroup's four parts and its wgmma before (`Object::WgmmaChain`).
                (issuer_warp..issuer_warp + 4)
                    .for_each(|w| fp.acquire_after(Object::WgmmaPart { warp: w, seq: mma.seq }));
                fp.write(Object::WgmmaChain { warp: issuer_warp, seq: mma.seq });
                if let Some(before) = mma.seq.checked_sub(1) {
                    fp.acquire_after(Object::WgmmaChain { warp: issuer_warp, seq: before });
                }
                fp.read(Object::Ended { cta: self.exec.warps[issuer_warp].cta });
            }
            // Barriers-only mode, tcgen05 work: the issuing warp's async work and the tensor
            // memory (a commit's arrival is on its barrier's bytes, below).
            AsyncKind::Commit { .. } | AsyncKind::Tcgen05(_) if barriers_only => {
                fp.write(Object::AsyncOf { warp: issuer_warp });
                (0..self.exec.ctas.len()).for_each(|c| fp.write(Object::Tensor { cta: c }));
            }
            AsyncKind::Commit { .. } | AsyncKind::Tcgen05(_) | AsyncKind::Wgmma { .. } => fp.write(Object::Everything),
        }
        if !barriers_only {
            data.accesses.into_iter().for_each(|(o, w)| fp.add(o, w));
        }
        let agent_kind = match &op.kind {
            AsyncKind::Load { pieces, .. } if pieces.len() > 1 => "load piece",
            AsyncKind::Load { .. } => "load's last piece",
            AsyncKind::CpAsync { .. } => "cp.async",
            AsyncKind::Store { .. } => "store",
            AsyncKind::Commit { .. } => "tcgen05.commit",
            AsyncKind::CpAsyncArrive { .. } => "cp.async.mbarrier.arrive",
            AsyncKind::Tcgen05(_) => "tcgen05 work",
            AsyncKind::Wgmma { .. } => "wgmma completion",
        };
        self.complete_next_piece(i)?;
        self.steps.progress += 1;
        let record = self.step.as_mut().expect("a step is running");
        record.agent_kind = agent_kind;
        let touched = std::mem::take(&mut record.shared);
        let record = self.step.as_ref().expect("a step is running");
        // A plain piece only counts its barrier down (`complete_tx_on`); the rest writes.
        count_down_footprint(&mut fp, record, actor, false);
        let mut writes = Vec::new();
        for &(c, off, len) in &touched {
            if !(len == 8 && counted_down_only(record, c, off)) {
                writes.push((c, off, len));
            }
        }
        // A load whose piece did not reach its barrier (a finding ended it): the barrier, written.
        for &(c, off) in &bars {
            if !touched.iter().any(|&(c2, o2, _)| (c2, o2) == (c, off)) {
                writes.push((c, off, 8));
            }
        }
        for (c, off, len) in writes {
            if !barriers_only || self.is_mbarrier(c, off, len) || bars.contains(&(c, off)) {
                fp.write(Object::Shared { cta: c, off, len });
            }
        }
        Ok(fp)
    }
}

/// A `setmaxnreg`'s register pool (`Object::RegisterTake`; bench/exhaustive.md, run 8). Frees
/// only raise the room every `.inc` checks, so they commute with each other and with takes (a
/// take that needed the free would block before it, and its wake after the free is the same
/// take); two takes that both fit commute (they fit together); an `.inc` that did not fit
/// reads every take (in the other order it might fit). What else writes the pool and every take.
fn register_pool_footprint(fp: &mut Footprint, step: Option<PoolStep>, cta: usize, me: u32) {
    let pool = Object::Registers { cta };
    match step {
        Some(PoolStep::Freed) => fp.read(pool),
        Some(PoolStep::Took) => {
            fp.read(pool);
            fp.write(Object::RegisterTake { cta, warp: Some(me) });
        }
        Some(PoolStep::Blocked) => {
            fp.read(pool);
            fp.read(Object::RegisterTake { cta, warp: None });
        }
        Some(PoolStep::Other) => {
            fp.write(pool);
            fp.write(Object::RegisterTake { cta, warp: None });
        }
        None => {}
    }
}

/// Whether `inst` is a weak thread access of global memory (`ld`, `st`, their vector forms),
/// whose bytes the engine records (`touch_global`). Strong accesses (flags) and atomics order
/// other memory through the global order's clocks: they stay `Object::Global`.
fn weak_global_access(inst: &Inst) -> bool {
    match inst {
        Inst::Memory(MemoryOp::Ld { space, access, .. } | MemoryOp::St { space, access, .. }) => {
            *space == Space::Global && *access == Access::Weak
        }
        Inst::Memory(MemoryOp::LdVec { space, .. } | MemoryOp::StVec { space, .. }) => *space == Space::Global,
        Inst::Memory(
            MemoryOp::SharedAddr { .. }
            | MemoryOp::DynSharedAddr { .. }
            | MemoryOp::ParamAddr { .. }
            | MemoryOp::CpAsync { .. }
            | MemoryOp::CpAsyncCommitGroup
            | MemoryOp::CpAsyncMbarrierArrive { .. }
            | MemoryOp::CpAsyncWaitGroup { .. }
            | MemoryOp::Atom { .. },
        )
        | Inst::Mbarrier(_)
        | Inst::Sync(_)
        | Inst::Warp(_)
        | Inst::Fragment(_)
        | Inst::Printf(_)
        | Inst::Tma(_)
        | Inst::Probe { .. }
        | Inst::FlagSpin(_)
        | Inst::Asm(_)
        | Inst::Arith(_)
        | Inst::ReadSpecial { .. }
        | Inst::Wgmma(_)
        | Inst::Tcgen05(_) => false,
    }
}

/// Whether the step touched mbarrier `(cta, off)` only by plain count-down steps.
fn counted_down_only(record: &StepRecord, cta: usize, off: u32) -> bool {
    record.count_downs.iter().any(|d| (d.cta, d.off) == (cta, off)) && !record.changed.contains(&(cta, off))
}

/// Whether the step touched mbarrier `(cta, off)` only by issuing copies on it.
fn issued_copy_only(record: &StepRecord, cta: usize, off: u32) -> bool {
    record.copy_issues.iter().any(|i| (i.cta, i.off) == (cta, off))
        && !record.changed.contains(&(cta, off))
        && !record.count_downs.iter().any(|d| (d.cta, d.off) == (cta, off))
}

/// The mbarrier phases the step (of `me`) counted down, issued copies on, or observed (`Object::MbarArrival`): a
/// count-down step writes its own arrival and reads the phase before's, so a phase's steps
/// commute whichever completes it, and one that could land in either of two phases is ordered
/// with the other phase's; the completing one writes the phase (what waits and probes read)
/// and the phase's arrivals for the sleep sets (an actor asleep on its count-down would now
/// land in the next phase); a wait that passed reads the phase and acquires the arrivals of
/// the phase it observed.
fn count_down_footprint(fp: &mut Footprint, record: &StepRecord, me: Actor, probed: bool) {
    for d in record.count_downs.iter().filter(|d| counted_down_only(record, d.cta, d.off)) {
        let (cta, off, phase) = (d.cta, d.off, d.phase);
        if let Some(before) = phase.checked_sub(1) {
            fp.read(Object::MbarArrival { cta, off, phase: before, who: None });
        }
        fp.write(Object::MbarArrival { cta, off, phase, who: Some(me) });
        if d.completed {
            fp.write(Object::MbarPhase { cta, off });
            fp.sleep_write(Object::MbarArrival { cta, off, phase, who: None });
        }
    }
    for i in record.copy_issues.iter().filter(|i| issued_copy_only(record, i.cta, i.off)) {
        fp.read(Object::MbarPhase { cta: i.cta, off: i.off });
        if i.reads_count {
            fp.read(Object::MbarArrival { cta: i.cta, off: i.off, phase: i.phase, who: None });
        }
    }
    for &(cta, off, observed) in &record.observed {
        fp.read(Object::MbarPhase { cta, off });
        if let Ok(phase) = u64::try_from(observed) {
            let arrivals = Object::MbarArrival { cta, off, phase, who: None };
            if probed {
                fp.acquire(arrivals);
            } else {
                fp.acquire_after(arrivals);
            }
        }
    }
}
