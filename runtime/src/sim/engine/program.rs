//! The IR lowered for execution: structured control flow becomes jumps, arithmetic gets
//! its per-type function chosen once, everything else keeps its IR instruction.

use crate::sim::engine::arith::{
    bin_fn, cmp_fn, float_bin_fn, mad_fn, math_fn, math_half2_fn, un_fn, BinFn, CmpFn, MadFn, UnFn,
};
use crate::sim::tensor::regs::TensorRegs;
use phaser_codegen::ir::*;

/// An operand: a register index or an immediate's bits.
#[derive(Clone, Copy, Debug)]
pub enum Opnd {
    R(u32),
    I(u64),
}

impl Opnd {
    pub fn of(v: &Value) -> Opnd {
        match *v {
            Value::Reg(r) => Opnd::R(r.id),
            Value::Imm { bits, .. } => Opnd::I(bits),
        }
    }
}

#[derive(Clone, Copy)]
pub enum Op {
    Mov {
        dst: u32,
        src: Opnd,
    },
    Un {
        f: UnFn,
        dst: u32,
        a: Opnd,
    },
    Bin {
        f: BinFn,
        dst: u32,
        a: Opnd,
        b: Opnd,
    },
    Mad {
        f: MadFn,
        dst: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    Setp {
        f: CmpFn,
        dst: u32,
        a: Opnd,
        b: Opnd,
    },
    Selp {
        dst: u32,
        c: Opnd,
        a: Opnd,
        b: Opnd,
    },
    Cvt {
        dt: Type,
        st: Type,
        rounding: Option<Rounding>,
        dst: u32,
        src: Opnd,
    },
    Special {
        dst: u32,
        sreg: SpecialReg,
    },
    Jump(u32),
    /// Jump to `target` in lanes where `cond` is false.
    BranchIfNot {
        cond: Opnd,
        target: u32,
    },
    Exit,
    /// Any other instruction: `Program::slow[i]`.
    Slow(u32),
    /// Before an ordinary instruction that touches wgmma registers: check and record the
    /// access (`Program::tensor.checks[i]`, `exec_wgmma.rs`).
    TensorRegs(u32),
}

/// A loop of the kernel: its ops `start..end`, and the register counting its iterations when
/// it is a `for` loop (`for_range`: the latch adds a constant to the counter).
#[derive(Clone, Copy, Debug)]
pub struct LoopInfo {
    pub start: u32,
    pub end: u32,
    pub loc: Option<SourceLoc>,
    pub counter: Option<u32>,
}

pub struct Program {
    pub ops: Vec<Op>,
    pub locs: Vec<Option<SourceLoc>>,
    pub slow: Vec<Inst>,
    /// Per slow instruction: what it can change that other warps observe.
    pub effects: Vec<Visible>,
    /// Per slow instruction: whether it is a `test_wait`/`try_wait` polled in a loop (`loop {
    /// done = test_wait(..); if done { break } }`): its success is a wait, checked like one.
    pub polls: Vec<bool>,
    /// Every loop, outer loops before the loops they contain.
    pub loops: Vec<LoopInfo>,
    /// The registers wgmmas access and the checks of the instructions that touch them.
    pub tensor: TensorRegs,
    /// The registers a loop's repetition is judged on (`check/progress.rs`).
    pub observable: Vec<u32>,
    /// The kernel has strong global loads or stores: the global order is checked
    /// (`check/global_order.rs`).
    pub flag_protocol: bool,
    /// Per register: an arrive's state token that something reads beyond its phase (a
    /// `pending_count`, arithmetic, a store). The token's low half is the count pending after
    /// the arrival, which depends on the arrivals' order: such an arrival does not commute
    /// with the phase's other arrivals (`Engine::arrival_token_read`).
    pub tokens_read: Vec<bool>,
}

/// The registers of [`Program::tokens_read`]: every state register of an arrive that an
/// instruction reads other than as the phase a wait or a probe waits for (those read only the
/// phase half, which every arrival of the phase agrees on).
fn tokens_read(body: &[Stmt]) -> Vec<bool> {
    let mut tokens = Vec::new();
    walk_insts(body, &mut |i, _| {
        if let Inst::Mbarrier(MbarrierOp::Arrive { state: Some(r), .. }) = i {
            tokens.push(r.id);
        }
    });
    let mut read = Vec::new();
    walk_insts(body, &mut |i, _| {
        let phase_only = matches!(
            i,
            Inst::Mbarrier(
                MbarrierOp::Wait { on: WaitOn::State(_), .. }
                    | MbarrierOp::TestWait { on: WaitOn::State(_), .. }
                    | MbarrierOp::TryWait { on: WaitOn::State(_), .. }
            )
        );
        if phase_only {
            return;
        }
        i.for_each_use(|v| {
            if let Value::Reg(r) = v {
                if tokens.contains(&r.id) {
                    if read.len() <= r.id as usize {
                        read.resize(r.id as usize + 1, false);
                    }
                    read[r.id as usize] = true;
                }
            }
        });
    });
    read
}

struct Lowering {
    ops: Vec<Op>,
    locs: Vec<Option<SourceLoc>>,
    slow: Vec<Inst>,
    polls: Vec<bool>,
    /// The next instruction lowered is a polled wait.
    next_is_poll: bool,
    /// (break fixups, continue target) per open loop.
    loops: Vec<(Vec<usize>, Option<usize>, Vec<usize>)>,
    infos: Vec<LoopInfo>,
    tensor: TensorRegs,
}

impl Program {
    pub fn lower(k: &Kernel) -> Program {
        let mut l = Lowering {
            ops: Vec::new(),
            locs: Vec::new(),
            slow: Vec::new(),
            polls: Vec::new(),
            next_is_poll: false,
            loops: Vec::new(),
            infos: Vec::new(),
            tensor: TensorRegs::of(k.body()),
        };
        l.block(k.body());
        l.emit(Op::Exit, None);
        let effects = l.slow.iter().map(visible_effect).collect();
        let observable = crate::sim::check::progress::observable_registers(k.body());
        let flag_protocol = crate::sim::check::global_order::uses_flags(&l.slow);
        let tokens_read = tokens_read(k.body());
        Program {
            ops: l.ops,
            locs: l.locs,
            slow: l.slow,
            effects,
            polls: l.polls,
            loops: l.infos,
            tensor: l.tensor,
            observable,
            flag_protocol,
            tokens_read,
        }
    }

