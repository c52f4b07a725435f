//! Non-progress detection without a step budget: a warp that runs loops without any effect
//! (no store, arrival, copy, exit: only arithmetic, loads and failed polls) and whose whole
//! state (registers, program counters, lane masks) comes back identical while nothing else in
//! the grid changed memory or barriers, will repeat forever. When every live warp is either
//! repeating or waits, the launch can never finish: a finding, after a few thousand loop
//! iterations instead of `SimConfig::max_steps` thread-instructions.
//!
//! Only the registers that can reach an observable act (a branch condition, an operand of an
//! instruction with effects: [`observable_registers`]) are compared: a counter nothing reads
//! (`loop { x += 1 }`, a spin loop counting its polls) does not hide a repetition.
//!
//! Cost: one counter per loop back-edge; the state is copied and compared only in warps that
//! ran thousands of back-edges without an effect (at powers of two, then for a short window:
//! Brent's cycle detection, limited to loops whose state repeats within `WINDOW` iterations).

use phaser_codegen::ir::{Inst, Stmt, StmtKind, Value};

/// The registers whose values can reach what a warp does observably: a branch condition,
/// or an operand of an instruction that is not pure (memory, synchronization, async work,
/// side effects), and whatever a pure instruction defining one of those reads (a fixpoint over
/// the kernel). A register outside the set never changes the warp's future, so two states
/// equal on the set behave the same.
pub fn observable_registers(body: &[Stmt]) -> Vec<u32> {
    fn mark(v: &Value, set: &mut Vec<bool>) -> bool {
        let Value::Reg(r) = v else { return false };
        let i = r.id as usize;
        if set.len() <= i {
            set.resize(i + 1, false);
        }
        !std::mem::replace(&mut set[i], true)
    }
    fn seed<'a>(block: &'a [Stmt], set: &mut Vec<bool>, pure: &mut Vec<&'a Inst>) {
        for s in block {
            match &s.kind {
                StmtKind::Inst(i) if i.effects().is_pure() => pure.push(i),
                StmtKind::Inst(i) => i.for_each_use(|v| {
                    mark(v, set);
                }),
                StmtKind::If { cond, then_body, else_body } => {
                    mark(cond, set);
                    seed(then_body, set, pure);
                    seed(else_body, set, pure);
                }
                StmtKind::Loop { body, latch } => {
                    seed(body, set, pure);
                    seed(latch, set, pure);
                }
                StmtKind::Break | StmtKind::Continue | StmtKind::Return => {}
            }
        }
    }
    let (mut set, mut pure) = (Vec::new(), Vec::new());
    seed(body, &mut set, &mut pure);
    loop {
        let mut changed = false;
        for i in &pure {
            let mut feeds = false;
            i.for_each_def(|r| feeds |= set.get(r.id as usize).copied().unwrap_or(false));
            if feeds {
                i.for_each_use(|v| changed |= mark(v, &mut set));
            }
        }
        if !changed {
            break;
        }
    }
    (0..set.len() as u32).filter(|&r| set[r as usize]).collect()
}

/// Back-edges without an effect before the state is first saved.
const THRESHOLD: u64 = 4096;
/// Back-edges after a save during which the state is compared with the saved one.
const WINDOW: u64 = 16;

/// Effect counters a repetition is valid under: global-memory writes of the launch and
/// effects in the warp's cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Epoch {
    pub global_writes: u64,
    pub cluster_effects: u64,
}

/// A warp's state as saved for comparison (the observable registers only).
struct Saved {
    regs: Vec<u64>,
    pc: [u32; 32],
    runnable: u32,
    blocked: u32,
    epoch: Epoch,
}

#[derive(Default)]
pub struct CycleWatch {
    /// Back-edges since the warp's last effect.
    back_edges: u64,
    saved_at: u64,
    saved: Option<Saved>,
    /// The state repeated under this epoch: the warp loops forever unless something changes.
    pub repeating: Option<Epoch>,
}

impl CycleWatch {
    /// The warp did something other warps can see.
    #[inline]
    pub fn effect(&mut self) {
        if self.back_edges != 0 {
            self.back_edges = 0;
            self.saved = None;
            self.repeating = None;
        }
    }
}

impl CycleWatch {
    /// The warp (its `observable` registers, program counters, lane masks) took a loop
    /// back-edge under `now`.
    #[inline]
    pub fn back_edge(
        &mut self,
        regs: &[u64],
        observable: &[u32],
        pc: &[u32; 32],
        runnable: u32,
        blocked: u32,
        now: Epoch,
    ) {
        let lanes_of = |r: u32| &regs[r as usize * 32..r as usize * 32 + 32];
        self.back_edges += 1;
        let b = self.back_edges;
        if b < THRESHOLD {
            return;
        }
        if b.is_power_of_two() {
            let regs = observable.iter().flat_map(|&r| lanes_of(r).iter().copied()).collect();
            self.saved = Some(Saved { regs, pc: *pc, runnable, blocked, epoch: now });
            self.saved_at = b;
        } else if b - self.saved_at <= WINDOW {
            if let Some(s) = &self.saved {
                let same_regs = s.regs.chunks(32).zip(observable).all(|(saved, &r)| saved == lanes_of(r));
                if s.epoch == now && s.pc == *pc && s.runnable == runnable && s.blocked == blocked && same_regs {
                    self.repeating = Some(now);
                }
            }
        }
    }

    /// Whether the warp is known to repeat forever under `now`.
    pub fn repeats_under(&self, now: Epoch) -> bool {
        self.repeating == Some(now)
    }
}
