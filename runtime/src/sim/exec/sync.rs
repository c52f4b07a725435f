//! CTA barriers (`bar.sync`/`bar.arrive`), the cluster barrier, fences, `mapa`, `trap`,
//! `bar.warp.sync` and `elect.sync` (warp collective rounds: `warp_sync.rs`).

use crate::report::finding::Category;
use crate::sim::check::Checker;
use crate::sim::engine::cluster::{Engine, RepeatArrival};
use crate::sim::engine::memory::{cluster_shared_addr, SHARED_OFFSET_MASK};
use crate::sim::engine::step_round::{ClusterTouch, NamedTouch, PoolStep};
use crate::sim::engine::warp::{lanes, RoundKind, WaitFor};
use phaser_codegen::arch::limits::NAMED_BARRIERS;
use phaser_codegen::ir::*;

/// A named-barrier operation (`bar.sync`/`bar.arrive`): the barrier id, the thread count
/// (`None`: the whole CTA) and whether the thread waits for the others.
#[derive(Clone, Copy)]
struct NamedBarrierOp<'v> {
    id: &'v Value,
    count: Option<&'v Value>,
    wait: bool,
}

impl<C: Checker> Engine<'_, C> {
    /// `setmaxnreg`: the warp's registers per thread come from (`.inc`) or go back to (`.dec`)
    /// its CTA's pool, the `.maxnreg` of the launch for every warp. An `.inc` the pool cannot
    /// hold waits until other warps release registers; if none ever does, the GPU hangs there
    /// (a deadlock at this line). Not modelled without a `.maxnreg`.
    fn set_max_nreg(&mut self, wi: usize, l: usize, inc: bool, count: u32, pc: u32) {
        let held = self.exec.warps[wi].regs_per_thread;
        if held == 0 {
            return;
        }
        let fits = !inc || self.register_pool_free(wi) >= count as u64;
        // What the explorer needs to know of it (`PoolStep`): whether it only freed, took, or blocked.
        let step = match (inc, fits) {
            (false, _) if count <= held => PoolStep::Freed,
            (false, _) => PoolStep::Took,
            (true, _) if count < held || count == 0 => PoolStep::Other,
            (true, true) => PoolStep::Took,
            (true, false) => PoolStep::Blocked,
        };
        self.touch_register_pool(step);
        if fits {
            self.exec.warps[wi].regs_per_thread = count;
        } else {
            self.block_lane(wi, l, WaitFor::RegisterPool { count, pc });
        }
    }

    /// The CTA pool's registers per thread that warp `wi` could hold: the pool (`.maxnreg`
    /// for each of the CTA's warps) less what its other live warps hold.
    pub(crate) fn register_pool_free(&self, wi: usize) -> u64 {
        let cta = self.exec.warps[wi].cta;
        let per_warp = self.cx.kernel.bounds().maxnreg.unwrap_or(0) as u64;
        let warps: Vec<usize> = (0..self.exec.warps.len()).filter(|&w| self.exec.warps[w].cta == cta).collect();
        let held: u64 = warps
            .iter()
            .filter(|&&w| w != wi && self.exec.warps[w].live() != 0)
            .map(|&w| self.exec.warps[w].regs_per_thread as u64)
            .sum();
        (per_warp * warps.len() as u64).saturating_sub(held)
    }

    pub(crate) fn exec_sync(&mut self, wi: usize, mask: u32, pc: u32, op: &SyncOp) {
        let c = self.exec.warps[wi].cta;
        if let SyncOp::BarSync { id, .. } | SyncOp::BarArrive { id, .. } = op {
            // The first lane's id names the barrier; `.aligned` means every lane gives the same.
            let first = lanes(mask).next().unwrap_or(0);
            let id_value = self.val(wi, first, id);
            if id_value < NAMED_BARRIERS as u64 {
                let what = if matches!(op, SyncOp::BarSync { .. }) { "bar.sync" } else { "bar.arrive" };
                self.gather_bar_lanes(wi, mask, pc, id_value as u8, what);
            }
        }
        for l in lanes(mask) {
            let t = self.cluster_thread(wi, l);
            match op {
                SyncOp::BarSync { id, count } => {
                    self.bar_arrive(wi, l, t, c, NamedBarrierOp { id, count: count.as_ref(), wait: true }, pc)
                }
                SyncOp::BarArrive { id, count } => {
                    self.bar_arrive(wi, l, t, c, NamedBarrierOp { id, count: Some(count), wait: false }, pc)
                }
                SyncOp::FenceMbarrierInit => {}
                SyncOp::MemBar { scope } => {
                    if let Some(go) = self.global_order.as_mut() {
                        go.fence(c, *scope);
                    }
                }
                SyncOp::SetMaxNReg { inc, count } => self.set_max_nreg(wi, l, *inc, *count, pc),
                SyncOp::FenceProxyAsync { space } => {
                    self.checker.on_fence_proxy_async(t);
                    // Global memory's part: the async proxy's later reads see what the CTA acquired.
                    if let (ProxySpace::All | ProxySpace::Global, Some(go)) = (space, self.global_order.as_mut()) {
                        go.proxy_fence(c);
                    }
                }
                // `.sync`: every lane of the member mask (the whole warp) waits for the others,
                // then exactly one of them is the leader (even if the lanes came in groups).
                SyncOp::ElectSync { pred } => {
                    self.collective_arrive(wi, l, u32::MAX, pc, RoundKind::Elect { dst: pred.id }, [0; 5])
                }
                SyncOp::ActiveMask { dst } => self.set(wi, l, *dst, mask as u64),
                SyncOp::Mapa { dst, addr, cta } => {
                    let a = self.val(wi, l, addr) as u32 & SHARED_OFFSET_MASK;
                    let r = self.val(wi, l, cta) as u32;
                    if r as usize >= self.exec.ctas.len() {
                        self.fault(
                            c,
                            t,
                            pc,
                            format!("mapa to CTA rank {r} in a cluster of {} CTAs", self.exec.ctas.len()),
                        );
                        return;
                    }
                    self.set(wi, l, *dst, cluster_shared_addr(r, a));
                }
                SyncOp::ClusterArrive { relaxed } => {
                    self.checker.on_cluster_arrive(t, *relaxed);
                    let round = self.exec.cluster_barrier.generation;
                    self.exec.cluster_arrival[t as usize] = Some(round);
                    self.exec.cluster_barrier.arrived += 1;
                    let completed = self.check_cluster_barrier();
                    self.touch_cluster(ClusterTouch { round, arrival: true, completed });
                }
                SyncOp::ClusterWait => {
                    let generation = match self.exec.cluster_arrival[t as usize].take() {
                        Some(arrived_in) => arrived_in,
                        None => {
                            self.touch_cluster_generation();
                            self.exec.cluster_barrier.generation
                        }
                    };
                    self.block_lane(wi, l, WaitFor::ClusterBarrier { generation, pc });
                }
                SyncOp::WarpSync { mask } => {
                    let m = self.val(wi, l, mask) as u32;
                    self.collective_arrive(wi, l, m, pc, RoundKind::WarpSync, [0; 5]);
                }
                // The previous launch completed before this one started (launches run in
                // order): the wait returns at once, and this thread's later global accesses
                // are ordered after that launch (`check/pdl.rs`).
                SyncOp::GridDepWait => self.exec.grid_dep_waited[t as usize] = true,
                // Dropped when the program is lowered (`program.rs`): no-ops here.
                SyncOp::Nanosleep { .. } | SyncOp::GridDepLaunchDependents => {}
                SyncOp::Trap => {
                    self.finding(Category::Trap, c, Some(t), None, Some(pc), "the kernel executed `trap`".into());
                    self.abort = true;
                    return;
                }
            }
        }
    }

    fn bar_arrive(
        &mut self,
        wi: usize,
        l: usize,
        t: u32,
        c: usize,
        NamedBarrierOp { id, count, wait }: NamedBarrierOp,
        pc: u32,
    ) {
        let id = self.val(wi, l, id) as usize;
        if id >= NAMED_BARRIERS as usize {
            self.finding(Category::Unsupported, c, Some(t), None, Some(pc), format!("`bar.sync {id}`: ids are 0-15"));
            self.abort = true;
            return;
        }
        let expected = count.map(|v| self.val(wi, l, v) as u32);
        if let Some(msg) = self.bar_count_problem(c, id, expected) {
            self.finding(Category::NamedBarrier, c, Some(t), None, Some(pc), msg);
        }
        self.checker.on_named_arrive(t, c, id);
        let counts_exits = expected.is_none() && self.exec.ctas[c].named[id].expected.is_none();
        let nb = &mut self.exec.ctas[c].named[id];
        if let Some(k) = expected {
            nb.expected = Some(k);
        }
        if nb.round_lanes.len() <= wi {
            nb.round_lanes.resize(wi + 1, 0);
        }
        if nb.round_lanes[wi] & (1 << l) != 0 && nb.repeat.is_none() {
            nb.repeat = Some(RepeatArrival { thread: t % self.exec.threads_per_cta, pc, generation: nb.generation });
        }
        nb.round_lanes[wi] |= 1 << l;
        nb.arrived += 1;
        let generation = nb.generation;
        if wait {
            nb.waiters.push(t);
            self.block_lane(wi, l, WaitFor::NamedBarrier { id: id as u8, generation, pc });
        }
        self.check_named(c, id);
        let completed = self.exec.ctas[c].named[id].generation != generation;
        self.touch_named(NamedTouch { cta: c, id: id as u8, round: generation, counts_exits, completed });
    }
}