    /// Whether the instruction at `pc` is a polled wait (see [`Program::polls`]).
    pub fn is_poll(&self, pc: u32) -> bool {
        match self.ops.get(pc as usize) {
            Some(Op::Slow(i)) => self.polls[*i as usize],
            _ => false,
        }
    }

    /// Whether `reg` can reach an observable act (`check/progress.rs`): a global read into it
    /// goes into its warp's footprint.
    pub fn is_observable(&self, reg: Reg) -> bool {
        self.observable.binary_search(&reg.id).is_ok()
    }

    /// The loops around `pc`, outermost first.
    pub fn loops_around(&self, pc: u32) -> impl Iterator<Item = &LoopInfo> {
        self.loops.iter().filter(move |l| l.start <= pc && pc < l.end)
    }
}

/// What an instruction can change that other warps observe, for the progress watch
/// (`check/progress.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visible {
    /// Nothing: loads, waits, polls, fences, register exchanges, address arithmetic.
    Nothing,
    /// Global memory only (stores, atomics): a watched warp's footprint records them.
    GlobalWrites,
    /// Shared memory, arrivals, copies, barrier arrivals, group commits, tensor-memory
    /// allocation, a trap, opaque inline PTX: the watch starts over.
    Signals,
}

/// What `inst` can change that other warps observe. Asked of the IR's [`Inst::effects`].
pub fn visible_effect(inst: &Inst) -> Visible {
    let e = inst.effects();
    let side = match e.side {
        Some(SideEffect::Trap | SideEffect::Opaque | SideEffect::TensorAllocation) => true,
        // A `printf`'s text and a probe are not memory; a volatile access is its read or write.
        Some(SideEffect::Volatile | SideEffect::Print | SideEffect::Probe | SideEffect::Scheduling) | None => false,
    };
    if e.launch.is_some() || e.sync.is_some_and(|s| s.signals()) || side {
        Visible::Signals
    } else if e.writes.is_empty() {
        Visible::Nothing
    } else if e.writes == Spaces::of(&[MemSpace::Global]) {
        Visible::GlobalWrites
    } else {
        Visible::Signals
    }
}

