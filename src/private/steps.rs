//! The data-driven part of the `#[phaser::kernel]` expansion (`bench/dsl.md`, third round): a
//! run of straight-line statements whose every operation the macro can state as data becomes
//! a static table of [`Step`]s, built by [`run`], one non-generic function. The kernel's crate
//! then compiles a table (data) instead of a builder call per operation (code), so its release
//! build no longer grows by an LLVM function body per statement.
//!
//! Each step makes the builder call the code expansion makes for the same operation, in the
//! same order with the same arguments, so the IR is the same either way. Values and handles
//! shared between a table and the code around it live in [`Slot`]s: the run's inputs are the
//! kernel variables it reads (copied in by the expansion), its `let`s and temporaries get
//! fresh slots, and the `let`s seen after the run are read back out ([`Slots`]).

use super::Placeholder;
use phaser_codegen::builder::{Barrier, BarrierArray, GlobalPtr, KernelBuilder, SharedArray};
use phaser_codegen::ir::{Reg, SourceLoc, Type, Value};
use phaser_codegen::registry::{self, OpArg};

/// A kernel variable or temporary while a table runs.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    /// Not written yet (a temporary before its step).
    Empty,
    Value(Value),
    /// A `let mut` register, read as `Value::Reg`.
    Reg(Reg),
    Barrier(Barrier),
    Barriers(BarrierArray),
    Shared(SharedArray),
    Global(GlobalPtr),
}

/// A step's input: a slot, or a literal (`Value::imm_u` / `Value::pred`, as the code expansion
/// writes them).
#[derive(Clone, Copy, Debug)]
pub enum Operand {
    Slot(u32),
    Imm(u64, Type),
    Pred(bool),
}

/// The builder's binary methods (`KernelBuilder::add`, ...): the expansion names the variant
/// after the method it would have called.
#[derive(Clone, Copy, Debug)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// The builder's unary methods.
#[derive(Clone, Copy, Debug)]
pub enum Unary {
    Neg,
    Not,
}

/// Where a load or store goes: `KernelBuilder::{ld,st}_{shared,global}`.
#[derive(Clone, Copy, Debug)]
pub enum Space {
    Shared,
    Global,
}

/// The handle an op's result is held in (the expansion's `call_op::<R, _>`).
#[derive(Clone, Copy, Debug)]
pub enum Ret {
    Unit,
    Value,
    Barrier,
    Barriers,
    Shared,
}

