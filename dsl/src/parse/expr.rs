//! Statements and expressions: syn → DSL AST.

use super::ast::*;
use super::{check_reserved, scalar_of_path, Errors};
use crate::types::Scalar;
use std::cell::Cell;

pub struct Parser<'a> {
    pub errs: &'a mut Errors,
}

/// The scalar of `f32::from_bits` (any scalar type's `from_bits`), or `None`.
fn from_bits_type(p: &syn::Path) -> Option<Scalar> {
    match p.segments.iter().collect::<Vec<_>>().as_slice() {
        [ty, f] if f.ident == "from_bits" && ty.arguments.is_none() && f.arguments.is_none() => {
            Scalar::from_name(&ty.ident.to_string())
        }
        _ => None,
    }
}

impl Parser<'_> {
    fn invalid(&mut self, sp: Sp, msg: impl std::fmt::Display) -> Expr {
        self.errs.at(sp, msg);
        Expr::new(ExprKind::Invalid, sp)
    }

    pub fn block(&mut self, b: &syn::Block) -> Block {
        let mut stmts = Vec::new();
        for s in &b.stmts {
            match s {
                syn::Stmt::Local(l) => {
                    if let Some(st) = self.local(l) {
                        stmts.push(st);
                    }
                }
                syn::Stmt::Expr(e, semi) => stmts.push(Stmt::Expr { expr: self.expr(e), semi: semi.is_some() }),
                syn::Stmt::Item(i) => {
                    self.errs.at(Sp::of(i), "items (fn, const, use, ...) cannot be declared inside a kernel body; declare them outside (helpers as `#[phaser::device]` functions)")
                }
                syn::Stmt::Macro(m) => self.errs.at(
                    Sp::of(m),
                    "macros cannot be used in a kernel body: the macro only understands the DSL's syntax",
                ),
            }
        }
        Block { stmts }
    }

    fn local(&mut self, l: &syn::Local) -> Option<Stmt> {
        let sp = Sp::of(l);
        for a in &l.attrs {
            self.errs.at(
                Sp::of(a),
                "attributes are not supported on `let` (the only expression attribute is `#[unroll]` on a `for` loop)",
            );
        }
        let (pat, ty) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        let Some(init) = &l.init else {
            self.errs.at(sp, "a `let` needs an initial value: `let x = ...;`");
            return None;
        };
        if let Some((_, d)) = &init.diverge {
            self.errs.at(Sp::of(&**d), "`let ... else` is not supported");
        }
        let init_e = self.expr(&init.expr);
        let (name, mutable) = match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                (pi.ident.clone(), pi.mutability.is_some())
            }
            syn::Pat::Wild(_) => return Some(Stmt::Expr { expr: init_e, semi: true }),
            p => {
                self.errs.at(Sp::of(p), "only simple `let name = ...` bindings are supported (no tuples or patterns)");
                return None;
            }
        };
        check_reserved(&name, self.errs);
        let ty = ty.and_then(|t| {
            let tsp = Sp::of(t);
            super::parse_type(t, false, self.errs).map(|ty| (ty, tsp))
        });
        Some(Stmt::Let(Let {
            name,
            mutable,
            ty,
            init: init_e,
            sp,
            binding: Cell::new(Binding::Plain),
            snapshot: Cell::new(false),
            copy: Cell::new(false),
        }))
    }

    fn boxed(&mut self, e: &syn::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    pub fn expr(&mut self, e: &syn::Expr) -> Expr {
        let sp = Sp::of(e);
        if let Some(attrs) = expr_attrs(e) {
            for a in attrs {
                let msg = if a.path().is_ident("unroll") {
                    "`#[unroll]` applies to `for` loops over compile-time ranges: `#[unroll] for i in 0..N { .. }`"
                } else {
                    "attributes are not supported on expressions in a kernel (the only one is `#[unroll]` on a `for` loop)"
                };
                self.errs.at(Sp::of(a), msg);
            }
        }
        let kind = match e {
            syn::Expr::Lit(l) => return self.lit(&l.lit, sp),
            syn::Expr::Path(p) => {
                if p.qself.is_none() && p.path.segments.len() == 1 && p.path.segments[0].arguments.is_none() {
                    let name = p.path.segments[0].ident.clone();
                    if name == "T" {
                        return self.invalid(sp, "`T` alone is not a value; call an op such as `T.thread_idx()`");
                    }
                    ExprKind::Var { name, binding: Cell::new(Binding::Plain) }
                } else if p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_none()) && is_const_name(&p.path.segments.last().expect("a path").ident.to_string()) {
                    if p.path.segments[0].ident == "Self" {
                        return self.invalid(sp, "`Self` is the kernel's own type, not a module: name the `const` item by its module path");
                    }
                    ExprKind::Item(p.path.clone())
                } else {
                    return self.invalid(
                        sp,
                        "paths are not values in a kernel; use a local, a parameter, a `#[comptime]` parameter or a `const` item (`consts::BLOCK`)",
                    );
                }
            }
            syn::Expr::Paren(p) => ExprKind::Paren(self.boxed(&p.expr)),
            syn::Expr::Group(g) => return self.expr(&g.expr),
            syn::Expr::Binary(b) => return self.binary(b, sp),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => ExprKind::Unary { op: UnOp::Neg, e: self.boxed(&u.expr) },
                syn::UnOp::Not(_) => ExprKind::Unary { op: UnOp::Not, e: self.boxed(&u.expr) },
                _ => return self.invalid(sp, "`*` (dereference) is not supported: kernel values are not references; use the value itself"),
            },
            syn::Expr::Cast(c) => {
                let to = match &*c.ty {
                    syn::Type::Path(tp) if tp.qself.is_none() => scalar_of_path(&tp.path),
                    _ => None,
                };
                match to {
                    Some(to) => ExprKind::Cast { e: self.boxed(&c.expr), to },
                    None => {
                        return self.invalid(
                            Sp::of(&*c.ty),
                            "`as` converts to a scalar type: u16 i16 u32 i32 u64 i64 f32 f64 f16 bf16 (for bool, compare: `x != 0`)",
                        )
                    }
                }
            }
            syn::Expr::Index(i) => ExprKind::Index { base: self.boxed(&i.expr), idx: self.boxed(&i.index) },
            syn::Expr::Array(a) => ExprKind::Array(a.elems.iter().map(|x| self.expr(x)).collect()),
            syn::Expr::MethodCall(m) => return self.method_call(m, sp),
            syn::Expr::Call(c) => match &*c.func {
                // `f32::from_bits(u)`: the bits of `u` as the scalar type (`T.bitcast::<f32>(u)`).
                syn::Expr::Path(p) if p.qself.is_none() && from_bits_type(&p.path).is_some() => {
                    let to = from_bits_type(&p.path).expect("checked");
                    let path_sp = Sp::of(&p.path);
                    let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
                    let args_sp = if c.args.is_empty() { path_sp } else { Sp::of(&c.args) };
                    ExprKind::Op { path: "bitcast".into(), path_sp, turbofish: Some((to, path_sp)), args, args_sp, implied: Default::default() }
                }
                syn::Expr::Path(p) if p.qself.is_none() => {
                    ExprKind::Call { path: p.path.clone(), args: c.args.iter().map(|a| self.expr(a)).collect() }
                }
                f => return self.invalid(Sp::of(f), "only `#[phaser::device]` functions can be called, by name (`helper(x)`); ops are `T.path(..)`"),
            },
            syn::Expr::Field(f) => return self.field(f, sp),
            syn::Expr::If(i) => return self.if_expr(i, sp),
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.errs.at(Sp::of(l), "block labels are not supported; use `if` to skip the rest of the block");
                }
                ExprKind::Block(self.block(&b.block))
            }
            syn::Expr::ForLoop(f) => return self.for_loop(f, sp),
            syn::Expr::While(w) => {
                if let Some(l) = &w.label {
                    self.errs.at(Sp::of(l), "loop labels are not supported; restructure with a flag variable");
                }
                if let syn::Expr::Let(l) = &*w.cond {
                    return self.invalid(Sp::of(l), "`while let` is not supported; use `while cond { .. }`");
                }
                ExprKind::While { cond: self.boxed(&w.cond), body: self.block(&w.body) }
            }
            syn::Expr::Loop(l) => {
                if let Some(lb) = &l.label {
                    self.errs.at(Sp::of(lb), "loop labels are not supported; restructure with a flag variable");
                }
                ExprKind::Loop { body: self.block(&l.body) }
            }
            syn::Expr::Break(b) => {
                if let Some(l) = &b.label {
                    self.errs.at(Sp::of(l), "labeled `break` is not supported; set a flag and test it in the outer loop");
                }
                if let Some(v) = &b.expr {
                    self.errs.at(
                        Sp::of(&**v),
                        "`break` with a value is not supported; assign to a `let mut` before breaking",
                    );
                }
                ExprKind::Break
            }
            syn::Expr::Continue(c) => {
                if let Some(l) = &c.label {
                    self.errs.at(Sp::of(l), "labeled `continue` is not supported; set a flag and test it in the outer loop");
                }
                ExprKind::Continue
            }
            syn::Expr::Return(r) => ExprKind::Return(r.expr.as_ref().map(|v| self.boxed(v))),
            syn::Expr::Assign(a) => {
                ExprKind::Assign { place: self.boxed(&a.left), op: None, value: self.boxed(&a.right) }
            }
            syn::Expr::Closure(_) => {
                return self.invalid(
                    sp,
                    "closures are not supported in kernels; write a `#[phaser::device]` function and call it",
                )
            }
            syn::Expr::Reference(r) => {
                return self.invalid(
                    Sp::of(r),
                    "references to locals are not supported: kernel values are passed by copy; remove the `&`",
                )
            }
            syn::Expr::Macro(m) => {
                return self.invalid(
                    sp,
                    format!(
                        "macros cannot be used in a kernel body (`{}!`)",
                        quote::quote!(#m).to_string().split('!').next().unwrap_or("").trim()
                    ),
                )
            }
            syn::Expr::Match(_) => return self.invalid(sp, "`match` is not supported; use `if`/`else if` chains"),
            syn::Expr::Tuple(_) => {
                return self.invalid(sp, "tuples are not supported in kernels; use one `let` per value (or a `T.registers` array)")
            }
            syn::Expr::Struct(_) => {
                return self.invalid(sp, "struct literals are not supported in kernels; use one `let` per field")
            }
            syn::Expr::Range(_) => return self.invalid(sp, "ranges are only supported as `for i in a..b`"),
            syn::Expr::Try(_) => {
                return self.invalid(sp, "`?` is not supported in kernels: nothing in a kernel returns a `Result`; check with `if` and `T.ptx.trap()`")
            }
            syn::Expr::Let(_) => return self.invalid(sp, "`if let` / `let` expressions are not supported; compare with `if a == b`"),
            syn::Expr::Unsafe(_) => {
                return self.invalid(sp, "`unsafe` blocks are not supported (nor needed) in kernels")
            }
            syn::Expr::Async(_) | syn::Expr::Await(_) => {
                return self.invalid(sp, "`async`/`.await` are not supported in kernels; asynchronous copies complete on mbarriers (`T.ptx.mbarrier.try_wait`)")
            }
            syn::Expr::Const(_) => {
                return self.invalid(sp, "`const { .. }` blocks are not supported; declare a `const` item outside the kernel, or a `let` of compile-time values")
            }
            syn::Expr::RawAddr(_) => return self.invalid(sp, "raw addresses are not supported; shared addresses come from `T.shared_addr(arr)`"),
            syn::Expr::Repeat(_) => return self.invalid(sp, "array repeats `[x; N]` are not supported; use `T.registers::<T>([N])` (zeroed) or `T.alloc_shared::<T>([N])`"),
            syn::Expr::TryBlock(_) => return self.invalid(sp, "`try` blocks are not supported; check with `if`"),
            syn::Expr::Yield(_) => return self.invalid(sp, "`yield` is not supported in kernels"),
            syn::Expr::Infer(_) => return self.invalid(sp, "`_` is not a value; write the value"),
            _ => return self.invalid(sp, format!("`{}` is not supported in a kernel body", quote::quote!(#e))),
        };
        Expr::new(kind, sp)
    }

    fn lit(&mut self, l: &syn::Lit, sp: Sp) -> Expr {
        let kind = match l {
            syn::Lit::Int(i) => {
                let suffix = match i.suffix() {
                    "" => None,
                    s => match Scalar::from_name(s) {
                        Some(t) => Some(t),
                        None => return self.invalid(sp, format!("unsupported literal suffix `{s}`")),
                    },
                };
                match i.base10_parse::<u128>() {
                    Ok(value) if suffix.is_some_and(|s| s.is_float()) => {
                        ExprKind::Float { value: value as f64, suffix }
                    }
                    Ok(value) => ExprKind::Int { value, suffix },
                    Err(e) => return self.invalid(sp, e),
                }
            }
            syn::Lit::Float(f) => {
                let suffix = match f.suffix() {
                    "" => None,
                    s => match Scalar::from_name(s) {
                        Some(t) if t.is_float() => Some(t),
                        _ => return self.invalid(sp, format!("unsupported float suffix `{s}`")),
                    },
                };
                match f.base10_parse::<f64>() {
                    Ok(value) => ExprKind::Float { value, suffix },
                    Err(e) => return self.invalid(sp, e),
                }
            }
            syn::Lit::Bool(b) => ExprKind::Bool(b.value),
            syn::Lit::Str(s) => ExprKind::Str(s.clone()),
            _ => return self.invalid(sp, "only integer, float, bool and string literals are supported (characters and byte strings: use their integer value)"),
        };
        Expr::new(kind, sp)
    }

    /// A binary operator: `(op, is_compound_assignment)`; `None` for one the DSL lacks.
    fn bin_op(op: &syn::BinOp) -> Option<(BinOp, bool)> {
        use syn::BinOp as S;
        Some(match op {
            S::Add(_) => (BinOp::Add, false),
            S::Sub(_) => (BinOp::Sub, false),
            S::Mul(_) => (BinOp::Mul, false),
            S::Div(_) => (BinOp::Div, false),
            S::Rem(_) => (BinOp::Rem, false),
            S::And(_) => (BinOp::And, false),
            S::Or(_) => (BinOp::Or, false),
            S::BitXor(_) => (BinOp::BitXor, false),
            S::BitAnd(_) => (BinOp::BitAnd, false),
            S::BitOr(_) => (BinOp::BitOr, false),
            S::Shl(_) => (BinOp::Shl, false),
            S::Shr(_) => (BinOp::Shr, false),
            S::Eq(_) => (BinOp::Eq, false),
            S::Lt(_) => (BinOp::Lt, false),
            S::Le(_) => (BinOp::Le, false),
            S::Ne(_) => (BinOp::Ne, false),
            S::Ge(_) => (BinOp::Ge, false),
            S::Gt(_) => (BinOp::Gt, false),
            S::AddAssign(_) => (BinOp::Add, true),
            S::SubAssign(_) => (BinOp::Sub, true),
            S::MulAssign(_) => (BinOp::Mul, true),
            S::DivAssign(_) => (BinOp::Div, true),
            S::RemAssign(_) => (BinOp::Rem, true),
            S::BitXorAssign(_) => (BinOp::BitXor, true),
            S::BitAndAssign(_) => (BinOp::BitAnd, true),
            S::BitOrAssign(_) => (BinOp::BitOr, true),
            S::ShlAssign(_) => (BinOp::Shl, true),
            S::ShrAssign(_) => (BinOp::Shr, true),
            _ => return None,
        })
    }

    /// A binary expression. Left-associative chains (`a + b + c + ..`) nest to the left; the
    /// spine is walked with a loop, so a sum of thousands of terms does not recurse once per
    /// term (the right operands are parsed recursively, as they nest only as written).
    fn binary(&mut self, b: &syn::ExprBinary, sp: Sp) -> Expr {
        let mut spine = vec![b];
        let mut leaf = &*b.left;
        while let syn::Expr::Binary(inner) = leaf {
            spine.push(inner);
            leaf = &inner.left;
        }
        let start = Sp::of(leaf).start;
        let mut acc = self.expr(leaf);
        for (i, node) in spine.into_iter().enumerate().rev() {
            // The outermost node keeps the span computed for it; inner ones run from the
            // leaf's start to their right operand's end (O(1) each, not O(subtree)).
            let node_sp = if i == 0 { sp } else { Sp { start, end: Sp::of(&*node.right).end } };
            let Some((op, assign)) = Self::bin_op(&node.op) else {
                let op = &node.op;
                return self.invalid(node_sp, format!("the operator `{}` is not supported", quote::quote!(#op)));
            };
            let r = self.boxed(&node.right);
            let kind = if assign {
                ExprKind::Assign { place: Box::new(acc), op: Some(op), value: r }
            } else {
                ExprKind::Binary { op, lhs: Box::new(acc), rhs: r }
            };
            acc = Expr::new(kind, node_sp);
        }
        acc
    }

    /// `T.a.b` chains: the names after `T`, or None when the chain is not rooted at `T`.
    fn t_chain(e: &syn::Expr) -> Option<Vec<String>> {
        match e {
            syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident("T") => Some(Vec::new()),
            syn::Expr::Field(f) => {
                let mut v = Self::t_chain(&f.base)?;
                match &f.member {
                    syn::Member::Named(n) => v.push(n.to_string()),
                    syn::Member::Unnamed(i) => v.push(i.index.to_string()),
                }
                Some(v)
            }
            _ => None,
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall, sp: Sp) -> Expr {
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect();
        let args_sp = if m.args.is_empty() { Sp::of(&m.method) } else { Sp::of(&m.args) };
        if let Some(mut chain) = Self::t_chain(&m.receiver) {
            chain.push(m.method.to_string());
            let turbofish = match &m.turbofish {
                None => None,
                Some(tf) => {
                    let tsp = Sp::of(tf);
                    let s = match tf.args.first() {
                        Some(syn::GenericArgument::Type(syn::Type::Path(tp))) if tf.args.len() == 1 => {
                            scalar_of_path(&tp.path)
                        }
                        _ => None,
                    };
                    match s {
                        Some(s) => Some((s, tsp)),
                        None => return self.invalid(tsp, "the type argument must be one scalar type, e.g. `::<f32>`"),
                    }
                }
            };
            let path_sp = Sp::of(&*m.receiver).to(Sp::of(&m.method));
            return Expr::new(ExprKind::Op { path: chain.join("."), path_sp, turbofish, args, args_sp, implied: Default::default() }, sp);
        }
        if let Some(tf) = &m.turbofish {
            self.errs.at(Sp::of(tf), "type arguments are only supported on `T.*` ops");
        }
        // Rust's methods with an op of the same meaning (`x.exp2()` is `T.ex2(x)`): the
        // receiver is the op's first argument.
        if let Some(def) = phaser_codegen::registry::method(&m.method.to_string()) {
            let mut all = vec![self.expr(&m.receiver)];
            all.extend(args);
            let args_sp = Sp::of(&*m.receiver).to(sp);
            return Expr::new(
                ExprKind::Op { path: def.path.into(), path_sp: Sp::of(&m.method), turbofish: None, args: all, args_sp, implied: Default::default() },
                sp,
            );
        }
        let recv = self.boxed(&m.receiver);
        Expr::new(ExprKind::Method { recv, name: m.method.clone(), args }, sp)
    }

    fn field(&mut self, f: &syn::ExprField, sp: Sp) -> Expr {
        if let Some(chain) = Self::t_chain(&syn::Expr::Field(f.clone())) {
            let path = chain.join(".");
            return self.invalid(sp, format!("`T.{path}` is not a value; ops are called: `T.{path}(..)`"));
        }
        self.invalid(
            sp,
            "field access is not supported in kernels: kernel values are scalars and handles; use a `let` per value",
        )
    }

    fn if_expr(&mut self, i: &syn::ExprIf, sp: Sp) -> Expr {
        if let syn::Expr::Let(l) = &*i.cond {
            return self.invalid(Sp::of(l), "`if let` is not supported; use a comparison");
        }
        let cond = self.boxed(&i.cond);
        let then = self.block(&i.then_branch);
        let els = i.else_branch.as_ref().map(|(_, e)| self.boxed(e));
        Expr::new(ExprKind::If { cond, then, els }, sp)
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop, sp: Sp) -> Expr {
        let mut unroll = None;
        for a in &f.attrs {
            if a.path().is_ident("unroll") && matches!(a.meta, syn::Meta::Path(_)) {
                unroll = Some(Sp::of(a));
            } else if a.path().is_ident("unroll") {
                self.errs.at(Sp::of(a), "`#[unroll]` takes no arguments: the whole compile-time range is unrolled");
            } else {
                self.errs
                    .at(Sp::of(a), "unknown loop attribute; the only one is `#[unroll]` (unroll a compile-time range)");
            }
        }
        if let Some(l) = &f.label {
            self.errs.at(Sp::of(l), "loop labels are not supported; restructure with a flag variable");
        }
        let var = match &*f.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() && pi.mutability.is_none() => {
                pi.ident.clone()
            }
            syn::Pat::Wild(w) => proc_macro2::Ident::new("_", w.underscore_token.span),
            p => return self.invalid(Sp::of(p), "the loop variable must be a plain name: `for i in a..b`"),
        };
        if var != "_" {
            check_reserved(&var, self.errs);
        }
        // `a..b` or `(a..b).step_by(s)`.
        let (range, step) = match &*f.expr {
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let inner = match &*m.receiver {
                    syn::Expr::Paren(p) => &*p.expr,
                    r => r,
                };
                (inner, Some(self.boxed(&m.args[0])))
            }
            r => (r, None),
        };
        let syn::Expr::Range(r) = range else {
            return self.invalid(
                Sp::of(&*f.expr),
                "`for` loops run over a range: `for i in a..b` or `for i in (a..b).step_by(s)`",
            );
        };
        if matches!(r.limits, syn::RangeLimits::Closed(_)) {
            return self.invalid(Sp::of(r), "inclusive ranges `a..=b` are not supported; write `a..b + 1`");
        }
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return self.invalid(Sp::of(r), "a `for` range needs both bounds: `a..b`");
        };
        let kind = ExprKind::For {
            unroll,
            var,
            start: self.boxed(start),
            end: self.boxed(end),
            step,
            body: self.block(&f.body),
            snapshot: Cell::new(false),
        };
        Expr::new(kind, sp)
    }
}

/// Rust's naming convention for constants: `BLOCK_ROWS`, `N`, `TILE2`.
pub fn is_const_name(s: &str) -> bool {
    s.chars().any(|c| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The attributes of an expression (a `for` loop's are its own business).
fn expr_attrs(e: &syn::Expr) -> Option<&Vec<syn::Attribute>> {
    Some(match e {
        syn::Expr::While(x) => &x.attrs,
        syn::Expr::Loop(x) => &x.attrs,
        syn::Expr::Block(x) => &x.attrs,
        syn::Expr::If(x) => &x.attrs,
        syn::Expr::Call(x) => &x.attrs,
        syn::Expr::MethodCall(x) => &x.attrs,
        syn::Expr::Assign(x) => &x.attrs,
        syn::Expr::Binary(x) => &x.attrs,
        syn::Expr::Unary(x) => &x.attrs,
        syn::Expr::Lit(x) => &x.attrs,
        syn::Expr::Path(x) => &x.attrs,
        syn::Expr::Paren(x) => &x.attrs,
        syn::Expr::Index(x) => &x.attrs,
        syn::Expr::Cast(x) => &x.attrs,
        syn::Expr::Return(x) => &x.attrs,
        syn::Expr::Break(x) => &x.attrs,
        syn::Expr::Continue(x) => &x.attrs,
        _ => return None,
    })
    .filter(|a| !a.is_empty())
}
