//! How a mutant changes its instruction. A [`Mutator`] rewrites the one statement a
//! [`Site`] names; the generic ones below work on any instruction with the
//! [`Role`] they change (see [`super::op::operand_mut`]), and [`Replace`] covers rewrites
//! specific to one op in a line.

use super::op::{operand_mut, Role};
use super::site::{locate, size, Site};
use phaser::codegen::ir::KernelParts;
use phaser::codegen::ir::*;

/// Fresh registers for the instructions a rewrite adds.
pub struct Fresh<'k> {
    kernel: &'k mut KernelParts,
}

impl Fresh<'_> {
    pub fn reg(&mut self, ty: Type) -> Reg {
        self.kernel.fresh_reg(ty)
    }
    pub fn kernel(&self) -> &KernelParts {
        self.kernel
    }
}

/// One way to change an instruction.
pub trait Mutator: Send + Sync {
    /// What it does, for the table: `delete`, `bytes -16`, `parity ^ 1`.
    fn describe(&self) -> String;
    /// The statements that replace `target` (none: it is deleted), or why this mutator does not
    /// apply to it.
    fn rewrite(&self, target: &Stmt, fresh: &mut Fresh) -> Result<Vec<Stmt>, String>;
    /// Apply to statement `id` (preorder) of the kernel `k` (taken apart). The default replaces
    /// it by [`Self::rewrite`]; mutators that move the statement override this.
    fn apply(&self, k: &mut KernelParts, id: usize) -> Result<(), String> {
        let target = stmt(k, id)?.clone();
        let repl = self.rewrite(&target, &mut Fresh { kernel: k })?;
        let (block, i) = locate(&mut k.body, id).ok_or("no such statement")?;
        block.splice(i..i + 1, repl);
        Ok(())
    }
}

fn stmt(k: &mut KernelParts, id: usize) -> Result<&Stmt, String> {
    let (block, i) = locate(&mut k.body, id).ok_or("no such statement")?;
    Ok(&block[i])
}

fn inst_of(s: &Stmt) -> Result<&Inst, String> {
    match &s.kind {
        StmtKind::Inst(i) => Ok(i),
        _ => Err("not an instruction".into()),
    }
}

fn at(s: &Stmt, i: Inst) -> Stmt {
    Stmt::new(StmtKind::Inst(i), s.loc)
}

/// Delete the statement (an instruction, or a whole `if`/`loop`).
pub struct Delete;

impl Mutator for Delete {
    fn describe(&self) -> String {
        "delete".into()
    }
    fn rewrite(&self, _: &Stmt, _: &mut Fresh) -> Result<Vec<Stmt>, String> {
        Ok(vec![])
    }
}

/// Execute the instruction twice.
pub struct Duplicate;

impl Mutator for Duplicate {
    fn describe(&self) -> String {
        "execute twice".into()
    }
    fn rewrite(&self, s: &Stmt, _: &mut Fresh) -> Result<Vec<Stmt>, String> {
        Ok(vec![s.clone(), s.clone()])
    }
}

/// Rewrite the instruction's `role` operand: `f(old, fresh)` gives the instructions that
/// compute the new operand (at the target's line) and the new operand.
fn with_operand(
    s: &Stmt,
    role: Role,
    fresh: &mut Fresh,
    f: impl FnOnce(Value, &mut Fresh) -> (Vec<Inst>, Value),
) -> Result<Vec<Stmt>, String> {
    let mut inst = inst_of(s)?.clone();
    let slot = operand_mut(&mut inst, role).ok_or_else(|| format!("the instruction has no {role:?} operand"))?;
    let (pre, new) = f(*slot, fresh);
    *slot = new;
    let mut out: Vec<Stmt> = pre.into_iter().map(|i| at(s, i)).collect();
    out.push(at(s, inst));
    Ok(out)
}

/// Add `delta` to the `role` operand (folded into an immediate; an `add` before a register).
pub struct Offset(pub Role, pub i64);