/// `done = test_wait(..)` (or `try_wait`) followed by `if done { break }`: a polling wait.
fn is_poll(s: &Stmt, next: Option<&Stmt>) -> bool {
    let StmtKind::Inst(Inst::Mbarrier(MbarrierOp::TestWait { done, .. } | MbarrierOp::TryWait { done, .. })) = &s.kind
    else {
        return false;
    };
    matches!(next.map(|n| &n.kind), Some(StmtKind::If { cond: Value::Reg(c), then_body, else_body })
        if c.id == done.id && else_body.is_empty() && matches!(then_body.as_slice(), [Stmt { kind: StmtKind::Break, .. }]))
}

/// The counter of a `for_range` loop: its latch is `next = i + step; i = next`.
fn loop_counter(latch: &[Stmt]) -> Option<u32> {
    let insts: Vec<&Inst> = latch
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Inst(i) => Some(i),
            _ => None,
        })
        .collect();
    match insts.as_slice() {
        [Inst::Arith(ArithOp::Binary { op: BinOp::Add, dst, a: Value::Reg(i), b: Value::Imm { .. } }), Inst::Arith(ArithOp::Mov { dst: i2, src: Value::Reg(d2) })]
            if d2.id == dst.id && i2.id == i.id =>
        {
            Some(i.id)
        }
        _ => None,
    }
}

impl Lowering {
    fn emit(&mut self, op: Op, loc: Option<SourceLoc>) -> usize {
        self.ops.push(op);
        self.locs.push(loc);
        self.ops.len() - 1
    }

    fn patch(&mut self, at: usize, target: usize) {
        let t = target as u32;
        match &mut self.ops[at] {
            Op::Jump(x) => *x = t,
            Op::BranchIfNot { target, .. } => *target = t,
            _ => unreachable!("patching a non-jump"),
        }
    }

