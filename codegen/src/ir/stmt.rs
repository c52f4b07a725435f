//! Structured control flow. The printer lowers it to labels and predicated branches;
//! the simulator walks it directly.

use super::inst::Inst;
use super::source_loc::SourceLoc;
use super::value::Value;

pub type Block = Vec<Stmt>;

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub loc: Option<SourceLoc>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Inst(Inst),
    /// `cond` is a predicate.
    If {
        cond: Value,
        then_body: Block,
        else_body: Block,
    },
    /// Runs `body`, then `latch`, forever; `Break` leaves, `Continue` jumps to `latch`.
    /// `for` loops keep their increment in `latch` so `continue` still increments.
    Loop {
        body: Block,
        latch: Block,
    },
    Break,
    Continue,
    /// Leave the kernel (this thread).
    Return,
}

impl Stmt {
    pub fn new(kind: StmtKind, loc: Option<SourceLoc>) -> Stmt {
        Stmt { kind, loc }
    }
}

/// Visit every instruction in a block, depth-first, in program order.
pub fn walk_insts<'a>(block: &'a [Stmt], f: &mut dyn FnMut(&'a Inst, Option<SourceLoc>)) {
    for s in block {
        match &s.kind {
            StmtKind::Inst(i) => f(i, s.loc),
            StmtKind::If { then_body, else_body, .. } => {
                walk_insts(then_body, f);
                walk_insts(else_body, f);
            }
            StmtKind::Loop { body, latch } => {
                walk_insts(body, f);
                walk_insts(latch, f);
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Return => {}
        }
    }
}

/// How deeply control flow nests in `block` (0 for straight-line code), computed without
/// recursion so that any IR, however deep, can be measured (and refused) safely.
pub fn nesting_depth(block: &[Stmt]) -> usize {
    let mut deepest = 0;
    let mut pending: Vec<(&[Stmt], usize)> = vec![(block, 0)];
    while let Some((b, depth)) = pending.pop() {
        deepest = deepest.max(depth);
        for s in b {
            match &s.kind {
                StmtKind::If { then_body: x, else_body: y, .. } | StmtKind::Loop { body: x, latch: y } => {
                    pending.push((x, depth + 1));
                    pending.push((y, depth + 1));
                }
                StmtKind::Inst(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return => {}
            }
        }
    }
    deepest
}
