//! What one step touched, for partial-order reduction: two steps of different actors are
//! *dependent* when they touch a common object and one of them writes it; independent steps
//! commute (either order reaches the same state), so the explorer never permutes them.
//!
//! The objects over-approximate: a step may name more than it touched (never less), which costs
//! reduction, never soundness. Shared memory is byte ranges (mbarriers are their 8 bytes);
//! everything else the engine does not track precisely is one object per kind, and a step the
//! engine cannot describe touches `Everything`.

use crate::report::schedule::Actor;

/// Something a step reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Object {
    /// Bytes `[off, off + len)` of CTA `cta`'s shared memory (an mbarrier: its 8 bytes).
    Shared { cta: usize, off: u32, len: u32 },
    /// Every byte of CTA `cta`'s shared memory (an access whose addresses are not tracked).
    AllShared { cta: usize },
    /// Global memory (a thread's access, a tensor map's box: not tracked by address).
    Global,
    /// Bytes `[addr, addr + len)` of global memory (a bulk copy's source or destination).
    GlobalRange { addr: u64, len: u64 },
    /// Every named barrier of CTA `cta`, every round (a `bar.sync` whose id was not resolved).
    AllNamed { cta: usize },
    /// The arrival of warp `warp` (`None`: of every warp) in round `round` of named barrier `id`
    /// of CTA `cta`. An arrival writes its own and reads every arrival of the round before;
    /// the wake of a round's waiter *acquires* every arrival of its round (`Footprint::
    /// acquires`); the arrival that completes the round writes every arrival of it for the
    /// sleep sets only (`Footprint::sleep_writes`). So the arrivals of one round commute with
    /// each other, whichever completes it (the count is symmetric: bench/exhaustive.md), an
    /// arrival that may land in either of two rounds (a surplus `bar.arrive` running ahead) is
    /// dependent with the other round's arrivals, and an actor whose arrival was explored
    /// already wakes from its sleep set when a round it would have joined completes.
    NamedArrival { cta: usize, id: u8, round: u64, warp: Option<u32> },
    /// Warp `warp`'s exit (`None`: every warp's) from CTA `cta`: each exit writes its own, so
    /// exits stay independent; an arrival on a named barrier waiting for the whole CTA (which
    /// counts exited threads) reads them all, so it is ordered with every exit but not with
    /// its round's other arrivals (an exit also writes each such round with arrivals pending:
    /// it may complete it); and the exit that ends the CTA *acquires* them all (it ends it
    /// only after every other warp exited), which orders what those warps did before it.
    Exited { cta: usize, warp: Option<u32> },
    /// Whether CTA `cta` has ended (a copy landing in an ended CTA is a finding).
    Ended { cta: usize },
    /// The completion of round `round` (`None`: of every round) of the cluster barrier: the
    /// step completing a round writes it; a waiter's wake reads its round's (completions of
    /// later rounds change nothing it does: it acquires its own round's release); a wait of a
    /// thread that did not arrive waits for the current round, and reads every round's. The
    /// round's other arrivals do not touch it (`ClusterArrival`).
    ClusterRound { round: Option<u64> },
    /// The arrival of warp `warp` (`None`: of every warp) in round `round` of the cluster
    /// barrier (an exit with arrivals pending counts as one). Run 4's named-barrier rule: an
    /// arrival writes its own and reads every arrival of the round before; the one completing
    /// the round also writes `Cluster` and every arrival of the round for the sleep sets only;
    /// a waiter's wake *acquires* every arrival of its round. So a round's arrivals commute,
    /// whichever completes it (the round's state after all of them is the same:
    /// bench/exhaustive.md, run 9), and an arrival that may land in either of two rounds (a
    /// surplus arrival) is dependent with the other round's. An arrival also reads every exit
    /// (`Exited`), which counts toward every round after it.
    ClusterArrival { round: u64, warp: Option<u32> },
    /// The count-down step (an arrival, a copy's piece, a thread's `complete_tx`) that actor
    /// `who` (`None`: every actor) made in phase `phase` of the mbarrier at `(cta, off)`. Run
    /// 4's named-barrier rule applied to a phase: a count-down step writes its own and reads
    /// every one of the phase before; the step that completes the phase writes every one of it
    /// for the sleep sets only (`Footprint::sleep_writes`) and writes `MbarPhase`; a wait that
    /// observed the phase *acquires* them all. So the count-down steps of one phase commute,
    /// whichever completes it (the phase's state after all of them is the same:
    /// bench/exhaustive.md, run 7), and a step that may land in either of two phases (a
    /// surplus arrival) is dependent with the other phase's steps. Only *plain* steps count
    /// down this way: an arrival with no overflow and no drop whose token's count nothing
    /// reads, a piece that leaves the tx-count at 0 or above and was not cut at 0
    /// (`split_at_tx_zero`); every other step on the barrier writes its 8 bytes, which overlap
    /// every phase's arrivals and `MbarPhase`.
    MbarArrival { cta: usize, off: u32, phase: u64, who: Option<Actor> },
    /// The phase number of the mbarrier at `(cta, off)`: what its waits and probes read, what
    /// the step completing a phase writes (the phase's other count-down steps do not touch it).
    /// Inside the barrier's 8 bytes.
    MbarPhase { cta: usize, off: u32 },
    /// Tensor memory and the tcgen05 state of CTA `cta`.
    Tensor { cta: usize },
    /// The async work of warp `warp`: its groups, its ops in flight (its wgmmas: `WgmmaDone`).
    AsyncOf { warp: usize },
    /// Warp `warp`'s copy of the result of wgmma `mma`: the wgmma's completion writes it (for
    /// each warp of its warpgroup), the `wgmma.wait_group` that retires it *acquires* it. A wait
    /// retires exactly the groups older than its `N` newest, so a completion of a newer group
    /// commutes with it (bench/exhaustive.md, run 5); and it retires only completed ones, so it
    /// runs after the completions it retires in every order: run before one, it blocks, and
    /// its wake after the completion retires the same groups (run 8), so the two make no race.
    WgmmaDone { warp: usize, mma: u32 },
    /// The completion of the `seq`-th wgmma of the warpgroup whose first warp is `warp`: it
    /// writes its own and *acquires* the one before's. A warpgroup's wgmmas complete in issue
    /// order (one is not ready while an earlier one is in flight), so two completions of one
    /// warpgroup run in that order in every execution: ordered, never a race (run 8).
    WgmmaChain { warp: usize, seq: u64 },
    /// Warp `warp`'s part of its `seq`-th `wgmma.mma_async` (each warp of the warpgroup
    /// issues one; the wgmma goes in flight with the fourth): the issue writes it, the
    /// wgmma's completion *acquires* its four warps' parts, since it runs after all of them.
    /// Nothing else touches it: it orders what each warp did before its part ahead of the
    /// completion (and of the `wait_group`s that retire it), never a race.
    WgmmaPart { warp: usize, seq: u64 },
    /// CTA `cta`'s register pool. Every step on it reads it (an exit, a `setmaxnreg`), so steps
    /// that only free registers (an exit, a `setmaxnreg.dec` to at most what the warp holds)
    /// commute with each other and with takes (`RegisterTake`); a `setmaxnreg` the rule does
    /// not describe writes it and every take. bench/exhaustive.md, run 8.
    Registers { cta: usize },
    /// Warp `warp`'s take (`None`: every warp's) from CTA `cta`'s register pool: a
    /// `setmaxnreg` that raised (or kept) the warp's count and fit, at once or on waking, writes
    /// its own. Two takes that both fit commute (whichever runs first, the other fits too:
    /// together they fit); an `.inc` that blocked, and a blocked one's wake, read every take
    /// (in the other order it might have fit, and the take that went first might not).
    RegisterTake { cta: usize, warp: Option<u32> },
    /// Anything: dependent with every step that touches something.
    Everything,
}

