//! The differential table of the constant evaluator (`phaser::codegen::eval`): arithmetic,
//! comparison, conversion, shift and select ops at every type the builder takes, with
//! operands drawn so edge values (0, ±1, min, max, widths, NaN, ±0, infinities, subnormals)
//! are over-represented. One kernel computes each entry twice: with constant operands
//! (folded where the builder folds) and with operands loaded from memory (computed at run
//! time). Both must equal the evaluator's value; the simulator runs it in
//! `tests/robust_eval.rs`, the GPU in `tests/gpu_eval.rs`.

#![allow(dead_code)]

use phaser::codegen::builder::{GlobalPtr, KernelBuilder};
use phaser::codegen::eval::{self, FoldError};
use phaser::codegen::ir::{BinOp, CmpOp, Dim, Type, UnOp, Value};
use phaser::codegen::{Kernel, Target};
use phaser::runtime::elem::Elem;
use phaser::{Arg, Buffer, Device, LaunchConfig, RuntimeError};
use proptest::prelude::*;

/// Every type the table's buffers hold, in parameter order.
pub const TYPES: [Type; 10] =
    [Type::U16, Type::S16, Type::U32, Type::S32, Type::U64, Type::S64, Type::F32, Type::F64, Type::F16, Type::BF16];
const INTS: [Type; 6] = [Type::U16, Type::S16, Type::U32, Type::S32, Type::U64, Type::S64];
const ARITH_FLOATS: [Type; 2] = [Type::F32, Type::F64];
const BIN_OPS: [BinOp; 12] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Min,
    BinOp::Max,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
    BinOp::Shl,
    BinOp::Shr,
];
const CMP_OPS: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Bin(BinOp),
    Un(UnOp),
    Cmp(CmpOp),
    Mad,
    /// `as` into this type.
    Cvt(Type),
    /// `c != 0 ? a : b`.
    Select,
}

/// One op on operands of type `ty` (their bits, masked to the width).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub op: Op,
    pub ty: Type,
    pub a: u64,
    pub b: u64,
    pub c: u64,
}

fn mask(v: u64, ty: Type) -> u64 {
    if ty.bits() >= 64 {
        v
    } else {
        v & ((1u64 << ty.bits()) - 1)
    }
}

impl Entry {
    /// The type of the stored result (a comparison is stored as a `u32` 0 or 1).
    pub fn result_ty(&self) -> Type {
        match self.op {
            Op::Cmp(_) => Type::U32,
            Op::Cvt(t) => t,
            Op::Bin(_) | Op::Un(_) | Op::Mad | Op::Select => self.ty,
        }
    }

    /// A shift amount as the instruction reads it: the operand converted to `u32`.
    fn amount(&self) -> u64 {
        eval::cvt(self.b, self.ty, Type::U32)
    }

    /// What the evaluator says the instruction computes (the result's bits).
    pub fn expected(&self) -> u64 {
        let (a, b, c, ty) = (self.a, self.b, self.c, self.ty);
        match self.op {
            Op::Bin(op @ (BinOp::Shl | BinOp::Shr)) => eval::bin_fn(op, ty)(a, self.amount()),
            Op::Bin(op) => eval::bin_fn(op, ty)(a, b),
            Op::Un(op) => eval::un_fn(op, ty)(a),
            Op::Cmp(cmp) => eval::cmp_fn(cmp, ty)(a, b) as u64,
            Op::Mad => eval::mad_fn(ty)(a, b, c),
            Op::Cvt(to) => eval::cvt(a, ty, to),
            Op::Select => {
                if c != 0 {
                    a
                } else {
                    b
                }
            }
        }
    }

