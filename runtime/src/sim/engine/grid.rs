//! The grid: clusters run side by side, a cluster that waits for another (a global flag, a
//! tile counter handed out by atomics) sees it progress. Up to `SimConfig::max_resident_ctas`
//! CTAs are resident (as on the GPU, where a CTA starts when an SM is free); a cluster starts
//! when one finishes.
//!
//! Time advances in epochs of `EPOCH_ROUNDS` scheduler rounds. Within an epoch every resident
//! cluster runs on its own view of global memory (`global_view.rs`: the memory at the epoch's
//! start plus its own writes; atomics wait for the epoch's end when other clusters run), so
//! the clusters of an epoch are independent and run on `SimConfig::threads` cores. At the end
//! of the epoch their writes and atomics are applied in cluster order. The result depends on
//! the seed only, never on the number of threads.
//!
//! Non-progress across clusters (every live warp of every resident cluster loops without
//! effect or waits, at two epoch ends in a row with nothing changed in between) ends the
//! launch with `InfiniteLoop` findings instead of running to the step limit.

use crate::error::Result;
use crate::sim::check::global_order::GlobalOrder;
use crate::sim::check::progress::{footprints_overlap, Epoch};
use crate::sim::check::Checker;
use crate::sim::engine::cluster::{Engine, LaunchCtx};
use crate::sim::engine::memory::GlobalMemory;
use crate::sim::engine::run_loop::RoundEnd;
use crate::sim::engine::warp::WaitFor;
use crate::sim::exec::memory::atom_apply;
use crate::sim::output::collector::Collector;
use std::sync::Arc;

/// Scheduler rounds per epoch.
const EPOCH_ROUNDS: u32 = 32;

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

/// A resident cluster: which launch of the group it belongs to, its engine, whether it
/// finished.
struct Resident<'a, C: Checker> {
    launch: usize,
    engine: Engine<'a, C>,
    finished: bool,
    /// The cluster's global writes that end repetitions when the epoch began.
    writes_before: u64,
}

/// Run one epoch of a cluster.
fn run_epoch<C: Checker>(r: &mut Resident<C>) -> Result<()> {
    for _ in 0..EPOCH_ROUNDS {
        if r.engine.round()? == RoundEnd::Finished {
            r.finished = true;
            break;
        }
    }
    Ok(())
}

