//! The registers wgmmas access (accumulators and A fragments) and the ordinary instructions
//! that touch them. Lowering (`program.rs`) puts an `Op::TensorRegs` check before each such
//! instruction, so the warp loop pays nothing for the instructions that do not (in a kernel
//! without wgmma: none at all); `exec_wgmma.rs` runs the checks.
//!
//! Every instruction but the wgmma family's own is seen, through the registers the IR says it
//! reads and writes: arithmetic, loads and stores, fragment ops, warp collectives, `printf`,
//! probes, inline-PTX outputs, `tcgen05.ld` destinations, ...

use phaser_codegen::ir::*;
use std::collections::HashMap;

/// The kernel's tensor registers and the check of each instruction that touches them.
#[derive(Default, Debug)]
pub struct TensorRegs {
    /// The registers, by dense index.
    pub regs: Vec<Reg>,
    index: HashMap<u32, u32>,
    /// Per `Op::TensorRegs`: the dense indices the following instruction accesses.
    pub checks: Vec<Vec<u32>>,
}

impl TensorRegs {
    /// Every register a `wgmma.mma_async` of `body` accesses besides through descriptors.
    pub fn of(body: &[Stmt]) -> TensorRegs {
        let mut t = TensorRegs::default();
        walk_insts(body, &mut |i, _| {
            if let Inst::Wgmma(WgmmaOp::MmaAsync(m)) = i {
                let a = match &m.a {
                    WgmmaA::Regs(a) => {
                        a.iter().filter_map(|v| if let Value::Reg(r) = v { Some(*r) } else { None }).collect()
                    }
                    WgmmaA::Desc(_) => Vec::new(),
                };
                for r in m.d.iter().copied().chain(a) {
                    t.add(r);
                }
            }
        });
        t
    }

    fn add(&mut self, r: Reg) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.index.entry(r.id) {
            e.insert(self.regs.len() as u32);
            self.regs.push(r);
        }
    }

    /// Dense index of register `id`, if it is a tensor register.
    pub fn dense(&self, id: u32) -> Option<u32> {
        self.index.get(&id).copied()
    }

    /// The check for `inst`, if it is an ordinary instruction touching tensor registers: its
    /// index in `checks`.
    pub fn check_for(&mut self, inst: &Inst) -> Option<u32> {
        if self.regs.is_empty() || matches!(inst, Inst::Wgmma(_)) {
            return None;
        }
        let mut ids = Vec::new();
        inst_regs(inst, &mut ids);
        let mut dense: Vec<u32> = ids.into_iter().filter_map(|id| self.dense(id)).collect();
        if dense.is_empty() {
            return None;
        }
        dense.sort_unstable();
        dense.dedup();
        self.checks.push(dense);
        Some(self.checks.len() as u32 - 1)
    }
}

/// The register ids of a wgmma's accumulator and register-A fragment.
pub fn wgmma_regs(m: &MmaAsync) -> Vec<u32> {
    let mut v: Vec<u32> = m.d.iter().map(|r| r.id).collect();
    if let WgmmaA::Regs(a) = &m.a {
        v.extend(a.iter().filter_map(|x| x.as_reg().map(|r| r.id)));
    }
    v
}