impl Mutator for Offset {
    fn describe(&self) -> String {
        let what = match self.0 {
            Role::Bytes => "bytes",
            Role::Count => "count",
            _ => "operand",
        };
        format!("{what} {:+}", self.1)
    }
    fn rewrite(&self, s: &Stmt, fresh: &mut Fresh) -> Result<Vec<Stmt>, String> {
        let delta = self.1;
        with_operand(s, self.0, fresh, |v, fresh| match v {
            Value::Imm { bits, ty } => (vec![], Value::imm_i(bits as i64 + delta, ty)),
            Value::Reg(r) => {
                let d = fresh.reg(r.ty);
                let add = ArithOp::Binary { op: BinOp::Add, dst: d, a: v, b: Value::imm_i(delta, r.ty) };
                (vec![Inst::Arith(add)], Value::Reg(d))
            }
        })
    }
}

/// Set the `role` operand to a constant.
pub struct SetImm(pub Role, pub u64);

impl Mutator for SetImm {
    fn describe(&self) -> String {
        match self.0 {
            Role::Mask => format!("mask = {:#b}", self.1),
            r => format!("{r:?} = {}", self.1).to_lowercase(),
        }
    }
    fn rewrite(&self, s: &Stmt, fresh: &mut Fresh) -> Result<Vec<Stmt>, String> {
        let value = self.1;
        with_operand(s, self.0, fresh, |v, _| (vec![], Value::imm_u(value, v.ty())))
    }
}

/// Flip bit 0 of the `role` operand (a wait on the other parity, a phase starting on the
/// other parity).
pub struct FlipBit(pub Role);

impl Mutator for FlipBit {
    fn describe(&self) -> String {
        match self.0 {
            Role::Parity => "parity ^ 1".into(),
            Role::Source => "initial value ^ 1".into(),
            r => format!("{r:?} ^ 1").to_lowercase(),
        }
    }
    fn rewrite(&self, s: &Stmt, fresh: &mut Fresh) -> Result<Vec<Stmt>, String> {
        with_operand(s, self.0, fresh, |v, fresh| match v {
            Value::Imm { bits, ty } => (vec![], Value::Imm { bits: bits ^ 1, ty }),
            Value::Reg(r) => {
                let d = fresh.reg(r.ty);
                let xor = ArithOp::Binary { op: BinOp::Xor, dst: d, a: v, b: Value::imm_u(1, r.ty) };
                (vec![Inst::Arith(xor)], Value::Reg(d))
            }
        })
    }
}

/// Use the other element of a two-element barrier array (`bar[i ^ 1]`) for the `role`
/// operand: a wait on, or an arrival at, the other stage's barrier.
pub struct OtherStage(pub Role);

impl Mutator for OtherStage {
    fn describe(&self) -> String {
        "the other stage's barrier".into()
    }
    fn rewrite(&self, s: &Stmt, fresh: &mut Fresh) -> Result<Vec<Stmt>, String> {
        with_operand(s, self.0, fresh, |v, fresh| {
            // Barriers are 8 bytes apart: flip bit 3 of the address.
            let d = fresh.reg(Type::U32);
            let xor = ArithOp::Binary { op: BinOp::Xor, dst: d, a: v, b: Value::u32(8) };
            (vec![Inst::Arith(xor)], Value::Reg(d))
        })
    }
}

