//! Checking `T.*` ops against codegen's op registry, and methods on values.

use super::Checker;
use crate::parse::ast::*;
use crate::suggest::nearest;
use crate::types::{Scalar, Ty};
use phaser_codegen::arch::check::{MAX_ARRIVALS, MAX_TX_BYTES};
use phaser_codegen::arch::wgmma;
use phaser_codegen::builder::TileLayout;
use phaser_codegen::ir::{Major, Space};
use phaser_codegen::registry::{self, ArgHint, Kind, OpDef, Ret};

/// The DSL's own methods on values (not in the `T` namespace): `bars.ptr_to([i])`,
/// `tile.bytes()`, `map.box_bytes()`. Rust's numeric methods (`x.min(y)`, `x.exp2()`) are
/// registry ops with a `.method` (`registry::method`), rewritten by the parser.
const METHODS: &[&str] = &["ptr_to", "bytes", "box_bytes"];

/// Library names as users write them, for "did you mean" help on another library's op name.
fn library(lib: &str) -> &str {
    match lib {
        "cuda" => "CUDA",
        "cute" => "CuTe",
        "cutlass" => "CUTLASS",
        "gluon" => "Gluon",
        other => other,
    }
}

impl Checker<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn op(
        &mut self,
        e: &Expr,
        path: &str,
        path_sp: Sp,
        turbofish: Option<(Scalar, Sp)>,
        args: &[Expr],
        args_sp: Sp,
        implied: &ImpliedArgs,
    ) -> Ty {
        let Some(spec) = registry::lookup(path) else {
            self.unknown_op(path, path_sp);
            return Ty::Error;
        };
        let (n, max) = (args.len(), spec.params.len());
        let min = max - spec.optional as usize;
        if n < min || n > max {
            let want = if min == max { format!("{max}") } else { format!("{min} to {max}") };
            let s = if max == 1 { "" } else { "s" };
            let was = if n == 1 { "was" } else { "were" };
            let sp = if n == 0 { e.sp } else { args_sp };
            self.errs.at(
                sp,
                format!(
                    "`T.{path}` takes {want} argument{s} but {n} {was} given\n  = note: signature: {}",
                    spec.signature()
                ),
            );
            return ret_type(spec, turbofish, None, &[]);
        }
        match (spec.turbofish, turbofish) {
            (true, None) => {
                self.errs.at(path_sp, format!("`T.{path}` needs an element type: `T.{path}::<f32>(..)`"));
                return Ty::Error;
            }
            (false, Some((_, sp))) => self.errs.at(sp, format!("`T.{path}` takes no type argument")),
            _ => {}
        }
        let mut lits = vec![None; max];
        let mut arg_error = false;
        let mut scalar_args: Vec<&Expr> = Vec::new();
        for (i, (a, p)) in args.iter().zip(spec.params).enumerate() {
            let before = self.errs.0.len();
            lits[i] = self.arg(spec, p.name, p.kind, a, args);
            arg_error |= self.errs.0.len() > before;
            if matches!(p.kind, Kind::Scalar | Kind::Float | Kind::F32) {
                scalar_args.push(a);
            }
        }
        // All `Scalar` arguments of one op share one type (`T.min(a, b)`, `T.select(c, a, b)`);
        // an argument already refused has said what is wrong (no mismatch on top of it).
        let mut scalar_ty = None;
        for w in scalar_args.windows(2).filter(|_| !arg_error) {
            let t = self.unify(w[0], w[1], &format!("the arguments of `T.{path}`"), e.sp);
            scalar_ty = Some(t);
        }
        if let Some(first) = scalar_args.first() {
            self.default_lits(first);
            for a in &scalar_args[1..] {
                self.coerce(a, first.ty.get());
            }
            scalar_ty = Some(first.ty.get());
        }
        self.tensor_rank(spec, args);
        self.named_coords_check(spec, args);
        self.tile_checks(spec, args);
        self.inner_coord_check(spec, args);
        self.mma_checks(spec, args, implied);
        if let Some(target) = self.target {
            self.check_lowering(target, e, path, path_sp, spec, turbofish, args, &lits, scalar_ty, arg_error);
        }
        ret_type(spec, turbofish, scalar_ty, args)
    }

    /// The target check: the call is lowered, as the chosen variant (`"relaxed"`, remote or
    /// local), into a scratch kernel for the target with the same registry entry the expansion
    /// uses; what its instructions need and their value problems are reported at the op.
    #[allow(clippy::too_many_arguments)]
    fn check_lowering(
        &mut self,
        target: phaser_codegen::Target,
        e: &Expr,
        path: &str,
        path_sp: Sp,
        spec: &OpDef,
        turbofish: Option<(Scalar, Sp)>,
        args: &[Expr],
        lits: &[Option<i128>],
        scalar_ty: Option<Ty>,
        arg_error: bool,
    ) {
        let hints: Vec<ArgHint> = spec
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| match args.get(i) {
                None => ArgHint::Absent,
                Some(a) => hint(p.kind, a, lits[i], scalar_ty, args),
            })
            .collect();
        // A `#[comptime]` constant is unknown here: its value problems show when building.
        let consts_known = spec.params.iter().zip(&hints).all(|(p, h)| {
            !matches!(p.kind, Kind::Const | Kind::Dims)
                || matches!(h, ArgHint::Const(_) | ArgHint::Dims(_) | ArgHint::Absent)
        });
        let probe = registry::probe(target, spec, &hints, turbofish.map(|t| t.0.ir_type()));
        if let Some(u) = probe.unavailable {
            let fix = u.fix.unwrap_or(phaser_codegen::Target::Sm100a);
            self.errs.at(
                path_sp,
                format!(
                    "`T.{path}` ({}) needs {}, but this kernel targets {target}\n  help: compile for {fix}: `#[phaser::kernel(target = \"{fix}\")]`",
                    u.requirement.what,
                    u.requirement.describe_avail()
                ),
            );
        }
        if !arg_error && consts_known {
            for msg in probe.value_problems {
                self.errs.at(e.sp, format!("`T.{path}`: {msg}"));
            }
        }
    }

    fn unknown_op(&mut self, path: &str, sp: Sp) {
        if registry::is_namespace(path) {
            let inside: Vec<String> = registry::ops()
                .filter(|o| o.path.starts_with(path) && o.path[path.len()..].starts_with('.'))
                .map(|o| format!("`T.{}`", o.path))
                .take(6)
                .collect();
            self.errs.at(sp, format!("`T.{path}` is a namespace, not an op; it has {}", inside.join(", ")));
            return;
        }
        self.errs.at(sp, format!("unknown op `T.{path}`\n  help: {}", op_suggestion(path)));
    }

    /// Check one argument; returns its integer value when it is a literal.
    fn arg(&mut self, spec: &OpDef, pname: &str, kind: Kind, a: &Expr, all: &[Expr]) -> Option<i128> {
        let path = spec.path;
        let bad = |t: Ty| format!("`T.{path}`: argument `{pname}` must be {}, found {t}", kind.describe());
        let handle = |want: Ty| move |t: Ty| t == want;
        let simple: Option<Box<dyn Fn(Ty) -> bool>> = match kind {
            Kind::Barrier => Some(Box::new(handle(Ty::Barrier))),
            Kind::RemoteBarrier => Some(Box::new(handle(Ty::RemoteBarrier))),
            Kind::Pipeline => Some(Box::new(handle(Ty::Pipeline))),
            Kind::PipelineState => Some(Box::new(handle(Ty::PipelineState))),
            Kind::State => Some(Box::new(handle(Ty::State))),
            Kind::Shared => Some(Box::new(|t| matches!(t, Ty::Shared(_) | Ty::Tile { .. }))),
            Kind::Tile => Some(Box::new(|t| matches!(t, Ty::Tile { .. }))),
            Kind::MmaTile => Some(Box::new(|t| match t {
                Ty::Tile { elem, layout: None | Some(TileLayout::Swizzled(_)), .. } => {
                    wgmma::tile_elem(elem.ir_type()).is_some()
                }
                _ => false,
            })),
            Kind::Registers(want) => {
                Some(Box::new(move |t| matches!(t, Ty::Registers { elem, rank: 1 } if elem.ir_type() == want)))
            }
            Kind::Global => Some(Box::new(|t| matches!(t, Ty::Global { .. }))),
            Kind::GlobalMut => Some(Box::new(|t| matches!(t, Ty::Global { mutable: true, .. }))),
            Kind::RemoteShared => Some(Box::new(|t| matches!(t, Ty::RemoteShared(_)))),
            Kind::Array => Some(Box::new(|t| matches!(t, Ty::Global { .. } | Ty::Shared(_) | Ty::RemoteShared(_)))),
            Kind::ArrayMut => {
                Some(Box::new(|t| matches!(t, Ty::Global { mutable: true, .. } | Ty::Shared(_) | Ty::RemoteShared(_))))
            }
            Kind::TensorMap => Some(Box::new(|t| matches!(t, Ty::TensorMap { .. }))),
            Kind::Bool => Some(Box::new(|t| t == Ty::Bool)),
            _ => None,
        };
        if let Some(ok) = simple {
            let t = self.expr(a);
            if kind == Kind::Shared && matches!(t, Ty::Tile { .. }) && matches!(a.kind, ExprKind::Index { .. }) {
                self.errs.at(
                    a.sp,
                    format!("`T.{path}` takes a whole tile: a sub-tile's start may be a runtime value\n  help: its address is `T.tile_addr(tile, [i, 0, ..])`"),
                );
            }
            if !ok(t) && !t.is_lenient() {
                let hint = match (kind, t) {
                    (Kind::Barrier, Ty::Barriers) => "\n  help: pick one barrier of the array: `bars.ptr_to([i])`".to_string(),
                    (Kind::Barrier, t) if t.is_numeric() => {
                        "\n  help: barriers come from `T.alloc_barriers(n)` and `bars.ptr_to([i])` (or `T.barrier_at_addr(addr)`)".into()
                    }
                    (Kind::Tile | Kind::MmaTile, Ty::Shared(_)) => "\n  help: a tile has a shape of two or more dimensions or a layout: `T.alloc_shared::<T>([rows, cols], \"128B\")`".into(),
                    (Kind::MmaTile, Ty::Tile { layout: Some(TileLayout::RowMajor), .. }) => {
                        "\n  help: wgmma reads shared memory through a matrix descriptor, which describes 32/64/128-byte swizzled tiles: allocate the tile with a swizzle (`T.alloc_shared::<bf16>([rows, cols], \"128B\")`) and fill it through a TMA map of that swizzle".into()
                    }
                    (Kind::MmaTile, Ty::Tile { .. }) => format!("\n  help: wgmma multiplies {} tiles", wgmma::TILE_ELEMS),
                    (Kind::Registers(_), Ty::Registers { rank, .. }) if rank > 1 => {
                        "\n  help: pass one row of the array: `acc[j]` (`j` known when the kernel is built)".into()
                    }
                    (Kind::GlobalMut | Kind::ArrayMut, Ty::Global { elem, .. }) => {
                        format!("\n  help: declare the parameter `&mut [{}]`", elem.name())
                    }
                    (Kind::RemoteShared, Ty::Shared(_)) => {
                        "\n  help: map it into a CTA of the cluster first: `T.ptx.mapa_shared(arr, cta)`".into()
                    }
                    (Kind::Bool, t) if t.is_numeric() => "\n  help: compare explicitly, e.g. `x != 0`".into(),
                    _ => String::new(),
                };
                self.errs.at(a.sp, format!("{}{hint}", bad(t)));
            }
            return None;
        }
        match kind {
            Kind::Count | Kind::TxBytes | Kind::Parity | Kind::U32 | Kind::Half2(_) => {
                let t = self.expr(a);
                if t == Ty::IntLit {
                    self.coerce(a, Ty::Scalar(Scalar::U32));
                }
                // A parity also takes a `bool` (the rule: `arch::parity`).
                let ok = t.is_int32()
                    || t.is_lenient()
                    || (kind == Kind::Parity && t.ir_type().is_some_and(phaser_codegen::arch::parity::type_ok));
                if !ok {
                    let hint = match kind {
                        Kind::Half2(h) if !t.is_int() => {
                            let h = phaser_codegen::registry::scalar_name(h);
                            format!("\n  help: pack two f32s into one: `T.pack.{h}x2(lo, hi)`")
                        }
                        _ if t.is_int() => "\n  help: convert with `as u32`".to_string(),
                        _ => String::new(),
                    };
                    self.errs.at(a.sp, format!("{}{hint}", bad(t)));
                    return None;
                }
                let lit = self.known(a);
                if let (Some(v), Some((lo, hi, what))) = (lit, kind.literal_range()) {
                    if v < lo || v > hi {
                        let why = if hi == MAX_ARRIVALS || hi == MAX_TX_BYTES { " (2^20 - 1)" } else { "" };
                        self.errs.at(a.sp, format!("`T.{path}`: {what} must be in {lo}..={hi}{why}, found {v}"));
                    }
                }
                lit
            }
            Kind::U64 => {
                let t = self.expr(a);
                if t == Ty::IntLit {
                    self.coerce(a, Ty::Scalar(Scalar::U64));
                } else if !(matches!(t, Ty::Scalar(Scalar::U64 | Scalar::I64)) || t.is_lenient()) {
                    self.errs.at(a.sp, format!("{}\n  help: widen with `as u64`", bad(t)));
                }
                a.int_literal()
            }
            Kind::Int => {
                let t = self.expr(a);
                if t == Ty::IntLit {
                    self.coerce(a, Ty::Scalar(Scalar::U32));
                } else if !(t.is_int() || t.is_lenient()) {
                    self.errs.at(a.sp, bad(t));
                }
                a.int_literal()
            }
            Kind::Scalar => {
                let t = self.expr(a);
                if !(t.is_numeric() || t.is_lenient()) {
                    self.errs.at(a.sp, bad(t));
                }
                None
            }
            // A float literal takes the other arguments' type (an f32 where the kind says so);
            // an integer literal is not a float (Rust refuses `2.exp2()` too).
            Kind::Float | Kind::F32 => {
                let mut t = self.expr(a);
                if t == Ty::FloatLit && kind == Kind::F32 {
                    self.coerce(a, Ty::Scalar(Scalar::F32));
                }
                // A `const` item (`T.ex2(SCALE)`) is read as an f32; for an f64 item convert
                // it (`HALF as f64`), which reads it as its own type.
                if crate::check::item_typed(a) && t == Ty::Scalar(Scalar::U32) {
                    self.coerce(a, Ty::Scalar(Scalar::F32));
                    t = Ty::Scalar(Scalar::F32);
                }
                let ok = match kind {
                    Kind::F32 => matches!(t, Ty::Scalar(Scalar::F32) | Ty::FloatLit),
                    _ => matches!(t, Ty::Scalar(Scalar::F32 | Scalar::F64) | Ty::FloatLit),
                };
                if !(ok || t.is_lenient()) {
                    let help = match t {
                        Ty::Scalar(Scalar::F16 | Scalar::BF16) => {
                            "\n  help: half types are for storage: convert with `as f32`"
                        }
                        Ty::Scalar(Scalar::F64) => "\n  help: PTX has this function on f32 only: convert with `as f32`",
                        _ => "\n  help: convert with `as f32`",
                    };
                    self.errs.at(a.sp, format!("{}{help}", bad(t)));
                }
                None
            }
            Kind::ElemOf(n) => {
                let t = self.expr(a);
                let elem = match all.get(n as usize).map(|b| b.ty.get()) {
                    Some(
                        Ty::Global { elem, .. } | Ty::Shared(elem) | Ty::RemoteShared(elem) | Ty::Tile { elem, .. },
                    ) => Ty::Scalar(elem),
                    _ => return None,
                };
                if !self.coerce(a, elem) {
                    self.errs.at(
                        a.sp,
                        format!(
                            "`T.{path}`: argument `{pname}` must be a {elem} (the buffer's element type), found {t}"
                        ),
                    );
                }
                None
            }
            Kind::Const => self.konst_u32(a, &format!("`T.{path}`: argument `{pname}`")),
            Kind::Dims => match &a.kind {
                ExprKind::Array(v) if (1..=5).contains(&v.len()) => {
                    a.ty.set(Ty::Scalar(Scalar::U32));
                    for (i, d) in v.iter().enumerate() {
                        let what = if v.len() == 1 { "the length".to_string() } else { format!("dimension {i}") };
                        if self.konst_u32(d, &format!("`T.{path}`: {what}")) == Some(0) {
                            self.errs.at(d.sp, format!("`T.{path}`: {what} is 0"));
                        }
                    }
                    None
                }
                ExprKind::Array(v) => {
                    self.errs.at(a.sp, format!("`T.{path}`: a shape has 1 to 5 dimensions, not {}", v.len()));
                    None
                }
                _ => {
                    self.errs.at(
                        a.sp,
                        format!("`T.{path}`: write the shape as an array, outermost first, e.g. `[128]` or `[64, 64]`"),
                    );
                    None
                }
            },
            Kind::Places => match &a.kind {
                ExprKind::Array(v) => {
                    for x in v {
                        let t = self.expr(x);
                        let is_var = matches!(&x.kind, ExprKind::Var { binding, .. } if binding.get() == Binding::Reg);
                        if !is_var && !t.is_lenient() {
                            let what = match &x.kind {
                                ExprKind::Var { name, .. } => format!("`{name}` is immutable"),
                                _ => "this is an expression".to_string(),
                            };
                            self.errs.at(
                                x.sp,
                                format!(
                                    "`T.{path}`: argument `{pname}` lists the `let mut` variables the op writes; {what}\n  help: declare one first: `let mut out = 0u32;` and pass `[out]`"
                                ),
                            );
                        } else if !(t.is_register() || t.is_lenient()) || t == Ty::State {
                            self.errs.at(x.sp, format!("`T.{path}` writes scalars, not a {t}"));
                        }
                    }
                    None
                }
                _ => {
                    self.errs.at(a.sp, format!("`T.{path}`: argument `{pname}` must be {}", kind.describe()));
                    None
                }
            },
            Kind::Coords | Kind::Values => match &a.kind {
                ExprKind::Array(v) => {
                    for x in v {
                        // A named coordinate (`m = m0`): its value is checked; the names by
                        // `named_coords_check`. The element takes the value's type.
                        let named = if kind == Kind::Coords { named_coord(x) } else { None };
                        let t = match named {
                            Some((_, value)) => {
                                let t = self.expr(value);
                                x.ty.set(t);
                                t
                            }
                            None => self.expr(x),
                        };
                        let x = coord_value(x);
                        if kind == Kind::Coords {
                            if t == Ty::IntLit {
                                self.coerce(x, Ty::Scalar(Scalar::I32));
                            } else if !(t.is_int32() || t.is_lenient()) {
                                self.errs.at(x.sp, format!("a tensor coordinate must be a 32-bit integer, found {t}"));
                            }
                        } else {
                            self.default_lits(x);
                            if !(x.ty.get().is_register() || x.ty.get().is_lenient()) {
                                self.errs.at(x.sp, format!("`T.{path}` records scalars, not a {t}"));
                            }
                        }
                    }
                    None
                }
                _ => {
                    self.errs.at(a.sp, format!("`T.{path}`: argument `{pname}` must be {}", kind.describe()));
                    None
                }
            },
            Kind::Choice(choices) => {
                match &a.kind {
                    ExprKind::Str(s) => {
                        let v = s.value();
                        if !choices.contains(&v.as_str()) {
                            let hint = match nearest(&v, choices.iter().copied()) {
                                Some(n) => format!("\n  help: did you mean \"{n}\"?"),
                                None => String::new(),
                            };
                            self.errs.at(a.sp, format!("`T.{path}`: \"{v}\" is not {}{hint}", kind.describe()));
                        }
                    }
                    _ => self.errs.at(
                        a.sp,
                        format!("`T.{path}`: argument `{pname}` must be a string literal, {}", kind.describe()),
                    ),
                }
                None
            }
            Kind::Tag => {
                if !matches!(a.kind, ExprKind::Str(_)) {
                    self.errs.at(a.sp, format!("`T.{path}`: argument `{pname}` must be a string literal"));
                }
                None
            }
            _ => unreachable!("handled above"),
        }
    }

    /// Coordinates must match the tensor map's rank when both are known.
    fn tensor_rank(&mut self, spec: &OpDef, args: &[Expr]) {
        let rank = spec.params.iter().zip(args).find_map(|(p, a)| match (p.kind, a.ty.get()) {
            (Kind::TensorMap, Ty::TensorMap { rank, .. }) => Some(rank),
            (Kind::Tile, Ty::Tile { rank, .. }) if spec.path == "tile_addr" => Some(rank),
            _ => None,
        });
        let coords = spec.params.iter().zip(args).find_map(|(p, a)| match (p.kind, &a.kind) {
            (Kind::Coords, ExprKind::Array(v)) => Some((v.len(), a.sp)),
            _ => None,
        });
        if let (Some(r), Some((n, sp))) = (rank, coords) {
            if n != r as usize && spec.path == "tile_addr" {
                let was = if n == 1 { "index was" } else { "indices were" };
                self.errs.at(sp, format!("the tile has {r} dimensions, but {n} {was} given"));
            } else if n != r as usize {
                self.errs.at(sp, format!("the tensor map has rank {r}, but {n} coordinates were given"));
            }
        }
    }

    /// A tensor copy whose innermost coordinate the macro knows, of a map (or tile) whose
    /// element type it knows, must be a whole number of 16-byte units: the GPU faults otherwise
    /// (`TMA_INNER_COORD_ALIGN`). Tile copies list coordinates outermost first, like the tile's
    /// indices; the `ptx.*` forms innermost first, as PTX does.
    fn inner_coord_check(&mut self, spec: &OpDef, args: &[Expr]) {
        let find = |k: Kind| spec.params.iter().zip(args).find(|(p, _)| p.kind == k).map(|(_, a)| a);
        let (Some(map), Some(coords)) = (find(Kind::TensorMap), find(Kind::Coords)) else { return };
        let tile = find(Kind::Tile);
        let elem = match (map.ty.get(), tile.map(|t| t.ty.get())) {
            (Ty::TensorMap { elem: Some(e), .. }, _) | (_, Some(Ty::Tile { elem: e, .. })) => e,
            _ => return,
        };
        let ExprKind::Array(v) = &coords.kind else { return };
        let inner = if tile.is_some() { v.last() } else { v.first() };
        let Some(inner) = inner.map(coord_value) else { return };
        let Some(c) = self.known(inner).and_then(|c| i64::try_from(c).ok()) else { return };
        if let Some(p) = phaser_codegen::arch::limits::tma_inner_coord_problem(c, elem.ir_type()) {
            self.errs.at(inner.sp, format!("`T.{}`: {p}", spec.path));
        }
    }

    /// A TMA copy of a tile: the tile and the map must agree on the element type, the swizzle
    /// and (where the macro knows the extents) the box, or the copy would move another number
    /// of bytes than the tile holds (and `expect_tx` registers): a deadlock, not an error.
    fn tile_checks(&mut self, spec: &OpDef, args: &[Expr]) {
        let find = |k: Kind| spec.params.iter().zip(args).find(|(p, _)| p.kind == k).map(|(_, a)| a);
        let (Some(tile), Some(map)) = (find(Kind::Tile), find(Kind::TensorMap)) else { return };
        let (Ty::Tile { elem, rank, layout }, Ty::TensorMap { rank: map_rank, elem: map_elem, swizzle, .. }) =
            (tile.ty.get(), map.ty.get())
        else {
            return;
        };
        self.record_fill(spec, tile, map);
        let path = spec.path;
        if let Some(me) = map_elem {
            if me != elem {
                self.errs.at(
                    tile.sp,
                    format!(
                        "`T.{path}`: the tile holds {} but the tensor map `{}` is of {}",
                        elem.name(),
                        text(map),
                        me.name()
                    ),
                );
            }
        }
        if let (Some(l), Some(sw)) = (layout, swizzle) {
            if l.swizzle() != sw {
                let words = |s: phaser_codegen::ir::Swizzle| match s {
                    phaser_codegen::ir::Swizzle::None => "no swizzle (row-major)".to_string(),
                    s => format!("a {}", s.name()),
                };
                self.errs.at(
                    tile.sp,
                    format!(
                        "`T.{path}`: the tile is laid out with {} but the tensor map `{}` declares {}: TMA would put \
                         the elements where the tile does not read them",
                        words(l.swizzle()),
                        text(map),
                        words(sw)
                    ),
                );
            }
        }
        // The box each copy moves (one column block of a swizzled tile), outermost first; a
        // tile of higher rank than the map is its outer dimensions flattened into rows (a
        // `[2, 64, 64]` stage of two slabs is one `[128, 64]` box).
        let (Some(tshape), Some(bshape)) = (self.shape_of(tile), self.shape_of(map)) else { return };
        let fold = (rank as usize).saturating_sub(map_rank.max(1) as usize);
        let outer = tshape[..=fold.min(tshape.len().saturating_sub(1))].iter().try_fold(1i128, |a, d| d.map(|d| a * d));
        let mut tbox: Vec<Option<i128>> = std::iter::once(outer).chain(tshape.iter().skip(fold + 1).copied()).collect();
        if let (Some(Some(cols)), Some(phaser_codegen::builder::TileLayout::Swizzled(sw)), Some(es)) =
            (tbox.last().copied(), layout, Some(elem.bits() as i128 / 8))
        {
            let bc = sw.row_bytes() as i128 / es;
            if let Some(last) = tbox.last_mut() {
                *last = Some(cols.min(bc));
            }
        }
        let pad = bshape.len().saturating_sub(tbox.len());
        let padded: Vec<Option<i128>> = std::iter::repeat_n(Some(1), pad).chain(tbox).collect();
        let differs = padded.iter().zip(&bshape).any(|(a, b)| matches!((a, b), (Some(x), Some(y)) if x != y));
        if differs {
            let show = |v: &[Option<i128>]| {
                let s: Vec<String> = v.iter().map(|x| x.map_or("?".into(), |x| x.to_string())).collect();
                format!("[{}]", s.join(", "))
            };
            // The box's extents in the other order: written innermost first, as PTX and
            // `Device::tensor_map` take them, or the tile transposed.
            let reversed = padded.iter().rev().eq(bshape.iter());
            let help = if reversed {
                "\n  help: these are the same extents in the other order: a box and a tile's shape are written \
                 outermost first (PTX and `Device::tensor_map` take them innermost first)"
            } else {
                ""
            };
            self.errs.at(
                tile.sp,
                format!(
                    "`T.{path}`: each copy moves a box of {} (outermost first) into the tile, but the tensor map `{}` \
                     declares the box {}{help}",
                    show(&padded),
                    text(map),
                    show(&bshape)
                ),
            );
        }
    }

    /// A wgmma's shape rules ([`wgmma::shape_problems`]) on the extents the macro knows: the
    /// accumulator's N, B's against it, A's 64 rows, both K extents and the k-step. Extents
    /// from `const` items or `#[comptime]` values are judged by the same rules when the kernel
    /// is built, and reported there at the same argument.
    fn mma_checks(&mut self, spec: &OpDef, args: &[Expr], implied: &ImpliedArgs) {
        if !spec.path.starts_with("ptx.wgmma.mma_async") {
            return;
        }
        let arg = |name: &str| spec.params.iter().position(|p| p.name == name).and_then(|i| args.get(i));
        let register_a = spec.path != "ptx.wgmma.mma_async";
        let operands = [(wgmma::Arg::B.name(), "b_major"), (wgmma::Arg::A.name(), "a_major")];
        for (tile, major_param) in operands.into_iter().filter(|(t, _)| !(register_a && *t == wgmma::Arg::A.name())) {
            if let Some(t) = arg(tile) {
                self.record_mma_use(spec, t, major_param, args, implied);
            }
        }
        // An omitted majorness is the tile's where its load was already checked.
        let major = |this: &Self, name: &str, tile: &str| match arg(name).map(|a| &a.kind) {
            Some(ExprKind::Str(s)) => Major::from_name(&s.value()).unwrap_or(Major::K),
            _ => arg(tile).and_then(|t| this.filled_major(t)).unwrap_or(Major::K),
        };
        let as_u32 = |v: Option<i128>| v.and_then(|v| u32::try_from(v).ok());
        // The element rules come first: a pair wgmma lacks, or a transposed FP8 tile, has no
        // shape to compare (one mistake, one message).
        let tile_elem = |name: &str| match arg(name).map(|t| t.ty.get()) {
            Some(Ty::Tile { elem, .. }) => wgmma::tile_elem(elem.ir_type()),
            _ => None,
        };
        let (a_name, b_name) = (wgmma::Arg::A.name(), wgmma::Arg::B.name());
        if let (false, Some(a), Some(b), Some(b_arg)) = (register_a, tile_elem(a_name), tile_elem(b_name), arg(b_name))
        {
            if let Some(p) = wgmma::types_problem(a, b) {
                self.errs.at(b_arg.sp, format!("`T.{}`: {p}", spec.path));
                return;
            }
        }
        for (tile, major_param, label) in [(b_name, "b_major", "B"), (a_name, "a_major", "A")] {
            if register_a && tile == a_name {
                continue;
            }
            if let (Some(elem), Some(t)) = (tile_elem(tile), arg(tile)) {
                if let Some(p) = wgmma::major_problem(elem, major(self, major_param, tile)) {
                    self.errs.at(
                        t.sp,
                        format!(
                            "`T.{}`: {label} `{}`: {p}\n  help: FP8 tiles are K-major: fill them from a map without \
                             `major = \"mn\"`",
                            spec.path,
                            text(t)
                        ),
                    );
                    return;
                }
            }
        }
        let operand = |this: &Self, name: &str, major_arg: &str| {
            let e = arg(name)?;
            let shape = this.shape_of(e).filter(|s| s.len() >= 2)?;
            Some(wgmma::Operand {
                shape: shape.into_iter().map(as_u32).collect(),
                major: major(this, major_arg, name),
                name: format!("`{}`", text(e)),
            })
        };
        let Some(acc) = arg(wgmma::Arg::Acc.name()) else { return };
        let elem = match arg(wgmma::Arg::B.name()).map(|b| b.ty.get()) {
            Some(Ty::Tile { elem, .. }) => wgmma::tile_elem(elem.ir_type()),
            _ => None,
        };
        let call = wgmma::Call {
            acc_len: as_u32(self.shape_of(acc).and_then(|s| if s.len() == 1 { s[0] } else { None })),
            acc_name: format!("`{}`", text(acc)),
            // `mma_async_rs` takes A from registers: no tile.
            a: if !register_a { operand(self, wgmma::Arg::A.name(), "a_major") } else { None },
            b: operand(self, wgmma::Arg::B.name(), "b_major"),
            k_step: as_u32(arg(wgmma::Arg::KStep.name()).and_then(|a| self.known(a))),
            elem,
        };
        let path = spec.path;
        for (at, msg, help) in wgmma::shape_problems(&call) {
            let sp = arg(at.name()).map_or(acc.sp, |a| a.sp);
            let help = help.map(|h| format!("\n  help: {h}")).unwrap_or_default();
            self.errs.at(sp, format!("`T.{path}`: {msg}{help}"));
        }
    }

    pub(super) fn method(&mut self, e: &Expr, recv: &Expr, name: &proc_macro2::Ident, args: &[Expr]) -> Ty {
        let rt = self.expr(recv);
        let m = name.to_string();
        match (m.as_str(), rt) {
            ("bytes", Ty::Tile { .. }) if args.is_empty() => Ty::Scalar(Scalar::U32),
            ("box_bytes", Ty::TensorMap { boxed: true, .. }) if args.is_empty() => Ty::Scalar(Scalar::U32),
            ("box_bytes", Ty::TensorMap { .. }) => {
                self.errs.at(
                    e.sp,
                    "`box_bytes()` needs the map's element type and box: declare them, e.g. \
                     `#[tma(box = [64, 64], swizzle = \"128B\")] a: TensorMap<bf16, 2>`",
                );
                Ty::Error
            }
            ("bytes" | "box_bytes", t) if !args.is_empty() && !t.is_lenient() => {
                self.errs.at(e.sp, format!("`{m}()` takes no arguments"));
                Ty::Error
            }
            ("ptr_to", Ty::Barriers | Ty::Unknown | Ty::Error) => {
                match args {
                    [Expr { kind: ExprKind::Array(v), .. }] if v.len() == 1 => {
                        let t = self.expr(&v[0]);
                        if t == Ty::IntLit {
                            self.coerce(&v[0], Ty::Scalar(Scalar::U32));
                        } else if !(t.is_int() || t.is_lenient()) {
                            self.errs.at(v[0].sp, format!("a barrier index must be an integer, found {t}"));
                        }
                        args[0].ty.set(v[0].ty.get());
                        let len = self.shape_of(recv).and_then(|s| s.first().copied().flatten());
                        if let (Some(n), Some(i)) = (len, self.known(&v[0])) {
                            if i < 0 || i >= n {
                                self.errs.at(
                                    v[0].sp,
                                    format!(
                                        "barrier index {i} is out of bounds: `{}` holds {n} barriers (0..={})",
                                        text(recv),
                                        n - 1
                                    ),
                                );
                            }
                        }
                    }
                    _ => self.errs.at(e.sp, "write `bars.ptr_to([i])`: one index in brackets"),
                }
                Ty::Barrier
            }
            (_, t) if t.is_lenient() => Ty::Error,
            (_, t) => {
                let mut msg = format!("no method `{m}` on a {t} in kernels");
                let methods = METHODS.iter().copied().chain(registry::ops().filter_map(|o| o.method));
                match nearest(&m, methods) {
                    Some(n) if n != m => msg.push_str(&format!("\n  help: did you mean `{n}`?")),
                    _ => {
                        let opname = nearest(&m, registry::ops().map(|o| o.path));
                        msg.push_str("\n  help: values have `bars.ptr_to([i])`, `tile.bytes()`, `map.box_bytes()` and Rust's numeric methods (`x.min(y)`, `x.exp2()`, `x.mul_add(a, b)`: the \"Float math\" table); ops live in the `T` namespace");
                        if let Some(o) = opname {
                            msg.push_str(&format!(" (e.g. `T.{o}`)"));
                        }
                    }
                }
                self.errs.at(Sp::of(name).to(e.sp), msg);
                for a in args {
                    self.expr(a);
                }
                Ty::Error
            }
        }
    }
}