impl Object {
    pub(crate) fn overlaps(&self, other: &Object) -> bool {
        use Object::*;
        match (*self, *other) {
            (Everything, _) | (_, Everything) => true,
            (Shared { cta: a, off: x, len: n }, Shared { cta: b, off: y, len: m }) => {
                a == b && x < y.saturating_add(m) && y < x.saturating_add(n)
            }
            (Shared { cta: a, .. } | AllShared { cta: a }, Shared { cta: b, .. } | AllShared { cta: b }) => a == b,
            (
                MbarArrival { cta: a, off: x, phase: p, who: v },
                MbarArrival { cta: b, off: y, phase: q, who: u },
            ) => (a, x, p) == (b, y, q) && (v.is_none() || u.is_none() || v == u),
            (MbarPhase { cta: a, off: x }, MbarPhase { cta: b, off: y }) => (a, x) == (b, y),
            (MbarArrival { cta: a, off: x, .. } | MbarPhase { cta: a, off: x }, Shared { cta: b, off: y, len: m })
            | (Shared { cta: b, off: y, len: m }, MbarArrival { cta: a, off: x, .. } | MbarPhase { cta: a, off: x }) => {
                a == b && y <= x && x < y.saturating_add(m)
            }
            (MbarArrival { cta: a, .. } | MbarPhase { cta: a, .. }, AllShared { cta: b })
            | (AllShared { cta: b }, MbarArrival { cta: a, .. } | MbarPhase { cta: a, .. }) => a == b,
            (ClusterRound { round: r }, ClusterRound { round: q }) => r.is_none() || q.is_none() || r == q,
            (ClusterArrival { round: r, warp: v }, ClusterArrival { round: q, warp: u }) => {
                r == q && (v.is_none() || u.is_none() || v == u)
            }
            (GlobalRange { addr: x, len: n }, GlobalRange { addr: y, len: m }) => {
                x < y.saturating_add(m) && y < x.saturating_add(n)
            }
            (Global | GlobalRange { .. }, Global | GlobalRange { .. }) => true,
            (AllNamed { cta: a }, AllNamed { cta: b } | NamedArrival { cta: b, .. })
            | (NamedArrival { cta: b, .. }, AllNamed { cta: a }) => a == b,
            (NamedArrival { cta: a, id: x, round: r, warp: v }, NamedArrival { cta: b, id: y, round: q, warp: u }) => {
                (a, x, r) == (b, y, q) && (v.is_none() || u.is_none() || v == u)
            }
            (Exited { cta: a, warp: v }, Exited { cta: b, warp: u })
            | (RegisterTake { cta: a, warp: v }, RegisterTake { cta: b, warp: u }) => {
                a == b && (v.is_none() || u.is_none() || v == u)
            }
            (Ended { cta: a }, Ended { cta: b })
            | (Tensor { cta: a }, Tensor { cta: b })
            | (Registers { cta: a }, Registers { cta: b })
            | (AsyncOf { warp: a }, AsyncOf { warp: b }) => a == b,
            (WgmmaChain { warp: a, seq: x }, WgmmaChain { warp: b, seq: y })
            | (WgmmaPart { warp: a, seq: x }, WgmmaPart { warp: b, seq: y }) => (a, x) == (b, y),
            (WgmmaDone { warp: a, mma: x }, WgmmaDone { warp: b, mma: y }) => (a, x) == (b, y),
            (Shared { .. } | AllShared { .. } | MbarArrival { .. } | MbarPhase { .. }, _)
            | (
                Global
                | GlobalRange { .. }
                | AllNamed { .. }
                | NamedArrival { .. }
                | Exited { .. }
                | Ended { .. }
                | ClusterRound { .. }
                | ClusterArrival { .. }
                | Tensor { .. }
                | AsyncOf { .. }
                | WgmmaDone { .. }
                | WgmmaChain { .. }
                | WgmmaPart { .. }
                | Registers { .. }
                | RegisterTake { .. },
                _,
            ) => false,
        }
    }
}