/// An op-specific rewrite: `f` returns the replacement instruction, or `None` when the
/// target is not an instruction it knows.
pub struct Replace(pub &'static str, pub fn(&Inst) -> Option<Inst>);

impl Mutator for Replace {
    fn describe(&self) -> String {
        self.0.into()
    }
    fn rewrite(&self, s: &Stmt, _: &mut Fresh) -> Result<Vec<Stmt>, String> {
        let i = (self.1)(inst_of(s)?).ok_or_else(|| format!("`{}` does not apply to this instruction", self.0))?;
        Ok(vec![at(s, i)])
    }
}

/// A release store (a flag's signal) made relaxed at the same scope: it publishes nothing.
pub fn release_to_relaxed(i: &Inst) -> Option<Inst> {
    match i {
        Inst::Memory(MemoryOp::St { access: Access::Strong(o), .. }) if o.sem == AtomSem::Release => {
            let mut out = i.clone();
            if let Inst::Memory(MemoryOp::St { access: Access::Strong(o), .. }) = &mut out {
                o.sem = AtomSem::Relaxed;
            }
            Some(out)
        }
        _ => None,
    }
}

/// Move the statement to just before (or after) another statement of the same block: a
/// release hoisted above the reads it should follow, a read sunk below the release. The move
/// must not cross a statement that shares a register with it (it would read a value not
/// computed yet, or change what another statement reads).
pub struct Move {
    pub to: Site,
    pub after: bool,
}

impl Mutator for Move {
    fn describe(&self) -> String {
        format!("move {} {}", if self.after { "after" } else { "before" }, self.to)
    }
    fn rewrite(&self, _: &Stmt, _: &mut Fresh) -> Result<Vec<Stmt>, String> {
        Err("a move is applied to the kernel".into())
    }
    fn apply(&self, k: &mut KernelParts, id: usize) -> Result<(), String> {
        let (to, _) = self.to.resolve_in(&k.name, &k.body)?;
        let (block, i) = locate(&mut k.body, id).ok_or("no such statement")?;
        // Preorder indices of this block's statements, from the moved one's.
        let mut ids = vec![id; block.len()];
        for j in i + 1..block.len() {
            ids[j] = ids[j - 1] + size(&block[j - 1]);
        }
        for j in (0..i).rev() {
            ids[j] = ids[j + 1] - size(&block[j]);
        }
        let j = ids.iter().position(|&x| x == to).ok_or("the destination is not in the moved statement's block")?;
        let dest = if self.after { j + 1 } else { j };
        let crossed = if dest <= i { dest..i } else { i + 1..dest };
        let moved = regs(&block[i]);
        if let Some(s) = block[crossed].iter().find(|s| !regs(s).is_disjoint(&moved)) {
            return Err(format!("the move crosses a statement using the same registers: {:?}", s.kind));
        }
        let s = block.remove(i);
        block.insert(if dest > i { dest - 1 } else { dest }, s);
        Ok(())
    }
}

/// Every register a statement (and what it contains) names.
fn regs(s: &Stmt) -> std::collections::BTreeSet<u32> {
    let text = format!("{:?}", s.kind);
    text.match_indices("Reg { id: ")
        .filter_map(|(i, m)| text[i + m.len()..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect()
}

// ---- op-specific rewrites, for `Replace` ------------------------------------------------

/// `mbarrier.arrive.expect_tx` as a plain arrive: the bytes are never registered.
pub fn expect_tx_to_arrive(i: &Inst) -> Option<Inst> {
    let Inst::Mbarrier(MbarrierOp::ArriveExpectTx { bar, order, space, state, .. }) = i else { return None };
    Some(Inst::Mbarrier(MbarrierOp::Arrive {
        bar: *bar,
        count: None,
        order: *order,
        space: *space,
        state: *state,
        drop: false,
    }))
}

/// Toggle `.noinc` of `cp.async.mbarrier.arrive`.
pub fn toggle_noinc(i: &Inst) -> Option<Inst> {
    let Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { bar, noinc }) = i else { return None };
    Some(Inst::Memory(MemoryOp::CpAsyncMbarrierArrive { bar: *bar, noinc: !noinc }))
}

/// `x = a ^ b` as `x = a`: the `phase ^= 1` that does nothing.
pub fn xor_to_mov(i: &Inst) -> Option<Inst> {
    let Inst::Arith(ArithOp::Binary { op: BinOp::Xor, dst, a, .. }) = i else { return None };
    Some(Inst::Arith(ArithOp::Mov { dst: *dst, src: *a }))
}

/// `cp.async.bulk.wait_group n` waiting for one group fewer (`n + 1` may stay in flight).
pub fn wait_group_plus_one(i: &Inst) -> Option<Inst> {
    match i {
        Inst::Tma(TmaOp::WaitGroup { n, read }) => Some(Inst::Tma(TmaOp::WaitGroup { n: n + 1, read: *read })),
        Inst::Memory(MemoryOp::CpAsyncWaitGroup { n }) => Some(Inst::Memory(MemoryOp::CpAsyncWaitGroup { n: n + 1 })),
        _ => None,
    }
}

/// A `bar.warp.sync` whose mask leaves out lane 31.
pub fn warp_sync_partial(i: &Inst) -> Option<Inst> {
    // Only a literal mask can be rewritten here (a register mask is computed at run time).
    let Inst::Sync(SyncOp::WarpSync { mask: Value::Imm { bits, ty } }) = i else { return None };
    Some(Inst::Sync(SyncOp::WarpSync { mask: Value::imm_u(bits & !(1 << 31), *ty) }))
}
