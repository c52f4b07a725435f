//! The data-driven expansion (`bench/dsl.md`, third round): a run of straight-line statements
//! becomes a static table of steps (`phaser::__private::steps`) built by one non-generic
//! function, `__p::run`, instead of a builder call per operation in the kernel's own code.
//!
//! A statement goes into a table only where each of its operations has a step that makes the
//! builder call [`super::body`] would make, in the same order: register arithmetic, literals,
//! shared and global loads and stores, `ptr_to`, registry ops whose arguments are values,
//! handles or literals, `let`s, assignments, `if`s and `break`/`continue`/`return`. Whatever
//! Rust must see stays code: `#[comptime]` and `const` values, device-function calls, loops
//! (their bodies get runs of their own), vectors, tiles, floats. A statement that does not fit
//! ends the run and is expanded as code; nothing it compiled stays in the table.
//!
//! Variables cross between code and table through slots: each kernel variable a run reads is
//! copied into a slot when the run starts (its Rust type known from the checker's binding and
//! type), and each top-level `let` of the run is read back out after it.

use super::body::{arith_variant, op_arg_locs, op_elem, op_result_name, source_loc};
use crate::parse::ast::*;
use crate::types::{Scalar, Ty};
use phaser_codegen::registry::{self, Kind as ArgKind, OpDef, Ret};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

/// What a slot holds, as the code expansion's Rust variable would (`Value`, `Reg`, a handle).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Value,
    Reg,
    Barrier,
    Barriers,
    Shared,
    Global,
    /// An op without a result (`call_op::<()>`): usable only as a statement.
    Unit,
}

impl Kind {
    /// The kind of a kernel variable read by a run, from the checker's binding and type.
    fn of_var(binding: Binding, ty: Ty) -> Option<Kind> {
        match (binding, ty) {
            (Binding::Reg, _) => Some(Kind::Reg),
            (Binding::Plain, Ty::Scalar(_) | Ty::Bool | Ty::State) => Some(Kind::Value),
            (Binding::Plain, Ty::Barrier) => Some(Kind::Barrier),
            (Binding::Plain, Ty::Barriers) => Some(Kind::Barriers),
            (Binding::Plain, Ty::Shared(_)) => Some(Kind::Shared),
            (Binding::Plain, Ty::Global { .. }) => Some(Kind::Global),
            _ => None,
        }
    }

    /// The `Slot` variant holding a Rust variable of this kind.
    fn slot_variant(self) -> Option<TokenStream> {
        Some(match self {
            Kind::Value => quote!(Value),
            Kind::Reg => quote!(Reg),
            Kind::Barrier => quote!(Barrier),
            Kind::Barriers => quote!(Barriers),
            Kind::Shared => quote!(Shared),
            Kind::Global => quote!(Global),
            Kind::Unit => return None,
        })
    }

    /// The `Slots` method reading a slot of this kind back into a Rust variable.
    fn reader(self) -> Option<Ident> {
        let name = match self {
            Kind::Value => "value",
            Kind::Reg => "reg",
            Kind::Barrier => "barrier",
            Kind::Barriers => "barriers",
            Kind::Shared => "shared",
            Kind::Global => "global",
            Kind::Unit => return None,
        };
        Some(format_ident!("{}", name))
    }

    fn is_value(self) -> bool {
        matches!(self, Kind::Value | Kind::Reg)
    }
}

/// A step's input: the tokens of an `Operand` and what it holds.
struct Operand {
    tokens: TokenStream,
    kind: Kind,
    /// The slot, if it is one (a handle is always a slot).
    slot: Option<u32>,
}

