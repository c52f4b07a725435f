//! The DSL AST: what the kernel body means, with a span on every node. The checker fills in
//! each expression's type (`ty`), whether it is a compile-time constant (`konst`) and how
//! variables are bound; the expansion reads those.

use crate::types::{Scalar, Ty};
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, TokenStreamExt};
use std::cell::Cell;

/// A source range (first and last token), for diagnostics that underline a whole construct.
#[derive(Clone, Copy, Debug)]
pub struct Sp {
    pub start: Span,
    pub end: Span,
}

impl Sp {
    pub fn of<T: ToTokens + ?Sized>(t: &T) -> Sp {
        let ts = t.to_token_stream();
        let mut it = ts.into_iter();
        let first = it.next();
        let last = it.last();
        let start = first.as_ref().map(open_span).unwrap_or_else(Span::call_site);
        let end = last.as_ref().map(close_span).or_else(|| first.as_ref().map(close_span)).unwrap_or(start);
        Sp { start, end }
    }
    pub fn to(self, other: Sp) -> Sp {
        Sp { start: self.start, end: other.end }
    }
    pub fn error(self, msg: impl std::fmt::Display) -> syn::Error {
        syn::Error::new_spanned(self, msg)
    }
}

fn open_span(t: &TokenTree) -> Span {
    match t {
        TokenTree::Group(g) => g.span_open(),
        t => t.span(),
    }
}
fn close_span(t: &TokenTree) -> Span {
    match t {
        TokenTree::Group(g) => g.span_close(),
        t => t.span(),
    }
}

impl ToTokens for Sp {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.append(Ident::new("__start", self.start));
        tokens.append(Ident::new("__end", self.end));
    }
}

/// A kernel or device function.
pub struct FnDef {
    pub kind: FnKind,
    pub attrs: Vec<syn::Attribute>,
    pub vis: syn::Visibility,
    pub name: Ident,
    pub params: Vec<Param>,
    /// Device functions only: the result type.
    pub ret: Option<(Ty, Sp)>,
    pub body: Block,
}

pub enum FnKind {
    Kernel { target: phaser_codegen::Target },
    Device,
}

pub struct Param {
    pub name: Ident,
    pub ty: Ty,
    pub comptime: bool,
    pub mutable: bool,
    /// `#[tma(box = [rows, cols], swizzle = "128B")]` on a tensor map.
    pub tma: Option<TmaAttr>,
}

/// What `#[tma(..)]` declares of a tensor-map parameter.
pub struct TmaAttr {
    /// The box, outermost first (like a tile's shape); compile-time u32 expressions.
    pub box_dims: Option<(Vec<Expr>, Sp)>,
    pub swizzle: Option<(phaser_codegen::ir::Swizzle, Sp)>,
    /// `dims = [m, k]`: the names of the map's dimensions, outermost first; coordinates may
    /// then be given by name (`[m = m0, k = k0]`), and the checker holds them to this order.
    pub dims: Option<(Vec<Ident>, Sp)>,
    /// `major = "mn"`: which dimension of a wgmma operand the box's contiguous (inner)
    /// dimension is; a declared `#[tma]` without it is K-major. Tiles it fills carry it.
    pub major: Option<(phaser_codegen::ir::Major, Sp)>,
}

/// Choices the checker fills in for omitted arguments of one op call (shared with the
/// checker, which may learn them only after the call: a tile filled later in the text).
pub type ImpliedArgs = std::rc::Rc<std::cell::RefCell<Vec<(usize, &'static str)>>>;

/// A named tensor coordinate (`m = m0` in `[m = m0, k = k0]`): its name and value.
pub fn named_coord(e: &Expr) -> Option<(&Ident, &Expr)> {
    match &e.kind {
        ExprKind::Assign { place, op: None, value } => match &place.kind {
            ExprKind::Var { name, .. } => Some((name, value)),
            _ => None,
        },
        _ => None,
    }
}

/// A coordinate's value, named or not.
pub fn coord_value(e: &Expr) -> &Expr {
    named_coord(e).map_or(e, |(_, v)| v)
}

pub struct Block {
    pub stmts: Vec<Stmt>,
}

impl Block {
    /// The value-producing last expression (no `;`), if any.
    pub fn tail(&self) -> Option<&Expr> {
        match self.stmts.last() {
            Some(Stmt::Expr { expr, semi: false }) => Some(expr),
            _ => None,
        }
    }
}

pub enum Stmt {
    Let(Let),
    Expr { expr: Expr, semi: bool },
}

pub struct Let {
    pub name: Ident,
    pub mutable: bool,
    pub ty: Option<(Ty, Sp)>,
    pub init: Expr,
    pub sp: Sp,
    /// Set by the checker: how the expansion binds the variable.
    pub binding: Cell<Binding>,
    /// Set by the checker: whether a `let mut` variable is in scope, which an immutable
    /// binding must not alias (`let waited = phase;` copies `phase`'s register: the builder
    /// knows which registers are `let mut` variables, see `KernelBuilder::snapshot`).
    pub snapshot: Cell<bool>,
    /// Set by the checker: the value is a register array's element, which the binding copies
    /// (a later `acc[i] = ..` must not change it).
    pub copy: Cell<bool>,
}

/// How a variable is held while the IR is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Binding {
    /// A Rust value (`Value` or a builder handle) used as is.
    #[default]
    Plain,
    /// A `let mut` register (`Reg`): read as `Value::Reg(x)`, written with `assign`.
    Reg,
    /// A `#[comptime]` parameter: a Rust `u32`.
    Comptime,
    /// A compile-time `let` or an `#[unroll]` loop variable: a Rust `u32` or `bool`.
    Const,
    /// A `const` item outside the kernel (an unbound UPPER_CASE name): a Rust `u32` by path.
    Item,
}

