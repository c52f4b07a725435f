//! Statements and expressions → Rust code that calls the builder `__k` (CubeCL-style: the
//! generated code *builds* the IR when it runs, so `#[comptime]` values specialize it).
//!
//! The code is flat: every subexpression becomes one `let __tN = ..;` in sequence, and an
//! expression's value is a temporary, a literal or a variable, never a nested block. A
//! 1000-term sum expands to 1000 statements, not to blocks nested 1000 deep (which
//! overflow rustc's parser). Only the user's own nesting (blocks, branches, loops) nests.

use crate::check::block_tail;
use crate::parse::ast::*;
use crate::types::{Scalar, Ty};
use phaser_codegen::registry::{self, Kind, OpDef, Ret};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::cell::Cell;

/// The Rust variable holding a `#[comptime]` parameter: renamed, because an upper-case name
/// such as `N` would be read as a pattern if a constant `N` is in scope.
pub fn comptime_ident(name: &proc_macro2::Ident) -> proc_macro2::Ident {
    format_ident!("__ct_{}", name)
}

thread_local! {
    static NEXT_TMP: Cell<u64> = const { Cell::new(0) };
}

/// A fresh temporary (`__t17`); unique within the macro invocation and beyond.
pub(super) fn tmp() -> Ident {
    let n = NEXT_TMP.with(|c| {
        let n = c.get();
        c.set(n + 1);
        n
    });
    format_ident!("__t{}", n)
}

/// The statements generated for one block, in order.
pub type Out = Vec<TokenStream>;

