//! Statements and expressions → Rust code that calls the builder `__k` (CubeCL-style: the
//! generated code *builds* the IR when it runs, so `#[comptime]` values specialize it).

use crate::check::block_tail;
use crate::parse::ast::*;
use crate::types::{Scalar, Ty};
use phaser_codegen::registry::{self, Kind, OpDef, Ret};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};

/// The Rust variable holding a `#[comptime]` parameter: renamed, because an upper-case name
/// such as `N` would be read as a pattern if a constant `N` is in scope.
pub fn comptime_ident(name: &proc_macro2::Ident) -> proc_macro2::Ident {
    format_ident!("__ct_{}", name)
}

/// `__k.set_loc(file!():line!():column!())` at `sp`, so the PTX `.loc` names the user's line.
pub fn loc(sp: Sp) -> TokenStream {
    quote_spanned!(sp.start=>
        __k.set_loc(::core::option::Option::Some(__p::SourceLoc::new(::core::file!(), ::core::line!(), ::core::column!())));
    )
}

/// Every statement of a block, the tail included (its value, if any, is dropped).
pub fn stmts(b: &[Stmt]) -> TokenStream {
    b.iter().map(stmt).collect()
}

fn stmt(s: &Stmt) -> TokenStream {
    match s {
        Stmt::Let(l) => {
            let l_loc = loc(l.sp);
            let name = &l.name;
            if l.binding.get() == Binding::Const {
                // A compile-time `let`: a Rust value while the kernel is built.
                let c = comptime_ident(name);
                let (v, t) = (konst(&l.init), konst_type(l.init.ty.get()));
                return quote!(#l_loc let #c: #t = #v;);
            }
            let init = expr_named(&l.init, Some(name));
            let muts = l.muts.borrow();
            match l.binding.get() {
                Binding::Reg => quote!(#l_loc let #name = { let __v = #init; __k.var(__v) };),
                _ if l.copy.get() => quote!(#l_loc let #name = { let __v = #init; __p::Value::Reg(__k.var(__v)) };),
                _ if muts.is_empty() => quote!(#l_loc let #name = #init;),
                _ => quote!(#l_loc let #name = __p::Snapshot::snapshot(#init, __k, &[#(#muts),*]);),
            }
        }
        Stmt::Expr { expr: e, .. } => {
            let l = loc(e.sp);
            let ef = effect(e);
            quote!(#l #ef)
        }
    }
}

/// The statements of a block without its tail, and the tail.
fn split_tail(b: &Block) -> (TokenStream, Option<&Expr>) {
    match b.tail() {
        Some(t) => (stmts(&b.stmts[..b.stmts.len() - 1]), Some(t)),
        None => (stmts(&b.stmts), None),
    }
}

/// An expression in statement position.
fn effect(e: &Expr) -> TokenStream {
    match &e.kind {
        ExprKind::If { cond, then, els } => {
            let then_s = stmts(&then.stmts);
            let els_s = els.as_ref().map(|x| effect(x)).unwrap_or_default();
            if cond.konst.get() {
                let c = konst(cond);
                quote!(if #c { #then_s } else { #els_s })
            } else {
                let c = expr(cond);
                match els {
                    None => quote!({ let __c = #c; __k.if_then(__c, |__k| { #then_s }); }),
                    Some(_) => quote!({ let __c = #c; __k.if_else(__c, |__k| { #then_s }, |__k| { #els_s }); }),
                }
            }
        }
        ExprKind::Block(b) => {
            let s = stmts(&b.stmts);
            quote!({ #s })
        }
        ExprKind::For { unroll: Some(_), var, start, end, step, body, .. } => {
            // Each iteration is built in turn, the variable a Rust `u32` (compile-time in the body).
            let (s, en) = (konst(start), konst(end));
            let step = step.as_ref().map(|x| konst(x)).unwrap_or_else(|| quote!(1u32));
            let b = stmts(&body.stmts);
            let v = if var == "_" { quote!(_) } else { comptime_ident(var).into_token_stream() };
            quote!({
                let __s: u32 = #s;
                let __e: u32 = #en;
                let __step: u32 = #step;
                for #v in __k.unrolled(__s, __e, __step) { #b }
            })
        }
        ExprKind::For { unroll: None, var, start, end, step, body, muts } => {
            let (s, en) = (expr(start), expr(end));
            let muts = muts.borrow();
            let en = if muts.is_empty() { en } else { quote!(__p::Snapshot::snapshot(#en, __k, &[#(#muts),*])) };
            let step = step.as_ref().map(|x| konst(x)).unwrap_or_else(|| quote!(1u32));
            let b = stmts(&body.stmts);
            quote!({
                let __s = #s;
                let __e = #en;
                let __step: u32 = #step;
                __k.for_range_step(__s, __e, __step, |__k, #var| { #b });
            })
        }
        ExprKind::While { cond, body } => {
            let c = expr(cond);
            let b = stmts(&body.stmts);
            quote!(__k.while_(|__k| #c, |__k| { #b });)
        }
        ExprKind::Loop { body } => {
            let b = stmts(&body.stmts);
            quote!(__k.loop_(|__k| { #b });)
        }
        ExprKind::Break => quote!(__k.break_();),
        ExprKind::Continue => quote!(__k.continue_();),
        ExprKind::Return(_) => quote!(__k.ret();),
        ExprKind::Assign { place, op, value } => assign(place, *op, value),
        ExprKind::Paren(inner) => effect(inner),
        ExprKind::Invalid => quote!(),
        _ => {
            let v = expr(e);
            quote!(let _ = #v;)
        }
    }
}

fn assign(place: &Expr, op: Option<BinOp>, value: &Expr) -> TokenStream {
    let v = expr(value);
    match &place.kind {
        ExprKind::Var { name, .. } => match op {
            None => quote!({ let __v = #v; __k.assign(#name, __v); }),
            Some(op) => {
                let m = binop_method(op);
                quote!({ let __v = #v; let __n = __k.#m(__p::Value::Reg(#name), __v); __k.assign(#name, __n); })
            }
        },
        ExprKind::Index { base, idx } => {
            let (b, i) = (expr(base), expr(idx));
            let (ld, st) = match base.ty.get() {
                Ty::Shared(_) => (quote!(ld_shared), quote!(st_shared)),
                Ty::Tile { .. } => (quote!(ld_tile), quote!(st_tile)),
                Ty::Registers { .. } => (quote!(get_register), quote!(set_register)),
                _ => (quote!(ld_global), quote!(st_global)),
            };
            match op {
                None => quote!({ let __b = #b; let __i = #i; let __v = #v; __k.#st(__b, __i, __v); }),
                Some(op) => {
                    let m = binop_method(op);
                    quote!({
                        let __b = #b;
                        let __i = #i;
                        let __v = #v;
                        let __o = __k.#ld(__b, __i);
                        let __n = __k.#m(__o, __v);
                        __k.#st(__b, __i, __n);
                    })
                }
            }
        }
        _ => quote!(),
    }
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

pub fn expr(e: &Expr) -> TokenStream {
    expr_named(e, None)
}

/// An expression's value; `let_name` names shared allocations after their `let`.
fn expr_named(e: &Expr, let_name: Option<&proc_macro2::Ident>) -> TokenStream {
    match &e.kind {
        ExprKind::Int { value, .. } => int_imm(*value, e.ty.get()),
        ExprKind::Float { value, .. } => match e.ty.get() {
            Ty::Scalar(Scalar::F64) => {
                let l = Literal::f64_suffixed(*value);
                quote!(__p::Value::f64(#l))
            }
            Ty::Scalar(s @ (Scalar::F16 | Scalar::BF16)) => {
                let l = Literal::f32_suffixed(*value as f32);
                let t = s.codegen_type();
                quote!(__k.cvt(__p::Value::f32(#l), #t))
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
            Binding::Comptime | Binding::Const | Binding::Item => {
                let k = konst(e);
                if e.ty.get() == Ty::Bool {
                    quote!(__p::Value::pred(#k))
                } else {
                    quote!(__p::Value::u32(#k))
                }
            }
        },
        ExprKind::Item(_) => {
            let k = konst(e);
            quote!(__p::Value::u32(#k))
        }
        ExprKind::Paren(inner) => expr_named(inner, let_name),
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (expr(lhs), expr(rhs));
            if op.is_logic() && !rhs.is_pure() {
                // Short-circuit: the right side is only built into a branch taken when needed.
                let guard = if *op == BinOp::And { quote!(__l) } else { quote!(__k.not(__l)) };
                return quote!({
                    let __l = #l;
                    let __res = __k.var(__l);
                    let __g = #guard;
                    __k.if_then(__g, |__k| { let __r = #r; __k.assign(__res, __r); });
                    __p::Value::Reg(__res)
                });
            }
            let m = binop_method(*op);
            quote!({ let __l = #l; let __r = #r; __k.#m(__l, __r) })
        }
        ExprKind::Unary { op, e: inner } => {
            let v = expr(inner);
            match op {
                UnOp::Neg => quote!({ let __v = #v; __k.neg(__v) }),
                UnOp::Not => quote!({ let __v = #v; __k.not(__v) }),
            }
        }
        ExprKind::Cast { e: inner, to } => {
            let v = expr(inner);
            let t = to.codegen_type();
            quote!({ let __v = #v; __k.cvt(__v, #t) })
        }
        ExprKind::Index { base, idx } => {
            let (b, i) = (expr(base), expr(idx));
            let ld = match (base.ty.get(), e.ty.get()) {
                (Ty::Shared(_), _) => quote!(ld_shared),
                (Ty::Tile { .. }, Ty::Tile { .. }) => quote!(tile_at),
                (Ty::Tile { .. }, _) => quote!(ld_tile),
                (Ty::Registers { .. }, Ty::Registers { .. }) => quote!(registers_at),
                (Ty::Registers { .. }, _) => quote!(get_register),
                _ => quote!(ld_global),
            };
            quote!({ let __b = #b; let __i = #i; __k.#ld(__b, __i) })
        }
        ExprKind::Array(v) => {
            let xs = v.iter().map(expr);
            quote!([#(#xs),*])
        }
        ExprKind::Op { path, turbofish, args, .. } => {
            let def = registry::lookup(path).expect("checked");
            op(def, e.ty.get(), args, turbofish.map(|t| t.0), let_name)
        }
        ExprKind::Method { name, .. } if name == "bytes" || name == "box_bytes" => {
            let k = konst(e);
            quote!(__p::Value::u32(#k))
        }
        ExprKind::Method { recv, name, args } => {
            let r = expr(recv);
            if name == "ptr_to" {
                let idx = match &args[0].kind {
                    ExprKind::Array(v) => expr(&v[0]),
                    _ => expr(&args[0]),
                };
                quote!({ let __b = #r; let __i = #idx; __k.barrier_at(__b, __i) })
            } else {
                let a = expr(&args[0]);
                quote!({ let __l = #r; let __r = #a; __k.#name(__l, __r) })
            }
        }
        ExprKind::Call { path, args } => {
            // The helper sets its own lines; the rest of this statement is the caller's again.
            let call = device_call(path, args);
            let back = loc(e.sp);
            quote!({ let __ret = #call; #back __ret })
        }
        ExprKind::If { cond, then, els } if e.ty.get() != Ty::Unit => {
            let (then_s, then_t) = split_tail(then);
            let then_v = then_t.map(expr).unwrap_or_default();
            let els = els.as_ref().expect("an `if` with a value has an `else`");
            let (els_s, els_v) = match &els.kind {
                ExprKind::Block(b) => {
                    let (s, t) = split_tail(b);
                    (s, t.map(expr).unwrap_or_default())
                }
                _ => (quote!(), block_tail(els).map(expr).unwrap_or_default()),
            };
            if cond.konst.get() {
                let c = konst(cond);
                quote!(if #c { #then_s #then_v } else { #els_s #els_v })
            } else {
                let c = expr(cond);
                let t = reg_type(e.ty.get());
                quote!({
                    let __c = #c;
                    let __res = __k.new_reg(#t);
                    __k.if_else(
                        __c,
                        |__k| { #then_s let __v = #then_v; __k.assign(__res, __v); },
                        |__k| { #els_s let __v = #els_v; __k.assign(__res, __v); },
                    );
                    __p::Value::Reg(__res)
                })
            }
        }
        ExprKind::Block(b) if e.ty.get() != Ty::Unit => {
            let (s, t) = split_tail(b);
            let v = t.map(expr).unwrap_or_default();
            quote!({ #s #v })
        }
        _ => {
            let ef = effect(e);
            quote!({ #ef })
        }
    }
}

fn int_imm(value: u128, ty: Ty) -> TokenStream {
    match ty {
        Ty::Scalar(s) if s.is_float() => {
            let l = Literal::f64_suffixed(value as f64);
            let t = s.codegen_type();
            quote!(__k.cvt(__p::Value::f64(#l), #t))
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

/// The Rust type of a compile-time value of DSL type `t`.
fn konst_type(t: Ty) -> TokenStream {
    if t == Ty::Bool {
        quote!(bool)
    } else {
        quote!(u32)
    }
}

/// A compile-time expression as Rust (`u32` or `bool`), over `#[comptime]` parameters,
/// compile-time `let`s, `const` items and the sizes of tiles and boxes.
pub fn konst(e: &Expr) -> TokenStream {
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
        // A `const` item: rustc checks it is a `u32` here, at the use.
        ExprKind::Var { name, binding } if binding.get() == Binding::Item => {
            quote_spanned!(e.sp.start=> { let __c: u32 = #name; __c })
        }
        ExprKind::Item(path) => quote_spanned!(e.sp.start=> { let __c: u32 = #path; __c }),
        ExprKind::If { cond, then, els: Some(els) } => {
            let c = konst(cond);
            let t = then.tail().map(konst).unwrap_or_else(|| quote!(0u32));
            let f = block_tail(els).map(konst).unwrap_or_else(|| quote!(0u32));
            quote!((if #c { #t } else { #f }))
        }
        ExprKind::Method { recv, name, .. } if name == "bytes" => {
            let r = expr(recv);
            quote!({ let __t: __p::SharedTile = #r; __t.bytes() })
        }
        ExprKind::Method { recv, name, .. } if name == "box_bytes" => {
            let r = expr(recv);
            quote!({ let __m = #r; __k.tensor_map_box_bytes(__m) })
        }
        ExprKind::Var { name, .. } => quote!(#name),
        ExprKind::Paren(inner) | ExprKind::Cast { e: inner, .. } => konst(inner),
        ExprKind::Unary { e: inner, .. } => {
            let v = konst(inner);
            quote!((!#v))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (konst(lhs), konst(rhs));
            if matches!(op, BinOp::Div | BinOp::Rem) {
                // A zero divisor is a build error at this line, not a panic.
                let f = if *op == BinOp::Div { quote!(const_div) } else { quote!(const_rem) };
                return quote!(__p::#f(__k, #l, #r));
            }
            let m = match op {
                BinOp::Add => Some(quote!(wrapping_add)),
                BinOp::Sub => Some(quote!(wrapping_sub)),
                BinOp::Mul => Some(quote!(wrapping_mul)),
                BinOp::Shl => Some(quote!(wrapping_shl)),
                BinOp::Shr => Some(quote!(wrapping_shr)),
                _ => None,
            };
            match m {
                Some(m) => quote!((#l).#m(#r)),
                None => {
                    let sym: TokenStream = op.symbol().parse().expect("operator");
                    quote!((#l #sym #r))
                }
            }
        }
        _ => quote!(0u32),
    }
}

/// An op of the registry: the arguments are evaluated in order into `OpArg`s and handed to
/// the entry's lowering (`call_op`), whose result comes back as the handle the checker typed.
fn op(
    def: &OpDef,
    ty: Ty,
    args: &[Expr],
    turbofish: Option<Scalar>,
    let_name: Option<&proc_macro2::Ident>,
) -> TokenStream {
    let mut binds = Vec::new();
    let mut names = Vec::new();
    for (i, p) in def.params.iter().enumerate() {
        let a = format_ident!("__a{}", i);
        let value = match args.get(i) {
            Some(x) => op_arg(p.kind, x),
            None => quote!(__p::OpArg::Absent),
        };
        binds.push(quote!(let #a = #value;));
        names.push(a);
    }
    let elem = match turbofish {
        Some(t) => {
            let t = t.codegen_type();
            quote!(::core::option::Option::Some(#t))
        }
        None => quote!(::core::option::Option::None),
    };
    let name = let_name.map(|n| n.to_string()).unwrap_or_else(|| def.path.rsplit('.').next().unwrap_or("smem").into());
    let path = def.path;
    let handle = ret_handle(def.ret, ty);
    quote!({
        #(#binds)*
        __p::call_op::<#handle>(__k, #path, ::std::vec![#(#names),*], #elem, #name)
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
        Ret::Bool | Ret::U32 | Ret::U64 | Ret::State | Ret::Turbofish | Ret::ScalarArgs | Ret::ElemOf(_) => {
            quote!(__p::Value)
        }
    }
}

fn op_arg(kind: Kind, a: &Expr) -> TokenStream {
    match (kind, &a.kind) {
        (Kind::Const, _) => {
            let c = konst(a);
            quote!(__p::OpArg::Const(#c))
        }
        (Kind::Dims, ExprKind::Array(v)) => {
            let c = v.iter().map(konst);
            quote!(__p::OpArg::Dims(::std::vec![#(#c),*]))
        }
        (Kind::Choice(_), ExprKind::Str(s)) => quote!(__p::OpArg::Choice(#s)),
        (Kind::Tag, ExprKind::Str(s)) => quote!(__p::OpArg::Tag(#s)),
        (Kind::Coords | Kind::Values, ExprKind::Array(v)) => {
            let xs = v.iter().map(expr);
            quote!(__p::OpArg::Values(::std::vec![#(#xs),*]))
        }
        _ => {
            let v = expr(a);
            quote!(__p::OpArg::from(#v))
        }
    }
}

/// A `#[phaser::device]` call: `path::__expand(__k, args..)`, typed arguments where the
/// macro knows the type so rustc checks them against the helper's signature.
fn device_call(path: &syn::Path, args: &[Expr]) -> TokenStream {
    let mut binds = Vec::new();
    let mut names = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let sp = a.sp.start;
        // Spanned at the argument: rustc's type errors against the helper's signature point there.
        let d = format_ident!("__d{}", i, span = sp);
        let v = expr(a);
        let conv = match a.ty.get() {
            Ty::Scalar(s) => {
                let r = s.rust_type();
                quote_spanned!(sp=> __p::Scalar::<#r>::new(#v))
            }
            Ty::Bool => quote_spanned!(sp=> __p::Scalar::<bool>::new(#v)),
            Ty::State => quote_spanned!(sp=> __p::Scalar::<__p::StateTy>::new(#v)),
            Ty::IntLit | Ty::FloatLit => quote_spanned!(sp=> __p::Scalar::lit(#v)),
            Ty::Unknown => quote_spanned!(sp=> __p::into_arg(__k, #v)),
            _ => v,
        };
        binds.push(quote!(let #d = #conv;));
        names.push(d);
    }
    quote!({
        #(#binds)*
        __p::DeviceRet::into_dsl(#path::__expand(__k, #(#names),*))
    })
}
