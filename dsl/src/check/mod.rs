//! Stage 2: validation. Names, arity, argument kinds, types, mutability, literal ranges and
//! target support are checked here, each error pointing at the offending tokens. The checker
//! also annotates the AST (types, constness, bindings) for the expansion.

mod ops;

use crate::parse::ast::*;
use crate::parse::Errors;
use crate::suggest::nearest;
use crate::types::{Scalar, Ty};
use phaser_codegen::Target;

struct Var {
    ty: Ty,
    binding: Binding,
    /// Declaration order (suggestions list names as they were declared).
    seq: u64,
}

/// The checker's work is linear in the size of the function: a name is found in O(1) (each
/// name maps to its bindings, innermost last), and nothing rescans the scopes per statement.
pub struct Checker<'a> {
    errs: &'a mut Errors,
    /// Every binding of each name in scope, innermost last.
    vars: std::collections::HashMap<String, Vec<Var>>,
    /// The names each open scope declared (to unbind them when it closes), and how many of
    /// them are `let mut` registers.
    scopes: Vec<(Vec<String>, usize)>,
    /// `let mut` registers declared in the open scopes.
    muts_in_scope: usize,
    /// Units of work done (expressions checked, names bound, looked up and unbound): the
    /// tests measure that it grows linearly with the function.
    pub(crate) work: u64,
    /// The kernel's target (device functions are checked against it when they are built).
    target: Option<Target>,
    loops: u32,
    device: bool,
}

/// Check a kernel or device function, annotating its AST.
pub fn check_fn(f: &FnDef, errs: &mut Errors) {
    check_fn_counting(f, errs);
}

/// [`check_fn`], returning the checker's [`Checker::work`].
pub(crate) fn check_fn_counting(f: &FnDef, errs: &mut Errors) -> u64 {
    let target = match f.kind {
        FnKind::Kernel { target } => Some(target),
        FnKind::Device => None,
    };
    let mut c = Checker {
        errs,
        vars: Default::default(),
        scopes: vec![(Vec::new(), 0)],
        muts_in_scope: 0,
        work: 0,
        target,
        loops: 0,
        device: target.is_none(),
    };
    for p in &f.params {
        let binding = if p.comptime {
            Binding::Comptime
        } else if p.mutable {
            Binding::Reg
        } else {
            Binding::Plain
        };
        c.declare(&p.name, p.ty, binding);
    }
    let stmts = &f.body.stmts;
    match &f.ret {
        None => {
            c.stmts(stmts);
            if let Some(t) = f.body.tail() {
                let ty = t.ty.get();
                if !matches!(ty, Ty::Unit | Ty::Error | Ty::Unknown) && !t.is_block_like() {
                    let what =
                        if c.device { "this device function has no result type" } else { "a kernel returns nothing" };
                    c.errs.at(t.sp, format!("{what}, but the body ends with a {} value; add `;`", ty.defaulted()));
                }
            }
        }
        Some((ret, ret_sp)) => {
            // The result is the tail expression, or a final `return e`.
            let (init, last) = match stmts.split_last() {
                Some((last, init)) => (init, Some(last)),
                None => (&stmts[..], None),
            };
            c.stmts(init);
            let tail = match last {
                Some(Stmt::Expr { expr, semi: false }) => Some(expr),
                Some(Stmt::Expr { expr: Expr { kind: ExprKind::Return(Some(v)), .. }, .. }) => Some(&**v),
                Some(s) => {
                    c.stmts(std::slice::from_ref(s));
                    None
                }
                None => None,
            };
            match tail {
                Some(t) => {
                    let ty = c.expr(t);
                    if !c.coerce(t, *ret) {
                        c.errs.at(t.sp, format!("the device function returns {ret}, but this is a {ty}"));
                    }
                }
                None => {
                    c.errs.at(*ret_sp, format!("the body must end with the {ret} result (an expression without `;`)"))
                }
            }
        }
    }
    c.work
}