/// The help line for an unknown op `T.{path}`: another library's name for one of ours, a
/// close spelling, or where the ops are listed. A warp-level name never gets a barrier wider
/// than a warp (`registry::may_suggest`): that would deadlock a warp-specialized branch.
pub fn op_suggestion(path: &str) -> String {
    if let Some((op, alias)) = registry::find_alias(path) {
        let (lib, name) = alias.split_once(':').unwrap_or(("", alias));
        return format!("{}'s `{name}` is `T.{}` here ({})", library(lib), op.path, op.signature());
    }
    let candidates = registry::ops().map(|o| o.path).filter(|c| registry::may_suggest(path, c));
    if let Some(n) = nearest(path, candidates) {
        let spec = registry::lookup(n).expect("listed");
        return format!("did you mean `T.{n}`? ({})", spec.signature());
    }
    if let Some(op) = registry::warp_sync_for(path) {
        return format!("to synchronize the lanes of a warp, use `T.{}` ({})", op.path, op.signature());
    }
    "the ops are listed in the `phaser-dsl` README (`dsl/README.md`)".to_string()
}

fn ret_type(spec: &OpDef, turbofish: Option<(Scalar, Sp)>, scalar: Option<Ty>, args: &[Expr]) -> Ty {
    match spec.ret {
        Ret::Unit => Ty::Unit,
        Ret::Bool => Ty::Bool,
        Ret::U16 => Ty::Scalar(Scalar::U16),
        Ret::U32 => Ty::Scalar(Scalar::U32),
        Ret::U64 => Ty::Scalar(Scalar::U64),
        Ret::State => Ty::State,
        Ret::Barrier => Ty::Barrier,
        Ret::RemoteBarrier => Ty::RemoteBarrier,
        Ret::Barriers => Ty::Barriers,
        Ret::Pipeline => Ty::Pipeline,
        Ret::PipelineState => Ty::PipelineState,
        Ret::SharedOfTurbofish => turbofish.map(|t| Ty::Shared(t.0)).unwrap_or(Ty::Error),
        Ret::SharedOrTile => {
            let Some((elem, _)) = turbofish else { return Ty::Error };
            let rank = match args.first().map(|a| &a.kind) {
                Some(ExprKind::Array(v)) => v.len().clamp(1, 5) as u8,
                _ => 1,
            };
            let layout = match args.get(1).map(|a| &a.kind) {
                Some(ExprKind::Str(s)) => {
                    phaser_codegen::ir::Swizzle::parse(&s.value()).map(phaser_codegen::builder::TileLayout::of_swizzle)
                }
                _ => Some(phaser_codegen::builder::TileLayout::RowMajor),
            };
            match layout {
                Some(phaser_codegen::builder::TileLayout::RowMajor) if rank == 1 => Ty::Shared(elem),
                _ => Ty::Tile { elem, rank, layout },
            }
        }
        Ret::RegistersOfTurbofish => {
            let Some((elem, _)) = turbofish else { return Ty::Error };
            match args.first().map(|a| &a.kind) {
                Some(ExprKind::Array(v)) => Ty::Registers { elem, rank: v.len().clamp(1, 4) as u8 },
                _ => Ty::Error,
            }
        }
        Ret::Turbofish => turbofish.map(|t| Ty::Scalar(t.0)).unwrap_or(Ty::Error),
        Ret::ScalarArgs => scalar.unwrap_or(Ty::Error),
        Ret::F32 => Ty::Scalar(Scalar::F32),
        Ret::BitsOfArgs => match scalar {
            Some(Ty::Scalar(s)) => Ty::Scalar(match s.bits() {
                16 => Scalar::U16,
                64 => Scalar::U64,
                _ => Scalar::U32,
            }),
            _ => Ty::Error,
        },
        Ret::ElemOf(n) => match args.get(n as usize).map(|a| a.ty.get()) {
            Some(
                Ty::Global { elem, .. }
                | Ty::Shared(elem)
                | Ty::RemoteShared(elem)
                | Ty::Tile { elem, .. }
                | Ty::Registers { elem, .. },
            ) => Ty::Scalar(elem),
            _ => Ty::Error,
        },
        Ret::VecOf(a, n) => match args.get(a as usize).map(|a| a.ty.get()) {
            Some(Ty::Global { elem, .. } | Ty::Shared(elem) | Ty::RemoteShared(elem)) => Ty::Vector(elem, n),
            _ => Ty::Error,
        },
        Ret::Vec(t, n) => Scalar::from_ir(t).map(|s| Ty::Vector(s, n)).unwrap_or(Ty::Error),
        Ret::RemoteSharedOf(a) => match args.get(a as usize).map(|a| a.ty.get()) {
            Some(Ty::Shared(elem)) => Ty::RemoteShared(elem),
            _ => Ty::Error,
        },
    }
}