pub struct Expr {
    pub kind: ExprKind,
    pub sp: Sp,
    pub ty: Cell<Ty>,
    pub konst: Cell<bool>,
}

impl Expr {
    /// A left-nested chain of binary operators (`a + b + c + ..`) as its leaf (the innermost
    /// left operand that is not a binary) and its binaries from the innermost out. Every pass
    /// walks a chain through this loop, so a long chain is not one recursion per term.
    pub fn binary_spine(&self) -> (&Expr, Vec<&Expr>) {
        let mut spine = vec![self];
        let mut leaf = self;
        while let ExprKind::Binary { lhs, .. } = &leaf.kind {
            leaf = lhs;
            if matches!(leaf.kind, ExprKind::Binary { .. }) {
                spine.push(leaf);
            }
        }
        spine.reverse();
        (leaf, spine)
    }
    pub fn new(kind: ExprKind, sp: Sp) -> Expr {
        Expr { kind, sp, ty: Cell::new(Ty::Unit), konst: Cell::new(false) }
    }
    pub fn is_block_like(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::If { .. }
                | ExprKind::Block(_)
                | ExprKind::For { .. }
                | ExprKind::While { .. }
                | ExprKind::Loop { .. }
        )
    }
    /// The integer value of a literal (with a leading `-`), for range checks.
    pub fn int_literal(&self) -> Option<i128> {
        match &self.kind {
            ExprKind::Int { value, .. } => i128::try_from(*value).ok(),
            ExprKind::Bool(b) => Some(*b as i128),
            ExprKind::Unary { op: UnOp::Neg, e } => e.int_literal().map(|v| -v),
            ExprKind::Paren(e) => e.int_literal(),
            _ => None,
        }
    }
    /// Whether building the expression has no effect but computing its value (so `&&`/`||`
    /// may evaluate both sides without branching).
    pub fn is_pure(&self) -> bool {
        match &self.kind {
            ExprKind::Int { .. } | ExprKind::Float { .. } | ExprKind::Bool(_) | ExprKind::Var { .. } => true,
            ExprKind::Binary { lhs, rhs, op } => {
                !matches!(op, BinOp::Div | BinOp::Rem) && lhs.is_pure() && rhs.is_pure()
            }
            ExprKind::Unary { e, .. } | ExprKind::Cast { e, .. } | ExprKind::Paren(e) => e.is_pure(),
            _ => false,
        }
    }
}

pub enum ExprKind {
    Int {
        value: u128,
        suffix: Option<Scalar>,
    },
    Float {
        value: f64,
        suffix: Option<Scalar>,
    },
    Bool(bool),
    Str(syn::LitStr),
    Var {
        name: Ident,
        binding: Cell<Binding>,
    },
    Paren(Box<Expr>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnOp,
        e: Box<Expr>,
    },
    Cast {
        e: Box<Expr>,
        to: Scalar,
    },
    Index {
        base: Box<Expr>,
        idx: Box<Expr>,
    },
    Array(Vec<Expr>),
    /// `T.a.b.c::<ty>(args)`: an op of the table; `path` is `a.b.c`.
    Op {
        path: String,
        path_sp: Sp,
        turbofish: Option<(Scalar, Sp)>,
        args: Vec<Expr>,
        args_sp: Sp,
        /// Omitted choice arguments the checker infers (a wgmma operand's majorness from the
        /// tile), by parameter index; the expansion passes them as if written.
        implied: ImpliedArgs,
    },
    /// `recv.name(args)` on a DSL value.
    Method {
        recv: Box<Expr>,
        name: Ident,
        args: Vec<Expr>,
    },
    /// `path::TO::CONST`: a `const` item outside the kernel (a compile-time u32).
    Item(syn::Path),
    /// `path(args)`: a `#[phaser::device]` function.
    Call {
        path: syn::Path,
        args: Vec<Expr>,
    },
    If {
        cond: Box<Expr>,
        then: Block,
        els: Option<Box<Expr>>,
    },
    Block(Block),
    For {
        /// `#[unroll]`: the iterations are built one after the other (compile-time bounds).
        unroll: Option<Sp>,
        var: Ident,
        start: Box<Expr>,
        end: Box<Expr>,
        step: Option<Box<Expr>>,
        body: Block,
        /// Whether a `let mut` is in scope: the end bound is evaluated once (a copy), as in Rust.
        snapshot: Cell<bool>,
    },
    While {
        cond: Box<Expr>,
        body: Block,
    },
    Loop {
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Box<Expr>>),
    /// `place = value` or `place op= value`.
    Assign {
        place: Box<Expr>,
        op: Option<BinOp>,
        value: Box<Expr>,
    },
    /// Syntax already reported as unsupported.
    Invalid,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The integer operation of the constant evaluator (`phaser_codegen::eval`) that this
    /// operator computes; `None` for comparisons and logical operators.
    pub fn arith(self) -> Option<phaser_codegen::ir::BinOp> {
        use phaser_codegen::ir::BinOp as A;
        Some(match self {
            BinOp::Add => A::Add,
            BinOp::Sub => A::Sub,
            BinOp::Mul => A::Mul,
            BinOp::Div => A::Div,
            BinOp::Rem => A::Rem,
            BinOp::BitAnd => A::And,
            BinOp::BitOr => A::Or,
            BinOp::BitXor => A::Xor,
            BinOp::Shl => A::Shl,
            BinOp::Shr => A::Shr,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::And | BinOp::Or => {
                return None
            }
        })
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }
    pub fn is_logic(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
    pub fn is_bitwise(self) -> bool {
        matches!(self, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}