/// Run one epoch of every resident cluster, on up to `threads` cores.
fn run_epochs<C: Checker>(resident: &mut [Resident<C>], threads: usize) -> Result<()> {
    let threads = threads.clamp(1, resident.len().max(1));
    if threads == 1 {
        return resident.iter_mut().try_for_each(run_epoch);
    }
    let per = resident.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> =
            resident.chunks_mut(per).map(|chunk| s.spawn(move || chunk.iter_mut().try_for_each(run_epoch))).collect();
        handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// Apply a cluster's epoch to memory: its writes, then its atomics (whose lanes go on); and
/// to the global order, in the same order.
fn commit<C: Checker>(e: &mut Engine<C>, mem: &mut GlobalMemory, order: &mut GlobalOrder) {
    e.global.commit(mem);
    if let Some(mut view) = e.global_order.take() {
        for c in order.commit(&mut view) {
            e.report_global_conflict(c, None, &|a| mem.describe(a));
        }
        for _ in &e.global.atomics {
            order.commit_atomic(&mut view);
        }
        e.global_order = Some(view);
    }
    for a in std::mem::take(&mut e.global.atomics) {
        let size = a.ty.size() as usize;
        let old = mem.load(a.addr, size).expect("checked when issued");
        mem.store(a.addr, size, atom_apply(a.op, a.ty, phaser_codegen::ir::Space::Global, old, a.value, a.cmp));
        e.global.writes += 1;
        e.watch_global(a.warp, a.addr, size as u32, true);
        if a.dst.is_some_and(|d| e.cx.program.is_observable(d)) {
            e.watch_global(a.warp, a.addr, size as u32, false);
        }
        let w = &mut e.exec.warps[a.warp];
        if let Some(dst) = a.dst {
            w.regs[dst.id as usize * 32 + a.lane] = old;
        }
        w.blocked &= !(1 << a.lane);
        w.runnable |= 1 << a.lane;
        w.wait[a.lane] = WaitFor::Nothing;
    }
}

/// Every live warp of every resident cluster repeats its state or waits, nothing is in
/// flight, no watched warp's global writes reach what a watched warp reads
/// (`check/progress.rs`), and at least one repeats: the epochs it holds under.
fn stuck<C: Checker>(resident: &[Resident<C>]) -> Option<Vec<Epoch>> {
    let mut any = false;
    let mut epochs = Vec::new();
    for r in resident {
        let e = &r.engine;
        if r.finished || !e.async_ops.in_flight.is_empty() || !e.global.atomics.is_empty() {
            return None;
        }
        let now = e.epoch();
        for w in &e.exec.warps {
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
    let footprints = resident.iter().flat_map(|r| r.engine.exec.warps.iter().map(|w| &w.cycle.footprint));
    if any && footprints_overlap(footprints.clone(), footprints) {
        return None;
    }
    any.then_some(epochs)
}

/// Run every cluster of the launch on `gmem`; findings, trace, probes and statistics go to
/// `out`.
pub(crate) fn run<C: Checker>(cx: &LaunchCtx, gmem: &mut GlobalMemory, out: &mut Collector) -> Result<()> {
    run_group::<C>(std::slice::from_ref(cx), gmem, std::slice::from_mut(out))
}

/// Run the launches of several devices of one system together (`crate::launch_group`): their
/// clusters share the epochs (each device with its own resident limit), so a cluster of one
/// device sees another device's writes from the next epoch on, as it sees its own device's
/// other clusters. `outs[i]` collects launch `i`'s report; an error in any launch ends them
/// all (as a fault on one GPU of a group leaves the others waiting: each report names the
/// CTAs cut short). The settings of the first launch decide what the group shares (threads).
pub(crate) fn run_group<C: Checker>(cxs: &[LaunchCtx], gmem: &mut GlobalMemory, outs: &mut [Collector]) -> Result<()> {
    let mut memory = Arc::new(std::mem::take(gmem));
    let ran = run_on::<C>(cxs, &mut memory, outs);
    *gmem = Arc::try_unwrap(memory).unwrap_or_else(|_| unreachable!("every cluster returned the memory"));
    ran
}

/// One launch's clusters and how far the group got through them.
struct Queue {
    all: Vec<Vec<[u32; 3]>>,
    next: usize,
    limit: usize,
    trace_room: usize,
}

fn run_on<C: Checker>(cxs: &[LaunchCtx], memory: &mut Arc<GlobalMemory>, outs: &mut [Collector]) -> Result<()> {
    let mut queues: Vec<Queue> = cxs
        .iter()
        .map(|cx| {
            let all = clusters(cx.launch.grid, cx.cluster_dim);
            let ctas_per_cluster = all.first().map_or(1, |c| c.len());
            let footprint = Engine::<C>::footprint(cx, ctas_per_cluster).max(1);
            let room = cx.config.max_memory_bytes.saturating_sub(memory.bytes());
            let limit = ((cx.config.max_resident_ctas as usize / ctas_per_cluster).max(1))
                .min((room / footprint).max(1) as usize);
            let trace_room = if cx.config.trace { cx.config.max_trace_events } else { 0 };
            Queue { all, next: 0, limit, trace_room }
        })
        .collect();
    let threads = cxs.first().map_or(1, |cx| cx.config.threads);
    let mut resident: Vec<Resident<C>> = Vec::new();
    let mut committed_writes = 0u64;
    let mut last_stuck: Option<Vec<Epoch>> = None;
    // One order for every launch of the group: release/acquire edges cross devices too.
    let mut order = Arc::new(GlobalOrder::default());
    let finish = |launch: usize, e: Engine<C>, outs: &mut [Collector]| {
        let n = e.exec.ctas.len() as u64;
        let out = &mut outs[launch];
        out.merge(e.out, cxs[launch].config);
        out.stats.ctas += n;
        out.stats.clusters += 1;
    };
    loop {
        for (l, (cx, q)) in cxs.iter().zip(queues.iter_mut()).enumerate() {
            let mut on = resident.iter().filter(|r| r.launch == l).count();
            while on < q.limit && q.next < q.all.len() {
                // Launch 0's salts are those of a launch alone: a group of one runs as it did.
                let salt = ((l as u64) << 32) | (q.next as u64 + 1);
                let engine = Engine::new(cx, &q.all[q.next], salt, memory.bytes())?;
                resident.push(Resident { launch: l, engine, finished: false, writes_before: 0 });
                q.next += 1;
                on += 1;
            }
        }
        if resident.is_empty() {
            return Ok(());
        }
        // Lend the memory to the clusters for one epoch; each gets a share of its launch's
        // trace.
        let defer = resident.len() > 1;
        let shares: Vec<usize> = queues
            .iter()
            .enumerate()
            .map(|(l, q)| q.trace_room / resident.iter().filter(|r| r.launch == l).count().max(1))
            .collect();
        for r in resident.iter_mut() {
            r.engine.global.begin(Arc::clone(memory), defer);
            if let Some(view) = r.engine.global_order.as_mut() {
                view.begin(Arc::clone(&order));
            }
            r.writes_before = r.engine.global.public_writes();
            r.engine.visible_writes = committed_writes - r.writes_before;
            r.engine.trace_room = shares[r.launch];
        }
        let ran = run_epochs(&mut resident, threads);
        for r in resident.iter_mut() {
            r.engine.global.drop_base();
            if let Some(view) = r.engine.global_order.as_mut() {
                view.drop_base();
            }
        }
        ran?;
        let mem = Arc::get_mut(memory).expect("the clusters returned the memory");
        let ord = Arc::get_mut(&mut order).expect("the clusters returned the global order");
        for r in resident.iter_mut() {
            commit(&mut r.engine, mem, ord);
            committed_writes += r.engine.global.public_writes() - r.writes_before;
            queues[r.launch].trace_room -= shares[r.launch] - r.engine.trace_room;
        }
        ord.end_epoch();
        let mut stop = false;
        let mut i = 0;
        while i < resident.len() {
            if resident[i].finished {
                let r = resident.remove(i);
                let mut e = r.engine;
                if let Some(run) = e.cx.steps {
                    run.lock().unwrap_or_else(|p| p.into_inner()).trips = e.loop_trips();
                }
                // An execution the explorer ended early did not reach the kernel's end.
                if !e.steps.cut {
                    e.finish_checks();
                }
                finish(r.launch, e, outs);
                stop |= outs[r.launch].has_errors();
            } else {
                i += 1;
            }
        }
        if stop {
            // Errors end the launch (as a fault ends a kernel); what the other clusters found so
            // far is reported too, and the report names every CTA that did not run to its end.
            for r in resident.drain(..) {
                let out = &mut outs[r.launch];
                out.cut_short.stopped.extend(r.engine.exec.ctas.iter().map(|c| c.ctaid));
                out.merge(r.engine.out, cxs[r.launch].config);
            }
            for (q, out) in queues.iter().zip(outs.iter_mut()) {
                out.cut_short.not_started.extend(q.all[q.next..].iter().flatten().copied());
            }
            return Ok(());
        }
        for (l, cx) in cxs.iter().enumerate() {
            let total = outs[l].stats.thread_instructions
                + resident.iter().filter(|r| r.launch == l).map(|r| r.engine.out.stats.thread_instructions).sum::<u64>();
            if total > cx.config.max_steps {
                let r = resident.iter().find(|r| r.launch == l).expect("a launch over its budget has a cluster running");
                return Err(r.engine.limit_error(total));
            }
        }
        match stuck(&resident) {
            Some(epochs) if last_stuck.as_ref() == Some(&epochs) => {
                for r in resident.drain(..) {
                    let mut e = r.engine;
                    // The report reads the flags the loops spin on.
                    e.global.begin(Arc::clone(memory), false);
                    e.report_infinite_loop();
                    e.global.drop_base();
                    finish(r.launch, e, outs);
                }
                return Ok(());
            }
            s => last_stuck = s,
        }
    }
}