impl Checker<'_> {
    fn declare(&mut self, name: &proc_macro2::Ident, ty: Ty, binding: Binding) {
        self.work += 1;
        let name = name.to_string();
        let scope = self.scopes.last_mut().expect("scope");
        if binding == Binding::Reg {
            scope.1 += 1;
            self.muts_in_scope += 1;
        }
        scope.0.push(name.clone());
        let seq = self.work;
        self.vars.entry(name).or_default().push(Var { ty, binding, seq });
    }

    fn lookup(&mut self, name: &str) -> Option<&Var> {
        self.work += 1;
        self.vars.get(name).and_then(|v| v.last())
    }

    fn open_scope(&mut self) {
        self.scopes.push((Vec::new(), 0));
    }

    fn close_scope(&mut self) {
        let (names, muts) = self.scopes.pop().expect("scope");
        self.muts_in_scope -= muts;
        for n in names {
            self.work += 1;
            if let Some(v) = self.vars.get_mut(&n) {
                v.pop();
            }
        }
    }

    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<(u64, &String)> =
            self.vars.iter().flat_map(|(n, vs)| vs.iter().map(move |v| (v.seq, n))).collect();
        names.sort();
        names.into_iter().map(|(_, n)| n.clone()).collect()
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Let(l) => self.let_(l),
                Stmt::Expr { expr, semi } => {
                    self.expr(expr);
                    // A block's value (`if c { -1 } else { x }`) is typed by its user.
                    if *semi {
                        self.default_lits(expr);
                    }
                }
            }
        }
    }

    /// A block in a new scope; its type is its tail's (Unit without one).
    fn block(&mut self, b: &Block) -> Ty {
        self.open_scope();
        self.stmts(&b.stmts);
        let ty = b.tail().map(|t| t.ty.get()).unwrap_or(Ty::Unit);
        self.close_scope();
        ty
    }

    fn let_(&mut self, l: &Let) {
        let ty = self.expr(&l.init);
        let ty =
            match l.ty {
                Some((want, wsp)) => {
                    if !self.coerce(&l.init, want) {
                        self.errs.push(l.init.sp.error(format!(
                            "mismatched types: `{}` is declared {want}, but the value is a {ty}",
                            l.name
                        )));
                        let _ = wsp;
                    }
                    want
                }
                None => {
                    self.default_lits(&l.init);
                    l.init.ty.get()
                }
            };
        if ty == Ty::Unit {
            self.errs.at(l.init.sp, format!("this expression has no value to bind to `{}`", l.name));
        }
        let binding = if l.mutable {
            if !(ty.is_register() || ty.is_lenient()) {
                self.errs.at(l.sp, format!("`let mut` holds scalars; a {ty} cannot be reassigned (drop the `mut`)"));
            }
            Binding::Reg
        } else {
            Binding::Plain
        };
        l.binding.set(binding);
        l.snapshot.set(binding == Binding::Plain && self.muts_in_scope > 0);
        self.declare(&l.name, ty, binding);
    }

    /// Check an expression, record its type and constness, and return the type.
    pub fn expr(&mut self, e: &Expr) -> Ty {
        if let ExprKind::Binary { .. } = e.kind {
            return self.binary_chain(e);
        }
        self.work += 1;
        let (ty, konst) = self.expr_inner(e);
        e.ty.set(ty);
        e.konst.set(konst);
        ty
    }

    /// A binary expression and the left-nested ones under it (`a + b + c + ..`): the spine
    /// is walked with a loop, its leaf checked first, then each operator bottom-up, so a long
    /// chain does not recurse once per term.
    fn binary_chain(&mut self, e: &Expr) -> Ty {
        let mut spine = vec![e];
        let mut leaf = e;
        while let ExprKind::Binary { lhs, .. } = &leaf.kind {
            leaf = lhs;
            if matches!(leaf.kind, ExprKind::Binary { .. }) {
                spine.push(leaf);
            }
        }
        self.expr(leaf);
        for node in spine.into_iter().rev() {
            self.work += 1;
            let ExprKind::Binary { op, lhs, rhs } = &node.kind else { unreachable!("spine of binaries") };
            let (ty, konst) = self.binary(node, *op, lhs, rhs);
            node.ty.set(ty);
            node.konst.set(konst);
        }
        e.ty.get()
    }

    fn expr_inner(&mut self, e: &Expr) -> (Ty, bool) {
        match &e.kind {
            ExprKind::Int { value, suffix } => match suffix {
                Some(s) => {
                    if !s.fits(*value, false) {
                        self.errs.at(e.sp, format!("literal {value} does not fit in {}", s.name()));
                    }
                    (Ty::Scalar(*s), true)
                }
                None => (Ty::IntLit, true),
            },
            ExprKind::Float { suffix, .. } => (suffix.map(Ty::Scalar).unwrap_or(Ty::FloatLit), false),
            ExprKind::Bool(_) => (Ty::Bool, true),
            ExprKind::Str(_) => {
                self.errs.at(
                    e.sp,
                    "string literals are only accepted as op options, e.g. `T.ptx.fence.proxy_async(\"shared::cta\")`",
                );
                (Ty::Error, false)
            }
            ExprKind::Var { name, binding } => match self.lookup(&name.to_string()).map(|v| (v.ty, v.binding)) {
                Some((ty, b)) => {
                    binding.set(b);
                    (ty, b == Binding::Comptime)
                }
                None => {
                    let n = name.to_string();
                    let names = self.visible_names();
                    let mut msg = format!("cannot find value `{n}` in this kernel");
                    if let Some(s) = nearest(&n, names.iter().map(|s| s.as_str())) {
                        msg.push_str(&format!("\n  help: a local with a similar name exists: `{s}`"));
                    } else if phaser_codegen::registry::lookup(&n).is_some() {
                        msg.push_str(&format!("\n  help: ops live in the `T` namespace: `T.{n}()`"));
                    }
                    self.errs.at(e.sp, msg);
                    (Ty::Error, false)
                }
            },
            ExprKind::Paren(inner) => {
                let t = self.expr(inner);
                (t, inner.konst.get())
            }
            ExprKind::Binary { .. } => unreachable!("`expr` checks binaries as chains"),
            ExprKind::Unary { op, e: inner } => {
                let t = self.expr(inner);
                let k = inner.konst.get();
                match op {
                    UnOp::Not if t == Ty::Bool || t.is_int() || t.is_lenient() => (t, k),
                    UnOp::Neg if t.is_float() || t == Ty::IntLit || t.is_lenient() => (t, false),
                    UnOp::Neg if matches!(t, Ty::Scalar(s) if s.is_signed()) => (t, false),
                    _ => {
                        let sym = if *op == UnOp::Neg { "-" } else { "!" };
                        let hint = if *op == UnOp::Neg && t.is_int() {
                            "\n  help: unsigned values cannot be negated; cast first: `(x as i32)`"
                        } else {
                            ""
                        };
                        self.errs.at(e.sp, format!("cannot apply unary `{sym}` to a {t}{hint}"));
                        (Ty::Error, false)
                    }
                }
            }
            ExprKind::Cast { e: inner, to } => {
                let t = self.expr(inner);
                if t == Ty::IntLit {
                    self.coerce(inner, Ty::Scalar(Scalar::U32));
                } else if t == Ty::FloatLit {
                    self.coerce(inner, Ty::Scalar(Scalar::F32));
                }
                if !(t.is_numeric() || t == Ty::Bool || t.is_lenient()) {
                    self.errs.at(e.sp, format!("cannot cast a {t} to {}", to.name()));
                    return (Ty::Error, false);
                }
                let k = inner.konst.get() && *to == Scalar::U32 && inner.ty.get() == Ty::Scalar(Scalar::U32);
                (Ty::Scalar(*to), k)
            }
            ExprKind::Index { base, idx } => {
                let bt = self.expr(base);
                self.index(idx);
                match bt {
                    Ty::Shared(s) | Ty::Global { elem: s, .. } => (Ty::Scalar(s), false),
                    Ty::Barriers => {
                        self.errs.at(
                            e.sp,
                            "barrier arrays are not indexed; take one barrier's address with `bars.ptr_to([i])`",
                        );
                        (Ty::Error, false)
                    }
                    t if t.is_lenient() => (Ty::Error, false),
                    t => {
                        self.errs
                            .at(base.sp, format!("cannot index a {t}; only shared arrays and buffers are indexed"));
                        (Ty::Error, false)
                    }
                }
            }
            ExprKind::Array(_) => {
                self.errs.at(
                    e.sp,
                    "arrays are only op arguments (`bars.ptr_to([i])`, `T.alloc_shared::<T>([n])`, coordinates)",
                );
                (Ty::Error, false)
            }
            ExprKind::Op { path, path_sp, turbofish, args, args_sp } => {
                (self.op(e, path, *path_sp, *turbofish, args, *args_sp), false)
            }
            ExprKind::Method { recv, name, args } => (self.method(e, recv, name, args), false),
            ExprKind::Call { args, .. } => {
                for a in args {
                    self.expr(a);
                }
                (Ty::Unknown, false)
            }
            ExprKind::If { cond, then, els } => {
                let ct = self.expr(cond);
                self.expect_bool(cond, ct, "an `if` condition");
                let tt = self.block(then);
                match els {
                    None => (Ty::Unit, false),
                    Some(els) => {
                        let et = self.expr(els);
                        if tt == Ty::Unit || et == Ty::Unit {
                            return (Ty::Unit, false);
                        }
                        let (Some(a), Some(b)) = (then.tail(), block_tail(els)) else { return (Ty::Unit, false) };
                        (self.unify(a, b, "the branches of `if`", e.sp), false)
                    }
                }
            }
            ExprKind::Block(b) => (self.block(b), false),
            ExprKind::For { var, start, end, step, body, snapshot } => {
                snapshot.set(self.muts_in_scope > 0);
                self.expr(start);
                self.expr(end);
                let mut t = self.unify(start, end, "the bounds of a range", e.sp);
                if t == Ty::IntLit {
                    self.coerce(start, Ty::Scalar(Scalar::U32));
                    self.coerce(end, Ty::Scalar(Scalar::U32));
                    t = Ty::Scalar(Scalar::U32);
                }
                if !(t.is_int() || t.is_lenient()) {
                    self.errs.at(start.sp.to(end.sp), format!("a `for` range needs integer bounds, found {t}"));
                }
                if let Some(s) = step {
                    self.konst_u32(s, "the `step_by` amount");
                    if s.int_literal() == Some(0) {
                        self.errs.at(s.sp, "a step of 0 never terminates");
                    }
                }
                self.open_scope();
                if var != "_" {
                    self.declare(var, t, Binding::Plain);
                }
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
                self.close_scope();
                (Ty::Unit, false)
            }
            ExprKind::While { cond, body } => {
                let ct = self.expr(cond);
                self.expect_bool(cond, ct, "a `while` condition");
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
                (Ty::Unit, false)
            }
            ExprKind::Loop { body } => {
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
                (Ty::Unit, false)
            }
            ExprKind::Break | ExprKind::Continue => {
                if self.loops == 0 {
                    let w = if matches!(e.kind, ExprKind::Break) { "break" } else { "continue" };
                    self.errs.at(e.sp, format!("`{w}` outside of a loop"));
                }
                (Ty::Unit, false)
            }
            ExprKind::Return(v) => {
                if self.device {
                    self.errs.at(
                        e.sp,
                        "early `return` is not supported in device functions (they are inlined); end the body with the result expression",
                    );
                } else if let Some(v) = v {
                    self.errs
                        .at(v.sp, "a kernel returns nothing; write results into a `&mut [T]` buffer and `return;`");
                }
                (Ty::Unit, false)
            }
            ExprKind::Assign { place, op, value } => {
                self.assign(e, place, *op, value);
                (Ty::Unit, false)
            }
            ExprKind::Invalid => (Ty::Error, false),
        }
    }

    fn expect_bool(&mut self, e: &Expr, t: Ty, what: &str) {
        if t != Ty::Bool && !t.is_lenient() {
            let hint = if t.is_numeric() { "\n  help: compare explicitly, e.g. `x != 0`" } else { "" };
            self.errs.at(e.sp, format!("{what} must be a bool, found {t}{hint}"));
        }
    }

    /// An array index: an integer (a literal is a u32).
    fn index(&mut self, idx: &Expr) {
        let t = self.expr(idx);
        if t == Ty::IntLit {
            self.coerce(idx, Ty::Scalar(Scalar::U32));
        } else if !(t.is_int() || t.is_lenient()) {
            self.errs.at(idx.sp, format!("an index must be an integer, found {t}"));
        }
    }

    /// A compile-time u32 (literals, `#[comptime]` parameters, arithmetic on them).
    pub(crate) fn konst_u32(&mut self, e: &Expr, what: &str) -> Option<i128> {
        let t = self.expr(e);
        if t == Ty::IntLit {
            self.coerce(e, Ty::Scalar(Scalar::U32));
        }
        if t.is_lenient() {
            return None;
        }
        if !e.konst.get() || e.ty.get() != Ty::Scalar(Scalar::U32) {
            let why = if e.konst.get() { format!("it is a {t}") } else { "it is a runtime value".into() };
            self.errs.at(
                e.sp,
                format!("{what} must be a compile-time u32 (a literal or a `#[comptime]` parameter), but {why}"),
            );
            return None;
        }
        e.int_literal()
    }

    /// `l op r` with `l` checked already (see [`Checker::binary_chain`]).
    fn binary(&mut self, e: &Expr, op: BinOp, l: &Expr, r: &Expr) -> (Ty, bool) {
        let (tl, tr) = (l.ty.get(), self.expr(r));
        let konst = l.konst.get() && r.konst.get();
        let sym = op.symbol();
        if op.is_logic() {
            self.expect_bool(l, tl, &format!("the left side of `{sym}`"));
            self.expect_bool(r, tr, &format!("the right side of `{sym}`"));
            return (Ty::Bool, konst);
        }
        if op.is_shift() {
            if tr == Ty::IntLit {
                self.coerce(r, Ty::Scalar(Scalar::U32));
            }
            for (x, t) in [(l, tl), (r, tr)] {
                if !(t.is_int() || t.is_lenient()) {
                    self.errs.at(x.sp, format!("`{sym}` needs integers, found {t}"));
                    return (Ty::Error, false);
                }
            }
            return (tl, konst);
        }
        let t = self.unify(l, r, &format!("`{sym}`"), e.sp);
        if t == Ty::Error {
            return (Ty::Error, false);
        }
        if op.is_comparison() {
            let ok = t.is_numeric() || t.is_lenient() || (t == Ty::Bool && matches!(op, BinOp::Eq | BinOp::Ne));
            if !ok {
                self.errs.at(e.sp, format!("cannot compare {t} values with `{sym}`"));
            }
            if matches!(t, Ty::Scalar(s) if s.bits() == 16 && s.is_float()) {
                self.errs
                    .at(e.sp, format!("{t} comparison: convert to f32 first (`x as f32`); half types are for storage"));
            }
            return (Ty::Bool, konst && t != Ty::FloatLit);
        }
        let ok = if op.is_bitwise() {
            t.is_int() || t == Ty::Bool || t.is_lenient()
        } else {
            t.is_numeric() || t.is_lenient()
        };
        if !ok {
            self.errs.at(e.sp, format!("cannot apply `{sym}` to {t} values"));
            return (Ty::Error, false);
        }
        if let Ty::Scalar(s) = t {
            if s.is_float() && s.bits() == 16 {
                self.errs
                    .at(e.sp, format!("{t} arithmetic: convert to f32 first (`x as f32`); half types are for storage"));
            } else if s.is_float() && op == BinOp::Rem {
                self.errs.at(e.sp, format!("`%` is not supported on {t}"));
            }
        }
        (t, konst && t.is_int())
    }

    fn assign(&mut self, e: &Expr, place: &Expr, op: Option<BinOp>, value: &Expr) {
        let vt = self.expr(value);
        let target_ty = match &place.kind {
            ExprKind::Var { name, binding } => match self.lookup(&name.to_string()).map(|v| (v.ty, v.binding)) {
                None => {
                    self.expr(place);
                    return;
                }
                Some((vty, vbinding)) => {
                    binding.set(vbinding);
                    place.ty.set(vty);
                    if vbinding != Binding::Reg {
                        let what =
                            if vbinding == Binding::Comptime { "a `#[comptime]` parameter" } else { "immutable" };
                        self.errs.at(
                            place.sp,
                            format!(
                                "cannot assign to `{name}`: it is {what}\n  help: declare it mutable: `let mut {name} = ...` (or `mut {name}: T` for a parameter)"
                            ),
                        );
                        return;
                    }
                    vty
                }
            },
            ExprKind::Index { base, idx } => {
                let bt = self.expr(base);
                self.index(idx);
                match bt {
                    Ty::Shared(s) => Ty::Scalar(s),
                    Ty::Global { elem, mutable: true } => Ty::Scalar(elem),
                    Ty::Global { elem, mutable: false } => {
                        self.errs.at(
                            base.sp,
                            format!(
                                "cannot write to a read-only buffer\n  help: declare the parameter `&mut [{}]`",
                                elem.name()
                            ),
                        );
                        return;
                    }
                    t if t.is_lenient() => return,
                    t => {
                        self.errs
                            .at(base.sp, format!("cannot index a {t}; only shared arrays and buffers are indexed"));
                        return;
                    }
                }
            }
            _ => {
                self.errs.at(place.sp, "only `let mut` variables and array elements can be assigned");
                return;
            }
        };
        match op {
            None => {
                if !self.coerce(value, target_ty) {
                    self.errs.at(
                        value.sp,
                        format!("mismatched types: expected {target_ty}, found {vt}{}", as_hint(vt, target_ty)),
                    );
                }
            }
            Some(op) => {
                // `x op= v` checks like `x op v` with x of the target's type.
                let fake = Expr::new(ExprKind::Invalid, place.sp);
                fake.ty.set(target_ty);
                let (t, _) = self.binary_types(e, op, &fake, value);
                if t != Ty::Error && t != target_ty && !t.is_lenient() {
                    self.errs.at(e.sp, format!("`{}=` on a {target_ty} produces a {t}", op.symbol()));
                }
            }
        }
    }

    /// `binary` on already-typed operands (compound assignment).
    fn binary_types(&mut self, e: &Expr, op: BinOp, l: &Expr, r: &Expr) -> (Ty, bool) {
        let tl = l.ty.get();
        let tr = r.ty.get();
        if op.is_logic() || op.is_comparison() {
            self.errs.at(e.sp, format!("`{}=` is not an operator", op.symbol()));
            return (Ty::Error, false);
        }
        if op.is_shift() {
            if tr == Ty::IntLit {
                self.coerce(r, Ty::Scalar(Scalar::U32));
            }
            if !(tl.is_int() && (r.ty.get().is_int() || r.ty.get().is_lenient())) && !tl.is_lenient() {
                self.errs.at(e.sp, format!("`{}=` needs integers", op.symbol()));
            }
            return (tl, false);
        }
        let t = self.unify(l, r, &format!("`{}=`", op.symbol()), e.sp);
        let ok = if op.is_bitwise() {
            t.is_int() || t == Ty::Bool || t.is_lenient()
        } else {
            t.is_numeric() || t.is_lenient()
        };
        if !ok {
            self.errs.at(e.sp, format!("cannot apply `{}=` to a {t}", op.symbol()));
            return (Ty::Error, false);
        }
        (t, false)
    }

    /// Give literals a concrete type when the other side has one; report a mismatch otherwise.
    fn unify(&mut self, a: &Expr, b: &Expr, what: &str, sp: Sp) -> Ty {
        let (ta, tb) = (a.ty.get(), b.ty.get());
        if ta.is_lenient() {
            return if tb.is_lenient() || matches!(tb, Ty::IntLit | Ty::FloatLit) { ta } else { tb };
        }
        if tb.is_lenient() {
            return if matches!(ta, Ty::IntLit | Ty::FloatLit) { tb } else { ta };
        }
        if ta == tb {
            return ta;
        }
        if matches!(ta, Ty::IntLit | Ty::FloatLit) && self.coerce(a, tb) {
            return tb;
        }
        if matches!(tb, Ty::IntLit | Ty::FloatLit) && self.coerce(b, ta) {
            return ta;
        }
        let hint = match (ta, tb) {
            (Ty::IntLit, t) | (t, Ty::IntLit) if t.is_float() => {
                "\n  help: write float literals with a point: `2.0`".to_string()
            }
            (Ty::Scalar(x), Ty::Scalar(y)) => {
                format!("\n  help: convert one side with `as`, e.g. `(.. as {})`", wider(x, y).name())
            }
            (Ty::FloatLit, t) | (t, Ty::FloatLit) if t.is_int() => {
                format!("\n  help: a float literal is not a {t}: write an integer (`1`), or convert the other side (`(.. as f32)`)")
            }
            _ => String::new(),
        };
        self.errs.at(sp, format!("mismatched types in {what}: {ta} and {tb}{hint}"));
        Ty::Error
    }

    /// Make `e` have type `to` (literals adapt); false if it cannot.
    pub(crate) fn coerce(&mut self, e: &Expr, to: Ty) -> bool {
        let from = e.ty.get();
        if from == to || from.is_lenient() || to.is_lenient() {
            return true;
        }
        match (from, to) {
            (Ty::IntLit, Ty::Scalar(s)) if s.is_int() => {
                self.set_lit(e, to);
                true
            }
            (Ty::FloatLit, Ty::Scalar(s)) if s.is_float() => {
                self.set_lit(e, to);
                true
            }
            _ => false,
        }
    }

    /// Literals default to u32 / f32 where nothing else decided.
    pub(crate) fn default_lits(&mut self, e: &Expr) {
        match e.ty.get() {
            Ty::IntLit => self.set_lit(e, Ty::Scalar(Scalar::U32)),
            Ty::FloatLit => self.set_lit(e, Ty::Scalar(Scalar::F32)),
            _ => {}
        }
    }

    fn set_lit(&mut self, e: &Expr, to: Ty) {
        // Down a left-nested chain (`1 + 2 + .. + x`) by a loop, not a call per operator.
        let mut e = e;
        while let ExprKind::Binary { op, lhs, rhs } = &e.kind {
            if op.is_comparison() || op.is_logic() || !matches!(to, Ty::Scalar(_)) {
                break;
            }
            e.ty.set(to);
            if !op.is_shift() {
                self.set_lit(rhs, to);
            }
            e = lhs;
        }
        e.ty.set(to);
        let Ty::Scalar(s) = to else { return };
        match &e.kind {
            ExprKind::Int { value, .. } if !s.fits(*value, false) => {
                self.errs.at(e.sp, format!("literal {value} does not fit in {}", s.name()));
            }
            ExprKind::Unary { op: UnOp::Neg, e: inner } => {
                if let ExprKind::Int { value, .. } = inner.kind {
                    inner.ty.set(to);
                    if !s.is_signed() {
                        self.errs.at(e.sp, format!("cannot negate a {}: it is unsigned", s.name()));
                    } else if !s.fits(value, true) {
                        self.errs.at(e.sp, format!("literal -{value} does not fit in {}", s.name()));
                    }
                } else {
                    self.set_lit(inner, to);
                }
            }
            ExprKind::Unary { e: inner, .. } | ExprKind::Paren(inner) => self.set_lit(inner, to),
            ExprKind::Binary { op, lhs, rhs } if !op.is_comparison() && !op.is_logic() => {
                self.set_lit(lhs, to);
                if !op.is_shift() {
                    self.set_lit(rhs, to);
                }
            }
            ExprKind::If { then, els, .. } => {
                if let Some(t) = then.tail() {
                    self.set_lit(t, to);
                }
                if let Some(t) = els.as_deref().and_then(block_tail) {
                    self.set_lit(t, to);
                }
            }
            ExprKind::Block(b) => {
                if let Some(t) = b.tail() {
                    self.set_lit(t, to);
                }
            }
            _ => {}
        }
    }
}

/// The value-producing tail of an `else` branch (a block or an `else if`).
pub fn block_tail(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Block(b) => b.tail(),
        ExprKind::If { .. } => Some(e),
        _ => None,
    }
}

fn wider(a: Scalar, b: Scalar) -> Scalar {
    if a.is_float() != b.is_float() {
        return if a.is_float() { a } else { b };
    }
    if a.bits() >= b.bits() {
        a
    } else {
        b
    }
}

fn as_hint(from: Ty, to: Ty) -> String {
    match (from, to) {
        (Ty::IntLit, t) if t.is_float() => "\n  help: write float literals with a point: `2.0`".into(),
        (Ty::Scalar(_), Ty::Scalar(t)) => format!("\n  help: convert with `as {}`", t.name()),
        _ => String::new(),
    }
}