    /// Whether the builder refuses the constant form (a fold that overflows or divides by
    /// zero); `Ok` when it folds or emits the instruction.
    pub fn fold(&self) -> Result<(), FoldError> {
        match self.op {
            Op::Bin(op @ (BinOp::Shl | BinOp::Shr)) if self.ty.is_int() => {
                eval::fold_binary(op, self.ty, self.a, self.amount()).map(drop)
            }
            Op::Bin(op) if self.ty.is_int() => eval::fold_binary(op, self.ty, self.a, self.b).map(drop),
            Op::Un(op) if self.ty.is_int() => eval::fold_unary(op, self.ty, self.a).map(drop),
            _ => Ok(()),
        }
    }

    /// Whether the constant form is built: half-precision constants are not PTX immediates.
    fn has_constant_form(&self) -> bool {
        !self.ty.is_half() && self.fold().is_ok()
    }

    /// Whether PTX defines the result (integer division by zero and `MIN / -1` are
    /// "unspecified, machine-specific": the GPU half reports them without failing).
    pub fn defined_by_ptx(&self) -> bool {
        match self.op {
            Op::Bin(BinOp::Div | BinOp::Rem) if self.ty.is_int() => {
                let min = self.ty.is_signed() && self.a == 1u64 << (self.ty.bits() - 1);
                mask(self.b, self.ty) != 0 && !(min && self.b == mask(u64::MAX, self.ty))
            }
            _ => true,
        }
    }

    /// The builder call of this entry on operands `a`, `b`, `c`.
    fn build(&self, k: &mut KernelBuilder, a: Value, b: Value, c: Value) -> Value {
        match self.op {
            Op::Bin(op) => k.binary(op, a, b),
            Op::Un(op) => k.unary(op, a),
            Op::Cmp(cmp) => {
                let p = k.cmp(cmp, a, b);
                k.select(p, Value::u32(1), Value::u32(0))
            }
            Op::Mad => k.mad(a, b, c),
            Op::Cvt(to) => k.cvt(a, to),
            Op::Select => {
                let cond = k.ne(c, Value::imm_u(0, c.ty()));
                k.select(cond, a, b)
            }
        }
    }

    /// The condition operand's type (`Select` reads `c` as a `u32`).
    fn c_ty(&self) -> Type {
        match self.op {
            Op::Select => Type::U32,
            _ => self.ty,
        }
    }
}

/// Where each entry's operands and results live in the buffers of [`kernel`].
pub struct Layout {
    /// Per type (in [`TYPES`] order): the input bits.
    pub inputs: Vec<Vec<u64>>,
    /// Per type: how many results.
    pub outputs: Vec<usize>,
    /// Per entry: (type index, slot of the constant form if built, slot of the loaded form).
    pub slots: Vec<(usize, Option<usize>, usize)>,
}

fn type_index(ty: Type) -> usize {
    TYPES.iter().position(|&t| t == ty).expect("a table type")
}

/// One kernel computing every entry twice (thread 0 of one CTA).
pub fn kernel(entries: &[Entry]) -> (Kernel, Layout) {
    let mut k = KernelBuilder::new("eval_table", Target::Sm90a);
    let ins: Vec<GlobalPtr> = TYPES.iter().map(|&t| k.param_global(&format!("in_{t}"), t, false)).collect();
    let outs: Vec<GlobalPtr> = TYPES.iter().map(|&t| k.param_global(&format!("out_{t}"), t, true)).collect();
    let mut layout = Layout { inputs: vec![Vec::new(); TYPES.len()], outputs: vec![0; TYPES.len()], slots: Vec::new() };
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    k.if_then(first, |k| {
        for e in entries {
            let mut load = |k: &mut KernelBuilder, bits: u64, ty: Type| {
                let list = &mut layout.inputs[type_index(ty)];
                list.push(bits);
                k.ld_global(ins[type_index(ty)], Value::u32(list.len() as u32 - 1))
            };
            let (a, b, c) = (load(k, e.a, e.ty), load(k, e.b, e.ty), load(k, e.c, e.c_ty()));
            let out = type_index(e.result_ty());
            let mut store = |k: &mut KernelBuilder, v: Value| {
                let slot = layout.outputs[out];
                layout.outputs[out] += 1;
                k.st_global(outs[out], Value::u32(slot as u32), v);
                slot
            };
            let constant = e.has_constant_form().then(|| {
                let imm = |bits, ty| Value::Imm { bits, ty };
                let v = e.build(k, imm(e.a, e.ty), imm(e.b, e.ty), imm(e.c, e.c_ty()));
                store(k, v)
            });
            let v = e.build(k, a, b, c);
            let loaded = store(k, v);
            layout.slots.push((out, constant, loaded));
        }
    });
    let kernel = k.finish().unwrap_or_else(|e| panic!("the table kernel builds: {e}"));
    (kernel, layout)
}