/// The register ids `inst` reads or writes: every operand of every family
/// ([`Inst::for_each_use`], [`Inst::for_each_def`]), so inline-PTX outputs and `tcgen05.ld`
/// destinations are checked like any other access.
pub fn inst_regs(inst: &Inst, out: &mut Vec<u32>) {
    inst.for_each_use(|v| out.extend(v.as_reg().map(|r| r.id)));
    inst.for_each_def(|r| out.push(r.id));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: u32, ty: Type) -> Reg {
        Reg { id, ty }
    }

    #[test]
    fn only_instructions_touching_wgmma_registers_get_a_check() {
        let acc = [r(1, Type::F32), r(2, Type::F32)];
        let mma = MmaAsync {
            n: 8,
            a_ty: MmaElem::BF16,
            b_ty: MmaElem::BF16,
            d: acc.to_vec(),
            a: WgmmaA::Regs([Value::Reg(r(7, Type::B32)), Value::u32(0), Value::u32(0), Value::u32(0)]),
            b_desc: Value::u64(0),
            scale_d: Value::pred(true),
            negate_a: false,
            negate_b: false,
            trans_a: false,
            trans_b: false,
        };
        let body = vec![Stmt::new(StmtKind::Inst(Inst::Wgmma(WgmmaOp::MmaAsync(Box::new(mma.clone())))), None)];
        let mut t = TensorRegs::of(&body);
        assert_eq!(t.regs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 2, 7]);
        // The wgmma itself is not an ordinary access.
        assert_eq!(t.check_for(&Inst::Wgmma(WgmmaOp::MmaAsync(Box::new(mma)))), None);
        // Reading the accumulator, writing A's register: checked; unrelated registers: not.
        let pack = Inst::Fragment(FragmentOp::PackHalf2 {
            dst: r(9, Type::B32),
            hi: Value::Reg(acc[1]),
            lo: Value::Reg(acc[0]),
            to: Type::BF16,
        });
        assert_eq!(t.check_for(&pack), Some(0));
        assert_eq!(t.checks[0], vec![0, 1]);
        let write_a = Inst::Arith(ArithOp::Mov { dst: r(7, Type::B32), src: Value::u32(3) });
        assert_eq!(t.check_for(&write_a), Some(1));
        assert_eq!(t.checks[1], vec![2]);
        let other = Inst::Arith(ArithOp::Mov { dst: r(8, Type::B32), src: Value::u32(3) });
        assert_eq!(t.check_for(&other), None);
        // A shuffle of an accumulator value, a vector store of the accumulator, an
        // `ldmatrix` into A's register: each touches wgmma registers.
        let shfl = Inst::Warp(WarpOp::Shfl {
            mode: ShflMode::Bfly,
            dst: r(8, Type::F32),
            src: Value::Reg(acc[0]),
            lane: Value::u32(1),
            width: 32,
            mask: Value::u32(u32::MAX),
        });
        assert_eq!(t.check_for(&shfl), Some(2));
        assert_eq!(t.checks[2], vec![0]);
        let st = Inst::Memory(MemoryOp::StVec {
            space: Space::Shared,
            ty: Type::F32,
            addr: Value::u32(0),
            offset: 0,
            srcs: vec![Value::Reg(acc[0]), Value::Reg(acc[1])],
        });
        assert_eq!(t.check_for(&st), Some(3));
        assert_eq!(t.checks[3], vec![0, 1]);
        let ldm =
            Inst::Fragment(FragmentOp::LdMatrix { dsts: vec![r(7, Type::B32)], addr: Value::u32(0), trans: false });
        assert_eq!(t.check_for(&ldm), Some(4));
        assert_eq!(t.checks[4], vec![2]);
        let unrelated_vote = Inst::Warp(WarpOp::Vote {
            mode: VoteMode::Ballot,
            dst: r(9, Type::U32),
            pred: Value::pred(true),
            mask: Value::u32(u32::MAX),
        });
        assert_eq!(t.check_for(&unrelated_vote), None);
        // Inline PTX writing the accumulator, a `tcgen05.ld` into A's register: checked too.
        let asm = Inst::Asm(InlineAsm {
            template: "mov.b32 {0}, 0f3F800000;".into(),
            inputs: vec![],
            outputs: vec![acc[1]],
            memory: false,
        });
        assert_eq!(t.check_for(&asm), Some(5));
        assert_eq!(t.checks[5], vec![1]);
        let tmem_ld = Inst::Tcgen05(Tcgen05Op::Ld {
            shape: LdStShape::S32x32b,
            num: 1,
            pack16: false,
            dst: vec![r(7, Type::B32)],
            taddr: Value::u32(0),
        });
        assert_eq!(t.check_for(&tmem_ld), Some(6));
        assert_eq!(t.checks[6], vec![2]);
        let unrelated_asm = Inst::Asm(InlineAsm {
            template: "mov.b32 {0}, 1;".into(),
            inputs: vec![],
            outputs: vec![r(9, Type::B32)],
            memory: false,
        });
        assert_eq!(t.check_for(&unrelated_asm), None);
    }
}