impl Operand {
    fn slot(i: u32, kind: Kind) -> Operand {
        Operand { tokens: quote!(Slot(#i)), kind, slot: Some(i) }
    }
    fn literal(tokens: TokenStream) -> Operand {
        Operand { tokens, kind: Kind::Value, slot: None }
    }
}

/// A name a run's `let` bound.
struct Bound {
    name: Ident,
    slot: u32,
    kind: Kind,
}

/// Where to go back to when a statement does not fit.
struct Mark {
    steps: usize,
    slots: u32,
    inputs: usize,
    bound: usize,
}

/// A run of statements being compiled into one table.
#[derive(Default)]
pub struct Run {
    steps: Vec<TokenStream>,
    slots: u32,
    /// The kernel variables read, each `(slot, name, kind)`.
    inputs: Vec<(u32, Ident, Kind)>,
    /// The run's `let`s; `scopes` marks where each nested block's begin.
    bound: Vec<Bound>,
    scopes: Vec<usize>,
    statements: usize,
}

type Steps = Vec<TokenStream>;

impl Run {
    pub fn is_empty(&self) -> bool {
        self.statements == 0
    }

    /// Add `s` to the run if every operation of it has a step; `false` (and the run as it
    /// was) if not.
    pub fn push(&mut self, s: &Stmt) -> bool {
        let mark =
            Mark { steps: self.steps.len(), slots: self.slots, inputs: self.inputs.len(), bound: self.bound.len() };
        let mut steps = std::mem::take(&mut self.steps);
        let fits = self.stmt(s, &mut steps).is_some();
        self.steps = steps;
        if fits {
            self.statements += 1;
        } else {
            self.steps.truncate(mark.steps);
            self.slots = mark.slots;
            self.inputs.truncate(mark.inputs);
            self.bound.truncate(mark.bound);
            self.scopes.clear();
        }
        fits
    }

    /// The run's code: the table, the call, and the `let`s after it (the top-level names
    /// bound, each once); and those names.
    pub fn finish(self) -> (TokenStream, Vec<Ident>) {
        let Run { steps, slots, inputs, bound, .. } = self;
        let inputs = inputs.iter().map(|(i, name, kind)| {
            let v = kind.slot_variant().expect("a variable's slot");
            quote!((#i, __p::Slot::#v(#name)))
        });
        let s = super::body::tmp();
        let mut names: Vec<Ident> = Vec::new();
        let mut reads = Vec::new();
        for (i, b) in bound.iter().enumerate() {
            if bound[i + 1..].iter().any(|later| later.name == b.name) {
                continue;
            }
            let (name, slot) = (&b.name, b.slot);
            let read = b.kind.reader().expect("a `let` of a value or handle");
            reads.push(quote!(let #name = #s.#read(__k, #slot);));
            names.push(b.name.clone());
        }
        let code = quote! {
            let #s = {
                static __STEPS: &[__p::steps::Step] = {
                    use __p::steps::{Arith::*, Operand::*, Step::*, Unary::*};
                    &[#(#steps),*]
                };
                __p::run(__k, __STEPS, &[#(#inputs),*], #slots as usize)
            };
            #(#reads)*
        };
        (code, names)
    }

    fn new_slot(&mut self) -> u32 {
        self.slots += 1;
        self.slots - 1
    }

    fn lookup(&mut self, name: &Ident, binding: Binding, ty: Ty) -> Option<Operand> {
        if let Some(b) = self.bound.iter().rev().find(|b| &b.name == name) {
            return Some(Operand::slot(b.slot, b.kind));
        }
        if let Some((i, _, kind)) = self.inputs.iter().find(|(_, n, _)| n == name) {
            return Some(Operand::slot(*i, *kind));
        }
        let kind = Kind::of_var(binding, ty)?;
        let i = self.new_slot();
        self.inputs.push((i, name.clone(), kind));
        Some(Operand::slot(i, kind))
    }

    fn bind(&mut self, name: &Ident, slot: u32, kind: Kind) {
        self.bound.push(Bound { name: name.clone(), slot, kind });
    }

    /// The statements of a nested block, in a scope of their own.
    fn block(&mut self, b: &[Stmt]) -> Option<Steps> {
        self.scopes.push(self.bound.len());
        let mut steps = Steps::new();
        for s in b {
            self.stmt(s, &mut steps)?;
        }
        let start = self.scopes.pop().expect("the scope pushed");
        self.bound.truncate(start);
        Some(steps)
    }

    fn stmt(&mut self, s: &Stmt, steps: &mut Steps) -> Option<()> {
        match s {
            Stmt::Let(l) => {
                let at = source_loc(l.sp);
                steps.push(quote!(Loc(#at)));
                if l.binding.get() == Binding::Const {
                    return None;
                }
                let init = self.value(&l.init, Some(&l.name), steps)?;
                let dst = self.new_slot();
                let v = &init.tokens;
                let kind = match l.binding.get() {
                    Binding::Reg if init.kind.is_value() => {
                        steps.push(quote!(MutVar(#v, #dst)));
                        Kind::Reg
                    }
                    Binding::Reg => return None,
                    _ if l.copy.get() => return None,
                    _ if l.snapshot.get() && init.kind.is_value() => {
                        steps.push(quote!(Snapshot(#v, #dst)));
                        Kind::Value
                    }
                    _ if init.kind == Kind::Unit => return None,
                    _ => {
                        steps.push(quote!(Copy(#v, #dst)));
                        // A `let mut` register read as a value is `Value::Reg`.
                        if init.kind == Kind::Reg {
                            Kind::Value
                        } else {
                            init.kind
                        }
                    }
                };
                self.bind(&l.name, dst, kind);
                Some(())
            }
            Stmt::Expr { expr: e, .. } => {
                let at = source_loc(e.sp);
                steps.push(quote!(Loc(#at)));
                self.effect(e, steps)
            }
        }
    }

    fn effect(&mut self, e: &Expr, steps: &mut Steps) -> Option<()> {
        match &e.kind {
            ExprKind::If { cond, then, els } => {
                if cond.konst.get() {
                    return None;
                }
                let c = self.value(cond, None, steps)?;
                if !c.kind.is_value() {
                    return None;
                }
                let c = c.tokens;
                let then = self.block(&then.stmts)?;
                steps.push(match els {
                    None => quote!(If(#c, &[#(#then),*])),
                    Some(x) => {
                        self.scopes.push(self.bound.len());
                        let mut els = Steps::new();
                        self.effect(x, &mut els)?;
                        let start = self.scopes.pop().expect("the scope pushed");
                        self.bound.truncate(start);
                        quote!(IfElse(#c, &[#(#then),*], &[#(#els),*]))
                    }
                });
            }
            ExprKind::Block(b) => {
                let inner = self.block(&b.stmts)?;
                steps.extend(inner);
            }
            ExprKind::Break => steps.push(quote!(Break)),
            ExprKind::Continue => steps.push(quote!(Continue)),
            ExprKind::Return(_) => steps.push(quote!(Return)),
            ExprKind::Assign { place, op, value } => self.assign(place, *op, value, steps)?,
            ExprKind::Paren(inner) => self.effect(inner, steps)?,
            ExprKind::Invalid => {}
            ExprKind::For { .. } | ExprKind::While { .. } | ExprKind::Loop { .. } => return None,
            _ => {
                self.value(e, None, steps)?;
            }
        }
        Some(())
    }

    fn assign(&mut self, place: &Expr, op: Option<BinOp>, v: &Expr, steps: &mut Steps) -> Option<()> {
        match &place.kind {
            ExprKind::Var { name, binding } => {
                // The value first, then the variable (as the code expansion reads them).
                let v = self.value(v, None, steps)?;
                let var = self.lookup(name, binding.get(), place.ty.get())?;
                if var.kind != Kind::Reg || !v.kind.is_value() {
                    return None;
                }
                let (var, v) = (var.slot?, v.tokens);
                match op {
                    None => steps.push(quote!(Assign(#var, #v))),
                    Some(op) => {
                        let (m, n) = (arith_variant(op), self.new_slot());
                        steps.push(quote!(Bin(#m, Slot(#var), #v, #n)));
                        steps.push(quote!(Assign(#var, Slot(#n))));
                    }
                }
            }
            ExprKind::Index { base, idx } => {
                let space = space(base.ty.get())?;
                let b = self.value(base, None, steps)?.slot?;
                let i = self.value(idx, None, steps)?;
                let v = self.value(v, None, steps)?;
                if !i.kind.is_value() || !v.kind.is_value() {
                    return None;
                }
                let (i, v) = (i.tokens, v.tokens);
                match op {
                    None => steps.push(quote!(St(#space, #b, #i, #v))),
                    Some(op) => {
                        let (o, m, n) = (self.new_slot(), arith_variant(op), self.new_slot());
                        steps.push(quote!(Ld(#space, #b, #i, #o)));
                        steps.push(quote!(Bin(#m, Slot(#o), #v, #n)));
                        steps.push(quote!(St(#space, #b, #i, Slot(#n))));
                    }
                }
            }
            _ => {}
        }
        Some(())
    }

    /// An expression's value: its steps onto `steps`, the operand holding it returned.
    fn value(&mut self, e: &Expr, let_name: Option<&Ident>, steps: &mut Steps) -> Option<Operand> {
        match &e.kind {
            ExprKind::Int { value, .. } => match e.ty.get() {
                Ty::Scalar(s) if s.is_float() => None,
                Ty::Bool => {
                    let b = *value != 0;
                    Some(Operand::literal(quote!(Pred(#b))))
                }
                t => {
                    let ty = match t {
                        Ty::Scalar(s) => s.codegen_type(),
                        _ => quote!(__p::Type::U32),
                    };
                    let l = Literal::u64_suffixed(*value as u64);
                    Some(Operand::literal(quote!(Imm(#l, #ty))))
                }
            },
            ExprKind::Bool(b) => Some(Operand::literal(quote!(Pred(#b)))),
            ExprKind::Var { name, binding } if matches!(binding.get(), Binding::Plain | Binding::Reg) => {
                let v = self.lookup(name, binding.get(), e.ty.get())?;
                // A `let mut` register in a value position is read as `Value::Reg`.
                Some(if v.kind == Kind::Reg { Operand { kind: Kind::Value, ..v } } else { v })
            }
            ExprKind::Paren(inner) => self.value(inner, let_name, steps),
            ExprKind::Binary { .. } => {
                // The chain from its innermost operation out, as `body::value_named` builds it.
                let (leaf, spine) = e.binary_spine();
                let mut acc = self.value(leaf, None, steps)?;
                for node in spine {
                    let ExprKind::Binary { op, rhs, .. } = &node.kind else { unreachable!("spine of binaries") };
                    // A short-circuit is a branch of the code expansion's own.
                    if op.is_logic() && !rhs.is_pure() {
                        return None;
                    }
                    let r = self.value(rhs, None, steps)?;
                    if !acc.kind.is_value() || !r.kind.is_value() {
                        return None;
                    }
                    let (m, dst) = (arith_variant(*op), self.new_slot());
                    let (a, b) = (&acc.tokens, &r.tokens);
                    steps.push(quote!(Bin(#m, #a, #b, #dst)));
                    acc = Operand::slot(dst, Kind::Value);
                }
                Some(acc)
            }
            ExprKind::Unary { op, e: inner } => {
                let v = self.value(inner, None, steps)?;
                if !v.kind.is_value() {
                    return None;
                }
                let (m, dst, v) = (unary_variant(*op), self.new_slot(), v.tokens);
                steps.push(quote!(Un(#m, #v, #dst)));
                Some(Operand::slot(dst, Kind::Value))
            }
            ExprKind::Cast { e: inner, to } => {
                // `ITEM as T` reads a Rust item, which `value` leaves to code.
                let v = self.value(inner, None, steps)?;
                if !v.kind.is_value() {
                    return None;
                }
                let (t, dst, v) = (to.codegen_type(), self.new_slot(), v.tokens);
                steps.push(quote!(Cvt(#v, #t, #dst)));
                Some(Operand::slot(dst, Kind::Value))
            }
            ExprKind::Index { base, idx } => {
                let space = space(base.ty.get())?;
                let b = self.value(base, None, steps)?.slot?;
                let i = self.value(idx, None, steps)?;
                if !i.kind.is_value() {
                    return None;
                }
                let (dst, i) = (self.new_slot(), i.tokens);
                steps.push(quote!(Ld(#space, #b, #i, #dst)));
                Some(Operand::slot(dst, Kind::Value))
            }
            ExprKind::Method { recv, name, args } if name == "ptr_to" => {
                let r = self.value(recv, None, steps)?;
                if r.kind != Kind::Barriers {
                    return None;
                }
                let idx = match &args.first()?.kind {
                    ExprKind::Array(v) => self.value(v.first()?, None, steps)?,
                    _ => self.value(&args[0], None, steps)?,
                };
                if !idx.kind.is_value() {
                    return None;
                }
                let (r, dst, idx) = (r.slot?, self.new_slot(), idx.tokens);
                steps.push(quote!(BarrierAt(#r, #idx, #dst)));
                Some(Operand::slot(dst, Kind::Barrier))
            }
            ExprKind::Op { path, turbofish, args, .. } => {
                let def = registry::lookup(path)?;
                self.op(def, e.ty.get(), args, turbofish.map(|t| t.0), let_name, steps)
            }
            _ => None,
        }
    }

    /// A registry op, as `body::op` calls it: the arguments in order, their locations, the call.
    fn op(
        &mut self,
        def: &OpDef,
        ty: Ty,
        args: &[Expr],
        turbofish: Option<Scalar>,
        let_name: Option<&Ident>,
        steps: &mut Steps,
    ) -> Option<Operand> {
        let ret = ret_kind(def.ret, ty)?;
        let mut op_args = Vec::new();
        for (i, p) in def.params.iter().enumerate() {
            op_args.push(match args.get(i) {
                Some(x) => self.op_arg(p.kind, x, steps)?,
                None => quote!(__p::steps::Arg::Absent),
            });
        }
        let (elem, name) = (op_elem(turbofish), op_result_name(def, let_name));
        let arg_locs = match op_arg_locs(def, args) {
            Some(locs) => quote!(::core::option::Option::Some(&[#(#locs),*])),
            None => quote!(::core::option::Option::None),
        };
        let (path, dst) = (def.path, self.new_slot());
        let ret_variant = match ret {
            Kind::Unit => quote!(Unit),
            Kind::Value => quote!(Value),
            Kind::Barrier => quote!(Barrier),
            Kind::Barriers => quote!(Barriers),
            Kind::Shared => quote!(Shared),
            Kind::Reg | Kind::Global => return None,
        };
        steps.push(quote!(Op(&__p::steps::OpStep {
            path: #path,
            args: &[#(#op_args),*],
            elem: #elem,
            name: #name,
            arg_locs: #arg_locs,
            ret: __p::steps::Ret::#ret_variant,
            dst: #dst,
        })));
        Some(Operand::slot(dst, ret))
    }

    /// An op argument as `body::op_arg` makes it.
    fn op_arg(&mut self, kind: ArgKind, a: &Expr, steps: &mut Steps) -> Option<TokenStream> {
        Some(match (kind, &a.kind) {
            (ArgKind::Const, ExprKind::Int { value, .. }) => {
                let c = Literal::u32_suffixed(*value as u32);
                quote!(__p::steps::Arg::Const(#c))
            }
            (ArgKind::Const, _) => return None,
            (ArgKind::Dims, ExprKind::Array(v)) => {
                let mut c = Vec::new();
                for x in v {
                    let ExprKind::Int { value, .. } = x.kind else { return None };
                    c.push(Literal::u32_suffixed(value as u32));
                }
                quote!(__p::steps::Arg::Dims(&[#(#c),*]))
            }
            (ArgKind::Choice(_), ExprKind::Str(s)) => quote!(__p::steps::Arg::Choice(#s)),
            (ArgKind::Tag, ExprKind::Str(s)) => quote!(__p::steps::Arg::Tag(#s)),
            (ArgKind::Coords | ArgKind::Values | ArgKind::Places, ExprKind::Array(v)) => {
                let mut xs = Vec::new();
                for x in v {
                    let o = self.value(x, None, steps)?;
                    if !o.kind.is_value() {
                        return None;
                    }
                    xs.push(o.tokens);
                }
                quote!(__p::steps::Arg::Values(&[#(#xs),*]))
            }
            _ => {
                let v = self.value(a, None, steps)?;
                if v.kind == Kind::Unit {
                    return None;
                }
                let t = v.tokens;
                quote!(__p::steps::Arg::Of(#t))
            }
        })
    }
}

/// The `Space` of a load or store through a base of type `t` (others stay code).
fn space(t: Ty) -> Option<TokenStream> {
    match t {
        Ty::Shared(_) => Some(quote!(__p::steps::Space::Shared)),
        Ty::Global { .. } => Some(quote!(__p::steps::Space::Global)),
        _ => None,
    }
}

fn unary_variant(op: UnOp) -> TokenStream {
    match op {
        UnOp::Neg => quote!(Neg),
        UnOp::Not => quote!(Not),
    }
}

/// The slot kind of an op's result, as `body::ret_handle` types it (others stay code).
fn ret_kind(ret: Ret, ty: Ty) -> Option<Kind> {
    Some(match ret {
        Ret::SharedOrTile if matches!(ty, Ty::Tile { .. }) => return None,
        Ret::SharedOrTile | Ret::SharedOfTurbofish => Kind::Shared,
        Ret::Unit => Kind::Unit,
        Ret::Barrier => Kind::Barrier,
        Ret::Barriers => Kind::Barriers,
        Ret::Bool
        | Ret::U16
        | Ret::U32
        | Ret::U64
        | Ret::F32
        | Ret::State
        | Ret::Turbofish
        | Ret::ScalarArgs
        | Ret::BitsOfArgs
        | Ret::ElemOf(_) => Kind::Value,
        _ => return None,
    })
}