fn upload_bits<T: Elem>(dev: &Device, bits: &[u64]) -> Result<Buffer<T>, RuntimeError> {
    let v: Vec<T> = bits.iter().map(|&b| T::from_bits(b)).collect();
    // A zero-length buffer is not an allocation: one unused element stands in.
    if v.is_empty() {
        dev.alloc::<T>(1)
    } else {
        dev.upload(&v)
    }
}

/// The bits of each element, masked to the type's width (`Elem::to_bits` sign-extends).
fn download_bits<T: Elem>(dev: &Device, b: &Buffer<T>) -> Vec<u64> {
    dev.download(b).expect("download").into_iter().map(|v| mask(v.to_bits(), T::TYPE)).collect()
}

/// Typed buffers for each of [`TYPES`].
enum Buf {
    U16(Buffer<u16>),
    S16(Buffer<i16>),
    U32(Buffer<u32>),
    S32(Buffer<i32>),
    U64(Buffer<u64>),
    S64(Buffer<i64>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
    F16(Buffer<half::f16>),
    BF16(Buffer<half::bf16>),
}

impl Buf {
    fn new(dev: &Device, ty: Type, bits: &[u64]) -> Buf {
        let r = match ty {
            Type::U16 => upload_bits(dev, bits).map(Buf::U16),
            Type::S16 => upload_bits(dev, bits).map(Buf::S16),
            Type::U32 => upload_bits(dev, bits).map(Buf::U32),
            Type::S32 => upload_bits(dev, bits).map(Buf::S32),
            Type::U64 => upload_bits(dev, bits).map(Buf::U64),
            Type::S64 => upload_bits(dev, bits).map(Buf::S64),
            Type::F32 => upload_bits(dev, bits).map(Buf::F32),
            Type::F64 => upload_bits(dev, bits).map(Buf::F64),
            Type::F16 => upload_bits(dev, bits).map(Buf::F16),
            Type::BF16 => upload_bits(dev, bits).map(Buf::BF16),
            other => panic!("no table buffer of {other}"),
        };
        r.expect("upload")
    }
    fn arg(&self) -> Arg<'_> {
        match self {
            Buf::U16(b) => Arg::buffer(b),
            Buf::S16(b) => Arg::buffer(b),
            Buf::U32(b) => Arg::buffer(b),
            Buf::S32(b) => Arg::buffer(b),
            Buf::U64(b) => Arg::buffer(b),
            Buf::S64(b) => Arg::buffer(b),
            Buf::F32(b) => Arg::buffer(b),
            Buf::F64(b) => Arg::buffer(b),
            Buf::F16(b) => Arg::buffer(b),
            Buf::BF16(b) => Arg::buffer(b),
        }
    }
    fn bits(&self, dev: &Device) -> Vec<u64> {
        match self {
            Buf::U16(b) => download_bits(dev, b),
            Buf::S16(b) => download_bits(dev, b),
            Buf::U32(b) => download_bits(dev, b),
            Buf::S32(b) => download_bits(dev, b),
            Buf::U64(b) => download_bits(dev, b),
            Buf::S64(b) => download_bits(dev, b),
            Buf::F32(b) => download_bits(dev, b),
            Buf::F64(b) => download_bits(dev, b),
            Buf::F16(b) => download_bits(dev, b),
            Buf::BF16(b) => download_bits(dev, b),
        }
    }
}