/// The objects of one step, each read or written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub accesses: Vec<(Object, bool)>,
    /// Objects read only to be ordered after the steps that wrote them, which must have run
    /// before this step could (a wake after every arrival of its round): they join the
    /// happens-before of DPOR's clocks but never make a race.
    pub acquires: Vec<Object>,
    /// The acquires (a subset) whose writers this step cannot run before in *any* execution
    /// (`Footprint::follows`): a blocking wait's pass or wake and its round's or phase's
    /// steps, the exit ending a CTA and the CTA's other exits, a `wgmma.wait_group` and the
    /// completions it retires. A probe (`test_wait`) that saw a phase complete acquires it but
    /// could have run before it (and seen it pending): not here.
    pub after: Vec<Object>,
    /// Objects written as far as sleep sets are concerned: a sleeping actor whose next step
    /// touches one wakes (this step changed what that step would do), though the two steps
    /// are no race (a round's completing arrival and its other arrivals).
    pub sleep_writes: Vec<Object>,
    /// The CTA of the warp whose step this is (`None`: an async op's step).
    pub warp_cta: Option<usize>,
    /// What ending the CTA (its last threads exiting) wrote: dependent with the steps of every
    /// actor but the CTA's own warps. Those all ran before it in every execution (it is the
    /// last exit), and in an order where this warp's exit runs earlier it is not the ending
    /// one: it then touches only what every exit touches, which `accesses` keeps.
    pub end_writes: Vec<Object>,
}