/// Push `let __tN = value;` and return `__tN`.
fn bind(out: &mut Out, value: TokenStream) -> TokenStream {
    let t = tmp();
    out.push(quote!(let #t = #value;));
    quote!(#t)
}

/// `__k.set_loc(file!():line!():column!())` at `sp`, so the PTX `.loc` names the user's line.
/// Only the `file!()`/`line!()`/`column!()` tokens carry the user's span (they report where
/// their span points); `__k` keeps the expansion's, so it resolves even when the kernel's
/// tokens come from a `macro_rules!` (whose locals are hygienic).
pub fn loc(sp: Sp) -> TokenStream {
    let at = source_loc(sp);
    quote!(__k.set_loc(::core::option::Option::Some(#at));)
}

/// `SourceLoc::new(file!(), line!(), column!())` of where `sp` starts.
pub(super) fn source_loc(sp: Sp) -> TokenStream {
    let file = quote_spanned!(sp.start=> ::core::file!());
    let line = quote_spanned!(sp.start=> ::core::line!());
    let column = quote_spanned!(sp.start=> ::core::column!());
    quote!(__p::SourceLoc::new(#file, #line, #column))
}

/// Whether an argument of `kind` may carry sizes known only when the kernel is built (from
/// `const` items or `#[comptime]` values), so its problems are reported at the argument.
pub(super) fn sized_when_built(kind: Kind) -> bool {
    matches!(kind, Kind::Const | Kind::Dims | Kind::Registers(_) | Kind::Tile | Kind::MmaTile)
}

/// Every statement of a block, the tail included (its value, if any, is dropped).
pub fn stmts(b: &[Stmt]) -> TokenStream {
    let mut out = Out::new();
    stmts_into(b, &mut out);
    quote!(#(#out)*)
}

/// Statements of a block per chunk: a block longer than this is built by a sequence of
/// chunks, each a closure of its own (see [`stmts_into`]). Measured (`bench/dsl.md`): 64
/// builds a kernel of 8000 statements in 13 % less CPU than 16 (fewer closures, each with
/// its captures and returned bindings), 256 in more at 1000 statements.
pub const CHUNK_STATEMENTS: usize = 64;

/// Push the statements of `b` (its tail included) onto `out`.
///
/// Runs of statements that fit a table (`super::table`) are built by one table each; the
/// rest is code. A long block is cut into chunks of at most [`CHUNK_STATEMENTS`] units (a
/// statement of code or a run), each built by its own closure called through `__p::chunk`
/// (not inlined), which returns the chunk's `let` bindings to the statements after it. Flat,
/// one function of thousands of statements made rustc's release build superlinear in the
/// kernel's length (LLVM optimizing one huge function, every `if` body's closure inlined into
/// it); chunked, no function grows with the kernel. The builder calls run in the same order,
/// so the IR is the same either way.
pub fn stmts_into(b: &[Stmt], out: &mut Out) {
    let units = units(b);
    if units.len() <= CHUNK_STATEMENTS {
        for u in units {
            out.push(u.code);
        }
        return;
    }
    let mut chunk = Chunk::default();
    for u in units {
        // A name bound twice ends the chunk first: the tuple it returns names each binding once.
        if u.bindings.iter().any(|n| chunk.binds(n)) {
            chunk.flush(out);
        }
        chunk.code.push(u.code);
        chunk.bindings.extend(u.bindings);
        chunk.statements += 1;
        if chunk.statements == CHUNK_STATEMENTS {
            chunk.flush(out);
        }
    }
    chunk.flush(out);
}

/// A statement of code or a run of statements built by a table, and the names it binds for
/// the statements after it.
struct Unit {
    code: TokenStream,
    bindings: Vec<Ident>,
}

/// The statements of `b` as units: each maximal run that fits a table, and each statement that
/// does not.
fn units(b: &[Stmt]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut run = super::table::Run::default();
    let end_run = |run: &mut super::table::Run, units: &mut Vec<Unit>| {
        if !run.is_empty() {
            let (code, bindings) = std::mem::take(run).finish();
            units.push(Unit { code, bindings });
        }
    };
    for s in b {
        if run.push(s) {
            continue;
        }
        end_run(&mut run, &mut units);
        let bound = match s {
            Stmt::Let(l) if l.binding.get() == Binding::Const => Some(comptime_ident(&l.name)),
            Stmt::Let(l) => Some(l.name.clone()),
            Stmt::Expr { .. } => None,
        };
        let mut code = Out::new();
        stmt(s, &mut code);
        units.push(Unit { code: quote!(#(#code)*), bindings: bound.into_iter().collect() });
    }
    end_run(&mut run, &mut units);
    units
}

/// The statements of a chunk being gathered, and the names its `let`s bind.
#[derive(Default)]
struct Chunk {
    code: Out,
    bindings: Vec<Ident>,
    statements: usize,
}

impl Chunk {
    fn binds(&self, name: &Ident) -> bool {
        self.bindings.iter().any(|b| b == name)
    }

    /// `let (a, b,) = __p::chunk(__k, &mut |__k| { ..; (a, b,) });` onto `out`, and start over.
    fn flush(&mut self, out: &mut Out) {
        if self.statements == 0 {
            return;
        }
        let Chunk { code, bindings, .. } = std::mem::take(self);
        out.push(if bindings.is_empty() {
            quote!(__p::chunk(__k, &mut |__k| { #(#code)* });)
        } else {
            quote!(let (#(#bindings,)*) = __p::chunk(__k, &mut |__k| { #(#code)* (#(#bindings,)*) });)
        });
    }
}

/// One statement. Its temporaries live in a block of their own: the rest of the function is
/// not nested inside them (rustc's debug info nests a scope per `let`, and a function of
/// thousands of nested scopes overflows LLVM's stack), so only the user's own `let`s nest,
/// as in plain Rust.
fn stmt(s: &Stmt, out: &mut Out) {
    match s {
        Stmt::Let(l) => {
            out.push(loc(l.sp));
            let name = &l.name;
            let mut temps = Out::new();
            if l.binding.get() == Binding::Const {
                // A compile-time `let`: a Rust value while the kernel is built.
                let c = comptime_ident(name);
                let (v, t) = (konst(&l.init, &mut temps), konst_type(l.init.ty.get()));
                out.push(quote!(let #c: #t = { #(#temps)* #v };));
                return;
            }
            let init = value_named(&l.init, Some(name), &mut temps);
            let init = match l.binding.get() {
                Binding::Reg => quote!(__k.mut_var(#init)),
                // A register array's element: the array may be assigned later.
                _ if l.copy.get() => quote!(__p::Value::Reg(__k.var(#init))),
                _ if l.snapshot.get() => quote!(__p::Snapshot::snapshot(#init, __k)),
                _ => init,
            };
            out.push(if temps.is_empty() {
                quote!(let #name = #init;)
            } else {
                quote!(let #name = { #(#temps)* #init };)
            });
        }
        Stmt::Expr { expr: e, .. } => {
            out.push(loc(e.sp));
            let mut inner = Out::new();
            effect(e, &mut inner);
            match inner.len() {
                0 => {}
                1 => out.extend(inner),
                _ => out.push(quote!({ #(#inner)* })),
            }
        }
    }
}

/// The statements of a block without its tail (pushed onto `out`), and the tail.
fn split_tail<'a>(b: &'a Block, out: &mut Out) -> Option<&'a Expr> {
    match b.tail() {
        Some(t) => {
            stmts_into(&b.stmts[..b.stmts.len() - 1], out);
            Some(t)
        }
        None => {
            stmts_into(&b.stmts, out);
            None
        }
    }
}

/// A body for the builder's control flow, `&mut |__k| { stmts }`: its `*_dyn` methods take
/// `&mut dyn FnMut`, so no builder code is instantiated per closure (the release build of a
/// long kernel stays linear).
fn body(b: &[Stmt]) -> TokenStream {
    let s = stmts(b);
    quote!(&mut |__k| { #s })
}

/// An expression in statement position.
fn effect(e: &Expr, out: &mut Out) {
    match &e.kind {
        ExprKind::If { cond, then, els } => {
            // An `else if` is an `if` in the else branch: its condition is built there.
            let els_s = {
                let mut inner = Out::new();
                if let Some(x) = els {
                    effect(x, &mut inner);
                }
                quote!(#(#inner)*)
            };
            if cond.konst.get() {
                let c = konst(cond, out);
                let then_s = stmts(&then.stmts);
                out.push(quote!(if #c { #then_s } else { #els_s }));
            } else {
                let c = value(cond, out);
                let then_b = body(&then.stmts);
                out.push(match els {
                    None => quote!(__k.if_then_dyn(#c, #then_b);),
                    Some(_) => quote!(__k.if_else_dyn(#c, #then_b, &mut |__k| { #els_s });),
                });
            }
        }
        ExprKind::Block(b) => {
            let s = stmts(&b.stmts);
            out.push(quote!({ #s }));
        }
        ExprKind::For { unroll: Some(_), var, start, end, step, body: b, .. } => {
            // Each iteration is built in turn, the variable a Rust `u32` (compile-time in the body).
            let s = konst(start, out);
            let en = konst(end, out);
            let step = match step {
                Some(x) => konst(x, out),
                None => quote!(1u32),
            };
            let inner = stmts(&b.stmts);
            let v = if var == "_" { quote!(_) } else { comptime_ident(var).into_token_stream() };
            out.push(quote!(for #v in __k.unrolled(#s, #en, #step) { #inner }));
        }
        ExprKind::For { unroll: None, var, start, end, step, body: b, snapshot } => {
            let s = value(start, out);
            let en = value(end, out);
            let en = if snapshot.get() { bind(out, quote!(__p::Snapshot::snapshot(#en, __k))) } else { en };
            let step = match step {
                Some(x) => konst(x, out),
                None => quote!(1u32),
            };
            let inner = stmts(&b.stmts);
            out.push(quote!(__k.for_range_step_dyn(#s, #en, #step, &mut |__k, #var| { #inner });));
        }
        ExprKind::While { cond, body: b } => {
            let mut cond_out = Out::new();
            let c = value(cond, &mut cond_out);
            let inner = body(&b.stmts);
            out.push(quote!(__k.while_dyn(&mut |__k| { #(#cond_out)* #c }, #inner);));
        }
        ExprKind::Loop { body: b } => {
            let inner = body(&b.stmts);
            out.push(quote!(__k.loop_dyn(#inner);));
        }
        ExprKind::Break => out.push(quote!(__k.break_();)),
        ExprKind::Continue => out.push(quote!(__k.continue_();)),
        ExprKind::Return(_) => out.push(quote!(__k.ret();)),
        ExprKind::Assign { place, op, value: v } => assign(place, *op, v, out),
        ExprKind::Paren(inner) => effect(inner, out),
        ExprKind::Invalid => {}
        _ => {
            let v = value(e, out);
            out.push(quote!(let _ = #v;));
        }
    }
}

/// `place = v` / `place op= v`, built in Rust's order: the place's base and index, then
/// the value.
fn assign(place: &Expr, op: Option<BinOp>, v: &Expr, out: &mut Out) {
    match &place.kind {
        ExprKind::Var { name, .. } => match (op, value(v, out)) {
            (None, v) => out.push(quote!(__k.assign(#name, #v);)),
            (Some(op), v) => {
                let m = binop_method(op);
                let n = bind(out, quote!(__k.#m(__p::Value::Reg(#name), #v)));
                out.push(quote!(__k.assign(#name, #n);));
            }
        },
        ExprKind::Index { base, idx } => {
            let b = value(base, out);
            let i = value(idx, out);
            let v = value(v, out);
            let (ld, st) = match base.ty.get() {
                Ty::Shared(_) => (quote!(ld_shared), quote!(st_shared)),
                Ty::RemoteShared(_) => (quote!(ld_remote), quote!(st_remote)),
                Ty::Tile { .. } => (quote!(ld_tile), quote!(st_tile)),
                Ty::Registers { .. } => (quote!(get_register), quote!(set_register)),
                _ => (quote!(ld_global), quote!(st_global)),
            };
            match op {
                None => out.push(quote!(__k.#st(#b, #i, #v);)),
                Some(op) => {
                    let m = binop_method(op);
                    let o = bind(out, quote!(__k.#ld(#b, #i)));
                    let n = bind(out, quote!(__k.#m(#o, #v)));
                    out.push(quote!(__k.#st(#b, #i, #n);));
                }
            }
        }
        _ => {}
    }
}

/// The `__p::steps::Arith` variant of `op`: named after the builder method it calls.
pub(super) fn arith_variant(op: BinOp) -> proc_macro2::Ident {
    let m = binop_method(op).to_string();
    let mut c = m.chars();
    let first = c.next().expect("a method name").to_ascii_uppercase();
    proc_macro2::Ident::new(&format!("{first}{}", c.as_str()), Span::call_site())
}

fn binop_method(op: BinOp) -> proc_macro2::Ident {
    let name = match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "div",
        BinOp::Rem => "rem",
        BinOp::BitAnd | BinOp::And => "and",
        BinOp::BitOr | BinOp::Or => "or",
        BinOp::BitXor => "xor",
        BinOp::Shl => "shl",
        BinOp::Shr => "shr",
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
    };
    proc_macro2::Ident::new(name, Span::call_site())
}

/// The codegen type of a register-held DSL type.
pub fn reg_type(t: Ty) -> TokenStream {
    match t.defaulted() {
        Ty::Scalar(s) => s.codegen_type(),
        Ty::Bool => quote!(__p::Type::Pred),
        _ => quote!(__p::Type::B64),
    }
}

/// An expression's value: its statements are pushed onto `out`; what is returned is a
/// temporary, a variable or a constant (never a block).
pub fn value(e: &Expr, out: &mut Out) -> TokenStream {
    value_named(e, None, out)
}

/// [`value`]; `let_name` names shared allocations after their `let`.
fn value_named(e: &Expr, let_name: Option<&proc_macro2::Ident>, out: &mut Out) -> TokenStream {
    match &e.kind {
        ExprKind::Int { value, .. } => int_imm(*value, e.ty.get(), out),
        ExprKind::Float { value, .. } => match e.ty.get() {
            Ty::Scalar(Scalar::F64) => {
                let l = Literal::f64_suffixed(*value);
                quote!(__p::Value::f64(#l))
            }
            Ty::Scalar(s @ (Scalar::F16 | Scalar::BF16)) => {
                let l = Literal::f32_suffixed(*value as f32);
                let t = s.codegen_type();
                bind(out, quote!(__k.cvt(__p::Value::f32(#l), #t)))
            }
            _ => {
                let l = Literal::f32_suffixed(*value as f32);
                quote!(__p::Value::f32(#l))
            }
        },
        ExprKind::Bool(b) => quote!(__p::Value::pred(#b)),
        ExprKind::Str(s) => quote!(#s),
        ExprKind::Var { name, binding } => match binding.get() {
            Binding::Plain => quote!(#name),
            Binding::Reg => quote!(__p::Value::Reg(#name)),
            // A `const` item, as the type its use gave it (rustc checks it is that type).
            Binding::Item => {
                let k = konst(e, out);
                bind(out, quote!(__p::ConstScalar::value(#k, __k)))
            }
            Binding::Comptime | Binding::Const => {
                let k = konst(e, out);
                if e.ty.get() == Ty::Bool {
                    quote!(__p::Value::pred(#k))
                } else {
                    quote!(__p::Value::u32(#k))
                }
            }
        },
        ExprKind::Item(_) => {
            let k = konst(e, out);
            bind(out, quote!(__p::ConstScalar::value(#k, __k)))
        }
        ExprKind::Paren(inner) => value_named(inner, let_name, out),
        ExprKind::Binary { .. } => {
            // Down the left-nested chain by a loop (see `Checker::binary_chain`).
            let (leaf, spine) = e.binary_spine();
            let l = value(leaf, out);
            if spine.len() == 1 {
                let ExprKind::Binary { op, rhs, .. } = &e.kind else { unreachable!("a binary") };
                let v = binary(*op, l, rhs, out);
                return bind(out, v);
            }
            // A chain's partial results go through one variable: a `let` per term would nest
            // a debug-info scope per term (thousands overflow LLVM, as in plain Rust).
            let acc = tmp();
            out.push(quote!(let mut #acc = #l;));
            for node in spine {
                let ExprKind::Binary { op, rhs, .. } = &node.kind else { unreachable!("spine of binaries") };
                let v = binary(*op, quote!(#acc), rhs, out);
                out.push(quote!(#acc = #v;));
            }
            quote!(#acc)
        }
        ExprKind::Unary { op, e: inner } => {
            let v = value(inner, out);
            match op {
                UnOp::Neg => bind(out, quote!(__k.neg(#v))),
                UnOp::Not => bind(out, quote!(__k.not(#v))),
            }
        }
        ExprKind::Cast { e: inner, to } => {
            // `SCALE as u32`: the item is read as its own type (rustc's), then converted.
            let v = match bare_item(inner) {
                Some(path) if inner.ty.get() == Ty::Scalar(Scalar::U32) => {
                    let t = tmp();
                    out.push(quote_spanned!(inner.sp.start=> let #t = #path;));
                    bind(out, quote!(__p::ConstScalar::value(#t, __k)))
                }
                _ => value(inner, out),
            };
            let t = to.codegen_type();
            bind(out, quote!(__k.cvt(#v, #t)))
        }
        ExprKind::Index { base, idx } if matches!(base.ty.get(), Ty::Vector(..)) => {
            let b = value(base, out);
            let i = konst(idx, out);
            bind(out, quote!(__p::vector_elem(__k, &#b, #i)))
        }
        ExprKind::Index { base, idx } => {
            let b = value(base, out);
            let i = value(idx, out);
            let ld = match (base.ty.get(), e.ty.get()) {
                (Ty::Shared(_), _) => quote!(ld_shared),
                (Ty::RemoteShared(_), _) => quote!(ld_remote),
                (Ty::Tile { .. }, Ty::Tile { .. }) => quote!(tile_at),
                (Ty::Tile { .. }, _) => quote!(ld_tile),
                (Ty::Registers { .. }, Ty::Registers { .. }) => quote!(registers_at),
                (Ty::Registers { .. }, _) => quote!(get_register),
                _ => quote!(ld_global),
            };
            bind(out, quote!(__k.#ld(#b, #i)))
        }
        ExprKind::Array(v) => {
            let xs: Vec<TokenStream> = v.iter().map(|x| value(x, out)).collect();
            quote!([#(#xs),*])
        }
        ExprKind::Op { path, turbofish, args, implied, .. } => {
            let def = registry::lookup(path).expect("checked");
            op(def, e.ty.get(), args, &implied.borrow(), turbofish.map(|t| t.0), let_name, out)
        }
        ExprKind::Method { name, .. } if name == "bytes" || name == "box_bytes" => {
            let k = konst(e, out);
            quote!(__p::Value::u32(#k))
        }
        ExprKind::Method { recv, name, args } => {
            let r = value(recv, out);
            if name == "ptr_to" {
                let idx = match &args[0].kind {
                    ExprKind::Array(v) => value(&v[0], out),
                    _ => value(&args[0], out),
                };
                bind(out, quote!(__k.barrier_at(#r, #idx)))
            } else {
                let a = value(&args[0], out);
                bind(out, quote!(__k.#name(#r, #a)))
            }
        }
        ExprKind::Call { path, args } => {
            // The helper sets its own lines; the rest of this statement is the caller's again.
            let ret = device_call(path, args, out);
            out.push(loc(e.sp));
            ret
        }
        ExprKind::If { cond, then, els } if e.ty.get() != Ty::Unit => {
            let els = els.as_ref().expect("an `if` with a value has an `else`");
            // Each branch: its statements, then its value.
            let branch = |b: Option<&Block>, tail: Option<&Expr>| {
                let mut inner = Out::new();
                let t = match b {
                    Some(b) => split_tail(b, &mut inner),
                    None => tail,
                };
                let v = t.map(|t| value(t, &mut inner)).unwrap_or_default();
                (inner, v)
            };
            let (then_s, then_v) = branch(Some(then), None);
            let (els_s, els_v) = match &els.kind {
                ExprKind::Block(b) => branch(Some(b), None),
                _ => branch(None, block_tail(els)),
            };
            if cond.konst.get() {
                let c = konst(cond, out);
                bind(out, quote!(if #c { #(#then_s)* #then_v } else { #(#els_s)* #els_v }))
            } else {
                let c = value(cond, out);
                let t = reg_type(e.ty.get());
                let res = bind(out, quote!(__k.new_reg(#t)));
                out.push(quote!(__k.if_else_dyn(
                    #c,
                    &mut |__k| { #(#then_s)* __k.assign(#res, #then_v); },
                    &mut |__k| { #(#els_s)* __k.assign(#res, #els_v); },
                );));
                quote!(__p::Value::Reg(#res))
            }
        }
        ExprKind::Block(b) if e.ty.get() != Ty::Unit => {
            let mut inner = Out::new();
            let t = split_tail(b, &mut inner);
            let v = t.map(|t| value(t, &mut inner)).unwrap_or_default();
            bind(out, quote!({ #(#inner)* #v }))
        }
        _ => {
            effect(e, out);
            quote!(())
        }
    }
}

/// `l op rhs`, `l` built already: an expression to bind (it may call the builder).
fn binary(op: BinOp, l: TokenStream, rhs: &Expr, out: &mut Out) -> TokenStream {
    if op.is_logic() && !rhs.is_pure() {
        // Short-circuit: the right side is only built into a branch taken when needed.
        let res = bind(out, quote!(__k.var(#l)));
        let guard = if op == BinOp::And { l } else { bind(out, quote!(__k.not(#l))) };
        let mut inner = Out::new();
        let r = value(rhs, &mut inner);
        out.push(quote!(__k.if_then_dyn(#guard, &mut |__k| { #(#inner)* __k.assign(#res, #r); });));
        return quote!(__p::Value::Reg(#res));
    }
    let r = value(rhs, out);
    let m = binop_method(op);
    quote!(__k.#m(#l, #r))
}

fn int_imm(value: u128, ty: Ty, out: &mut Out) -> TokenStream {
    match ty {
        Ty::Scalar(s) if s.is_float() => {
            let l = Literal::f64_suffixed(value as f64);
            let t = s.codegen_type();
            bind(out, quote!(__k.cvt(__p::Value::f64(#l), #t)))
        }
        Ty::Bool => {
            let b = value != 0;
            quote!(__p::Value::pred(#b))
        }
        t => {
            let ty = match t {
                Ty::Scalar(s) => s.codegen_type(),
                _ => quote!(__p::Type::U32),
            };
            let l = Literal::u64_suffixed(value as u64);
            quote!(__p::Value::imm_u(#l, #ty))
        }
    }
}

/// The path of a `const` item that `e` is (through parentheses).
fn bare_item(e: &Expr) -> Option<TokenStream> {
    match &e.kind {
        ExprKind::Item(path) => Some(quote!(#path)),
        ExprKind::Var { name, binding } if binding.get() == Binding::Item => Some(quote!(#name)),
        ExprKind::Paren(inner) => bare_item(inner),
        _ => None,
    }
}

/// The Rust type a `const` item is read as: the scalar its use gave it, else `u32`; spanned
/// at the item, so rustc's "expected" note points at the use, not at the attribute.
fn item_type(t: Ty, span: Span) -> TokenStream {
    let ty = match t {
        Ty::Scalar(s) => s.rust_type(),
        Ty::Bool => quote!(bool),
        _ => quote!(u32),
    };
    respan(ty, span)
}

fn respan(ts: TokenStream, span: Span) -> TokenStream {
    ts.into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut inner = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                tt = proc_macro2::TokenTree::Group(inner);
            }
            tt.set_span(span);
            tt
        })
        .collect()
}

/// The Rust type of a compile-time value of DSL type `t`.
fn konst_type(t: Ty) -> TokenStream {
    if t == Ty::Bool {
        quote!(bool)
    } else {
        quote!(u32)
    }
}

/// A compile-time expression as Rust (`u32` or `bool`), over `#[comptime]` parameters,
/// compile-time `let`s, `const` items and the sizes of tiles and boxes; flat like [`value`]
/// (one `let` per operation).
pub fn konst(e: &Expr, out: &mut Out) -> TokenStream {
    match &e.kind {
        ExprKind::Int { value, .. } => {
            let l = Literal::u32_suffixed(*value as u32);
            quote!(#l)
        }
        ExprKind::Bool(b) => quote!(#b),
        ExprKind::Var { name, binding } if matches!(binding.get(), Binding::Comptime | Binding::Const) => {
            let n = comptime_ident(name);
            quote!(#n)
        }
        // A `const` item: rustc checks it has the type its use gave it (a `u32` unless
        // something else decided, `checker::item_typed`), here, at the use.
        ExprKind::Var { name, binding } if binding.get() == Binding::Item => {
            let (t, ty) = (tmp(), item_type(e.ty.get(), e.sp.start));
            out.push(quote_spanned!(e.sp.start=> let #t: #ty = #name;));
            quote!(#t)
        }
        ExprKind::Item(path) => {
            let (t, ty) = (tmp(), item_type(e.ty.get(), e.sp.start));
            out.push(quote_spanned!(e.sp.start=> let #t: #ty = #path;));
            quote!(#t)
        }
        ExprKind::If { cond, then, els: Some(els) } => {
            let c = konst(cond, out);
            let (mut a, mut b) = (Out::new(), Out::new());
            let t = then.tail().map(|x| konst(x, &mut a)).unwrap_or_else(|| quote!(0u32));
            let f = block_tail(els).map(|x| konst(x, &mut b)).unwrap_or_else(|| quote!(0u32));
            bind(out, quote!(if #c { #(#a)* #t } else { #(#b)* #f }))
        }
        ExprKind::Method { recv, name, .. } if name == "bytes" => {
            let r = value(recv, out);
            bind(out, quote!(__p::SharedTile::bytes(&#r)))
        }
        ExprKind::Method { recv, name, .. } if name == "box_bytes" => {
            let r = value(recv, out);
            bind(out, quote!(__k.tensor_map_box_bytes(#r)))
        }
        ExprKind::Var { name, .. } => quote!(#name),
        // A compile-time `ITEM as u32` converts the item's own type as `cvt` does.
        ExprKind::Cast { e: inner, .. } if bare_item(inner).is_some() => {
            let (t, path) = (tmp(), bare_item(inner).expect("an item"));
            out.push(quote_spanned!(inner.sp.start=> let #t = #path;));
            bind(out, quote!(__p::konst_u32_of(__k, #t)))
        }
        ExprKind::Paren(inner) | ExprKind::Cast { e: inner, .. } => konst(inner, out),
        ExprKind::Unary { e: inner, .. } => {
            let v = konst(inner, out);
            bind(out, quote!(!#v))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let l = konst(lhs, out);
            let r = konst(rhs, out);
            // Arithmetic is the constant evaluator's (`phaser_codegen::eval`), checked as Rust's
            // is: an overflow (or a division by zero) is a build error naming the values,
            // never a wrapped size; shifts are clamped as PTX's.
            match op.arith() {
                Some(a) => {
                    let variant = format_ident!("{a:?}");
                    bind(out, quote!(__p::konst(__k, #l, __p::BinOp::#variant, #r)))
                }
                None => {
                    let sym: TokenStream = op.symbol().parse().expect("operator");
                    bind(out, quote!(#l #sym #r))
                }
            }
        }
        _ => quote!(0u32),
    }
}

/// An op of the registry: the arguments are evaluated in order, then handed as `OpArg`s to
/// the entry's lowering (`call_op`), whose result comes back as the handle the checker typed.
/// The `OpArg`s are made in the call (from values evaluated before it): none is alive while
/// the builder runs, so the expansion has no clean-up code per argument.
fn op(
    def: &OpDef,
    ty: Ty,
    args: &[Expr],
    implied: &[(usize, &'static str)],
    turbofish: Option<Scalar>,
    let_name: Option<&proc_macro2::Ident>,
    out: &mut Out,
) -> TokenStream {
    let mut op_args = Vec::new();
    for (i, p) in def.params.iter().enumerate() {
        let value = match args.get(i) {
            Some(x) => op_arg(p.kind, x, out),
            None => match implied.iter().find(|(at, _)| *at == i) {
                Some((_, c)) => quote!(__p::OpArg::Choice(#c)),
                None => quote!(__p::OpArg::Absent),
            },
        };
        op_args.push(value);
    }
    let (elem, name) = (op_elem(turbofish), op_result_name(def, let_name));
    // Where the arguments are, for problems the build finds in one of them; set after the
    // arguments are evaluated (an op among them clears it).
    if let Some(locs) = op_arg_locs(def, args) {
        out.push(quote!({
            const __ARG_LOCS: &[(&str, __p::SourceLoc)] = &[#(#locs),*];
            __k.set_arg_locs(__ARG_LOCS);
        }));
    }
    let path = def.path;
    let handle = ret_handle(def.ret, ty);
    bind(out, quote!(__p::call_op::<#handle, _>(__k, #path, [#(#op_args),*], #elem, #name)))
}

/// An op's element type from its turbofish (`T.alloc::<f32>(..)`), as the builder takes it.
pub(super) fn op_elem(turbofish: Option<Scalar>) -> TokenStream {
    match turbofish {
        Some(t) => {
            let t = t.codegen_type();
            quote!(::core::option::Option::Some(#t))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// The name an op's result carries in the IR (shared tiles, registers): the `let` it is bound
/// to, else the op's last path segment.
pub(super) fn op_result_name(def: &OpDef, let_name: Option<&Ident>) -> String {
    let_name
        .map(|n| syn::ext::IdentExt::unraw(n).to_string())
        .unwrap_or_else(|| def.path.rsplit('.').next().unwrap_or("smem").into())
}

/// Each argument's name and source location, for an op whose arguments are sized when the
/// kernel is built (so the builder's problem can name the argument); `None` for other ops.
pub(super) fn op_arg_locs(def: &OpDef, args: &[Expr]) -> Option<Vec<TokenStream>> {
    def.params.iter().any(|p| sized_when_built(p.kind)).then(|| {
        def.params
            .iter()
            .zip(args)
            .map(|(p, a)| {
                let (pname, at) = (p.name, source_loc(a.sp));
                quote!((#pname, #at))
            })
            .collect()
    })
}

/// The Rust type an op's result is held in while the kernel is built (`ty`: what the
/// checker made of the call, which decides between an array and a tile).
fn ret_handle(ret: Ret, ty: Ty) -> TokenStream {
    match ret {
        Ret::SharedOrTile if matches!(ty, Ty::Tile { .. }) => quote!(__p::SharedTile),
        Ret::SharedOrTile => quote!(__p::SharedArray),
        Ret::RegistersOfTurbofish => quote!(__p::RegisterArray),
        Ret::Unit => quote!(()),
        Ret::Barrier => quote!(__p::Barrier),
        Ret::RemoteBarrier => quote!(__p::RemoteBarrier),
        Ret::Barriers => quote!(__p::BarrierArray),
        Ret::Pipeline => quote!(__p::Pipeline),
        Ret::PipelineState => quote!(__p::PipelineState),
        Ret::SharedOfTurbofish => quote!(__p::SharedArray),
        Ret::RemoteSharedOf(_) => quote!(__p::RemoteShared),
        Ret::VecOf(_, n) | Ret::Vec(_, n) => {
            let n = n as usize;
            quote!([__p::Value; #n])
        }
        Ret::Bool
        | Ret::U16
        | Ret::U32
        | Ret::U64
        | Ret::F32
        | Ret::State
        | Ret::Turbofish
        | Ret::ScalarArgs
        | Ret::BitsOfArgs
        | Ret::ElemOf(_) => {
            quote!(__p::Value)
        }
    }
}

fn op_arg(kind: Kind, a: &Expr, out: &mut Out) -> TokenStream {
    match (kind, &a.kind) {
        (Kind::Const, _) => {
            let c = konst(a, out);
            quote!(__p::OpArg::Const(#c))
        }
        (Kind::Dims, ExprKind::Array(v)) => {
            let c: Vec<TokenStream> = v.iter().map(|x| konst(x, out)).collect();
            quote!(__p::OpArg::Dims(::std::vec![#(#c),*]))
        }
        (Kind::Choice(_), ExprKind::Str(s)) => quote!(__p::OpArg::Choice(#s)),
        (Kind::Tag, ExprKind::Str(s)) => quote!(__p::OpArg::Tag(#s)),
        (Kind::Coords | Kind::Values | Kind::Places, ExprKind::Array(v)) => {
            // Named coordinates (`[m = m0, k = k0]`) are in the order the checker held them to.
            let xs: Vec<TokenStream> = v.iter().map(|x| value(coord_value(x), out)).collect();
            quote!(__p::OpArg::Values(::std::vec![#(#xs),*]))
        }
        _ => {
            let v = value(a, out);
            quote!(__p::OpArg::from(#v))
        }
    }
}

/// A `#[phaser::device]` call: `<path as DeviceFn>::bind(__k).call(args..)`, typed arguments where the
/// macro knows the type so rustc checks them against the helper's signature.
fn device_call(path: &syn::Path, args: &[Expr], out: &mut Out) -> TokenStream {
    let mut names = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let sp = a.sp.start;
        // Spanned at the argument: rustc's type errors against the helper's signature point there.
        let d = format_ident!("__d{}_{}", i, tmp(), span = sp);
        let v = value(a, out);
        let conv = match a.ty.get() {
            Ty::Scalar(s) => {
                let r = s.rust_type();
                quote_spanned!(sp=> __p::Scalar::<#r>::new(#v))
            }
            Ty::Bool => quote_spanned!(sp=> __p::Scalar::<bool>::new(#v)),
            Ty::State => quote_spanned!(sp=> __p::Scalar::<__p::StateTy>::new(#v)),
            Ty::IntLit | Ty::FloatLit => quote_spanned!(sp=> __p::Scalar::lit(#v)),
            Ty::Unknown => {
                let k = quote!(__k);
                quote_spanned!(sp=> __p::into_arg(#k, #v))
            }
            _ => v,
        };
        out.push(quote!(let #d = #conv;));
        names.push(d);
    }
    // Spanned at the callee: "not a device function" and a wrong argument count point there.
    let sp = syn::spanned::Spanned::span(path);
    bind(out, quote_spanned!(sp=> __p::DeviceRet::into_dsl(<#path as __p::DeviceFn>::bind(__k).call(#(#names),*))))
}
