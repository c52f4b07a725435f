//! Dynamic partial-order reduction over the explored executions (Flanagan and Godefroid,
//! POPL 2005, with sleep sets): after each execution, every pair of dependent steps of
//! different actors that are not ordered by happens-before (vector clocks over the steps) is a
//! race, and the state before the earlier step gets a backtrack point: the later step's actor
//! (or, if it could not run there, every actor that could). The explorer then re-runs from the
//! launch with the deepest pending backtrack point's prefix. Actors in a state's sleep set
//! (explored there already, independent of what ran since) are not tried again.

use crate::report::schedule::Actor;
use crate::sim::explore::footprint::{Footprint, Object};
use crate::sim::explore::guided::Recorded;
use std::collections::{BTreeSet, HashMap};

/// A state of the exploration tree on the current path.
#[derive(Debug)]
pub(crate) struct Node {
    pub enabled: Vec<Actor>,
    pub chosen: Actor,
    pub footprint: Footprint,
    pub spawned: Vec<Actor>,
    pub sleep: Vec<(Actor, Footprint)>,
    /// Actors to try from this state.
    pub backtrack: BTreeSet<Actor>,
    /// Actors tried from this state, with their step's footprint.
    pub done: Vec<(Actor, Footprint)>,
    /// What kind of step `chosen` took (`Recorded::kind`).
    pub kind: &'static str,
}

impl Node {
    fn from(r: Recorded) -> Node {
        Node {
            done: vec![(r.chosen, r.footprint.clone())],
            backtrack: BTreeSet::from([r.chosen]),
            enabled: r.enabled,
            chosen: r.chosen,
            footprint: r.footprint,
            spawned: r.spawned,
            sleep: r.sleep,
            kind: r.kind,
        }
    }
}

/// The next execution to run: the steps to take, and the sleep set after them.
pub(crate) struct Branch {
    pub prefix: Vec<Actor>,
    pub sleep: Vec<(Actor, Footprint)>,
}

#[derive(Debug, Default)]
pub(crate) struct Dpor {
    pub nodes: Vec<Node>,
    /// When counting (`PHASER_EXPLORE_RACES`): the races found, by what they were.
    pub races: Option<RaceCounts>,
}

/// A race's key: the earlier step's kind, the later step's kind, the object they conflict on
/// (a named barrier's round left out, so the rounds of one barrier count together).
pub(crate) type RaceKey = (&'static str, &'static str, String);

/// Per kind of race: how often it was found, how many backtrack points it added that were
/// new (an actor not tried there yet: what makes executions), and how many of those fell back
/// to every enabled actor (the later step's actor could not run at the earlier state).
#[derive(Debug, Default)]
pub(crate) struct RaceCounts {
    pub by_key: std::collections::BTreeMap<RaceKey, [u64; 3]>,
}

impl RaceCounts {
    fn count(&mut self, key: RaceKey, new: bool, fallback: bool) {
        let c = self.by_key.entry(key).or_default();
        c[0] += 1;
        c[1] += new as u64;
        c[2] += (new && fallback) as u64;
    }

    /// The counts as a table, most new backtrack points first.
    pub fn table(&self) -> String {
        let mut rows: Vec<_> = self.by_key.iter().collect();
        rows.sort_by_key(|(_, c)| std::cmp::Reverse((c[1], c[0])));
        let mut out = String::from(
            "races | new backtrack points | of those, every enabled actor | earlier step | later step | object\n",
        );
        for ((a, b, o), c) in rows {
            out += &format!("{} | {} | {} | {a} | {b} | {o}\n", c[0], c[1], c[2]);
        }
        out
    }
}

/// The object two footprints conflict on, for the race counts.
fn conflict_object(a: &Footprint, b: &Footprint) -> String {
    let hit = a.accesses.iter().find_map(|(x, wx)| {
        b.accesses.iter().find_map(|(y, wy)| {
            let c = (*wx || *wy || *x == Object::Everything || *y == Object::Everything) && x.overlaps(y);
            c.then_some(if *wx { *x } else { *y })
        })
    });
    match hit {
        Some(Object::NamedArrival { cta, id, .. }) => format!("NamedArrival {{ cta: {cta}, id: {id} }}"),
        Some(Object::MbarArrival { cta, off, .. }) => format!("MbarArrival {{ cta: {cta}, off: {off} }}"),
        Some(Object::ClusterArrival { .. }) => "ClusterArrival".into(),
        Some(o) => format!("{o:?}"),
        // The end of a CTA (`Footprint::end_writes`).
        None => {
            let end = |x: &Footprint, y: &Footprint| {
                x.end_writes.iter().find(|e| y.accesses.iter().any(|(o, _)| e.overlaps(o))).copied()
            };
            end(a, b).or_else(|| end(b, a)).map_or("?".into(), |o| format!("the CTA's end: {o:?}"))
        }
    }
}