impl Footprint {
    pub fn read(&mut self, o: Object) {
        self.add(o, false);
    }
    pub fn write(&mut self, o: Object) {
        self.add(o, true);
    }
    pub fn add(&mut self, o: Object, write: bool) {
        // Shared bytes next to (or over) bytes already touched the same way join them: the
        // union names exactly the same bytes, and a warp's lanes touch runs of them.
        if let Object::Shared { cta, off, len } = o {
            let end = off.saturating_add(len);
            for (x, w) in &mut self.accesses {
                if let Object::Shared { cta: c, off: o2, len: l2 } = x {
                    let end2 = o2.saturating_add(*l2);
                    if *c == cta && *w == write && off <= end2 && *o2 <= end {
                        let lo = off.min(*o2);
                        *x = Object::Shared { cta, off: lo, len: end.max(end2) - lo };
                        return;
                    }
                }
            }
        }
        // The same for global bytes (a warp's lanes storing a row).
        if let Object::GlobalRange { addr, len } = o {
            let end = addr.saturating_add(len);
            for (x, w) in &mut self.accesses {
                if let Object::GlobalRange { addr: a2, len: l2 } = x {
                    let end2 = a2.saturating_add(*l2);
                    if *w == write && addr <= end2 && *a2 <= end {
                        let lo = addr.min(*a2);
                        *x = Object::GlobalRange { addr: lo, len: end.max(end2) - lo };
                        return;
                    }
                }
            }
        }
        match self.accesses.iter_mut().find(|(x, _)| *x == o) {
            Some((_, w)) => *w |= write,
            None => self.accesses.push((o, write)),
        }
    }

    pub fn acquire(&mut self, o: Object) {
        if !self.acquires.contains(&o) {
            self.acquires.push(o);
        }
    }
    /// Acquire `o`, whose writers this step cannot run before in any execution.
    pub fn acquire_after(&mut self, o: Object) {
        self.acquire(o);
        if !self.after.contains(&o) {
            self.after.push(o);
        }
    }
    pub fn sleep_write(&mut self, o: Object) {
        if !self.sleep_writes.contains(&o) {
            self.sleep_writes.push(o);
        }
    }