/// What `dev` computed for each entry: (the constant form's bits, if built; the loaded form's).
pub fn run(dev: &Device, entries: &[Entry]) -> Vec<(Option<u64>, u64)> {
    let (kernel, layout) = kernel(entries);
    let ins: Vec<Buf> = TYPES.iter().zip(&layout.inputs).map(|(&t, bits)| Buf::new(dev, t, bits)).collect();
    let outs: Vec<Buf> =
        TYPES.iter().zip(&layout.outputs).map(|(&t, &n)| Buf::new(dev, t, &vec![0; n.max(1)])).collect();
    let args: Vec<Arg> = ins.iter().chain(&outs).map(Buf::arg).collect();
    dev.launch(&kernel, LaunchConfig::linear(1, 32), &args).unwrap_or_else(|e| panic!("the table runs: {e}"));
    let results: Vec<Vec<u64>> = outs.iter().map(|b| b.bits(dev)).collect();
    layout
        .slots
        .iter()
        .map(|&(out, constant, loaded)| (constant.map(|s| results[out][s]), results[out][loaded]))
        .collect()
}

/// The builder's refusal of an entry's constant form, which the evaluator refuses.
pub fn builder_refusal(e: &Entry) -> String {
    let mut k = KernelBuilder::new("refused", Target::Sm90a);
    let imm = |bits, ty| Value::Imm { bits, ty };
    let v = e.build(&mut k, imm(e.a, e.ty), imm(e.b, e.ty), imm(e.c, e.c_ty()));
    let out = k.param_global("out", e.result_ty(), true);
    k.st_global(out, Value::u32(0), v);
    match k.finish() {
        Ok(_) => panic!("{e:?}: the builder accepted a constant the evaluator refuses ({:?})", e.fold()),
        Err(err) => err.to_string(),
    }
}

// ---- operands, edge values over-represented ----------------------------------------------------

fn int_edges(ty: Type) -> Vec<u64> {
    let w = ty.bits() as u64;
    let min = if ty.is_signed() { 1u64 << (w - 1) } else { 0 };
    let max = if ty.is_signed() { (1u64 << (w - 1)) - 1 } else { mask(u64::MAX, ty) };
    [
        0,
        1,
        2,
        mask(u64::MAX, ty),
        mask(u64::MAX - 1, ty),
        min,
        max,
        min.wrapping_add(1),
        max - 1,
        w - 1,
        w,
        w + 1,
        2 * w,
    ]
    .into_iter()
    .map(|v| mask(v, ty))
    .collect()
}

fn f32_edges() -> Vec<u64> {
    let f = |x: f32| x.to_bits() as u64;
    vec![
        f(0.0),
        f(-0.0),
        f(1.0),
        f(-1.0),
        f(0.5),
        f(1.5),
        f(2.5),
        f(-2.5),
        f(f32::NAN),
        0x7FC0_0001,
        0xFF80_0001, // a signaling NaN with the sign set
        f(f32::INFINITY),
        f(f32::NEG_INFINITY),
        f(f32::MIN_POSITIVE),
        1,           // the smallest subnormal
        0x007F_FFFF, // the largest subnormal
        0x8000_0001,
        f(f32::MAX),
        f(f32::MIN),
        f(16_777_217.0),
        f(2147483648.0),
        f(-2147483904.0),
        f(4294967296.0),
        f(65504.0),
        f(65520.0),
    ]
}

