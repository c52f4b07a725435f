//! Where a mutant strikes: an instruction named by its kind and the Rust source line it was
//! built on (every IR statement carries the `file:line` of the builder call or DSL statement
//! that made it), never by its position in the kernel. A site names the text of that line, so
//! an edit elsewhere in the gallery (lines moving, instructions added) cannot retarget it;
//! when the named line no longer yields exactly the statements the site expects, resolving it
//! fails with the candidates it found.

use super::op::Op;
use phaser::codegen::ir::{Block, SourceLoc, Stmt, StmtKind};
use phaser::codegen::Kernel;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// An instruction of a kernel: the `nth` (from 0) of the `of` statements of kind `op` built on
/// a Rust line containing `line` (whitespace-insensitive), in program order; or, with `up` > 0,
/// the `if`/loop that many levels around it (the `if leader { release }` a release sits in).
#[derive(Clone, Copy, Debug)]
pub struct Site {
    pub op: Op,
    pub line: &'static str,
    pub nth: usize,
    pub of: usize,
    pub up: usize,
}

/// The statement of kind `op` built on the one Rust line that contains `line`.
pub fn at(op: Op, line: &'static str) -> Site {
    Site { op, line, nth: 0, of: 1, up: 0 }
}

impl Site {
    /// The `nth` of `of` statements the line yields (a helper emitting several, a Rust loop
    /// unrolled into the kernel, the same text on several lines).
    pub fn nth(self, nth: usize, of: usize) -> Site {
        Site { nth, of, ..self }
    }

    /// The structured statement (`if` or loop) directly around this one: a mutant that moves or
    /// deletes a guarded statement with its guard (`if leader { T.pipeline.consumer_release(..) }`),
    /// named by the line inside it rather than by a guard line many statements share.
    pub fn parent(self) -> Site {
        Site { up: self.up + 1, ..self }
    }

    /// The statement's preorder index in `k` (see [`preorder`]) and its source location.
    pub fn resolve(&self, k: &Kernel) -> Result<(usize, SourceLoc), String> {
        self.resolve_in(k.name(), k.body())
    }

    /// [`Self::resolve`] in the body of kernel `name` (a kernel taken apart, being edited).
    pub fn resolve_in(&self, name: &str, body: &Block) -> Result<(usize, SourceLoc), String> {
        let want = squash(self.line);
        let mut found = Vec::new();
        preorder(body, &mut |id, s| {
            if (self.op.matches)(&s.kind) {
                if let Some(loc) = s.loc {
                    if source_line(&loc).is_some_and(|text| squash(&text).contains(&want)) {
                        found.push((id, loc));
                    }
                }
            }
        });
        if found.len() != self.of || self.nth >= self.of {
            let lines: Vec<String> = found.iter().map(|(_, l)| short(l)).collect();
            return Err(format!(
                "site {self} in `{}`: expected {} `{}` statement(s) on lines containing `{}`, found {}{}",
                name,
                self.of,
                self.op.name,
                self.line,
                found.len(),
                if lines.is_empty() { String::new() } else { format!(" (at {})", lines.join(", ")) }
            ));
        }
        let (mut id, mut loc) = found[self.nth];
        if self.up > 0 {
            let parents = parents(body);
            for _ in 0..self.up {
                id = parents[id]
                    .ok_or_else(|| format!("site {self} in `{name}`: the statement is not inside an `if` or loop"))?;
            }
            let mut outer = None;
            preorder(body, &mut |i, s| {
                if i == id {
                    outer = Some(s.loc);
                }
            });
            loc = outer.flatten().unwrap_or(loc);
        }
        Ok((id, loc))
    }
}

/// Per preorder index, the index of the `if`/loop directly around that statement.
fn parents(block: &[Stmt]) -> Vec<Option<usize>> {
    fn go(block: &[Stmt], parent: Option<usize>, out: &mut Vec<Option<usize>>) {
        for s in block {
            let id = out.len();
            out.push(parent);
            match &s.kind {
                StmtKind::If { then_body, else_body, .. } => {
                    go(then_body, Some(id), out);
                    go(else_body, Some(id), out);
                }
                StmtKind::Loop { body, latch } => {
                    go(body, Some(id), out);
                    go(latch, Some(id), out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    go(block, None, &mut out);
    out
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.op.name)?;
        if self.of > 1 {
            write!(f, " #{} of {}", self.nth + 1, self.of)?;
        }
        write!(f, " at `{}`", self.line)?;
        for _ in 0..self.up {
            f.write_str(", its `if`/loop")?;
        }
        Ok(())
    }
}

/// Visit every statement (structured ones before their bodies), numbering them from 0.
pub fn preorder<'a>(block: &'a [Stmt], f: &mut dyn FnMut(usize, &'a Stmt)) {
    fn go<'a>(block: &'a [Stmt], next: &mut usize, f: &mut dyn FnMut(usize, &'a Stmt)) {
        for s in block {
            f(*next, s);
            *next += 1;
            match &s.kind {
                StmtKind::If { then_body, else_body, .. } => {
                    go(then_body, next, f);
                    go(else_body, next, f);
                }
                StmtKind::Loop { body, latch } => {
                    go(body, next, f);
                    go(latch, next, f);
                }
                _ => {}
            }
        }
    }
    go(block, &mut 0, f)
}

/// How many statements `s` is in preorder (itself and everything nested in it).
pub fn size(s: &Stmt) -> usize {
    1 + match &s.kind {
        StmtKind::If { then_body, else_body, .. } => {
            then_body.iter().map(size).sum::<usize>() + else_body.iter().map(size).sum::<usize>()
        }
        StmtKind::Loop { body, latch } => body.iter().map(size).sum::<usize>() + latch.iter().map(size).sum::<usize>(),
        _ => 0,
    }
}

/// The block holding the statement with preorder index `id`, and its index there.
pub fn locate(block: &mut Vec<Stmt>, id: usize) -> Option<(&mut Vec<Stmt>, usize)> {
    let mut first = 0;
    let mut index = None;
    for (i, s) in block.iter().enumerate() {
        let n = size(s);
        if id < first + n {
            index = Some((i, id - first));
            break;
        }
        first += n;
    }
    let (i, rel) = index?;
    if rel == 0 {
        return Some((block, i));
    }
    // Inside statement `i`: its children come after it in preorder.
    let mut rel = rel - 1;
    let children: Vec<&mut Vec<Stmt>> = match &mut block[i].kind {
        StmtKind::If { then_body, else_body, .. } => vec![then_body, else_body],
        StmtKind::Loop { body, latch } => vec![body, latch],
        _ => return None,
    };
    for child in children {
        let n: usize = child.iter().map(size).sum();
        if rel < n {
            return locate(child, rel);
        }
        rel -= n;
    }
    None
}

/// `file.rs:line`, for tables.
pub fn short(loc: &SourceLoc) -> String {
    let file = loc.file.rsplit('/').next().unwrap_or(loc.file);
    format!("{file}:{}", loc.line)
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The text of the Rust line `loc` names. Paths are relative to the workspace root (how cargo
/// passes them to rustc); files are read once.
pub fn source_line(loc: &SourceLoc) -> Option<String> {
    static FILES: OnceLock<Mutex<HashMap<&'static str, Option<String>>>> = OnceLock::new();
    let mut files = FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let text = files.entry(loc.file).or_insert_with(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::read_to_string(root.join(loc.file)).ok()
    });
    text.as_ref()?.lines().nth(loc.line.checked_sub(1)? as usize).map(str::to_string)
}