    /// Whether the two steps may not commute, a race when they are not ordered: a common
    /// object, written by at least one (or `Everything`, however it was touched).
    pub fn dependent(&self, other: &Footprint) -> bool {
        let conflict = |a: &Object, wa: bool, b: &Object, wb: bool| {
            (wa || wb || *a == Object::Everything || *b == Object::Everything) && a.overlaps(b)
        };
        let ends = |x: &Footprint, y: &Footprint| {
            !x.end_writes.is_empty()
                && y.warp_cta != x.warp_cta
                && x.end_writes
                    .iter()
                    .any(|a| y.accesses.iter().map(|(b, _)| b).chain(&y.end_writes).any(|b| a.overlaps(b)))
        };
        self.accesses.iter().any(|(a, wa)| other.accesses.iter().any(|(b, wb)| conflict(a, *wa, b, *wb)))
            || ends(self, other)
            || ends(other, self)
    }

    /// Whether one step is ordered after the other in DPOR's happens-before: dependent, or
    /// one acquires what the other wrote.
    pub fn orders(&self, other: &Footprint) -> bool {
        let acquired = |x: &Footprint, y: &Footprint| {
            x.acquires.iter().any(|a| y.accesses.iter().any(|(b, w)| (*w || *b == Object::Everything) && a.overlaps(b)))
        };
        self.dependent(other) || acquired(self, other) || acquired(other, self)
    }

    /// Whether this step acquires, as one it cannot run before (`after`), an object of the
    /// same kind that `earlier` wrote (a waiter's wake and a count-down step of the round or
    /// phase it observed, the exit ending a CTA and another exit, a `wgmma.wait_group` and the
    /// completion it retires): then the two are no race even where they are also dependent
    /// (the wake's step goes on to read the bytes a copy's piece of that phase wrote). Barrier
    /// bytes a non-plain step wrote overlap a phase's arrivals but are another kind: such a
    /// step (an `expect_tx` of the next phase) may run after the waiter, and stays a race.
    pub fn follows(&self, earlier: &Footprint) -> bool {
        self.after.iter().any(|a| {
            earlier
                .accesses
                .iter()
                .any(|(b, w)| *w && std::mem::discriminant(a) == std::mem::discriminant(b) && a.overlaps(b))
        })
    }

    /// Whether a sleeping actor's next step (one of the two) must wake when the other runs:
    /// ordered with it, or one's sleep-only writes touch what the other touched.
    pub fn wakes(&self, other: &Footprint) -> bool {
        let touched = |x: &Footprint, y: &Footprint| {
            x.sleep_writes.iter().any(|a| {
                y.accesses.iter().map(|(b, _)| b).chain(&y.acquires).chain(&y.sleep_writes).any(|b| a.overlaps(b))
            })
        };
        self.orders(other) || touched(self, other) || touched(other, self)
    }

