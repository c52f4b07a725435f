//! Stage 2: validation. Names, arity, argument kinds, types, mutability, literal ranges and
//! target support are checked here, each error pointing at the offending tokens. The checker
//! also annotates the AST (types, constness, bindings) for the expansion.

mod named_coords;
mod operand_major;
pub(crate) mod ops;

use crate::parse::ast::*;
use crate::parse::Errors;
use crate::suggest::nearest;
use crate::types::{Scalar, Ty};
use phaser_codegen::arch::limits::TMA_MAX_BOX_DIM;
use phaser_codegen::Target;

struct Var {
    ty: Ty,
    binding: Binding,
    /// Declaration order (suggestions list names as they were declared).
    seq: u64,
    /// A compile-time value the macro knows (a `let` of literals), for range checks.
    value: Option<i128>,
    /// The extents the macro knows of an array, tile or box (`None` per unknown extent).
    shape: Option<Vec<Option<i128>>>,
    /// `let mut` (register arrays: elements may be assigned).
    mutable: bool,
    /// A `for` loop's variable.
    loop_var: bool,
    /// A tensor-map parameter's `#[tma]` facts about the tiles it fills.
    map: Option<std::rc::Rc<operand_major::MapDecl>>,
    /// The tile a tile-typed `let` names part of (`let stage = ring[s]`: `ring`'s `seq`).
    tile_root: Option<u64>,
}

/// A loop being checked: `#[unroll]` loops have no `break`/`continue`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoopKind {
    Runtime,
    Unrolled,
}

/// Most iterations an `#[unroll]` loop may have (each is a copy of the body): the builder's.
const MAX_UNROLL: i128 = phaser_codegen::builder::unroll::MAX_UNROLL as i128;

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
    loops: Vec<LoopKind>,
    device: bool,
    /// Each TMA-filled tile's majorness, by binding (`Var::seq`).
    fills: std::collections::HashMap<u64, operand_major::Fill>,
    /// MMA operands to hold to their tiles' majorness once the body is checked.
    mma_uses: Vec<operand_major::MmaUse>,
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
        loops: Vec::new(),
        device: target.is_none(),
        fills: Default::default(),
        mma_uses: Vec::new(),
    };
    for p in &f.params {
        let registers = matches!(p.ty, Ty::Registers { .. });
        let binding = if p.comptime {
            Binding::Comptime
        } else if p.mutable && !registers {
            Binding::Reg
        } else {
            Binding::Plain
        };
        c.declare(&p.name, p.ty, binding);
        if let Some(attr) = &p.tma {
            let decl = operand_major::MapDecl {
                dims: attr.dims.as_ref().map(|(d, _)| d.iter().map(|n| n.to_string()).collect()),
                major: Some(attr.major.map_or((phaser_codegen::ir::Major::K, false), |(m, _)| (m, true))),
            };
            if let Some(v) = c.vars.get_mut(&p.name.to_string()).and_then(|v| v.last_mut()) {
                v.map = Some(std::rc::Rc::new(decl));
            }
        }
        // A `mut` register-array parameter is the caller's array (like `&mut [T; N]`).
        if registers && p.mutable {
            c.set_known(&p.name, None, None, true);
        }
    }
    // A tensor map's box: compile-time u32s (consts, `#[comptime]` parameters); its literal
    // extents let the checker compare it with the tiles it fills.
    for p in &f.params {
        if let Some((dims, _)) = p.tma.as_ref().and_then(|t| t.box_dims.as_ref()) {
            let mut shape = Vec::new();
            for d in dims {
                c.konst_u32(d, &format!("a box dimension of `{}`", p.name));
                let v = c.known(d);
                if v == Some(0) || v.is_some_and(|v| v > TMA_MAX_BOX_DIM as i128) {
                    c.errs.at(
                        d.sp,
                        format!("a TMA box dimension is 1..={TMA_MAX_BOX_DIM} elements, found {}", v.unwrap_or(0)),
                    );
                }
                shape.push(v);
            }
            c.set_shape(&p.name, shape);
        }
    }
    if let Some(t) = target {
        // Where the target has no `setmaxnreg`, the target check says so (one error).
        let inc = phaser_codegen::registry::lookup("ptx.setmaxnreg.inc").expect("in the registry");
        if phaser_codegen::registry::probe(t, inc, &[], None).unavailable.is_none() {
            check_register_cap(f, c.errs);
        }
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
    c.check_mma_majors();
    c.work
}