/// An op argument as `__p::OpArg`: the code expansion's `OpArg::from(v)`, `OpArg::Const(c)`, ...
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Of(Operand),
    Const(u32),
    Dims(&'static [u32]),
    Choice(&'static str),
    Tag(&'static str),
    Values(&'static [Operand]),
    Absent,
}

/// A registry op (`call_op(__k, path, [args], elem, name)`), its result into `dst`.
#[derive(Debug)]
pub struct OpStep {
    pub path: &'static str,
    pub args: &'static [Arg],
    pub elem: Option<Type>,
    pub name: &'static str,
    /// Where the arguments are (`set_arg_locs`), for ops whose sizes the build checks.
    pub arg_locs: Option<&'static [(&'static str, SourceLoc)]>,
    pub ret: Ret,
    pub dst: u32,
}

/// One builder call of a table; `u32`s after the operands are the slot written.
#[derive(Debug)]
pub enum Step {
    /// `set_loc(Some(loc))`: a statement starts.
    Loc(SourceLoc),
    Bin(Arith, Operand, Operand, u32),
    Un(Unary, Operand, u32),
    Cvt(Operand, Type, u32),
    /// A `let` of a value as it is (no builder call).
    Copy(Operand, u32),
    /// `let mut`: `mut_var`.
    MutVar(Operand, u32),
    /// A register array element's copy: `Value::Reg(var(v))`.
    Var(Operand, u32),
    /// `Snapshot::snapshot` of a value (an immutable `let` while a `let mut` is in scope).
    Snapshot(Operand, u32),
    /// `assign(reg, v)`.
    Assign(u32, Operand),
    Ld(Space, u32, Operand, u32),
    St(Space, u32, Operand, Operand),
    /// `barrier_at(bars, idx)`.
    BarrierAt(u32, Operand, u32),
    Op(&'static OpStep),
    If(Operand, &'static [Step]),
    IfElse(Operand, &'static [Step], &'static [Step]),
    Break,
    Continue,
    Return,
}

/// The slots of a run, read back by the `let`s after it.
pub struct Slots(Vec<Slot>);

/// Run `steps` over `slots` slots, `inputs` (slot, the kernel variable's value) copied in first.
#[inline(never)]
pub fn run(k: &mut KernelBuilder, steps: &'static [Step], inputs: &[(u32, Slot)], slots: usize) -> Slots {
    let mut s = Slots(vec![Slot::Empty; slots]);
    for &(i, v) in inputs {
        s.set(i, v);
    }
    s.run(k, steps);
    s
}

/// A slot's read as a handle of one kind; another kind is the expansion's internal error.
macro_rules! read {
    ($($f:ident -> $t:ty, $v:ident, $what:literal;)*) => {$(
        pub fn $f(&self, k: &mut KernelBuilder, i: u32) -> $t {
            match self.0.get(i as usize) {
                Some(Slot::$v(x)) => *x,
                other => {
                    k.error(format!("internal error: step slot {i} holds {other:?}, not {}", $what));
                    <$t as Placeholder>::placeholder()
                }
            }
        }
    )*};
}

impl Slots {
    read!(
        barrier -> Barrier, Barrier, "a barrier";
        barriers -> BarrierArray, Barriers, "a barrier array";
        shared -> SharedArray, Shared, "a shared array";
        global -> GlobalPtr, Global, "a global pointer";
    );

    /// A value slot, or a `let mut` register read as `Value::Reg`.
    pub fn value(&self, k: &mut KernelBuilder, i: u32) -> Value {
        match self.0.get(i as usize) {
            Some(Slot::Value(v)) => *v,
            Some(Slot::Reg(r)) => Value::Reg(*r),
            other => {
                k.error(format!("internal error: step slot {i} holds {other:?}, not a value"));
                Value::u32(0)
            }
        }
    }

    pub fn reg(&self, k: &mut KernelBuilder, i: u32) -> Reg {
        match self.0.get(i as usize) {
            Some(Slot::Reg(r)) => *r,
            other => {
                k.error(format!("internal error: step slot {i} holds {other:?}, not a `let mut` register"));
                Reg { id: 0, ty: Type::U32 }
            }
        }
    }

    fn operand(&self, k: &mut KernelBuilder, o: Operand) -> Value {
        match o {
            Operand::Slot(i) => self.value(k, i),
            Operand::Imm(bits, ty) => Value::imm_u(bits, ty),
            Operand::Pred(b) => Value::pred(b),
        }
    }

    /// What `OpArg::from(x)` makes of the slot's Rust value.
    fn op_arg(&self, k: &mut KernelBuilder, a: &Arg) -> OpArg {
        match *a {
            Arg::Of(Operand::Slot(i)) => match self.0.get(i as usize) {
                Some(Slot::Barrier(b)) => OpArg::Barrier(*b),
                Some(Slot::Barriers(b)) => OpArg::Barriers(*b),
                Some(Slot::Shared(s)) => OpArg::Shared(*s),
                Some(Slot::Global(g)) => OpArg::Global(*g),
                _ => OpArg::Value(self.value(k, i)),
            },
            Arg::Of(o) => OpArg::Value(self.operand(k, o)),
            Arg::Const(c) => OpArg::Const(c),
            Arg::Dims(d) => OpArg::Dims(d.to_vec()),
            Arg::Choice(c) => OpArg::Choice(c),
            Arg::Tag(t) => OpArg::Tag(t),
            Arg::Values(v) => OpArg::Values(v.iter().map(|o| self.operand(k, *o)).collect()),
            Arg::Absent => OpArg::Absent,
        }
    }

    fn set(&mut self, i: u32, v: Slot) {
        self.0[i as usize] = v;
    }

    fn run(&mut self, k: &mut KernelBuilder, steps: &'static [Step]) {
        for step in steps {
            self.step(k, step);
        }
    }

    fn step(&mut self, k: &mut KernelBuilder, step: &'static Step) {
        match *step {
            Step::Loc(loc) => k.set_loc(Some(loc)),
            Step::Bin(op, a, b, dst) => {
                let (a, b) = (self.operand(k, a), self.operand(k, b));
                let v = match op {
                    Arith::Add => k.add(a, b),
                    Arith::Sub => k.sub(a, b),
                    Arith::Mul => k.mul(a, b),
                    Arith::Div => k.div(a, b),
                    Arith::Rem => k.rem(a, b),
                    Arith::And => k.and(a, b),
                    Arith::Or => k.or(a, b),
                    Arith::Xor => k.xor(a, b),
                    Arith::Shl => k.shl(a, b),
                    Arith::Shr => k.shr(a, b),
                    Arith::Eq => k.eq(a, b),
                    Arith::Ne => k.ne(a, b),
                    Arith::Lt => k.lt(a, b),
                    Arith::Le => k.le(a, b),
                    Arith::Gt => k.gt(a, b),
                    Arith::Ge => k.ge(a, b),
                };
                self.set(dst, Slot::Value(v));
            }
            Step::Un(op, a, dst) => {
                let a = self.operand(k, a);
                let v = match op {
                    Unary::Neg => k.neg(a),
                    Unary::Not => k.not(a),
                };
                self.set(dst, Slot::Value(v));
            }
            Step::Cvt(a, ty, dst) => {
                let a = self.operand(k, a);
                let v = k.cvt(a, ty);
                self.set(dst, Slot::Value(v));
            }
            Step::Copy(a, dst) => {
                let v = match a {
                    Operand::Slot(i) => self.0[i as usize],
                    o => Slot::Value(self.operand(k, o)),
                };
                self.set(dst, v);
            }
            Step::MutVar(a, dst) => {
                let a = self.operand(k, a);
                let r = k.mut_var(a);
                self.set(dst, Slot::Reg(r));
            }
            Step::Var(a, dst) => {
                let a = self.operand(k, a);
                let r = k.var(a);
                self.set(dst, Slot::Value(Value::Reg(r)));
            }
            Step::Snapshot(a, dst) => {
                let a = self.operand(k, a);
                let v = k.snapshot(a);
                self.set(dst, Slot::Value(v));
            }
            Step::Assign(var, v) => {
                let v = self.operand(k, v);
                let var = self.reg(k, var);
                k.assign(var, v);
            }
            Step::Ld(space, base, idx, dst) => {
                let idx = self.operand(k, idx);
                let v = match space {
                    Space::Shared => {
                        let arr = self.shared(k, base);
                        k.ld_shared(arr, idx)
                    }
                    Space::Global => {
                        let ptr = self.global(k, base);
                        k.ld_global(ptr, idx)
                    }
                };
                self.set(dst, Slot::Value(v));
            }
            Step::St(space, base, idx, v) => {
                let (idx, v) = (self.operand(k, idx), self.operand(k, v));
                match space {
                    Space::Shared => {
                        let arr = self.shared(k, base);
                        k.st_shared(arr, idx, v)
                    }
                    Space::Global => {
                        let ptr = self.global(k, base);
                        k.st_global(ptr, idx, v)
                    }
                }
            }
            Step::BarrierAt(bars, idx, dst) => {
                let idx = self.operand(k, idx);
                let bars = self.barriers(k, bars);
                let b = k.barrier_at(bars, idx);
                self.set(dst, Slot::Barrier(b));
            }
            Step::Op(op) => self.op(k, op),
            Step::If(cond, then) => {
                let cond = self.operand(k, cond);
                k.if_then_dyn(cond, &mut |k| self.run(k, then));
            }
            Step::IfElse(cond, then, els) => {
                let cond = self.operand(k, cond);
                // Both bodies use the slots; the builder runs them one after the other.
                let this = std::cell::RefCell::new(&mut *self);
                k.if_else_dyn(cond, &mut |k| this.borrow_mut().run(k, then), &mut |k| this.borrow_mut().run(k, els));
            }
            Step::Break => k.break_(),
            Step::Continue => k.continue_(),
            Step::Return => k.ret(),
        }
    }

    fn op(&mut self, k: &mut KernelBuilder, op: &'static OpStep) {
        let args: Vec<OpArg> = op.args.iter().map(|a| self.op_arg(k, a)).collect();
        if let Some(locs) = op.arg_locs {
            k.set_arg_locs(locs);
        }
        let out = registry::call(k, op.path, args, op.elem, op.name);
        let slot = match op.ret {
            Ret::Unit => {
                out.into_handle::<()>(k, op.path);
                Slot::Empty
            }
            Ret::Value => Slot::Value(out.into_handle(k, op.path)),
            Ret::Barrier => Slot::Barrier(out.into_handle(k, op.path)),
            Ret::Barriers => Slot::Barriers(out.into_handle(k, op.path)),
            Ret::Shared => Slot::Shared(out.into_handle(k, op.path)),
        };
        self.set(op.dst, slot);
    }
}
