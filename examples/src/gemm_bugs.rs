//! Two protocol bugs, injected into a built Hopper GEMM kernel taken apart (`Kernel::into_parts`; the builder's
//! or the DSL's: both have the same statement structure), for the simulator tests that check
//! the checker reports each at its Rust line:
//! - [`release_before_wait`]: the mainloop's `wgmma.wait_group 1` and the stage release that
//!   follows it trade places, so a stage is handed back to the producer while the wgmmas that
//!   read it may still be in flight (an early release);
//! - [`drop_final_wait`]: the `wgmma.wait_group 0` after the mainloop goes, so the epilogue
//!   reads the accumulator before the last wgmmas wrote it.

use phaser::codegen::ir::{Inst, KernelParts, MbarrierOp, Stmt, StmtKind, WgmmaOp};

/// Swap the mainloop's `wgmma.wait_group 1` with the release after it. False if the kernel
/// has no such pair.
pub fn release_before_wait(k: &mut KernelParts) -> bool {
    rewrite(&mut k.body, &mut |b| {
        let i = (0..b.len().saturating_sub(1)).find(|&i| is_wait_group(&b[i], 1) && is_release(&b[i + 1]))?;
        let mut v = b.to_vec();
        v.swap(i, i + 1);
        Some(v)
    })
}

/// Remove the `wgmma.wait_group 0` that precedes the last release of a tile. False if the
/// kernel has none.
pub fn drop_final_wait(k: &mut KernelParts) -> bool {
    rewrite(&mut k.body, &mut |b| {
        let i = (0..b.len().saturating_sub(1)).find(|&i| is_wait_group(&b[i], 0) && is_release(&b[i + 1]))?;
        let mut v = b.to_vec();
        v.remove(i);
        Some(v)
    })
}

/// Rewrite the first statement list (depth first) where `f` returns a replacement.
fn rewrite(block: &mut Vec<Stmt>, f: &mut dyn FnMut(&[Stmt]) -> Option<Vec<Stmt>>) -> bool {
    if let Some(new) = f(block) {
        *block = new;
        return true;
    }
    for s in block.iter_mut() {
        let done = match &mut s.kind {
            StmtKind::If { then_body, else_body, .. } => rewrite(then_body, f) || rewrite(else_body, f),
            StmtKind::Loop { body, latch } => rewrite(body, f) || rewrite(latch, f),
            _ => false,
        };
        if done {
            return true;
        }
    }
    false
}

fn is_wait_group(s: &Stmt, n: u32) -> bool {
    matches!(&s.kind, StmtKind::Inst(Inst::Wgmma(WgmmaOp::WaitGroup { n: m })) if *m == n)
}

/// An `if` whose body arrives on a barrier (a stage release by the warpgroup's leader).
fn is_release(s: &Stmt) -> bool {
    fn arrives(b: &[Stmt]) -> bool {
        b.iter().any(|s| match &s.kind {
            StmtKind::Inst(Inst::Mbarrier(MbarrierOp::Arrive { .. })) => true,
            StmtKind::If { then_body, else_body, .. } => arrives(then_body) || arrives(else_body),
            _ => false,
        })
    }
    matches!(&s.kind, StmtKind::If { then_body, .. } if arrives(then_body))
}