/// `setmaxnreg` needs a register count at entry (the rule: `arch::limits`), reported here at
/// the first `setmaxnreg`'s span; `finish` adds `.minnctapersm 1` to a declared block shape.
pub fn check_register_cap(f: &FnDef, errs: &mut Errors) {
    let mut setmaxnreg = None;
    let (mut cap, mut shape) = (false, false);
    visit_ops(&f.body, &mut |path, sp| {
        if path.starts_with("ptx.setmaxnreg.") && setmaxnreg.is_none() {
            setmaxnreg = Some(sp);
        }
        cap |= path == "max_registers";
        shape |= matches!(path, "require_block" | "max_block");
    });
    if let Some(sp) = setmaxnreg {
        if let Some(p) = phaser_codegen::arch::limits::setmaxnreg_entry_count_problem(cap, shape) {
            errs.at(sp, p);
        }
    }
}

/// Every op call in a block, with the span of its path.
fn visit_ops(b: &Block, f: &mut dyn FnMut(&str, Sp)) {
    for s in &b.stmts {
        match s {
            Stmt::Let(l) => visit_expr_ops(&l.init, f),
            Stmt::Expr { expr, .. } => visit_expr_ops(expr, f),
        }
    }
}

fn visit_expr_ops(e: &Expr, f: &mut dyn FnMut(&str, Sp)) {
    match &e.kind {
        ExprKind::Op { path, path_sp, args, .. } => {
            f(path, *path_sp);
            args.iter().for_each(|a| visit_expr_ops(a, f));
        }
        ExprKind::Paren(x) | ExprKind::Unary { e: x, .. } | ExprKind::Cast { e: x, .. } => visit_expr_ops(x, f),
        ExprKind::Return(Some(x)) => visit_expr_ops(x, f),
        ExprKind::Binary { .. } => {
            // Down a left-nested chain (`a + b + ..`) by a loop, not a call per operator.
            let mut node = e;
            while let ExprKind::Binary { lhs, rhs, .. } = &node.kind {
                visit_expr_ops(rhs, f);
                node = lhs;
            }
            visit_expr_ops(node, f);
        }
        ExprKind::Index { base, idx } => {
            visit_expr_ops(base, f);
            visit_expr_ops(idx, f);
        }
        ExprKind::Assign { place, value, .. } => {
            visit_expr_ops(place, f);
            visit_expr_ops(value, f);
        }
        ExprKind::Array(v) | ExprKind::Call { args: v, .. } => v.iter().for_each(|a| visit_expr_ops(a, f)),
        ExprKind::Method { recv, args, .. } => {
            visit_expr_ops(recv, f);
            args.iter().for_each(|a| visit_expr_ops(a, f));
        }
        ExprKind::If { cond, then, els } => {
            visit_expr_ops(cond, f);
            visit_ops(then, f);
            if let Some(x) = els {
                visit_expr_ops(x, f);
            }
        }
        ExprKind::Block(b) | ExprKind::Loop { body: b } => visit_ops(b, f),
        ExprKind::While { cond, body } => {
            visit_expr_ops(cond, f);
            visit_ops(body, f);
        }
        ExprKind::For { start, end, step, body, .. } => {
            visit_expr_ops(start, f);
            visit_expr_ops(end, f);
            if let Some(s) = step {
                visit_expr_ops(s, f);
            }
            visit_ops(body, f);
        }
        _ => {}
    }
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
        let var = Var {
            ty,
            binding,
            seq,
            value: None,
            shape: None,
            mutable: binding == Binding::Reg,
            loop_var: false,
            map: None,
            tile_root: None,
        };
        self.vars.entry(name).or_default().push(var);
    }

    /// The innermost binding of `name`, without counting work (for what the macro knows).
    fn peek(&self, name: &str) -> Option<&Var> {
        self.vars.get(name).and_then(|v| v.last())
    }

    /// Record what the macro knows of the innermost variable `name`.
    fn set_known(
        &mut self,
        name: &proc_macro2::Ident,
        value: Option<i128>,
        shape: Option<Vec<Option<i128>>>,
        mutable: bool,
    ) {
        if let Some(v) = self.vars.get_mut(&name.to_string()).and_then(|v| v.last_mut()) {
            v.value = value;
            v.shape = shape;
            v.mutable |= mutable;
        }
    }

    fn mark_loop_var(&mut self, name: &proc_macro2::Ident) {
        if let Some(v) = self.vars.get_mut(&name.to_string()).and_then(|v| v.last_mut()) {
            v.loop_var = true;
        }
    }

    fn set_shape(&mut self, name: &proc_macro2::Ident, shape: Vec<Option<i128>>) {
        self.set_known(name, None, Some(shape), false);
    }

    /// The value of a compile-time u32 or bool expression, when the macro can tell (literals,
    /// `let`s of literals, arithmetic on them); `const` items and `#[comptime]` parameters are
    /// only known when the kernel is built, and so is an overflow (a build error, as in Rust).
    pub(crate) fn known(&self, e: &Expr) -> Option<i128> {
        if let Some(v) = e.int_literal() {
            return Some(v);
        }
        if !e.konst.get() {
            return None;
        }
        match &e.kind {
            ExprKind::Var { name, .. } => self.peek(&name.to_string()).and_then(|v| v.value),
            ExprKind::Paren(x) => self.known(x),
            ExprKind::Cast { e: x, .. } => self.known(x),
            ExprKind::Binary { .. } => {
                // A left-nested chain is folded from its leaf by a loop (no call per operator).
                let (leaf, spine) = e.binary_spine();
                let mut acc = self.known(leaf)?;
                for node in spine {
                    let ExprKind::Binary { op, rhs, .. } = &node.kind else { unreachable!("spine of binaries") };
                    acc = Self::fold(*op, acc, self.known(rhs)?)?;
                }
                Some(acc)
            }
            ExprKind::If { cond, then, els } => {
                let c = self.known(cond)?;
                if c != 0 {
                    then.tail().and_then(|t| self.known(t))
                } else {
                    els.as_deref().and_then(block_tail).and_then(|t| self.known(t))
                }
            }
            _ => None,
        }
    }

    /// `a op b` of known compile-time values, by the constant evaluator the build uses
    /// (`phaser_codegen::eval`); `None` where the build decides (an overflow or a division by
    /// zero is a build error there, naming the values).
    fn fold(op: BinOp, a: i128, b: i128) -> Option<i128> {
        if let Some(arith) = op.arith() {
            let (a, b) = (u32::try_from(a).ok()?, u32::try_from(b).ok()?);
            return phaser_codegen::eval::fold_u32(arith, a, b).ok().map(i128::from);
        }
        let truth = match op {
            BinOp::Eq => a == b,
            BinOp::Ne => a != b,
            BinOp::Lt => a < b,
            BinOp::Le => a <= b,
            BinOp::Gt => a > b,
            BinOp::Ge => a >= b,
            BinOp::And => a != 0 && b != 0,
            BinOp::Or => a != 0 || b != 0,
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::Div
            | BinOp::Rem
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::Shl
            | BinOp::Shr => unreachable!("arithmetic is folded above"),
        };
        Some(truth as i128)
    }

    /// The extents the macro knows of an array, tile, register array or box expression.
    fn shape_of(&self, e: &Expr) -> Option<Vec<Option<i128>>> {
        match &e.kind {
            ExprKind::Var { name, .. } => self.peek(&name.to_string()).and_then(|v| v.shape.clone()),
            ExprKind::Paren(x) => self.shape_of(x),
            ExprKind::Index { base, .. } => self.shape_of(base).filter(|s| s.len() > 1).map(|s| s[1..].to_vec()),
            ExprKind::Op { path, args, .. } => match (path.as_str(), args.first()) {
                ("alloc_shared" | "registers", Some(Expr { kind: ExprKind::Array(v), .. })) => {
                    Some(v.iter().map(|x| self.known(x)).collect())
                }
                ("alloc_barriers", Some(n)) => Some(vec![self.known(n)]),
                _ => None,
            },
            _ => None,
        }
    }

    /// The variable an index chain (`acc[i][j]`) starts from.
    fn root_var(&self, e: &Expr) -> Option<(String, &Var)> {
        match &e.kind {
            ExprKind::Var { name, .. } => self.peek(&name.to_string()).map(|v| (name.to_string(), v)),
            ExprKind::Index { base, .. } | ExprKind::Paren(base) => self.root_var(base),
            _ => None,
        }
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
        if let (ExprKind::Var { name, .. }, Ty::Registers { .. }) = (&l.init.kind, ty) {
            self.errs.at(
                l.init.sp,
                format!("a register array is not copied: index `{name}` itself (`{name}[i]`), or make a new one with `T.registers`"),
            );
        }
        // A pipeline state is its registers: a second name would alias them, so advancing one
        // name would move the other.
        if let (ExprKind::Var { name, .. }, Ty::PipelineState) = (&l.init.kind, ty) {
            self.errs.at(
                l.init.sp,
                format!(
                    "a pipeline state is not copied by `let`: `{}` would be another name for `{name}` (advancing one \
                     moves both); use `{name}` itself, or make an independent copy with `T.pipeline.clone_state({name})`",
                    l.name
                ),
            );
        }
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
        let registers = matches!(ty, Ty::Registers { .. });
        let compile_time = !l.mutable && l.init.konst.get() && matches!(ty, Ty::Scalar(Scalar::U32) | Ty::Bool);
        let binding = if l.mutable && !registers {
            if !(ty.is_register() || ty.is_lenient()) {
                self.errs.at(l.sp, format!("`let mut` holds scalars; a {ty} cannot be reassigned (drop the `mut`)"));
            }
            Binding::Reg
        } else if compile_time {
            Binding::Const
        } else {
            Binding::Plain
        };
        l.binding.set(binding);
        l.snapshot.set(binding == Binding::Plain && self.muts_in_scope > 0);
        if binding == Binding::Plain {
            l.copy.set(reads_register_element(&l.init));
        }
        let (value, shape) = (self.known(&l.init), self.shape_of(&l.init));
        let tile_root = if matches!(ty, Ty::Tile { .. }) { self.tile_id(&l.init) } else { None };
        self.declare(&l.name, ty, binding);
        self.set_known(&l.name, if compile_time { value } else { None }, shape, l.mutable);
        if let Some(v) = self.vars.get_mut(&l.name.to_string()).and_then(|v| v.last_mut()) {
            v.tile_root = tile_root;
        }
    }

    /// Check an expression, record its type and constness, and return the type.
    pub fn expr(&mut self, e: &Expr) -> Ty {
        if let ExprKind::Binary { .. } = e.kind {
            return self.binary_chain(e);
        }
        self.work += 1;
        let (ty, konst) = self.expr_inner(e);
        let ty = self.refuse_fp8_value(e, ty);
        e.ty.set(ty);
        e.konst.set(konst);
        ty
    }

    /// An expression whose value would be FP8 (an element of an FP8 buffer, a cast, a register
    /// array) is an error: FP8 lives in memory only (`arch::check::fp8_register_problem`).
    fn refuse_fp8_value(&mut self, e: &Expr, ty: Ty) -> Ty {
        match ty {
            Ty::Scalar(s) | Ty::Registers { elem: s, .. } | Ty::Vector(s, _) if s.is_fp8() => {
                self.errs.at(e.sp, crate::parse::fp8_value_message(s));
                Ty::Error
            }
            _ => ty,
        }
    }

    /// A binary expression and the left-nested ones under it (`a + b + c + ..`): the spine
    /// is walked with a loop, its leaf checked first, then each operator bottom-up, so a long
    /// chain does not recurse once per term.
    fn binary_chain(&mut self, e: &Expr) -> Ty {
        let (leaf, spine) = e.binary_spine();
        self.expr(leaf);
        for node in spine {
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
                    (ty, matches!(b, Binding::Comptime | Binding::Const))
                }
                // An UPPER_CASE name the kernel does not bind is a `const` item outside it:
                // rustc checks it is a `u32` where the expansion reads it.
                None if crate::parse::is_const_name(&name.to_string()) => {
                    binding.set(Binding::Item);
                    (Ty::Scalar(Scalar::U32), true)
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
            ExprKind::Item(_) => (Ty::Scalar(Scalar::U32), true),
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
                    // `-SCALE`: the item's type is rustc's (see `item_typed`).
                    UnOp::Neg if item_typed(inner) => (t, k),
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
                if let Ty::Vector(s, n) = bt {
                    return (self.vector_index(idx, s, n), false);
                }
                self.index(idx);
                self.index_range(base, idx);
                match bt {
                    Ty::Shared(s) | Ty::Global { elem: s, .. } | Ty::RemoteShared(s) => (Ty::Scalar(s), false),
                    Ty::Tile { elem, rank, layout } => {
                        (if rank > 1 { Ty::Tile { elem, rank: rank - 1, layout } } else { Ty::Scalar(elem) }, false)
                    }
                    Ty::Registers { elem, rank } => {
                        self.register_index(idx);
                        (if rank > 1 { Ty::Registers { elem, rank: rank - 1 } } else { Ty::Scalar(elem) }, false)
                    }
                    Ty::Barriers => {
                        self.errs.at(
                            e.sp,
                            "barrier arrays are not indexed; take one barrier's address with `bars.ptr_to([i])`",
                        );
                        (Ty::Error, false)
                    }
                    t if t.is_lenient() => (Ty::Error, false),
                    t => {
                        self.errs.at(
                            base.sp,
                            format!(
                                "cannot index a {t}; shared arrays, tiles, register arrays and buffers are indexed"
                            ),
                        );
                        (Ty::Error, false)
                    }
                }
            }
            ExprKind::Array(_) => {
                self.errs.at(
                    e.sp,
                    "arrays are only op arguments (`bars.ptr_to([i])`, `T.alloc_shared::<T>([n])`, coordinates); for an array of values use `T.registers::<T>([n])`",
                );
                (Ty::Error, false)
            }
            ExprKind::Op { path, path_sp, turbofish, args, args_sp, implied } => {
                (self.op(e, path, *path_sp, *turbofish, args, *args_sp, implied), false)
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
                        let t = self.unify(a, b, "the branches of `if`", e.sp);
                        // `if` on compile-time values with compile-time branches (and nothing else
                        // in them) is compile-time: `let n = if BIG { 128 } else { 64 };`.
                        let pure = then.stmts.len() == 1
                            && matches!(&els.kind, ExprKind::Block(b) if b.stmts.len() == 1)
                            || matches!(els.kind, ExprKind::If { .. }) && then.stmts.len() == 1;
                        let konst = cond.konst.get() && a.konst.get() && b.konst.get() && pure;
                        (t, konst)
                    }
                }
            }
            ExprKind::Block(b) => (self.block(b), false),
            ExprKind::For { unroll: Some(usp), var, start, end, step, body, .. } => {
                self.unrolled_for(*usp, var, start, end, step.as_deref(), body);
                (Ty::Unit, false)
            }
            ExprKind::For { unroll: None, var, start, end, step, body, snapshot } => {
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
                    self.mark_loop_var(var);
                }
                self.loops.push(LoopKind::Runtime);
                self.block(body);
                self.loops.pop();
                self.close_scope();
                (Ty::Unit, false)
            }
            ExprKind::While { cond, body } => {
                let ct = self.expr(cond);
                self.expect_bool(cond, ct, "a `while` condition");
                self.loops.push(LoopKind::Runtime);
                self.block(body);
                self.loops.pop();
                (Ty::Unit, false)
            }
            ExprKind::Loop { body } => {
                self.loops.push(LoopKind::Runtime);
                self.block(body);
                self.loops.pop();
                (Ty::Unit, false)
            }
            ExprKind::Break | ExprKind::Continue => {
                let w = if matches!(e.kind, ExprKind::Break) { "break" } else { "continue" };
                match self.loops.last() {
                    None => self.errs.at(e.sp, format!("`{w}` outside of a loop")),
                    Some(LoopKind::Unrolled) => self.errs.at(
                        e.sp,
                        format!(
                            "`{w}` in an `#[unroll]` loop: its iterations are copies of the body, not a loop\n  help: \
                             drop `#[unroll]` to make it a runtime loop, or guard the rest of the body with an `if`"
                        ),
                    ),
                    Some(LoopKind::Runtime) => {}
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

    /// `v[i]` of an `n`-element vector: `i` must be a compile-time index below `n` (the
    /// elements are separate registers).
    fn vector_index(&mut self, idx: &Expr, s: Scalar, n: u8) -> Ty {
        let before = self.errs.0.len();
        let Some(i) = self.konst_u32(idx, "the index of a vector") else {
            // A `#[comptime]` index is checked when the kernel is built.
            return if self.errs.0.len() == before { Ty::Scalar(s) } else { Ty::Error };
        };
        if i >= n as i128 {
            self.errs.at(idx.sp, format!("index {i} is out of bounds for a `[{}; {n}]` vector", s.name()));
            return Ty::Error;
        }
        Ty::Scalar(s)
    }

    /// A literal index into an array whose extent the macro knows must be inside it.
    fn index_range(&mut self, base: &Expr, idx: &Expr) {
        let Some(shape) = self.shape_of(base) else { return };
        if let (Some(Some(n)), Some(i)) = (shape.first(), self.known(idx)) {
            if i < 0 || i >= *n {
                let what = match base.ty.get() {
                    Ty::Registers { .. } => "register array dimension",
                    Ty::Tile { .. } => "tile dimension",
                    _ => "array",
                };
                self.errs.at(idx.sp, format!("index {i} is out of bounds for a {what} of {n}"));
            }
        }
    }

    /// A register array is indexed by compile-time values only: ptxas keeps it in registers.
    fn register_index(&mut self, idx: &Expr) {
        if !idx.konst.get() && !idx.ty.get().is_lenient() {
            self.errs.at(
                idx.sp,
                "a register array is indexed with compile-time values only (literals, `const` items, `#[comptime]` \
                 parameters, `#[unroll]` loop variables): a runtime index would put the array in local memory\n  \
                 help: unroll the loop: `#[unroll] for i in 0..N { .. }`",
            );
        }
    }

    /// `#[unroll] for i in a..b { .. }`: compile-time bounds; `i` is compile-time in the body.
    fn unrolled_for(
        &mut self,
        usp: Sp,
        var: &proc_macro2::Ident,
        start: &Expr,
        end: &Expr,
        step: Option<&Expr>,
        body: &Block,
    ) {
        let a = self.konst_u32(start, "the start of an `#[unroll]` range");
        let b = self.konst_u32(end, "the end of an `#[unroll]` range");
        let s = match step {
            Some(s) => {
                let v = self.konst_u32(s, "the `step_by` amount");
                if v == Some(0) {
                    self.errs.at(s.sp, "a step of 0 never terminates");
                }
                v
            }
            None => Some(1),
        };
        if let (Some(a), Some(b), Some(s)) = (a, b, s) {
            let trips = if b > a && s > 0 { (b - a + s - 1) / s } else { 0 };
            if trips > MAX_UNROLL {
                self.errs.at(
                    usp.to(end.sp),
                    format!("`#[unroll]` of {trips} iterations (at most {MAX_UNROLL}): each is a copy of the body; drop `#[unroll]` for a runtime loop"),
                );
            }
        }
        self.open_scope();
        if var != "_" {
            self.declare(var, Ty::Scalar(Scalar::U32), Binding::Const);
            self.mark_loop_var(var);
        }
        self.loops.push(LoopKind::Unrolled);
        self.block(body);
        self.loops.pop();
        self.close_scope();
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
                format!(
                    "{what} must be a compile-time u32 (a literal, a `const` item, a `#[comptime]` parameter, or a \
                     `let` of those), but {why}"
                ),
            );
            return None;
        }
        self.known(e)
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
            ExprKind::Var { name, binding } => match self
                .lookup(&name.to_string())
                .map(|v| (v.ty, v.binding, v.loop_var))
            {
                None if crate::parse::is_const_name(&name.to_string()) => {
                    self.errs
                        .at(place.sp, format!("cannot assign to `{name}`: it is a `const` item outside the kernel"));
                    return;
                }
                None => {
                    self.expr(place);
                    return;
                }
                Some((vty, vbinding, loop_var)) => {
                    binding.set(vbinding);
                    place.ty.set(vty);
                    if loop_var {
                        self.errs.at(
                            place.sp,
                            format!(
                                "cannot assign to `{name}`: it is the loop's variable (each iteration has its own)\n  \
                                 help: copy it first: `let mut {name}_ = {name};`"
                            ),
                        );
                        return;
                    }
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
                self.index_range(base, idx);
                match bt {
                    Ty::Shared(s) | Ty::RemoteShared(s) => Ty::Scalar(s),
                    Ty::Tile { elem, rank: 1, .. } => Ty::Scalar(elem),
                    Ty::Registers { elem, rank: 1 } => {
                        self.register_index(idx);
                        match self.root_var(base).filter(|(_, v)| !v.mutable).map(|(n, _)| n) {
                            Some(n) => {
                                self.errs.at(
                                    place.sp,
                                    format!("cannot assign to an element of `{n}`: it is immutable\n  help: declare it mutable: `let mut {n} = T.registers::<..>(..)`"),
                                );
                                return;
                            }
                            _ => Ty::Scalar(elem),
                        }
                    }
                    Ty::Tile { elem, rank, layout } => {
                        let sub = Ty::Tile { elem, rank: rank - 1, layout };
                        self.errs.at(
                            place.sp,
                            format!("this is a {sub}, not an element: index every dimension (`x[i][j] = v`)"),
                        );
                        return;
                    }
                    Ty::Registers { elem, rank } => {
                        let sub = Ty::Registers { elem, rank: rank - 1 };
                        self.errs.at(
                            place.sp,
                            format!("this is a {sub}, not an element: index every dimension (`x[i][j] = v`)"),
                        );
                        return;
                    }
                    Ty::Global { elem, mutable: true } => Ty::Scalar(elem),
                    Ty::Vector(..) => {
                        self.errs.at(
                            base.sp,
                            format!("cannot assign to an element of a {bt}: a vector load's values are read-only\n  help: bind the element to a `let mut` first, or store with `T.st.v4(arr, idx, a, b, c, d)`"),
                        );
                        return;
                    }
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
            ExprKind::Item(p) => {
                let n = quote::quote!(#p).to_string().replace(' ', "");
                self.errs.at(place.sp, format!("cannot assign to `{n}`: it is a `const` item"));
                return;
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
        // A `const` item's type is rustc's: it takes the other side's (`x * SCALE`,
        // `SCALE * 2.0`), and the expansion has rustc check it at the use.
        // With a float literal the type is still open (`HALF * 3.0` may be an f64): the
        // expression stays item-typed until its use decides, else it is an f32
        // (`default_lits`).
        let provisional = |e: &Expr, t: Ty| item_typed(e) && t == Ty::Scalar(Scalar::U32);
        if provisional(a, ta) && tb == Ty::FloatLit || provisional(b, tb) && ta == Ty::FloatLit {
            return Ty::Scalar(Scalar::U32);
        }
        if provisional(a, ta) && matches!(tb, Ty::Scalar(_)) {
            self.retype_items(a, tb);
            return tb;
        }
        if provisional(b, tb) && matches!(ta, Ty::Scalar(_)) {
            self.retype_items(b, ta);
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
            // A `const` item (or arithmetic on items and float literals) takes the type its
            // use gives it; rustc checks the item has it (see `item_typed`).
            (Ty::Scalar(Scalar::U32), Ty::Scalar(_)) if item_typed(e) => {
                self.retype_items(e, to);
                true
            }
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

    /// Give the items of an [`item_typed`] expression (and its float literals) the type `to`.
    fn retype_items(&mut self, e: &Expr, to: Ty) {
        e.ty.set(to);
        match &e.kind {
            ExprKind::Paren(inner) | ExprKind::Unary { op: UnOp::Neg, e: inner } => self.retype_items(inner, to),
            ExprKind::Binary { lhs, rhs, .. } => {
                for side in [lhs, rhs] {
                    if item_typed(side) {
                        self.retype_items(side, to);
                    } else {
                        self.coerce(side, to);
                    }
                }
            }
            _ => {}
        }
    }

    /// Literals default to u32 / f32 where nothing else decided.
    pub(crate) fn default_lits(&mut self, e: &Expr) {
        if e.ty.get() == Ty::Scalar(Scalar::U32) && item_typed(e) && has_float_literal(e) {
            self.retype_items(e, Ty::Scalar(Scalar::F32));
            return;
        }
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

/// Whether an expression's value may be a register array's element register (which a `let`
/// must copy: the array's element may be assigned later).
pub fn reads_register_element(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Index { base, .. } => matches!(base.ty.get(), Ty::Registers { .. }),
        ExprKind::Paren(x) => reads_register_element(x),
        ExprKind::Block(b) => b.tail().is_some_and(reads_register_element),
        _ => false,
    }
}

/// Whether `e`'s type comes only from the `const` items in it: an item, or negation and
/// arithmetic of items and float literals (`SCALE * LOG2_E`, `-SCALE`, `SCALE * 0.5`). The
/// macro cannot see an item's type, so such an expression is a `u32` until its use gives it
/// another (a float operand, a declared `let` type, an op's argument); the expansion then
/// reads each item as that type (`let t: f32 = SCALE;`), so rustc checks it at the use.
pub(crate) fn item_typed(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Item(_) => true,
        ExprKind::Var { binding, .. } => binding.get() == Binding::Item,
        ExprKind::Paren(inner) | ExprKind::Unary { op: UnOp::Neg, e: inner } => item_typed(inner),
        ExprKind::Binary { op, lhs, rhs } if !op.is_comparison() && !op.is_logic() && !op.is_shift() => {
            let part = |x: &Expr| item_typed(x) || matches!(x.kind, ExprKind::Float { .. });
            part(lhs) && part(rhs) && (item_typed(lhs) || item_typed(rhs))
        }
        _ => false,
    }
}

/// Whether an [`item_typed`] expression has a float literal (`SCALE * 2.0`): then its type is
/// a float, f32 unless its use says otherwise.
fn has_float_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Float { .. } => true,
        ExprKind::Paren(inner) | ExprKind::Unary { e: inner, .. } => has_float_literal(inner),
        ExprKind::Binary { lhs, rhs, .. } => has_float_literal(lhs) || has_float_literal(rhs),
        _ => false,
    }
}
