//! Warp collectives and register fragments: each lane of a `shfl`/`vote`/`redux`/`match`/
//! `ldmatrix`/`stmatrix` joins a collective round with its operands (`warp_sync.rs`); when
//! every member arrived, the results are computed here from all of them (PTX ISA semantics).
//! Packing and unpacking 16-bit pairs is per-lane arithmetic.

use crate::report::finding::Category;
use crate::sim::check::Checker;
use crate::sim::engine::arith::cvt;
use phaser_codegen::eval::f32_to_fp8;
use crate::sim::engine::cluster::Engine;
use crate::sim::engine::program::Op;
use crate::sim::engine::warp::{lanes, LaneInputs, RoundKind, WarpSyncRound};
use phaser_codegen::ir::*;

/// Bytes of one row of an 8x8 matrix of 16-bit elements.
const ROW_BYTES: u32 = 16;

impl<C: Checker> Engine<'_, C> {
    pub(crate) fn exec_warp(&mut self, wi: usize, mask: u32, pc: u32, op: &WarpOp) {
        for l in lanes(mask) {
            let m = self.val(wi, l, op.mask()) as u32;
            let inputs: LaneInputs = match op {
                WarpOp::Shfl { src, lane, .. } => [self.val(wi, l, src), self.val(wi, l, lane), 0, 0, 0],
                WarpOp::Vote { pred, .. } => [self.val(wi, l, pred), 0, 0, 0, 0],
                WarpOp::Redux { src, .. } | WarpOp::Match { src, .. } => [self.val(wi, l, src), 0, 0, 0, 0],
            };
            self.collective_arrive(wi, l, m, pc, RoundKind::Collective, inputs);
            if self.abort {
                return;
            }
        }
    }

    pub(crate) fn exec_fragment(&mut self, wi: usize, mask: u32, pc: u32, op: &FragmentOp) {
        for l in lanes(mask) {
            match op {
                FragmentOp::PackHalf2 { dst, hi, lo, to } => {
                    let (h, lo) = (self.val(wi, l, hi), self.val(wi, l, lo));
                    let packed = cvt(lo, Type::F32, *to) | cvt(h, Type::F32, *to) << 16;
                    self.set(wi, l, *dst, packed);
                }
                FragmentOp::PackFp8x2 { dst, hi, lo, to } => {
                    let (h, lo) = (self.val(wi, l, hi) as u32, self.val(wi, l, lo) as u32);
                    let packed = f32_to_fp8(lo, *to) as u64 | (f32_to_fp8(h, *to) as u64) << 8;
                    self.set(wi, l, *dst, packed);
                }
                FragmentOp::UnpackHalf2 { lo, hi, src, from } => {
                    let v = self.val(wi, l, src);
                    self.set(wi, l, *lo, cvt(v & 0xFFFF, *from, Type::F32));
                    self.set(wi, l, *hi, cvt((v >> 16) & 0xFFFF, *from, Type::F32));
                }
                FragmentOp::LdMatrix { addr, .. } => {
                    let inputs = [self.val(wi, l, addr), 0, 0, 0, 0];
                    self.collective_arrive(wi, l, u32::MAX, pc, RoundKind::Collective, inputs);
                }
                FragmentOp::StMatrix { addr, regs, .. } => {
                    let mut inputs = [self.val(wi, l, addr), 0, 0, 0, 0];
                    for (i, r) in regs.iter().take(4).enumerate() {
                        inputs[i + 1] = self.val(wi, l, r);
                    }
                    self.collective_arrive(wi, l, u32::MAX, pc, RoundKind::Collective, inputs);
                }
            }
            if self.abort {
                return;
            }
        }
    }

    /// The instruction of a collective round.
    fn collective_inst(&self, pc: u32) -> Option<&Inst> {
        match self.cx.program.ops.get(pc as usize) {
            Some(Op::Slow(i)) => self.cx.program.slow.get(*i as usize),
            _ => None,
        }
    }

    /// Whether the collective at `pc` is `.aligned` over the whole warp (`ldmatrix`,
    /// `stmatrix`: undefined if any lane of the warp has exited).
    pub(crate) fn is_matrix_collective(&self, pc: u32) -> bool {
        matches!(
            self.collective_inst(pc),
            Some(Inst::Fragment(FragmentOp::LdMatrix { .. } | FragmentOp::StMatrix { .. }))
        )
    }

    /// A lane outside its own mask (undefined behaviour, already reported): its result is
    /// computed as if it were alone.
    pub(crate) fn collective_alone(&mut self, wi: usize, l: usize, pc: u32, kind: RoundKind, inputs: LaneInputs) {
        if kind != RoundKind::Collective {
            return;
        }
        let mut round = WarpSyncRound { mask: 1 << l, arrived: 1 << l, pc, kind, inputs: vec![[0; 5]; 32] };
        round.inputs[l] = inputs;
        self.complete_collective(wi, &round);
    }

    /// Every member of `round` arrived: compute each participant's result.
    pub(crate) fn complete_collective(&mut self, wi: usize, round: &WarpSyncRound) {
        let Some(inst) = self.collective_inst(round.pc).cloned() else { return };
        let (arrived, inputs) = (round.arrived, &round.inputs);
        let input = |l: usize, k: usize| inputs.get(l).map_or(0, |x| x[k]);
        match inst {
            Inst::Warp(WarpOp::Shfl { mode, dst, width, .. }) => {
                let c = mode.c_operand(width);
                let (seg, cval) = ((c >> 8) & 0x1f, c & 0x1f);
                for l in lanes(arrived) {
                    let lane = l as i32;
                    let b = (input(l, 1) & 0x1f) as i32;
                    let max_lane = (lane & seg as i32) | (cval as i32 & !(seg as i32));
                    let min_lane = lane & seg as i32;
                    let (j, ok) = match mode {
                        ShflMode::Up => (lane - b, lane - b >= max_lane),
                        ShflMode::Down => (lane + b, lane + b <= max_lane),
                        ShflMode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (b & !(seg as i32));
                            (j, j <= max_lane)
                        }
                    };
                    let j = if ok { j as usize } else { l };
                    let v = if arrived & (1 << j) != 0 {
                        input(j, 0) & 0xFFFF_FFFF
                    } else {
                        let t = self.cluster_thread(wi, l);
                        let cta = self.exec.warps[wi].cta;
                        let msg = format!(
                            "lane {l} reads lane {j} with `{}`, but lane {j} does not take part (not in the mask \
                             0x{:08x}, exited, or past the end of the block): the value is undefined",
                            mode_name(mode),
                            round.mask
                        );
                        self.finding(Category::WarpSync, cta, Some(t), None, Some(round.pc), msg);
                        0
                    };
                    self.set(wi, l, dst, v);
                }
            }
            Inst::Warp(WarpOp::Vote { mode, dst, .. }) => {
                let yes = lanes(arrived).filter(|&l| input(l, 0) != 0).fold(0u32, |m, l| m | 1 << l);
                let v = match mode {
                    VoteMode::All => (yes == arrived) as u64,
                    VoteMode::Any => (yes != 0) as u64,
                    VoteMode::Uni => (yes == 0 || yes == arrived) as u64,
                    VoteMode::Ballot => yes as u64,
                };
                for l in lanes(arrived) {
                    self.set(wi, l, dst, v);
                }
            }
            Inst::Warp(WarpOp::Redux { op, dst, src, .. }) => {
                let signed = src.ty().is_signed();
                let vals = lanes(arrived).map(|l| input(l, 0) as u32);
                let v = match op {
                    ReduxOp::Add => vals.fold(0u32, |a, x| a.wrapping_add(x)),
                    ReduxOp::And => vals.fold(u32::MAX, |a, x| a & x),
                    ReduxOp::Or => vals.fold(0, |a, x| a | x),
                    ReduxOp::Xor => vals.fold(0, |a, x| a ^ x),
                    ReduxOp::Min if signed => vals.map(|x| x as i32).min().unwrap_or(0) as u32,
                    ReduxOp::Max if signed => vals.map(|x| x as i32).max().unwrap_or(0) as u32,
                    ReduxOp::Min => vals.min().unwrap_or(0),
                    ReduxOp::Max => vals.max().unwrap_or(0),
                };
                for l in lanes(arrived) {
                    self.set(wi, l, dst, v as u64);
                }
            }
            Inst::Warp(WarpOp::Match { all, dst, src, .. }) => {
                let bits = src.ty().bits();
                let key = |l: usize| if bits == 64 { input(l, 0) } else { input(l, 0) & 0xFFFF_FFFF };
                for l in lanes(arrived) {
                    let same = lanes(arrived).filter(|&o| key(o) == key(l)).fold(0u32, |m, o| m | 1 << o);
                    let v = if !all {
                        same
                    } else if same == arrived {
                        arrived
                    } else {
                        0
                    };
                    self.set(wi, l, dst, v as u64);
                }
            }
            Inst::Fragment(FragmentOp::LdMatrix { dsts, trans, .. }) => {
                let Some(rows) = self.matrix_rows(wi, round, dsts.len(), None) else { return };
                for l in lanes(arrived) {
                    for (i, d) in dsts.iter().enumerate() {
                        let m = &rows[i];
                        let (r, c) = (l / 4, 2 * (l % 4));
                        let (lo, hi) = if trans { (m[c][r], m[c + 1][r]) } else { (m[r][c], m[r][c + 1]) };
                        self.set(wi, l, *d, lo as u64 | (hi as u64) << 16);
                    }
                }
            }
            Inst::Fragment(FragmentOp::StMatrix { regs, trans, .. }) => {
                // Element (row, col) of matrix i is held by thread 4 row + col / 2, in register i
                // (low half for even columns); `.trans` stores the transpose.
                let elem = |i: usize, row: usize, col: usize| {
                    let (row, col) = if trans { (col, row) } else { (row, col) };
                    let t = 4 * row + col / 2;
                    (input(t, i + 1) >> (16 * (col % 2))) as u16
                };
                let data: Vec<[[u16; 8]; 8]> =
                    (0..regs.len()).map(|i| std::array::from_fn(|r| std::array::from_fn(|c| elem(i, r, c)))).collect();
                self.matrix_rows(wi, round, regs.len(), Some(&data));
            }
            // Only the ops above run as warp collectives (`exec_warp`, `exec_fragment`).
            Inst::Fragment(FragmentOp::PackHalf2 { .. } | FragmentOp::PackFp8x2 { .. } | FragmentOp::UnpackHalf2 { .. })
            | Inst::Arith(_)
            | Inst::ReadSpecial { .. }
            | Inst::Memory(_)
            | Inst::Mbarrier(_)
            | Inst::Sync(_)
            | Inst::Tma(_)
            | Inst::Tcgen05(_)
            | Inst::Wgmma(_)
            | Inst::Printf(_)
            | Inst::Asm(_)
            | Inst::Probe { .. }
            | Inst::FlagSpin(_) => unreachable!("{} is not a warp collective", inst.mnemonic()),
        }
    }

    /// The 8 rows of each of `n` matrices whose row addresses lanes `8i + r` gave: read them
    /// (`write: None`) or write `write` into them. `None` after a fault.
    fn matrix_rows(
        &mut self,
        wi: usize,
        round: &WarpSyncRound,
        n: usize,
        write: Option<&[[[u16; 8]; 8]]>,
    ) -> Option<Vec<[[u16; 8]; 8]>> {
        let mut out = vec![[[0u16; 8]; 8]; n];
        let what = if write.is_some() { "stmatrix" } else { "ldmatrix" };
        let cta = self.exec.warps[wi].cta;
        for (i, m) in out.iter_mut().enumerate() {
            for (r, row) in m.iter_mut().enumerate() {
                let a = 8 * i + r;
                let t = self.cluster_thread(wi, a.min(31));
                if round.arrived & (1 << a) == 0 {
                    let msg = format!(
                        "`{what}` needs lane {a}'s address (row {r} of matrix {i}), but lane {a} does not take part \
                         (exited or past the end of the block): undefined behaviour"
                    );
                    self.finding(Category::WarpSync, cta, Some(t), None, Some(round.pc), msg);
                    continue;
                }
                let addr = round.inputs[a][0] & 0xFFFF_FFFF;
                if !addr.is_multiple_of(ROW_BYTES as u64) {
                    let msg = format!("`{what}` row address 0x{addr:x} (lane {a}) is not 16-byte aligned");
                    self.finding(Category::Misaligned, cta, Some(t), None, Some(round.pc), msg);
                    self.abort = true;
                    return None;
                }
                let (c, off) = self.smem_addr(wi, a, false, addr, ROW_BYTES, round.pc)?;
                let bytes = &mut self.exec.ctas[c].smem[off as usize..(off + ROW_BYTES) as usize];
                match write {
                    Some(data) => {
                        for (k, e) in data[i][r].iter().enumerate() {
                            bytes[2 * k..2 * k + 2].copy_from_slice(&e.to_le_bytes());
                        }
                        let issue = self.checker.on_shared_write(t, c, off, ROW_BYTES, round.pc);
                        self.report_issue(issue);
                    }
                    None => {
                        for (k, e) in row.iter_mut().enumerate() {
                            *e = u16::from_le_bytes([bytes[2 * k], bytes[2 * k + 1]]);
                        }
                        let issue = self.checker.on_shared_read(t, c, off, ROW_BYTES, round.pc);
                        self.report_issue(issue);
                    }
                }
            }
        }
        Some(out)
    }
}

fn mode_name(m: ShflMode) -> String {
    format!("shfl.sync.{}", m.name())
}
