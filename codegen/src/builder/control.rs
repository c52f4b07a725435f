//! Structured control flow: if/else, loops, break/continue, return.

use super::kernel_builder::KernelBuilder;
use crate::ir::*;

/// A block's body for the `*_dyn` control flow: called once (not at all past the nesting limit).
pub type Body<'a> = &'a mut dyn FnMut(&mut KernelBuilder);

/// `f` as the `FnMut` a [`Body`] is: the generic methods are thin shells over the `dyn` ones.
fn once(f: impl FnOnce(&mut KernelBuilder)) -> impl FnMut(&mut KernelBuilder) {
    let mut f = Some(f);
    move |k| {
        if let Some(f) = f.take() {
            f(k)
        }
    }
}

impl KernelBuilder {
    #[track_caller]
    fn expect_pred(&mut self, cond: Value, what: &str) -> Value {
        if cond.ty() != Type::Pred {
            self.error(format!("{what} condition must be a bool, found {}", cond.ty()));
            return Value::pred(false);
        }
        cond
    }

    /// `if cond { then }`.
    #[track_caller]
    pub fn if_then(&mut self, cond: Value, then: impl FnOnce(&mut Self)) {
        self.if_then_dyn(cond, &mut once(then));
    }

    /// [`KernelBuilder::if_then`], its body behind `dyn` (see [`KernelBuilder::if_else_dyn`]).
    #[track_caller]
    pub fn if_then_dyn(&mut self, cond: Value, then: Body<'_>) {
        self.if_else_dyn(cond, then, &mut |_| {});
    }

    /// `if cond { then } else { otherwise }`.
    #[track_caller]
    pub fn if_else(&mut self, cond: Value, then: impl FnOnce(&mut Self), otherwise: impl FnOnce(&mut Self)) {
        self.if_else_dyn(cond, &mut once(then), &mut once(otherwise));
    }

    /// [`KernelBuilder::if_else`] with its bodies behind `dyn` (each runs once): the code
    /// is compiled once, not once per pair of closures, which keeps the release build of a
    /// long DSL kernel (whose expansion calls these) linear in its statements.
    #[track_caller]
    pub fn if_else_dyn(&mut self, cond: Value, then: Body<'_>, otherwise: Body<'_>) {
        let cond = self.expect_pred(cond, "`if`");
        let loc = self.here();
        let saved = self.loc_override;
        let then_body = self.nested(then);
        let else_body = self.nested(otherwise);
        self.loc_override = saved;
        self.blocks.last_mut().expect("block").push(Stmt::new(StmtKind::If { cond, then_body, else_body }, Some(loc)));
    }

    /// `loop { body }`.
    #[track_caller]
    pub fn loop_(&mut self, body: impl FnOnce(&mut Self)) {
        self.loop_dyn(&mut once(body));
    }

    /// [`KernelBuilder::loop_`], its body behind `dyn` (see [`KernelBuilder::if_else_dyn`]).
    #[track_caller]
    pub fn loop_dyn(&mut self, body: Body<'_>) {
        self.loop_with_latch(body, &mut |_| {});
    }

    #[track_caller]
    fn loop_with_latch(&mut self, body: Body<'_>, latch: Body<'_>) {
        let loc = self.here();
        let saved = self.loc_override;
        self.loop_depth += 1;
        let body = self.nested(body);
        self.loop_depth -= 1;
        let latch = self.nested(latch);
        self.loc_override = saved;
        self.blocks.last_mut().expect("block").push(Stmt::new(StmtKind::Loop { body, latch }, Some(loc)));
    }

    /// `while cond() { body }`: `cond` is rebuilt at the top of each iteration.
    #[track_caller]
    pub fn while_(&mut self, cond: impl FnOnce(&mut Self) -> Value, body: impl FnOnce(&mut Self)) {
        let mut cond = Some(cond);
        let mut cond = move |k: &mut Self| match cond.take() {
            Some(c) => c(k),
            None => unreachable!("a `while` condition is built once"),
        };
        self.while_dyn(&mut cond, &mut once(body));
    }

    /// [`KernelBuilder::while_`], its condition and body behind `dyn` (see
    /// [`KernelBuilder::if_else_dyn`]).
    #[track_caller]
    pub fn while_dyn(&mut self, cond: &mut dyn FnMut(&mut Self) -> Value, body: Body<'_>) {
        let loc = self.here();
        let saved = self.loc_override;
        self.loop_dyn(&mut |k| {
            let c = cond(k);
            k.loc_override = Some(loc);
            let c = k.expect_pred(c, "`while`");
            let stop = k.not(c);
            k.if_then(stop, |k| k.break_());
            k.loc_override = saved;
            body(k);
        });
    }

    /// `for i in start..end { body(i) }` with step 1; `i` has the type of `start`.
    #[track_caller]
    pub fn for_range(&mut self, start: Value, end: Value, body: impl FnOnce(&mut Self, Value)) {
        self.for_range_step(start, end, 1, body);
    }

    /// `for i in (start..end).step_by(step)`.
    #[track_caller]
    pub fn for_range_step(&mut self, start: Value, end: Value, step: u32, body: impl FnOnce(&mut Self, Value)) {
        let mut body = Some(body);
        let mut body = move |k: &mut Self, i: Value| {
            if let Some(b) = body.take() {
                b(k, i)
            }
        };
        self.for_range_step_dyn(start, end, step, &mut body);
    }

    /// [`KernelBuilder::for_range_step`], its body behind `dyn` (see
    /// [`KernelBuilder::if_else_dyn`]).
    #[track_caller]
    pub fn for_range_step_dyn(&mut self, start: Value, end: Value, step: u32, body: &mut dyn FnMut(&mut Self, Value)) {
        if step == 0 {
            self.error("a loop step of 0 never terminates");
        }
        let (start, end, _) = self.unify("range bounds", start, end);
        // The loop's own bookkeeping is attributed to the `for` line, not to this file.
        let loc = self.here();
        let saved = self.loc_override;
        self.loc_override = Some(loc);
        let i = self.var(start);
        self.loop_with_latch(
            &mut |k| {
                let stop = k.ge(Value::Reg(i), end);
                k.if_then(stop, |k| k.break_());
                k.loc_override = saved;
                body(k, Value::Reg(i));
            },
            &mut |k| {
                k.loc_override = Some(loc);
                // The step as the loop variable's type: a step it cannot hold is an error,
                // not a silently truncated one.
                let step = k.imm_as("a loop step", Value::u32(step), i.ty);
                let next = k.add(Value::Reg(i), step);
                k.assign(i, next);
            },
        );
        self.loc_override = saved;
    }

    #[track_caller]
    pub fn break_(&mut self) {
        if self.loop_depth == 0 {
            self.error("`break` outside of a loop");
        }
        self.push_stmt(StmtKind::Break);
    }

    #[track_caller]
    pub fn continue_(&mut self) {
        if self.loop_depth == 0 {
            self.error("`continue` outside of a loop");
        }
        self.push_stmt(StmtKind::Continue);
    }

    /// End this thread's execution of the kernel.
    #[track_caller]
    pub fn ret(&mut self) {
        self.push_stmt(StmtKind::Return);
    }

    /// Record `(tag, values)` in the simulator's trace (a comment in PTX).
    #[track_caller]
    pub fn probe(&mut self, tag: &'static str, values: &[Value]) {
        self.push(Inst::Probe { tag, values: values.to_vec() });
    }
}
