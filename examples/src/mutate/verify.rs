//! The check that a mutant changed what it says and nothing else: the kernel before and after,
//! flattened to statements (with the structure of `if`s and loops), differ only in statements
//! of the target's Rust line, and the only statements gone are the target's own.

use phaser::codegen::ir::{SourceLoc, Stmt, StmtKind, Value};

/// A flattened statement.
#[derive(Clone, Copy, PartialEq)]
enum Tok<'a> {
    Leaf(&'a Stmt),
    If(&'a Value, Option<SourceLoc>),
    Else,
    Loop(Option<SourceLoc>),
    Latch,
    End,
}

impl Tok<'_> {
    fn loc(&self) -> Option<Option<SourceLoc>> {
        match self {
            Tok::Leaf(s) => Some(s.loc),
            Tok::If(_, l) | Tok::Loop(l) => Some(*l),
            _ => None,
        }
    }
}

fn flatten<'a>(block: &'a [Stmt], out: &mut Vec<Tok<'a>>, starts: &mut Vec<usize>) {
    for s in block {
        starts.push(out.len());
        match &s.kind {
            StmtKind::If { cond, then_body, else_body } => {
                out.push(Tok::If(cond, s.loc));
                flatten(then_body, out, starts);
                out.push(Tok::Else);
                flatten(else_body, out, starts);
                out.push(Tok::End);
            }
            StmtKind::Loop { body, latch } => {
                out.push(Tok::Loop(s.loc));
                flatten(body, out, starts);
                out.push(Tok::Latch);
                flatten(latch, out, starts);
                out.push(Tok::End);
            }
            _ => out.push(Tok::Leaf(s)),
        }
    }
}

/// Check that `after` is `before` with only statement `target` (preorder index) changed:
/// every token removed lies inside the target, every token added carries the target's source
/// location (or is structure), and something changed.
pub fn only_target_changed(before: &[Stmt], after: &[Stmt], target: usize) -> Result<(), String> {
    let (mut a, mut a_starts) = (Vec::new(), Vec::new());
    flatten(before, &mut a, &mut a_starts);
    let (mut b, mut b_starts) = (Vec::new(), Vec::new());
    flatten(after, &mut b, &mut b_starts);
    let start = *a_starts.get(target).ok_or("no such target statement")?;
    let end = match a[start] {
        Tok::If(..) | Tok::Loop(..) => {
            let mut depth = 0;
            let mut i = start;
            loop {
                match a[i] {
                    Tok::If(..) | Tok::Loop(..) => depth += 1,
                    Tok::End => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break i;
                }
            }
        }
        _ => start + 1,
    };
    let loc = a[start].loc().flatten();
    // Common prefix and suffix, then a longest-common-subsequence diff of the middle.
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suf = a.len().min(b.len()) - pre;
    let suf = a.iter().rev().zip(b.iter().rev()).take(max_suf).take_while(|(x, y)| x == y).count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    if am.is_empty() && bm.is_empty() {
        return Err("the mutation changed nothing".into());
    }
    let (n, m) = (am.len(), bm.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if am[i] == bm[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    // An edit script is ambiguous when two statements trade places: accept either reading.
    let first = edits(am, bm, &lcs, pre, start..end, loc, true);
    let first = first.or_else(|e| edits(am, bm, &lcs, pre, start..end, loc, false).map_err(|_| e));
    // A structured statement moved past another of the same size reads, to the diff, as the
    // other one moved: accept `after` if it is `before` with the target's tokens elsewhere.
    first.or_else(|e| if moved(&a, &b, &b_starts, start..end) { Ok(()) } else { Err(e) })
}

/// Whether `b` is `a` with the tokens `target` taken out and put back at a statement boundary.
fn moved(a: &[Tok], b: &[Tok], b_starts: &[usize], target: std::ops::Range<usize>) -> bool {
    let t = &a[target.clone()];
    let rest: Vec<&Tok> = a[..target.start].iter().chain(&a[target.end..]).collect();
    b.len() == a.len()
        && b_starts.iter().any(|&s| {
            b.get(s..s + t.len()) == Some(t) && b[..s].iter().chain(&b[s + t.len()..]).zip(&rest).all(|(x, y)| x == *y)
        })
}

/// Walk one longest-common-subsequence edit script of `am` → `bm` (`prefer_insert` breaks
/// ties) and check its edits: removals inside `target` (indices of the whole kernel, `am`
/// starting at `pre`), additions at `loc`.
fn edits(
    am: &[Tok],
    bm: &[Tok],
    lcs: &[Vec<u32>],
    pre: usize,
    target: std::ops::Range<usize>,
    loc: Option<SourceLoc>,
    prefer_insert: bool,
) -> Result<(), String> {
    let (n, m) = (am.len(), bm.len());
    let (mut i, mut j) = (0, 0);
    let describe = |t: &Tok| match t {
        Tok::Leaf(s) => format!("{:?}", s.kind),
        Tok::If(..) => "if".into(),
        Tok::Loop(..) => "loop".into(),
        Tok::Else => "else".into(),
        Tok::Latch => "latch".into(),
        Tok::End => "end".into(),
    };
    while i < n || j < m {
        if i < n && j < m && am[i] == bm[j] {
            i += 1;
            j += 1;
        } else if j < m
            && (i == n || lcs[i][j + 1] > lcs[i + 1][j] || (prefer_insert && lcs[i][j + 1] == lcs[i + 1][j]))
        {
            let t = &bm[j];
            if t.loc().is_some_and(|l| l != loc) {
                return Err(format!("the mutation added a statement of another source line: {}", describe(t)));
            }
            j += 1;
        } else {
            let at = pre + i;
            if !target.contains(&at) {
                return Err(format!("the mutation removed a statement other than its target: {}", describe(&am[i])));
            }
            i += 1;
        }
    }
    Ok(())
}