fn f64_edges() -> Vec<u64> {
    let f = |x: f64| x.to_bits();
    vec![
        f(0.0),
        f(-0.0),
        f(1.0),
        f(-1.0),
        f(0.5),
        f(2.5),
        f(f64::NAN),
        0x7FF0_0000_0000_0001,
        0xFFF8_0000_0000_0001,
        f(f64::INFINITY),
        f(f64::NEG_INFINITY),
        f(f64::MIN_POSITIVE),
        1,
        0x000F_FFFF_FFFF_FFFF,
        f(f64::MAX),
        f(f64::MIN),
        f(f32::MAX as f64 * 1.5),
        f(1e-40),
        f(9007199254740993.0),
        f(9223372036854775808.0),
        f(-9223372036854777856.0),
        f(18446744073709551616.0),
        f(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
        f(1.0 + 2f64.powi(-11) + 2f64.powi(-40)),
    ]
}

fn half_edges() -> Vec<u64> {
    vec![
        0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x0001, 0x03FF, 0x7BFF, 0x7F80, 0x7FC0, 0x0080,
        0xFF7F,
    ]
}

/// An operand of `ty`: an edge value (3 in 4) or random bits.
pub fn operand(ty: Type) -> BoxedStrategy<u64> {
    let edges = match ty {
        Type::F32 => f32_edges(),
        Type::F64 => f64_edges(),
        Type::F16 | Type::BF16 => half_edges(),
        _ => int_edges(ty),
    };
    prop_oneof![3 => proptest::sample::select(edges), 1 => any::<u64>().prop_map(move |v| mask(v, ty))].boxed()
}

/// A shift amount as a `ty` operand: around the width (3 in 4) or any `u32` (an amount must
/// fit `u32` as a constant; as a register it is converted to `u32`).
fn shift_amount(ty: Type) -> BoxedStrategy<u64> {
    let w = ty.bits() as u64;
    let edges = vec![0, 1, w - 1, w, w + 1, 2 * w, 255, u32::MAX as u64];
    prop_oneof![
        3 => proptest::sample::select(edges).prop_map(move |v| mask(v, ty)),
        1 => any::<u32>().prop_map(move |v| mask(v as u64, ty)),
    ]
    .boxed()
}

/// The (op, type) pairs the builder takes.
pub fn forms() -> Vec<(Op, Type)> {
    let mut v = Vec::new();
    for ty in INTS {
        v.extend(BIN_OPS.iter().map(|&op| (Op::Bin(op), ty)));
        v.push((Op::Un(UnOp::Not), ty));
        if ty.is_signed() {
            v.extend([(Op::Un(UnOp::Neg), ty), (Op::Un(UnOp::Abs), ty)]);
        }
    }
    for ty in ARITH_FLOATS {
        let ops = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Min, BinOp::Max];
        v.extend(ops.iter().map(|&op| (Op::Bin(op), ty)));
        v.extend([(Op::Un(UnOp::Neg), ty), (Op::Un(UnOp::Abs), ty)]);
    }
    for ty in INTS.iter().chain(&ARITH_FLOATS) {
        v.extend(CMP_OPS.iter().map(|&c| (Op::Cmp(c), *ty)));
        v.extend([(Op::Mad, *ty), (Op::Select, *ty)]);
    }
    for from in TYPES {
        v.extend(TYPES.iter().filter(|&&to| to != from && cvt_exists(from, to)).map(|&to| (Op::Cvt(to), from)));
    }
    v
}

/// Conversions PTX has: between halves only through f32 (no `cvt.f16.bf16`).
fn cvt_exists(from: Type, to: Type) -> bool {
    !(from.is_half() && to.is_half())
}

/// An entry of a random form with operands of its type.
pub fn entry() -> impl Strategy<Value = Entry> {
    proptest::sample::select(forms()).prop_flat_map(|(op, ty)| {
        let c = match op {
            Op::Select => prop_oneof![Just(0u64), Just(1), any::<u32>().prop_map(u64::from)].boxed(),
            _ => operand(ty),
        };
        let b = match op {
            Op::Bin(BinOp::Shl | BinOp::Shr) => shift_amount(ty),
            _ => operand(ty),
        };
        (Just(op), Just(ty), operand(ty), b, c).prop_map(|(op, ty, a, b, c)| Entry { op, ty, a, b, c })
    })
}
