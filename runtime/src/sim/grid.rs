//! The grid: clusters run interleaved, a round of each resident cluster at a time, so a
//! cluster that waits for another (a global flag, a tile counter handed out by atomics) sees
//! it progress. Up to `SimConfig::max_resident_ctas` CTAs are resident (as on the GPU, where a
//! CTA starts when an SM is free); a cluster starts when one finishes. Clusters share only
//! global memory; each has its own scheduler seed, clock, checker and findings, merged in the
//! order the clusters finish (deterministic for a seed).
//!
//! Non-progress across clusters (every live warp of every resident cluster loops without
//! effect or waits, twice in a row with nothing changed in between) ends the launch with
//! `InfiniteLoop` findings instead of running to the step limit.

use super::check::Checker;
use super::cluster::{Engine, LaunchCtx};
use super::progress::Epoch;
use super::report::Collector;
use super::run_loop::RoundEnd;
use crate::error::Result;

/// Turns between two non-progress checks.
const STUCK_CHECK_EVERY: u64 = 16;

/// The `%ctaid`s of every cluster of the launch, in launch order, each in rank order.
fn clusters(grid: [u32; 3], cd: [u32; 3]) -> Vec<Vec<[u32; 3]>> {
    let mut out = Vec::new();
    for qz in 0..grid[2] / cd[2] {
        for qy in 0..grid[1] / cd[1] {
            for qx in 0..grid[0] / cd[0] {
                let mut ctaids = Vec::new();
                for z in 0..cd[2] {
                    for y in 0..cd[1] {
                        for x in 0..cd[0] {
                            ctaids.push([qx * cd[0] + x, qy * cd[1] + y, qz * cd[2] + z]);
                        }
                    }
                }
                out.push(ctaids);
            }
        }
    }
    out
}

/// Every live warp of every resident cluster repeats its state or waits, no copy is in
/// flight, and at least one repeats: the epochs it holds under.
fn stuck<C: Checker>(resident: &[(usize, Engine<'_, C>)]) -> Option<Vec<Epoch>> {
    let mut any = false;
    let mut epochs = Vec::new();
    for (_, e) in resident {
        if !e.agents.is_empty() {
            return None;
        }
        let now = e.epoch();
        for w in &e.warps {
            if w.live() == 0 {
                continue;
            }
            if w.cycle.repeats_under(now) {
                any = true;
            } else if w.runnable != 0 {
                return None;
            }
        }
        epochs.push(now);
    }
    any.then_some(epochs)
}

/// Run every cluster of the launch; findings, trace, probes and statistics go to `out`.
pub(crate) fn run<C: Checker>(cx: &LaunchCtx, out: &mut Collector) -> Result<()> {
    let all = clusters(cx.launch.grid, cx.cluster_dim);
    let ctas_per_cluster = all.first().map_or(1, |c| c.len());
    let footprint = Engine::<C>::footprint(cx, ctas_per_cluster).max(1);
    let room = cx.config.max_memory_bytes.saturating_sub(cx.gmem.borrow().bytes());
    let limit =
        ((cx.config.max_resident_ctas as usize / ctas_per_cluster).max(1)).min((room / footprint).max(1) as usize);
    let mut resident: Vec<(usize, Engine<C>)> = Vec::new();
    let mut next = 0usize;
    let mut order = Vec::new();
    let mut turns = 0u64;
    let mut last_stuck: Option<Vec<Epoch>> = None;
    let finish = |e: Engine<C>, out: &mut Collector| {
        let n = e.ctas.len() as u64;
        out.merge(e.out, cx.config);
        out.stats.ctas += n;
        out.stats.clusters += 1;
    };
    loop {
        while resident.len() < limit && next < all.len() {
            resident.push((next, Engine::new(cx, &all[next], next as u64 + 1)?));
            next += 1;
        }
        if resident.is_empty() {
            return Ok(());
        }
        let mut stop = false;
        let mut i = 0;
        while i < resident.len() {
            if resident[i].1.round(&mut order)? == RoundEnd::Finished {
                let (_, mut e) = resident.remove(i);
                e.finish_checks();
                finish(e, out);
                stop |= out.has_errors();
            } else {
                i += 1;
            }
        }
        if stop {
            // Errors end the launch; what the other clusters found so far is reported too.
            for (_, e) in resident.drain(..) {
                finish(e, out);
            }
            return Ok(());
        }
        let total =
            out.stats.thread_instructions + resident.iter().map(|(_, e)| e.out.stats.thread_instructions).sum::<u64>();
        if total > cx.config.max_steps {
            return Err(resident[0].1.limit_error(total));
        }
        turns += 1;
        if turns.is_multiple_of(STUCK_CHECK_EVERY) {
            match stuck(&resident) {
                Some(epochs) if last_stuck.as_ref() == Some(&epochs) => {
                    for (_, mut e) in resident.drain(..) {
                        e.report_infinite_loop();
                        finish(e, out);
                    }
                    return Ok(());
                }
                s => last_stuck = s,
            }
        }
    }
}