    /// Approximate heap bytes (the explorer's memory bound counts them).
    pub fn bytes(&self) -> usize {
        self.accesses.capacity() * std::mem::size_of::<(Object, bool)>()
            + (self.acquires.capacity()
                + self.after.capacity()
                + self.sleep_writes.capacity()
                + self.end_writes.capacity())
                * std::mem::size_of::<Object>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(accesses: &[(Object, bool)]) -> Footprint {
        Footprint { accesses: accesses.to_vec(), ..Footprint::default() }
    }

    #[test]
    fn only_a_write_to_a_common_object_makes_steps_dependent() {
        let bar = Object::Shared { cta: 0, off: 8, len: 8 };
        let tile = Object::Shared { cta: 0, off: 1024, len: 256 };
        assert!(!fp(&[(bar, false)]).dependent(&fp(&[(bar, false)])), "two reads commute");
        assert!(fp(&[(bar, true)]).dependent(&fp(&[(bar, false)])));
        assert!(!fp(&[(bar, true)]).dependent(&fp(&[(tile, true)])), "disjoint bytes");
        let other_cta = Object::Shared { cta: 1, off: 8, len: 8 };
        assert!(!fp(&[(bar, true)]).dependent(&fp(&[(other_cta, true)])));
        assert!(fp(&[(Object::AllShared { cta: 0 }, false)]).dependent(&fp(&[(tile, true)])));
        assert!(fp(&[(Object::Everything, false)]).dependent(&fp(&[(Object::Global, false)])));
        let (lo, hi) = (Object::GlobalRange { addr: 0, len: 128 }, Object::GlobalRange { addr: 128, len: 64 });
        assert!(!fp(&[(lo, true)]).dependent(&fp(&[(hi, true)])), "disjoint global bytes");
        assert!(fp(&[(Object::Global, false)]).dependent(&fp(&[(hi, true)])), "an untracked access");
        assert!(!fp(&[(Object::Everything, true)]).dependent(&Footprint::default()), "a step that touched nothing");
        let arrival = |id, round, warp| Object::NamedArrival { cta: 0, id, round, warp };
        let (bar1, bar2) = (arrival(1, 0, Some(0)), arrival(2, 0, Some(0)));
        assert!(!fp(&[(bar1, true)]).dependent(&fp(&[(bar2, true)])), "different named barriers");
        assert!(fp(&[(Object::AllNamed { cta: 0 }, true)]).dependent(&fp(&[(bar2, false)])), "every id");
        // An mbarrier's phases: the same rule as a named barrier's rounds, and the barrier's
        // bytes (what a non-plain step writes) hold every phase's arrivals and its phase.
        let mbar = |phase, who| Object::MbarArrival { cta: 0, off: 8, phase, who };
        let (w0, w1) = (Some(Actor::Warp(0)), Some(Actor::Warp(1)));
        let (word, phase) = (Object::Shared { cta: 0, off: 8, len: 8 }, Object::MbarPhase { cta: 0, off: 8 });
        let count = |p: u64, who, completes: bool| {
            let mut f = Footprint::default();
            if p > 0 {
                f.read(mbar(p - 1, None));
            }
            f.write(mbar(p, who));
            if completes {
                f.write(phase);
                f.sleep_write(mbar(p, None));
            }
            f
        };
        let (a, c) = (count(3, w0, false), count(3, w1, true));
        assert!(!a.dependent(&c) && !a.orders(&c) && a.wakes(&c), "one phase's count-down steps commute");
        assert!(count(4, w1, false).dependent(&a), "a step of the next phase (a surplus arrival)");
        let probe = fp(&[(phase, false)]);
        assert!(!probe.dependent(&a) && probe.dependent(&c), "a probe sees only the completion");
        assert!(fp(&[(word, true)]).dependent(&a) && fp(&[(word, true)]).dependent(&probe), "an expect_tx");
        assert!(!fp(&[(Object::Shared { cta: 0, off: 16, len: 8 }, true)]).dependent(&c), "another barrier");
        let wake = Footprint { acquires: vec![mbar(3, None)], ..probe.clone() };
        assert!(wake.orders(&a) && !wake.dependent(&a), "a waiter of the phase follows all its steps");
        // The cluster barrier's rounds: an arrival writes its own and reads the round before's;
        // the completing one writes the generation (what waits read) and, for sleep sets only,
        // the round's arrivals.
        let cluster_arrival = |round, warp| Object::ClusterArrival { round, warp };
        let cluster_arrive = |warp: u32, round: u64, completes: bool| {
            let mut f = Footprint::default();
            if round > 0 {
                f.read(cluster_arrival(round - 1, None));
            }
            f.write(cluster_arrival(round, Some(warp)));
            if completes {
                f.write(Object::ClusterRound { round: Some(round) });
                f.sleep_write(cluster_arrival(round, None));
            }
            f
        };
        let (a, c) = (cluster_arrive(0, 1, false), cluster_arrive(5, 1, true));
        assert!(!a.dependent(&c) && !a.orders(&c) && a.wakes(&c), "one round's arrivals commute");
        assert!(cluster_arrive(1, 2, false).dependent(&a), "an arrival of the next round (a surplus arrival)");
        let completion = |round| Object::ClusterRound { round: Some(round) };
        let mut cluster_wake = fp(&[(completion(1), false)]);
        cluster_wake.acquire_after(cluster_arrival(1, None));
        assert!(!cluster_wake.dependent(&a) && cluster_wake.orders(&a), "a waiter follows every arrival of its round");
        assert!(cluster_wake.follows(&a) && cluster_wake.dependent(&c), "and reads its round's completion");
        assert!(!cluster_wake.dependent(&cluster_arrive(3, 2, true)), "a later round's completion");
        let probed = Footprint { acquires: vec![cluster_arrival(1, None)], ..fp(&[(completion(1), false)]) };
        assert!(probed.orders(&a) && !probed.follows(&a), "a probe's acquire: it could have run first");
        let next_expect_tx = fp(&[(Object::Shared { cta: 0, off: 8, len: 8 }, true)]);
        let mut mbar_wake = fp(&[(Object::MbarPhase { cta: 0, off: 8 }, false)]);
        mbar_wake.acquire_after(Object::MbarArrival { cta: 0, off: 8, phase: 3, who: None });
        assert!(mbar_wake.follows(&count(3, w0, false)), "a wake follows its phase's count-down steps");
        assert!(!mbar_wake.follows(&next_expect_tx), "not a step that wrote the barrier's bytes");
        let unarrived_wait = fp(&[(Object::ClusterRound { round: None }, false)]);
        assert!(unarrived_wait.dependent(&c), "a wait of a thread that did not arrive reads every round");
        let mut lanes = Footprint::default();
        (0..32).for_each(|l| lanes.read(Object::Shared { cta: 0, off: 1024 + 4 * l, len: 4 }));
        lanes.write(Object::Shared { cta: 0, off: 1152, len: 4 });
        let joined = [
            (Object::Shared { cta: 0, off: 1024, len: 128 }, false),
            (Object::Shared { cta: 0, off: 1152, len: 4 }, true),
        ];
        assert_eq!(lanes.accesses, joined, "a warp's run of reads is one range; a write beside it stays apart");
        let exit = |w| fp(&[(Object::Exited { cta: 0, warp: Some(w) }, true), (Object::Registers { cta: 0 }, false)]);
        assert!(!exit(1).dependent(&exit(2)), "exits only count up: they commute");
        let counting = |w| {
            fp(&[
                (Object::NamedArrival { cta: 0, id: 0, round: 0, warp: Some(w) }, true),
                (Object::Exited { cta: 0, warp: None }, false),
            ])
        };
        assert!(exit(1).dependent(&counting(2)), "an arrival that counts exits");
        assert!(!counting(1).dependent(&counting(2)), "two arrivals that count exits, of one round");
        assert!(!exit(1).dependent(&fp(&[(Object::Registers { cta: 0 }, false)])), "a setmaxnreg that frees");
        let pool = Object::Registers { cta: 0 };
        assert!(exit(1).dependent(&fp(&[(pool, true)])), "a setmaxnreg the rule does not describe");
        let take = |w| fp(&[(pool, false), (Object::RegisterTake { cta: 0, warp: Some(w) }, true)]);
        let blocked = fp(&[(pool, false), (Object::RegisterTake { cta: 0, warp: None }, false)]);
        assert!(!take(1).dependent(&take(2)) && !take(1).dependent(&exit(2)), "takes that fit commute, with frees too");
        assert!(take(1).dependent(&blocked), "an inc that blocked, with a take");
        // A named barrier's rounds: an arrival writes its own, reads the round before's; the
        // completing one writes the round's arrivals for sleep sets only; a wake acquires them.
        let arrive = |warp: u32, round: u64, completes: bool| {
            let mut f = Footprint::default();
            if round > 0 {
                f.read(arrival(2, round - 1, None));
            }
            f.write(arrival(2, round, Some(warp)));
            if completes {
                f.sleep_write(arrival(2, round, None));
            }
            f
        };
        let wake = |round| {
            let mut f = Footprint::default();
            f.acquire(arrival(2, round, None));
            f
        };
        let (a, b, c) = (arrive(0, 5, false), arrive(1, 5, false), arrive(2, 5, true));
        assert!(!a.dependent(&b) && !a.orders(&b) && !a.wakes(&b), "arrivals of one round commute");
        assert!(!a.dependent(&c) && !a.orders(&c), "an arrival and the one that completes its round: no race");
        assert!(a.wakes(&c) && c.wakes(&a), "but a sleeping arrival of the round wakes when it completes");
        assert!(arrive(3, 6, false).dependent(&a), "arrivals of consecutive rounds (a surplus arrival)");
        assert!(!arrive(3, 7, false).dependent(&a), "two rounds apart");
        assert!(!wake(5).dependent(&a) && wake(5).orders(&a) && wake(5).orders(&c), "a wake follows its round");
        assert!(!wake(4).orders(&a), "a waiter of the round before");
        assert!(!wake(5).orders(&wake(5)), "two waiters");
        assert!(a.dependent(&fp(&[(Object::AllNamed { cta: 0 }, true)])), "every id");
        let other_cta = Object::NamedArrival { cta: 1, id: 2, round: 5, warp: None };
        assert!(!c.wakes(&fp(&[(other_cta, true)])), "another CTA");
        // The end of CTA 0: dependent with a copy landing and with a warp of another CTA,
        // not with a warp of its own (they all ran before it); it acquires every exit.
        let end = Footprint {
            warp_cta: Some(0),
            end_writes: vec![Object::Ended { cta: 0 }, Object::AllShared { cta: 0 }],
            acquires: vec![Object::Exited { cta: 0, warp: None }],
            ..fp(&[(Object::Exited { cta: 0, warp: Some(3) }, true)])
        };
        let piece = fp(&[(Object::Ended { cta: 0 }, false)]);
        assert!(end.dependent(&piece) && piece.dependent(&end), "a copy landing after the end");
        let own = Footprint { warp_cta: Some(0), ..fp(&[(Object::Shared { cta: 0, off: 8, len: 8 }, false)]) };
        assert!(!end.dependent(&own), "a warp of the CTA");
        let remote = Footprint { warp_cta: Some(1), ..fp(&[(Object::Shared { cta: 0, off: 8, len: 8 }, false)]) };
        assert!(end.dependent(&remote), "a warp of another CTA reaching into it");
        let exit = Footprint { warp_cta: Some(0), ..fp(&[(Object::Exited { cta: 0, warp: Some(5) }, true)]) };
        assert!(!end.dependent(&exit) && end.orders(&exit), "another warp's exit: ordered before the end, no race");
        let exit2 = Footprint { warp_cta: Some(0), ..fp(&[(Object::Exited { cta: 0, warp: Some(6) }, true)]) };
        assert!(!exit.dependent(&exit2), "two warps' exits commute");
        // A wgmma's result: its completion and the wait that retires it; a newer one commutes.
        let done = |mma| fp(&[(Object::WgmmaDone { warp: 4, mma }, true)]);
        assert!(done(12).dependent(&done(12)) && !done(12).dependent(&done(13)));
        let retire = Footprint { acquires: vec![Object::WgmmaDone { warp: 4, mma: 12 }], ..Footprint::default() };
        assert!(!retire.dependent(&done(12)) && retire.orders(&done(12)), "the wait follows the completion it retires");
        assert!(!retire.orders(&done(13)), "a newer group's completion");
    }
}
