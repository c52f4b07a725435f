//! Property: any well-formed kernel the builder accepts assembles with ptxas.
//! Random programs mix arithmetic on every type class, conversions, control flow and
//! mbarrier ops; a failing case is shrunk by proptest to a minimal op list.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::{BinOp, CmpOp, Dim, Type, Value};
use phaser_codegen::{emit_kernel, ptxas, Target};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Bin(BinOp, usize, usize),
    Cmp(CmpOp, usize, usize),
    Cvt(usize, Type),
    Imm(u32),
    If(usize, Vec<Op>),
    Loop(u8, Vec<Op>),
    Arrive,
    Wait(bool),
    StoreOut(usize),
}

fn leaf() -> impl Strategy<Value = Op> {
    let bin = prop_oneof![
        Just(BinOp::Add),
        Just(BinOp::Sub),
        Just(BinOp::Mul),
        Just(BinOp::Div),
        Just(BinOp::Rem),
        Just(BinOp::Min),
        Just(BinOp::Max),
        Just(BinOp::And),
        Just(BinOp::Or),
        Just(BinOp::Xor),
        Just(BinOp::Shl),
        Just(BinOp::Shr)
    ];
    let cmp = prop_oneof![
        Just(CmpOp::Eq),
        Just(CmpOp::Ne),
        Just(CmpOp::Lt),
        Just(CmpOp::Le),
        Just(CmpOp::Gt),
        Just(CmpOp::Ge)
    ];
    let ty = prop_oneof![
        Just(Type::U32),
        Just(Type::S32),
        Just(Type::U64),
        Just(Type::S64),
        Just(Type::F32),
        Just(Type::F64),
        Just(Type::F16)
    ];
    prop_oneof![
        (bin, any::<usize>(), any::<usize>()).prop_map(|(o, a, b)| Op::Bin(o, a, b)),
        (cmp, any::<usize>(), any::<usize>()).prop_map(|(o, a, b)| Op::Cmp(o, a, b)),
        (any::<usize>(), ty).prop_map(|(a, t)| Op::Cvt(a, t)),
        any::<u32>().prop_map(Op::Imm),
        Just(Op::Arrive),
        any::<bool>().prop_map(Op::Wait),
        any::<usize>().prop_map(Op::StoreOut),
    ]
}

fn program() -> impl Strategy<Value = Vec<Op>> {
    let op = leaf().prop_recursive(2, 24, 6, |inner| {
        prop_oneof![
            (any::<usize>(), prop::collection::vec(inner.clone(), 0..6)).prop_map(|(c, b)| Op::If(c, b)),
            (1u8..4, prop::collection::vec(inner, 0..6)).prop_map(|(n, b)| Op::Loop(n, b)),
        ]
    });
    prop::collection::vec(op, 1..24)
}

struct Gen {
    vals: Vec<Value>,
}

impl Gen {
    fn pick(&self, i: usize, want: Option<Type>) -> Value {
        let matching: Vec<&Value> = self.vals.iter().filter(|v| want.is_none_or(|t| v.ty() == t)).collect();
        if matching.is_empty() {
            return self.vals[i % self.vals.len()];
        }
        *matching[i % matching.len()]
    }

    fn emit(
        &mut self,
        k: &mut KernelBuilder,
        ops: &[Op],
        bar: phaser_codegen::builder::Barrier,
        out: phaser_codegen::builder::GlobalPtr,
    ) {
        for op in ops {
            match op {
                Op::Bin(o, a, b) => {
                    let x = self.pick(*a, None);
                    let ty = x.ty();
                    let float_ok =
                        !matches!(o, BinOp::Rem | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr);
                    if ty == Type::Pred || ty.is_half() || (ty.is_float() && !float_ok) {
                        continue;
                    }
                    let y = self.pick(*b, Some(ty));
                    if y.ty() != ty {
                        continue;
                    }
                    let v = k.binary(*o, x, y);
                    self.vals.push(v);
                }
                Op::Cmp(c, a, b) => {
                    let x = self.pick(*a, None);
                    if x.ty() == Type::Pred || x.ty().is_half() {
                        continue;
                    }
                    let y = self.pick(*b, Some(x.ty()));
                    let v = k.cmp(*c, x, y);
                    self.vals.push(v);
                }
                Op::Cvt(a, t) => {
                    let x = self.pick(*a, None);
                    if x.ty().is_half() && !t.is_float() {
                        continue;
                    }
                    let v = k.cvt(x, *t);
                    self.vals.push(v);
                }
                Op::Imm(v) => {
                    let r = k.var(Value::u32(*v));
                    self.vals.push(Value::Reg(r));
                }
                Op::If(c, body) => {
                    let cond = self.pick(*c, Some(Type::Pred));
                    if cond.ty() != Type::Pred {
                        continue;
                    }
                    let n = self.vals.len();
                    k.if_then(cond, |k| self.emit(k, body, bar, out));
                    self.vals.truncate(n);
                }
                Op::Loop(count, body) => {
                    let n = self.vals.len();
                    k.for_range(Value::u32(0), Value::u32(*count as u32), |k, i| {
                        self.vals.push(i);
                        self.emit(k, body, bar, out);
                    });
                    self.vals.truncate(n);
                }
                Op::Arrive => {
                    k.mbarrier_arrive(bar);
                }
                Op::Wait(p) => k.mbarrier_wait(bar, Value::u32(*p as u32)),
                Op::StoreOut(a) => {
                    let v = self.pick(*a, Some(Type::U32));
                    if v.ty() == Type::U32 {
                        k.st_global(out, Value::u32(0), v);
                    }
                }
            }
        }
    }
}

fn build(ops: &[Op]) -> phaser_codegen::Kernel {
    let mut k = KernelBuilder::new("random", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let x = k.param("x", Type::F32);
    let s = k.param("s", Type::S32);
    let w = k.param("w", Type::U64);
    let bars = k.alloc_barriers("b", 1);
    let bar = k.barrier_at(bars, Value::u32(0));
    k.mbarrier_init(bar, Value::u32(1));
    let tid = k.thread_idx(Dim::X);
    let mut g = Gen { vals: vec![tid, x, s, w] };
    g.emit(&mut k, ops, bar, out);
    k.finish().expect("generated programs are well formed")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_well_formed_kernels_assemble(ops in program()) {
        let ptxas = ptxas::find().expect("ptxas is required");
        let k = build(&ops);
        let ptx = emit_kernel(&k).unwrap();
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, "sm_90a") {
            prop_assert!(false, "ptxas rejected:\n{}\n{}", msg, ptx);
        }
    }
}
