//! The warp loop: runs the lanes of a warp together while they agree on the program counter
//! (one dispatch per warp-instruction, a tight per-lane loop over `regs[reg * 32 + lane]`);
//! lanes regroup at the lowest program counter after branches. Other instructions go to the
//! slow path (`exec.rs`).

use crate::error::Result;
use crate::sim::check::Checker;
use crate::sim::engine::arith::cvt_rounded;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::program::{Op, Opnd, Visible};
use crate::sim::engine::warp::lanes;
use phaser_codegen::ir::SpecialReg;

#[inline(always)]
fn get(regs: &[u64], o: Opnd, l: usize) -> u64 {
    match o {
        Opnd::R(r) => regs[r as usize * 32 + l],
        Opnd::I(v) => v,
    }
}

macro_rules! each_lane {
    ($mask:expr, $l:ident, $body:block) => {
        if $mask == u32::MAX {
            for $l in 0..32usize $body
        } else {
            for $l in lanes($mask) $body
        }
    };
}

impl<C: Checker> Engine<'_, C> {
    /// Run up to `budget` warp-instructions of warp `wi`; returns how many ran.
    pub(crate) fn run_warp(&mut self, wi: usize, budget: u32) -> Result<u32> {
        let prog = self.cx.program;
        let mut executed = 0u32;
        'regroup: while executed < budget && !self.abort {
            let Some((mask, mut pc)) = self.pick_group(wi) else { break };
            loop {
                if executed >= budget {
                    self.exec.warps[wi].set_pc(mask, pc);
                    break 'regroup;
                }
                executed += 1;
                self.time.tick += 1;
                self.out.stats.warp_instructions += 1;
                self.out.stats.thread_instructions += mask.count_ones() as u64;
                let w = &mut self.exec.warps[wi];
                let regs = &mut w.regs[..];
                match prog.ops[pc as usize] {
                    Op::Mov { dst, src } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, { regs[d + l] = get(regs, src, l) });
                    }
                    Op::Bin { f, dst, a, b } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, { regs[d + l] = f(get(regs, a, l), get(regs, b, l)) });
                    }
                    Op::Un { f, dst, a } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, { regs[d + l] = f(get(regs, a, l)) });
                    }
                    Op::Mad { f, dst, a, b, c } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, { regs[d + l] = f(get(regs, a, l), get(regs, b, l), get(regs, c, l)) });
                    }
                    Op::Setp { f, dst, a, b } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, { regs[d + l] = f(get(regs, a, l), get(regs, b, l)) as u64 });
                    }
                    Op::Selp { dst, c, a, b } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, {
                            regs[d + l] = if get(regs, c, l) != 0 { get(regs, a, l) } else { get(regs, b, l) }
                        });
                    }
                    Op::Cvt { dt, st, rounding, dst, src } => {
                        let d = dst as usize * 32;
                        each_lane!(mask, l, { regs[d + l] = cvt_rounded(get(regs, src, l), st, dt, rounding) });
                    }
                    Op::Special { dst, sreg } => {
                        for l in lanes(mask) {
                            let v = self.special(wi, l, sreg);
                            self.exec.warps[wi].regs[dst as usize * 32 + l] = v;
                        }
                    }
                    Op::Jump(t) => {
                        w.set_pc(mask, t);
                        if t <= pc {
                            let now = self.epoch();
                            let w = &mut self.exec.warps[wi];
                            w.cycle.back_edge(&w.regs, &prog.observable, &w.pc, w.runnable, w.blocked, now);
                            // Step mode: the explorer reports each loop's trip counts.
                            if self.step.is_some() {
                                self.steps.count_trip(wi, t, mask);
                            }
                        }
                        continue 'regroup;
                    }
                    Op::BranchIfNot { cond, target } => {
                        let mut stay = 0u32;
                        for l in lanes(mask) {
                            if get(regs, cond, l) != 0 {
                                stay |= 1 << l;
                            }
                        }
                        if stay == mask {
                            pc += 1;
                            continue;
                        }
                        w.set_pc(stay, pc + 1);
                        w.set_pc(mask & !stay, target);
                        continue 'regroup;
                    }
                    Op::Exit => {
                        self.exit_lanes(wi, mask);
                        let cta = self.exec.warps[wi].cta;
                        let cta_ended = self.exec.ctas[cta].exited == self.exec.threads_per_cta;
                        if let Some(s) = &mut self.step {
                            s.exited = true;
                            s.cta_ended |= cta_ended;
                            break 'regroup;
                        }
                        continue 'regroup;
                    }
                    Op::TensorRegs(i) => {
                        self.tensor_regs_access(wi, mask, pc, i);
                        if let Some(s) = &mut self.step {
                            s.opaque = true;
                        }
                    }
                    Op::Slow(i) => {
                        w.set_pc(mask, pc + 1);
                        let polls = self.time.polls_failed;
                        let inst = &prog.slow[i as usize];
                        self.exec_slow(wi, mask, pc, inst)?;
                        let w = &mut self.exec.warps[wi];
                        if self.time.polls_failed == polls {
                            self.time.slow_effects += 1;
                            w.spinning &= !mask;
                            w.poll_armed &= !mask;
                        }
                        match prog.effects[i as usize] {
                            // Its writes are in its footprint (`exec/memory.rs`), or count for all.
                            Visible::Nothing | Visible::GlobalWrites => {}
                            Visible::Signals => self.global.watched_writes -= w.cycle.effect(),
                        }
                        if let Some(s) = &mut self.step {
                            // A step runs at most one instruction other actors observe.
                            s.slow = Some((i, mask));
                            break 'regroup;
                        }
                        continue 'regroup;
                    }
                }
                pc += 1;
            }
        }
        Ok(executed)
    }

    /// `%tid`, `%ctaid`, cluster coordinates, clocks, ... of one lane.
    fn special(&self, wi: usize, l: usize, s: SpecialReg) -> u64 {
        let w = &self.exec.warps[wi];
        let cta = &self.exec.ctas[w.cta];
        let lin = w.base_tid + l as u32;
        let b = self.cx.launch.block;
        let tid = [lin % b[0], (lin / b[0]) % b[1], lin / (b[0] * b[1])];
        let cd = self.cx.cluster_dim;
        let v = match s {
            SpecialReg::Tid(d) => tid[d.index()],
            SpecialReg::Ntid(d) => b[d.index()],
            SpecialReg::Ctaid(d) => cta.ctaid[d.index()],
            SpecialReg::Nctaid(d) => self.cx.launch.grid[d.index()],
            SpecialReg::LaneId => l as u32,
            SpecialReg::ClusterCtaRank => cta.rank,
            SpecialReg::ClusterNctaRank => cd[0] * cd[1] * cd[2],
            SpecialReg::ClusterCtaid(d) => cta.ctaid[d.index()] % cd[d.index()],
            SpecialReg::ClusterNctaid(d) => cd[d.index()],
            SpecialReg::Clusterid(d) => cta.ctaid[d.index()] / cd[d.index()],
            SpecialReg::Clock => self.time.tick as u32,
            // Simulated time: warp-instructions issued in the cluster so far, never decreasing.
            // The cycle counter counts them; the nanosecond timer too (one per nanosecond), so
            // elapsed times are only relative (no wall clock is modelled).
            SpecialReg::Clock64 | SpecialReg::GlobalTimer => return self.time.tick,
        };
        v as u64
    }
}