impl Dpor {
    /// Take an execution's steps: those of the prefix re-ran known states (the last one with
    /// its new actor), the rest are new states. Returns how many states are new.
    pub fn absorb(&mut self, prefix_len: usize, steps: Vec<Recorded>) -> usize {
        let mut steps = steps.into_iter();
        if prefix_len > 0 {
            // The branch point: the node whose new actor the prefix ends with.
            let n = prefix_len - 1;
            self.nodes.truncate(prefix_len);
            if let Some(r) = steps.nth(n) {
                let node = &mut self.nodes[n];
                node.chosen = r.chosen;
                node.footprint = r.footprint.clone();
                node.spawned = r.spawned;
                node.kind = r.kind;
                node.done.push((r.chosen, r.footprint));
            }
        }
        let before = self.nodes.len();
        self.nodes.extend(steps.map(Node::from));
        self.nodes.len() - before
    }

    /// Add the backtrack points of the races on the current path.
    pub fn analyze(&mut self) {
        let mut index: HashMap<Actor, usize> = HashMap::new();
        let mut actor_clock: HashMap<Actor, Vec<u32>> = HashMap::new();
        let mut clocks: Vec<Vec<u32>> = Vec::with_capacity(self.nodes.len());
        let mut actor_of = Vec::with_capacity(self.nodes.len());
        for j in 0..self.nodes.len() {
            let p = self.nodes[j].chosen;
            let n = index.len();
            let pi = *index.entry(p).or_insert(n);
            actor_of.push(pi);
            let base = actor_clock.get(&p).cloned().unwrap_or_default();
            let before =
                |clock: &[u32], actor: usize, step: usize| clock.get(actor).is_some_and(|&c| c as usize > step);
            let mut clock = base;
            let mut race = None;
            for i in (0..j).rev() {
                let (a, b) = (&self.nodes[i].footprint, &self.nodes[j].footprint);
                if actor_of[i] == pi || !a.orders(b) {
                    continue;
                }
                // Ordered without a race: `j` acquires what `i` wrote (it could not run first),
                // even where the two are also dependent (`Footprint::follows`).
                let racy = a.dependent(b) && !b.follows(a);
                // Not ordered by the steps between (their clocks are joined in `clock`): a race,
                // unless step `i` is what enabled `p` (it could not run before `i`, and since
                // `i` ran it could: the order is causal, and the race to look for is earlier).
                if race.is_none() && racy && !before(&clock, actor_of[i], i) && !self.enabled_by(i, p) {
                    race = Some(i);
                }
                join(&mut clock, &clocks[i]);
            }
            if clock.len() <= pi {
                clock.resize(pi + 1, 0);
            }
            clock[pi] = j as u32 + 1;
            if let Some(i) = race {
                let key = self.races.is_some().then(|| {
                    let (a, b) = (&self.nodes[i], &self.nodes[j]);
                    (a.kind, b.kind, conflict_object(&a.footprint, &b.footprint))
                });
                let node = &mut self.nodes[i];
                let before = node.backtrack.len();
                let fallback = !node.enabled.contains(&p);
                if fallback {
                    node.backtrack.extend(node.enabled.iter().copied());
                } else {
                    node.backtrack.insert(p);
                }
                let new = node.backtrack.len() > before;
                if let (Some(counts), Some(key)) = (&mut self.races, key) {
                    counts.count(key, new, fallback);
                }
            }
            for &a in &self.nodes[j].spawned {
                actor_clock.insert(a, clock.clone());
            }
            actor_clock.insert(p, clock.clone());
            clocks.push(clock);
        }
    }

    /// Whether step `i` enabled actor `p`: `p` could not run in the state before it and could
    /// in the state after. (A warp parked on failed polls counts as unable: its step there
    /// would have been one more failed poll, which changes nothing.)
    fn enabled_by(&self, i: usize, p: Actor) -> bool {
        !self.nodes[i].enabled.contains(&p) && self.nodes.get(i + 1).is_some_and(|n| n.enabled.contains(&p))
    }

    /// The deepest state with an actor left to try, as the next execution; `None`: every
    /// execution that matters was explored.
    pub fn next_branch(&mut self) -> Option<Branch> {
        while let Some(node) = self.nodes.last() {
            let asleep = |a: &Actor| node.sleep.iter().any(|(s, _)| s == a) || node.done.iter().any(|(d, _)| d == a);
            if let Some(&q) = node.backtrack.iter().find(|a| !asleep(a)) {
                let n = self.nodes.len() - 1;
                let mut prefix: Vec<Actor> = self.nodes[..n].iter().map(|x| x.chosen).collect();
                prefix.push(q);
                let node = &self.nodes[n];
                let sleep = node.sleep.iter().chain(node.done.iter()).cloned().collect();
                return Some(Branch { prefix, sleep });
            }
            self.nodes.pop();
        }
        None
    }

    /// Approximate bytes the exploration holds (the memory bound).
    pub fn bytes(&self) -> u64 {
        let entry = std::mem::size_of::<(Actor, Footprint)>();
        self.nodes
            .iter()
            .map(|n| {
                std::mem::size_of::<Node>()
                    + n.enabled.len() * std::mem::size_of::<Actor>()
                    + n.backtrack.len() * 2 * std::mem::size_of::<Actor>()
                    + n.footprint.bytes()
                    + (n.sleep.len() + n.done.len()) * entry
                    + n.sleep.iter().chain(&n.done).map(|(_, f)| f.bytes()).sum::<usize>()
            })
            .sum::<usize>() as u64
    }
}

fn join(into: &mut Vec<u32>, other: &[u32]) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, &b) in into.iter_mut().zip(other) {
        *a = (*a).max(b);
    }
}