    fn block(&mut self, b: &[Stmt]) {
        for (i, s) in b.iter().enumerate() {
            self.next_is_poll = is_poll(s, b.get(i + 1));
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        let loc = s.loc;
        match &s.kind {
            StmtKind::Inst(i) => self.inst(i, loc),
            StmtKind::If { cond, then_body, else_body } => {
                let br = self.emit(Op::BranchIfNot { cond: Opnd::of(cond), target: 0 }, loc);
                self.block(then_body);
                if else_body.is_empty() {
                    let end = self.ops.len();
                    self.patch(br, end);
                } else {
                    let j = self.emit(Op::Jump(0), loc);
                    let else_start = self.ops.len();
                    self.patch(br, else_start);
                    self.block(else_body);
                    let end = self.ops.len();
                    self.patch(j, end);
                }
            }
            StmtKind::Loop { body, latch } => {
                let top = self.ops.len();
                let info = self.infos.len();
                self.infos.push(LoopInfo { start: top as u32, end: 0, loc, counter: loop_counter(latch) });
                self.loops.push((Vec::new(), None, Vec::new()));
                self.block(body);
                let latch_start = self.ops.len();
                if let Some(l) = self.loops.last_mut() {
                    l.1 = Some(latch_start);
                }
                self.block(latch);
                self.emit(Op::Jump(top as u32), loc);
                let end = self.ops.len();
                self.infos[info].end = end as u32;
                let (breaks, _, conts) = self.loops.pop().expect("loop");
                for b in breaks {
                    self.patch(b, end);
                }
                for c in conts {
                    self.patch(c, latch_start);
                }
            }
            StmtKind::Break => {
                let j = self.emit(Op::Jump(0), loc);
                match self.loops.last_mut() {
                    Some(l) => l.0.push(j),
                    None => self.ops[j] = Op::Exit,
                }
            }
            StmtKind::Continue => {
                let j = self.emit(Op::Jump(0), loc);
                match self.loops.last_mut() {
                    Some(l) => l.2.push(j),
                    None => self.ops[j] = Op::Exit,
                }
            }
            StmtKind::Return => {
                self.emit(Op::Exit, loc);
            }
        }
    }

    fn inst(&mut self, i: &Inst, loc: Option<SourceLoc>) {
        if let Some(check) = self.tensor.check_for(i) {
            self.emit(Op::TensorRegs(check), loc);
        }
        let op = match i {
            Inst::Arith(a) => match a {
                ArithOp::Mov { dst, src } => Op::Mov { dst: dst.id, src: Opnd::of(src) },
                ArithOp::Unary { op, dst, a } => Op::Un { f: un_fn(*op, dst.ty), dst: dst.id, a: Opnd::of(a) },
                ArithOp::Binary { op, dst, a, b } => {
                    Op::Bin { f: bin_fn(*op, dst.ty), dst: dst.id, a: Opnd::of(a), b: Opnd::of(b) }
                }
                ArithOp::Mad { dst, a, b, c } => {
                    Op::Mad { f: mad_fn(dst.ty), dst: dst.id, a: Opnd::of(a), b: Opnd::of(b), c: Opnd::of(c) }
                }
                ArithOp::Setp { cmp, dst, a, b } => {
                    Op::Setp { f: cmp_fn(*cmp, a.ty()), dst: dst.id, a: Opnd::of(a), b: Opnd::of(b) }
                }
                ArithOp::Selp { dst, cond, a, b } => {
                    Op::Selp { dst: dst.id, c: Opnd::of(cond), a: Opnd::of(a), b: Opnd::of(b) }
                }
                ArithOp::Cvt { dst, src, rounding } => Op::Cvt {
                    dt: dst.ty,
                    st: src.ty(),
                    rounding: rounding.or(Rounding::of_cast(src.ty(), dst.ty)),
                    dst: dst.id,
                    src: Opnd::of(src),
                },
                ArithOp::Math { fun, dst, a } => Op::Un {
                    f: math_fn(*fun, dst.ty).expect("the builder refuses a math function on a type PTX lacks"),
                    dst: dst.id,
                    a: Opnd::of(a),
                },
                ArithOp::MathHalf2 { fun, half, dst, a } => Op::Un {
                    f: math_half2_fn(*fun, *half).expect("the builder refuses a packed form PTX lacks"),
                    dst: dst.id,
                    a: Opnd::of(a),
                },
                ArithOp::FloatBinary { op, dst, a, b } => Op::Bin {
                    f: float_bin_fn(*op, dst.ty).expect("the builder refuses a float op on a type PTX lacks"),
                    dst: dst.id,
                    a: Opnd::of(a),
                    b: Opnd::of(b),
                },
                // The same bits, another type.
                ArithOp::Bitcast { dst, src } => Op::Mov { dst: dst.id, src: Opnd::of(src) },
            },
            Inst::ReadSpecial { dst, sreg } => Op::Special { dst: dst.id, sreg: *sreg },
            // Nothing in the simulator: `nanosleep` is a backoff hint that must not look like
            // progress (a polling loop with a backoff is still found stuck), and
            // `launch_dependents` only lets the next launch start early. (`griddepcontrol.wait`
            // never waits, launches of one device run in order, but it is kept: it marks its
            // thread as having waited, `check/pdl.rs`.)
            Inst::Sync(SyncOp::Nanosleep { .. } | SyncOp::GridDepLaunchDependents) => return,
            // The wait watchdog's counters of a flag wait: the simulator has no clock, and its
            // infinite-loop report names a flag nobody can signal (`check/deadlock.rs`).
            Inst::FlagSpin(_) => return,
            other => {
                self.slow.push(other.clone());
                self.polls.push(std::mem::take(&mut self.next_is_poll));
                Op::Slow(self.slow.len() as u32 - 1)
            }
        };
        self.emit(op, loc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_that_reset_the_progress_watch() {
        let r = |id| Reg { id, ty: Type::U32 };
        let bar = Value::Reg(r(1));
        let order = Ordering::default();
        let arrive = Inst::Mbarrier(MbarrierOp::Arrive {
            bar,
            count: None,
            order,
            space: BarSpace::Cta,
            state: None,
            drop: false,
        });
        let wait = Inst::Mbarrier(MbarrierOp::Wait { bar, on: WaitOn::Parity(Value::u32(0)), order });
        let store = Inst::Memory(MemoryOp::St {
            space: Space::Shared,
            ty: Type::U32,
            addr: bar,
            offset: 0,
            src: Value::u32(1),
            access: Access::Weak,
        });
        let load = Inst::Memory(MemoryOp::Ld {
            space: Space::Shared,
            ty: Type::U32,
            dst: r(2),
            addr: bar,
            offset: 0,
            access: Access::Volatile,
        });
        let commit = Inst::Tma(TmaOp::CommitGroup);
        let bulk_wait = Inst::Tma(TmaOp::WaitGroup { n: 0, read: false });
        let asm = Inst::Asm(InlineAsm { template: "trap;".into(), inputs: vec![], outputs: vec![], memory: false });
        let dealloc = Inst::Tcgen05(Tcgen05Op::Dealloc { cta_group: CtaGroup::One, taddr: bar, ncols: Value::u32(32) });
        for inst in [arrive, store, commit, asm, dealloc] {
            assert_eq!(visible_effect(&inst), Visible::Signals, "{inst:?}");
        }
        // Global writes go into the watched warp's footprint instead.
        let global_store = Inst::Memory(MemoryOp::St {
            space: Space::Global,
            ty: Type::U32,
            addr: bar,
            offset: 0,
            src: Value::u32(1),
            access: Access::Weak,
        });
        let global_atom = Inst::Memory(MemoryOp::Atom {
            op: AtomOp::Add,
            order: AtomOrder::default(),
            space: Space::Global,
            ty: Type::U32,
            dst: Some(r(4)),
            addr: bar,
            src: Value::u32(1),
            cmp: None,
        });
        let shared_atom = Inst::Memory(MemoryOp::Atom {
            op: AtomOp::Add,
            order: AtomOrder::default(),
            space: Space::Shared,
            ty: Type::U32,
            dst: None,
            addr: bar,
            src: Value::u32(1),
            cmp: None,
        });
        assert_eq!(visible_effect(&global_store), Visible::GlobalWrites);
        assert_eq!(visible_effect(&global_atom), Visible::GlobalWrites);
        assert_eq!(visible_effect(&shared_atom), Visible::Signals);
        // Observing, ordering and register results from the warp change nothing another warp sees.
        let elect = Inst::Sync(SyncOp::ElectSync { pred: Reg { id: 3, ty: Type::Pred } });
        let fence = Inst::Wgmma(WgmmaOp::Fence);
        let wgmma_wait = Inst::Wgmma(WgmmaOp::WaitGroup { n: 0 });
        let printf = Inst::Printf(Printf { format: "%u".into(), args: vec![bar] });
        for inst in [wait, load, bulk_wait, elect, fence, wgmma_wait, printf] {
            assert_eq!(visible_effect(&inst), Visible::Nothing, "{inst:?}");
        }
    }
}