/// What the target check knows of one argument: its literal value, its type, the handle.
fn hint(kind: Kind, a: &Expr, lit: Option<i128>, scalar_ty: Option<Ty>, all: &[Expr]) -> ArgHint {
    let ty = a.ty.get();
    match kind {
        Kind::Const => lit.map(|v| ArgHint::Const(v as u32)).unwrap_or(ArgHint::Any),
        Kind::Dims => match &a.kind {
            ExprKind::Array(v) => v
                .iter()
                .map(|x| x.int_literal().and_then(|i| u32::try_from(i).ok()))
                .collect::<Option<Vec<u32>>>()
                .map(ArgHint::Dims)
                .unwrap_or(ArgHint::Any),
            _ => ArgHint::Any,
        },
        Kind::Choice(names) => match &a.kind {
            ExprKind::Str(s) => {
                names.iter().find(|n| **n == s.value()).map(|n| ArgHint::Choice(n)).unwrap_or(ArgHint::Any)
            }
            _ => ArgHint::Any,
        },
        Kind::Shared | Kind::Global | Kind::GlobalMut | Kind::RemoteShared | Kind::Tile | Kind::MmaTile => match ty {
            Ty::Shared(s) | Ty::Global { elem: s, .. } | Ty::RemoteShared(s) | Ty::Tile { elem: s, .. } => {
                ArgHint::Elem(s.ir_type())
            }
            _ => ArgHint::Any,
        },
        Kind::Array | Kind::ArrayMut => match ty {
            Ty::Global { elem, .. } => ArgHint::InSpace(Space::Global, elem.ir_type()),
            Ty::Shared(s) => ArgHint::InSpace(Space::Shared, s.ir_type()),
            Ty::RemoteShared(s) => ArgHint::InSpace(Space::SharedCluster, s.ir_type()),
            _ => ArgHint::Any,
        },
        // The target check sees the real string (a printf format, an inline PTX template);
        // the macro process leaks these few bytes.
        Kind::Tag => match &a.kind {
            ExprKind::Str(s) => ArgHint::Tag(Box::leak(s.value().into_boxed_str())),
            _ => ArgHint::Any,
        },
        Kind::TensorMap => match ty {
            Ty::TensorMap { rank, .. } => ArgHint::Rank(rank),
            _ => ArgHint::Any,
        },
        Kind::Coords | Kind::Values | Kind::Places => match &a.kind {
            ExprKind::Array(v) => ArgHint::List(
                v.iter()
                    .map(|x| {
                        x.ty.get().ir_type().unwrap_or(if kind == Kind::Coords {
                            phaser_codegen::Type::S32
                        } else {
                            phaser_codegen::Type::U32
                        })
                    })
                    .collect(),
            ),
            _ => ArgHint::Any,
        },
        Kind::Scalar | Kind::Float | Kind::F32 => {
            scalar_ty.and_then(Ty::ir_type).map(ArgHint::Reg).unwrap_or(ArgHint::Any)
        }
        Kind::ElemOf(n) => match all.get(n as usize).map(|b| b.ty.get()) {
            Some(Ty::Global { elem, .. } | Ty::Shared(elem) | Ty::RemoteShared(elem) | Ty::Tile { elem, .. }) => {
                ArgHint::Reg(elem.ir_type())
            }
            _ => ArgHint::Any,
        },
        k if k.is_value() => match (lit, ty.ir_type()) {
            (Some(v), t) => ArgHint::Literal(v, t),
            (None, Some(t)) => ArgHint::Reg(t),
            (None, None) => ArgHint::Any,
        },
        _ => ArgHint::Any,
    }
}

/// An expression's source text, for messages (`a`, `tiles[stage]`).
pub(super) fn text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Var { name, .. } => name.to_string(),
        ExprKind::Index { base, idx } => format!("{}[{}]", text(base), text(idx)),
        ExprKind::Int { value, .. } => value.to_string(),
        _ => "..".into(),
    }
}
