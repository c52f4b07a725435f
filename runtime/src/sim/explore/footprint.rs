//! What one step touched, for partial-order reduction: two steps of different actors are
//! *dependent* when they touch a common object and one of them writes it; independent steps
//! commute (either order reaches the same state), so the explorer never permutes them.
//!
//! The objects over-approximate: a step may name more than it touched (never less), which costs
//! reduction, never soundness. Shared memory is byte ranges (mbarriers are their 8 bytes);
//! everything else the engine does not track precisely is one object per kind, and a step the
//! engine cannot describe touches `Everything`.

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
    /// The arrival count of round `round` of named barrier `id` of CTA `cta`. An arrival that
    /// leaves the round pending *reads* it, so those commute with each other (the count only
    /// rises; in either order neither completes the round). The completing arrival *writes* it
    /// and the next round's count: in another order another arrival completes the round, and
    /// an arrival that landed in the next round may land in this one (a surplus arrival: a
    /// `bar.arrive` running ahead), so which arrival completes the round is explored
    /// (bench/exhaustive.md says why it cannot be left out).
    NamedCount { cta: usize, id: u8, round: u64 },
    /// The release of round `round` of named barrier `id` of CTA `cta`: the completing arrival
    /// writes it, the wake of each of the round's waiters reads it (a waiter of an earlier
    /// round does not: it was let go already, whatever completes later).
    NamedRelease { cta: usize, id: u8, round: u64 },
    /// CTA `cta`'s count of exited threads, which a named barrier waiting for the whole CTA
    /// counts: exits *read* it (they only count up, so they commute with each other), an
    /// arrival on such a barrier writes it (an exit also writes each barrier with arrivals
    /// pending: it may complete it).
    ExitCount { cta: usize },
    /// Whether CTA `cta` has ended (a copy landing in an ended CTA is a finding).
    Ended { cta: usize },
    /// The cluster barrier (its generation: what its waiters read, what completing it writes).
    Cluster,
    /// The cluster barrier's count of arrivals and exits. Counting without completing is a
    /// *read* of it: such steps commute (had they run in the other order, neither would have
    /// completed it either, since the count only grows); it overlaps `Cluster`.
    ClusterCount,
    /// The pending-arrival count of the mbarrier at `(cta, off)`, *read* by a plain arrival
    /// that leaves arrivals pending (no tx-count change): such arrivals commute with each other
    /// (the count only falls, so in the other order neither completes the phase either) and
    /// with waits, which read the phase. It overlaps the barrier's 8 shared bytes, which
    /// completing arrivals, tx operations and inits write.
    Arrivals { cta: usize, off: u32 },
    /// Tensor memory and the tcgen05 state of CTA `cta`.
    Tensor { cta: usize },
    /// The async work of warp `warp`: its groups, its wgmmas, its ops in flight.
    AsyncOf { warp: usize },
    /// CTA `cta`'s register pool (`setmaxnreg` writes it; exits, which only free registers,
    /// and the waits of a `setmaxnreg` read it).
    Registers { cta: usize },
    /// Anything: dependent with every step that touches something.
    Everything,
}

impl Object {
    fn overlaps(&self, other: &Object) -> bool {
        use Object::*;
        match (*self, *other) {
            (Everything, _) | (_, Everything) => true,
            (Shared { cta: a, off: x, len: n }, Shared { cta: b, off: y, len: m }) => {
                a == b && x < y.saturating_add(m) && y < x.saturating_add(n)
            }
            (Shared { cta: a, .. } | AllShared { cta: a }, Shared { cta: b, .. } | AllShared { cta: b }) => a == b,
            (Arrivals { cta: a, off: x }, Arrivals { cta: b, off: y }) => a == b && x == y,
            (Arrivals { cta: a, off: x }, Shared { cta: b, off: y, len: m })
            | (Shared { cta: b, off: y, len: m }, Arrivals { cta: a, off: x }) => {
                a == b && y <= x && x < y.saturating_add(m)
            }
            (Arrivals { cta: a, .. }, AllShared { cta: b }) | (AllShared { cta: b }, Arrivals { cta: a, .. }) => a == b,
            (Cluster | ClusterCount, Cluster | ClusterCount) => true,
            (GlobalRange { addr: x, len: n }, GlobalRange { addr: y, len: m }) => {
                x < y.saturating_add(m) && y < x.saturating_add(n)
            }
            (Global | GlobalRange { .. }, Global | GlobalRange { .. }) => true,
            (AllNamed { cta: a }, AllNamed { cta: b } | NamedCount { cta: b, .. } | NamedRelease { cta: b, .. })
            | (NamedCount { cta: b, .. } | NamedRelease { cta: b, .. }, AllNamed { cta: a }) => a == b,
            (NamedCount { cta: a, id: x, round: r }, NamedCount { cta: b, id: y, round: q })
            | (NamedRelease { cta: a, id: x, round: r }, NamedRelease { cta: b, id: y, round: q }) => {
                (a, x, r) == (b, y, q)
            }
            (ExitCount { cta: a }, ExitCount { cta: b })
            | (Ended { cta: a }, Ended { cta: b })
            | (Tensor { cta: a }, Tensor { cta: b })
            | (Registers { cta: a }, Registers { cta: b })
            | (AsyncOf { warp: a }, AsyncOf { warp: b }) => a == b,
            (Shared { .. } | AllShared { .. } | Arrivals { .. }, _)
            | (
                Global
                | GlobalRange { .. }
                | AllNamed { .. }
                | NamedCount { .. }
                | NamedRelease { .. }
                | ExitCount { .. }
                | Ended { .. }
                | Cluster
                | ClusterCount
                | Tensor { .. }
                | AsyncOf { .. }
                | Registers { .. },
                _,
            ) => false,
        }
    }
}

