//! The rules of the CTA's named barriers (`bar.sync`/`bar.arrive`, `T.cuda.cta_sync()`) that
//! PTX states and the GPU does not check (`Category::NamedBarrier`):
//! - `bar` is `.aligned`: every live thread of a warp executes the same `bar` instruction. A
//!   warp's lanes may reach it in pieces (after a divergent branch); they are gathered per warp,
//!   and a piece reaching another `bar` instruction, or the barrier completing without the rest
//!   of a warp, is reported (e.g. `cta_sync()` under `if elect_sync()`);
//! - the threads of one round (between two completions) give the same thread count (`None`,
//!   the whole CTA, equals the CTA's thread count);
//! - the count is a non-zero multiple of 32 and at most the CTA's threads, else the round can
//!   never complete.
//!
//! A round that never completes is a deadlock (`check/deadlock.rs` names the id, the count,
//! the arrivals and the waiters' lines).

use crate::report::finding::Category;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::{ranges, Engine, RepeatArrival};
use crate::sim::engine::warp::{lanes, BarGather};
use phaser_codegen::arch::limits::named_barrier_count_problem;

fn lane_list(mask: u32) -> String {
    ranges(&lanes(mask).map(|l| l as u32).collect::<Vec<_>>())
}

impl<C: Checker> Engine<'_, C> {
    /// Lanes `mask` of warp `wi` execute the `bar` instruction at `pc` on barrier `id`:
    /// gather them with the warp's earlier pieces, reporting a piece at another `bar`.
    pub(crate) fn gather_bar_lanes(&mut self, wi: usize, mask: u32, pc: u32, id: u8, what: &str) {
        let w = &self.exec.warps[wi];
        let live = w.live();
        let before = match w.bar_gather {
            Some(g) if g.pc == pc && g.id == id => g.arrived,
            Some(g) => {
                let (c, t) = (w.cta, w.base_tid + mask.trailing_zeros());
                let msg = format!(
                    "lane(s) {} of warp {} executed `{what}` while lane(s) {} of it executed another `bar` instruction{}: \
                     `bar` is .aligned, every thread of a warp executes the same one (undefined on the GPU; e.g. a \
                     `cta_sync()` under `if lane == 0` or `elect_sync()`)",
                    lane_list(mask),
                    w.base_tid / 32,
                    lane_list(g.arrived),
                    self.loc(g.pc).map(|l| format!(" ({l})")).unwrap_or_default(),
                );
                self.finding(Category::NamedBarrier, c, Some(t), None, Some(pc), msg);
                0
            }
            None => 0,
        };
        let arrived = before | mask;
        self.exec.warps[wi].bar_gather = (arrived & live != live).then_some(BarGather { pc, id, arrived });
    }

    /// The deadlock report's note on a thread that arrived twice in one round of barrier
    /// `id`: the likely cause when the waiters are short of arrivals (empty when none did).
    pub(crate) fn describe_repeat_arrival(&self, id: u8, repeat: Option<RepeatArrival>) -> String {
        let Some(r) = repeat else { return String::new() };
        let at = self.loc(r.pc).map(|l| format!(" at {l}")).unwrap_or_default();
        format!(
            "; thread {} arrived twice in round {} of `bar {id}` (the second time{at}): an arrival that does not \
             wait (`bar.arrive`) let its warp run into the barrier's next use, so its arrivals filled a round the \
             other threads were meant to share, and those came late into a round no one else will join (should \
             that arrive wait, `bar.sync`?)",
            r.thread, r.generation
        )
    }

    /// Barrier `id` of CTA `c` completes, or the launch is stuck: a warp that executed it in
    /// part (the rest of its live lanes never did) broke `.aligned`.
    pub(crate) fn check_bar_completion_warps(&mut self, c: usize, id: usize) {
        for wi in 0..self.exec.warps.len() {
            let w = &self.exec.warps[wi];
            let Some(g) = w.bar_gather.filter(|g| w.cta == c && g.id as usize == id) else { continue };
            let (live, base) = (w.live(), w.base_tid);
            self.exec.warps[wi].bar_gather = None;
            if g.arrived & live == live {
                continue;
            }
            let t = base + g.arrived.trailing_zeros();
            let msg = format!(
                "`bar {id}` completed or the launch stuck with only lane(s) {} of warp {} having executed it (lane(s) {} \
                 did not): `bar` is \
                 .aligned, every thread of a warp executes it together (undefined on the GPU; e.g. a `cta_sync()` \
                 under `if lane == 0` or `elect_sync()`)",
                lane_list(g.arrived),
                base / 32,
                lane_list(live & !g.arrived),
            );
            self.finding(Category::NamedBarrier, c, Some(t), None, Some(g.pc), msg);
        }
    }

    /// Why a thread's arrival with `count` (`None`: the whole CTA) at barrier `id` of CTA `c`
    /// breaks the count rules, if it does: a count that can never complete, or one that differs
    /// from the round's earlier arrivals.
    pub(crate) fn bar_count_problem(&self, c: usize, id: usize, count: Option<u32>) -> Option<String> {
        let tpc = self.exec.threads_per_cta;
        // The same rule the builder checks constants with, here with the launched block.
        if let Some(p) = count.and_then(|k| named_barrier_count_problem(k as i128, Some(tpc as u64))) {
            return Some(format!("`bar {id}, {}`: {p}", count.unwrap_or(0)));
        }
        let nb = &self.exec.ctas[c].named[id];
        let (now, before) = (count.unwrap_or(tpc), nb.expected.unwrap_or(tpc));
        (nb.arrived > 0 && now != before).then(|| {
            format!(
                "threads arrive at named barrier {id} with a count of {now} where this round's {} earlier arrivals \
                 gave {before}: every thread of one round must give the same count",
                nb.arrived
            )
        })
    }
}