/// The objects of one step, each read or written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub accesses: Vec<(Object, bool)>,
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
        match self.accesses.iter_mut().find(|(x, _)| *x == o) {
            Some((_, w)) => *w |= write,
            None => self.accesses.push((o, write)),
        }
    }

    /// Whether the two steps may not commute: a common object, written by at least one (or
    /// `Everything`, however it was touched).
    pub fn dependent(&self, other: &Footprint) -> bool {
        let conflict = |a: &Object, wa: bool, b: &Object, wb: bool| {
            (wa || wb || *a == Object::Everything || *b == Object::Everything) && a.overlaps(b)
        };
        self.accesses.iter().any(|(a, wa)| other.accesses.iter().any(|(b, wb)| conflict(a, *wa, b, *wb)))
    }

    /// Approximate heap bytes (the explorer's memory bound counts them).
    pub fn bytes(&self) -> usize {
        self.accesses.capacity() * std::mem::size_of::<(Object, bool)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(accesses: &[(Object, bool)]) -> Footprint {
        Footprint { accesses: accesses.to_vec() }
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
        let (bar1, bar2) =
            (Object::NamedRelease { cta: 0, id: 1, round: 0 }, Object::NamedRelease { cta: 0, id: 2, round: 0 });
        assert!(!fp(&[(bar1, true)]).dependent(&fp(&[(bar2, true)])), "different named barriers");
        assert!(fp(&[(Object::AllNamed { cta: 0 }, true)]).dependent(&fp(&[(bar2, false)])), "every id");
        let (count, word) = (Object::Arrivals { cta: 0, off: 8 }, Object::Shared { cta: 0, off: 8, len: 8 });
        assert!(!fp(&[(count, false)]).dependent(&fp(&[(count, false)])), "arrivals that leave some pending");
        assert!(!fp(&[(count, false)]).dependent(&fp(&[(word, false)])), "such an arrival and a wait");
        assert!(fp(&[(count, false)]).dependent(&fp(&[(word, true)])), "such an arrival and the completing one");
        assert!(!fp(&[(Object::ClusterCount, false)]).dependent(&fp(&[(Object::ClusterCount, false)])));
        assert!(fp(&[(Object::ClusterCount, false)]).dependent(&fp(&[(Object::Cluster, true)])));
        let mut lanes = Footprint::default();
        (0..32).for_each(|l| lanes.read(Object::Shared { cta: 0, off: 1024 + 4 * l, len: 4 }));
        lanes.write(Object::Shared { cta: 0, off: 1152, len: 4 });
        let joined = [
            (Object::Shared { cta: 0, off: 1024, len: 128 }, false),
            (Object::Shared { cta: 0, off: 1152, len: 4 }, true),
        ];
        assert_eq!(lanes.accesses, joined, "a warp's run of reads is one range; a write beside it stays apart");
        assert!(!fp(&[(Object::ExitCount { cta: 0 }, true)]).dependent(&fp(&[(Object::Ended { cta: 0 }, false)])));
        let exit = fp(&[(Object::ExitCount { cta: 0 }, false), (Object::Registers { cta: 0 }, false)]);
        assert!(!exit.dependent(&exit), "exits only count up: they commute");
        assert!(exit.dependent(&fp(&[(Object::ExitCount { cta: 0 }, true)])), "an arrival that counts exits");
        assert!(exit.dependent(&fp(&[(Object::Registers { cta: 0 }, true)])), "a setmaxnreg");
        // A named barrier's round: an arrival that only counts reads its count; the completing
        // one writes it, the next round's count and the round's release.
        let count = |round| Object::NamedCount { cta: 0, id: 2, round };
        let release = |round| Object::NamedRelease { cta: 0, id: 2, round };
        let counting = fp(&[(count(5), false)]);
        let completing = fp(&[(count(5), true), (count(6), true), (release(5), true)]);
        assert!(!counting.dependent(&counting), "arrivals of one round that only count");
        assert!(counting.dependent(&completing), "an arrival and the one that completes its round");
        assert!(completing.dependent(&fp(&[(count(6), false)])), "the completion and an arrival of the next round");
        assert!(completing.dependent(&fp(&[(release(5), false)])), "the completion and its round's waiter");
        assert!(!completing.dependent(&fp(&[(release(4), false)])), "a waiter of the round before");
        assert!(!completing.dependent(&fp(&[(count(7), false)])), "an arrival two rounds later");
        assert!(!counting.dependent(&fp(&[(release(5), false)])), "an arrival and a waiter");
        assert!(counting.dependent(&fp(&[(Object::AllNamed { cta: 0 }, true)])), "every id");
        let other = Object::NamedCount { cta: 0, id: 3, round: 6 };
        assert!(!completing.dependent(&fp(&[(other, true)])), "another barrier");
        assert!(!completing.dependent(&fp(&[(Object::NamedCount { cta: 1, id: 2, round: 6 }, true)])), "another CTA");
    }
}
