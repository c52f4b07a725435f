//! Stage 1: syn → DSL AST. Syntax the DSL does not have is reported here, each with a span
//! and a suggestion; parsing goes on so one compile shows every problem.

pub mod ast;
mod expr;

pub use expr::is_const_name;

use crate::types::{Scalar, Ty};
use ast::*;
use phaser_codegen::arch::check::TMA_RANKS;
use phaser_codegen::ir::Swizzle;
use phaser_codegen::Target;
use syn::spanned::Spanned;

/// Collected diagnostics of all stages.
#[derive(Default)]
pub struct Errors(pub Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        self.0.push(e);
    }
    pub fn at(&mut self, sp: Sp, msg: impl std::fmt::Display) {
        self.0.push(sp.error(msg));
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn into_compile_errors(self) -> proc_macro2::TokenStream {
        self.0.into_iter().map(|e| e.to_compile_error()).collect()
    }
}

/// The target the kernel attribute names (`target = "sm_90a"`; sm_90a when omitted).
pub fn parse_kernel_attr(attr: proc_macro2::TokenStream, errs: &mut Errors) -> Target {
    let mut target = Target::Sm90a;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("target") {
            let s: syn::LitStr = meta.value()?.parse()?;
            match s.value().parse::<Target>() {
                Ok(t) => target = t,
                Err(_) => {
                    let names = Target::ALL.map(|t| t.name());
                    let hint = match crate::suggest::nearest(&s.value(), names) {
                        Some(n) => format!("\n  help: did you mean \"{n}\"?"),
                        None => String::new(),
                    };
                    errs.push(syn::Error::new(
                        s.span(),
                        format!("unknown target \"{}\"; expected one of {}{hint}", s.value(), names.join(", ")),
                    ));
                }
            }
            Ok(())
        } else {
            let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            Err(meta.error(format!("unknown kernel option `{name}`; the only option is `target = \"sm_90a\"`")))
        }
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, attr) {
        errs.push(e);
    }
    target
}

/// Parse a kernel or device function.
pub fn parse_fn(item: syn::ItemFn, kind: FnKind, errs: &mut Errors) -> FnDef {
    let is_kernel = matches!(kind, FnKind::Kernel { .. });
    let what = if is_kernel { "kernel" } else { "device function" };
    let sig = &item.sig;
    if let Some(g) = sig.generics.params.first() {
        errs.at(
            Sp::of(&sig.generics),
            format!(
                "a {what} cannot be generic; use `#[comptime] {}: u32` parameters to specialize it",
                quote::quote!(#g)
            ),
        );
    }
    if let Some(a) = &sig.asyncness {
        errs.at(Sp::of(a), format!("a {what} cannot be `async`"));
    }
    if let Some(u) = &sig.unsafety {
        errs.at(Sp::of(u), format!("a {what} cannot be `unsafe`"));
    }
    if let Some(v) = &sig.variadic {
        errs.at(Sp::of(v), format!("a {what} cannot be variadic (`...`): declare each parameter"));
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => errs.at(Sp::of(r), format!("a {what} cannot take `self`")),
            syn::FnArg::Typed(pt) => {
                if let Some(p) = parse_param(pt, is_kernel, errs) {
                    params.push(p);
                }
            }
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, t) => {
            let sp = Sp::of(t);
            if is_kernel {
                errs.at(sp, "a kernel returns nothing; write results into a `&mut [T]` buffer parameter");
                None
            } else {
                parse_type(t, false, errs).map(|ty| (ty, sp))
            }
        }
    };
    let body = expr::Parser { errs }.block(&item.block);
    let attrs = item.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect();
    FnDef { kind, attrs, vis: item.vis, name: sig.ident.clone(), params, ret, body }
}

fn parse_param(pt: &syn::PatType, is_kernel: bool, errs: &mut Errors) -> Option<Param> {
    let mut comptime = false;
    let mut tma = None;
    for a in &pt.attrs {
        if a.path().is_ident("comptime") {
            comptime = true;
        } else if a.path().is_ident("tma") {
            tma = parse_tma_attr(a, errs);
        } else {
            errs.at(
                Sp::of(a),
                "unknown parameter attribute; parameters take `#[comptime]` and, on tensor maps, \
                 `#[tma(box = [rows, cols], swizzle = \"128B\")]`",
            );
        }
    }
    let (name, mutable) = match &*pt.pat {
        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
            (pi.ident.clone(), pi.mutability.is_some())
        }
        p => {
            errs.at(Sp::of(p), "parameters must be plain names (`x: u32`), not patterns");
            return None;
        }
    };
    check_reserved(&name, errs);
    let sp = Sp::of(pt);
    // A type already reported keeps the parameter declared (no "cannot find value" later).
    let Some(ty) = parse_type(&pt.ty, is_kernel, errs) else {
        return Some(Param { name, ty: Ty::Error, comptime, mutable, tma: None });
    };
    if comptime {
        if !is_kernel {
            errs.at(sp, "`#[comptime]` is only supported on kernel parameters; pass the value as a `u32`");
        } else if ty != Ty::Scalar(Scalar::U32) {
            errs.at(Sp::of(&*pt.ty), format!("a `#[comptime]` parameter must be a `u32`, found {ty}"));
        }
        if mutable {
            errs.at(sp, "a `#[comptime]` parameter cannot be `mut`");
        }
    }
    if tma.is_some() && !matches!(ty, Ty::TensorMap { .. }) {
        errs.at(Sp::of(&*pt.ty), format!("`#[tma(..)]` describes a tensor map, but this parameter is a {ty}"));
    }
    if is_kernel {
        let ok = matches!(ty, Ty::Scalar(_) | Ty::Global { .. } | Ty::TensorMap { .. });
        if !ok {
            errs.at(
                Sp::of(&*pt.ty),
                format!("a kernel parameter cannot be a {ty}; kernels take scalars, `&[T]`/`&mut [T]` buffers and `TensorMap<T, RANK>`"),
            );
        }
        if mutable && !matches!(ty, Ty::Scalar(_)) {
            errs.at(sp, "only scalar parameters can be `mut`");
        }
    } else if mutable && !ty.is_register() && !matches!(ty, Ty::Registers { .. }) {
        errs.at(sp, "only scalar and register-array parameters can be `mut`");
    }
    if let (Some(attr), Ty::TensorMap { rank, elem, .. }) = (&tma, ty) {
        let ty = Ty::TensorMap {
            rank,
            elem,
            swizzle: attr.swizzle.map(|s| s.0),
            boxed: attr.box_dims.is_some() && elem.is_some(),
        };
        if let Some((dims, sp)) = &attr.box_dims {
            if dims.len() != rank as usize {
                errs.at(*sp, format!("the box has {} dimensions but the tensor map has rank {rank}", dims.len()));
            }
        }
        if let Some((names, sp)) = &attr.dims {
            if names.len() != rank as usize {
                let s = if names.len() == 1 { "" } else { "s" };
                errs.at(*sp, format!("`dims` names {} dimension{s} but the tensor map has rank {rank}", names.len()));
            }
        }
        return Some(Param { name, ty, comptime, mutable, tma });
    }
    Some(Param { name, ty, comptime, mutable, tma })
}

/// `#[tma(box = [rows, cols], swizzle = "128B")]`.
fn parse_tma_attr(a: &syn::Attribute, errs: &mut Errors) -> Option<TmaAttr> {
    let mut attr = TmaAttr { box_dims: None, swizzle: None, dims: None, major: None };
    let mut exprs = Vec::new();
    let res = a.parse_nested_meta(|meta| {
        if meta.path.is_ident("box") {
            let v: syn::Expr = meta.value()?.parse()?;
            match &v {
                syn::Expr::Array(arr) => exprs.push((arr.elems.iter().cloned().collect::<Vec<_>>(), Sp::of(&v))),
                _ => {
                    return Err(syn::Error::new_spanned(
                        &v,
                        "write the box as an array, outermost first: `box = [rows, cols]`",
                    ))
                }
            }
            Ok(())
        } else if meta.path.is_ident("dims") {
            let v: syn::Expr = meta.value()?.parse()?;
            let names = match &v {
                syn::Expr::Array(arr) => arr
                    .elems
                    .iter()
                    .map(|e| match e {
                        syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>(),
                _ => None,
            };
            let Some(names) = names else {
                return Err(syn::Error::new_spanned(
                    &v,
                    "name the dimensions with an array of identifiers, outermost first: `dims = [m, k]`",
                ));
            };
            for (i, n) in names.iter().enumerate() {
                if names[..i].contains(n) {
                    errs.at(Sp::of(n), format!("the dimension `{n}` is named twice"));
                }
            }
            attr.dims = Some((names, Sp::of(&v)));
            Ok(())
        } else if meta.path.is_ident("major") {
            let s: syn::LitStr = meta.value()?.parse()?;
            match phaser_codegen::ir::Major::from_name(&s.value()) {
                Some(m) => attr.major = Some((m, Sp::of(&s))),
                None => errs.at(
                    Sp::of(&s),
                    format!(
                        "\"{}\" is not a majorness; `major` is \"k\" (the box's inner dimension is K, the \
                         default) or \"mn\" (it is M or N)",
                        s.value()
                    ),
                ),
            }
            Ok(())
        } else if meta.path.is_ident("swizzle") {
            let s: syn::LitStr = meta.value()?.parse()?;
            match s.value().parse::<Swizzle>() {
                Ok(sw) => attr.swizzle = Some((sw, Sp::of(&s))),
                Err(unknown) => {
                    let hint = match crate::suggest::nearest(&s.value(), Swizzle::NAMES) {
                        Some(n) => format!("\n  help: did you mean \"{n}\"?"),
                        None => String::new(),
                    };
                    errs.at(Sp::of(&s), format!("{unknown}{hint}"));
                }
            }
            Ok(())
        } else {
            let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            Err(meta.error(format!(
                "unknown `#[tma]` option `{name}`; the options are `box = [rows, cols]`, `swizzle = \"128B\"`, \
                 `dims = [m, k]` and `major = \"mn\"`"
            )))
        }
    });
    if let Err(e) = res {
        errs.push(e);
    }
    if let Some((elems, sp)) = exprs.pop() {
        let mut p = expr::Parser { errs };
        attr.box_dims = Some((elems.iter().map(|e| p.expr(e)).collect(), sp));
    }
    Some(attr)
}

/// Names starting with `__` belong to the expansion.
pub fn check_reserved(name: &proc_macro2::Ident, errs: &mut Errors) {
    let s = name.to_string();
    if s.starts_with("__") {
        errs.at(Sp::of(name), format!("`{s}`: names starting with `__` are reserved for the macro"));
    } else if s == "T" {
        errs.at(Sp::of(name), "`T` is the op namespace (`T.ptx.mbarrier.init(..)`); pick another name");
    }
}

/// A scalar type name (`u32`, `half::f16`, ...).
pub fn scalar_of_path(p: &syn::Path) -> Option<Scalar> {
    let last = p.segments.last()?;
    if !last.arguments.is_none() {
        return None;
    }
    let name = last.ident.to_string();
    let prefix_ok = p.segments.len() == 1 || (p.segments.len() == 2 && p.segments[0].ident == "half");
    if !prefix_ok {
        return None;
    }
    Scalar::from_name(&name)
}

const TYPE_HELP: &str = "supported: u16 i16 u32 i32 u64 i64 f32 f64 half::f16 half::bf16 bool, `&[T]`, `&mut [T]`, \
`TensorMap<T, RANK>` (and for those, the FP8 storage types e4m3 e5m2), and in device functions `Barrier`, `Barriers`, `Shared<T>`, `Tile<T, RANK>`, `Registers<T, RANK>`, \
`State`, `RemoteBarrier`, `Pipeline`, `PipelineState`";

/// The literal rank of a type argument (`2` in `TensorMap<bf16, 2>`).
fn rank_arg(
    g: &syn::GenericArgument,
    range: std::ops::RangeInclusive<u8>,
    what: &str,
    errs: &mut Errors,
) -> Option<u8> {
    let (lo, hi) = (range.start(), range.end());
    match g {
        syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })) => {
            match i.base10_parse::<u8>() {
                Ok(r) if range.contains(&r) => Some(r),
                _ => {
                    errs.at(Sp::of(i), format!("{what} has rank {lo} to {hi}"));
                    None
                }
            }
        }
        other => {
            // `TensorMap<2>` parses as a const; `TensorMap<N>` as a type path: say so.
            errs.at(Sp::of(other), format!("the rank of {what} must be a literal ({lo} to {hi})"));
            None
        }
    }
}

/// Why an FP8 type cannot be a value's: codegen's rule, and where FP8 may appear instead.
pub fn fp8_value_message(s: Scalar) -> String {
    format!(
        "{}\n  help: `{s}` is the element type of buffers (`&[{s}]`), tensor maps (`TensorMap<{s}, 2>`) and shared \
         tiles (`T.alloc_shared::<{s}>([rows, cols], \"128B\")`) that `T.ptx.wgmma.mma_async` multiplies",
        phaser_codegen::arch::check::fp8_register_problem(s.ir_type()),
        s = s.name()
    )
}

/// A parameter / result / `let` annotation type.
pub fn parse_type(t: &syn::Type, is_kernel: bool, errs: &mut Errors) -> Option<Ty> {
    let ty = parse_type_any(t, is_kernel, errs)?;
    match ty {
        Ty::Scalar(s) | Ty::Registers { elem: s, .. } if s.is_fp8() => {
            errs.at(Sp::of(t), fp8_value_message(s));
            None
        }
        _ => Some(ty),
    }
}

fn parse_type_any(t: &syn::Type, is_kernel: bool, errs: &mut Errors) -> Option<Ty> {
    let sp = Sp::of(t);
    let bad = |errs: &mut Errors, what: String| {
        errs.at(sp, format!("unsupported type `{what}`; {TYPE_HELP}"));
        None
    };
    let text = quote::quote!(#t).to_string().replace(' ', "");
    match t {
        syn::Type::Path(tp) if tp.qself.is_none() => {
            if let Some(s) = scalar_of_path(&tp.path) {
                return Some(Ty::Scalar(s));
            }
            let last = tp.path.segments.last()?;
            let name = last.ident.to_string();
            let generics: Vec<&syn::GenericArgument> = match &last.arguments {
                syn::PathArguments::AngleBracketed(a) => a.args.iter().collect(),
                _ => Vec::new(),
            };
            let elem_arg = |g: &syn::GenericArgument| match g {
                syn::GenericArgument::Type(syn::Type::Path(e)) => scalar_of_path(&e.path),
                _ => None,
            };
            if generics.len() == 2 {
                let Some(elem) = elem_arg(generics[0]) else {
                    errs.at(
                        Sp::of(generics[0]),
                        format!("`{name}`'s first argument is a scalar element type (`bf16`, `f32`, ...)"),
                    );
                    return None;
                };
                return match name.as_str() {
                    "TensorMap" => {
                        let rank = rank_arg(generics[1], TMA_RANKS, "a tensor map", errs)?;
                        Some(Ty::TensorMap { rank, elem: Some(elem), swizzle: None, boxed: false })
                    }
                    "Tile" if !is_kernel => {
                        let rank = rank_arg(generics[1], 1..=5, "a tile", errs)?;
                        Some(Ty::Tile { elem, rank, layout: None })
                    }
                    "Registers" if !is_kernel => {
                        let rank = rank_arg(generics[1], 1..=4, "a register array", errs)?;
                        Some(Ty::Registers { elem, rank })
                    }
                    _ => bad(errs, text),
                };
            }
            let generic = if generics.len() == 1 { Some(generics[0]) } else { None };
            match (name.as_str(), generic) {
                ("Registers", Some(g)) if !is_kernel && elem_arg(g).is_some() => {
                    Some(Ty::Registers { elem: elem_arg(g)?, rank: 1 })
                }
                ("bool", None) => Some(Ty::Bool),
                ("Barrier", None) if !is_kernel => Some(Ty::Barrier),
                ("Barriers" | "BarrierArray", None) if !is_kernel => Some(Ty::Barriers),
                ("State", None) if !is_kernel => Some(Ty::State),
                ("RemoteBarrier", None) if !is_kernel => Some(Ty::RemoteBarrier),
                ("Pipeline", None) if !is_kernel => Some(Ty::Pipeline),
                ("PipelineState", None) if !is_kernel => Some(Ty::PipelineState),
                ("Shared", Some(syn::GenericArgument::Type(syn::Type::Path(e)))) if !is_kernel => {
                    match scalar_of_path(&e.path) {
                        Some(s) => Some(Ty::Shared(s)),
                        None => bad(errs, text),
                    }
                }
                ("TensorMap", Some(g)) => rank_arg(g, TMA_RANKS, "a tensor map", errs).map(Ty::tensor_map),
                _ => bad(errs, text),
            }
        }
        syn::Type::Reference(r) => {
            let syn::Type::Slice(sl) = &*r.elem else {
                return bad(errs, text);
            };
            let syn::Type::Path(e) = &*sl.elem else {
                return bad(errs, text);
            };
            match scalar_of_path(&e.path) {
                Some(s) => Some(Ty::Global { elem: s, mutable: r.mutability.is_some() }),
                None => {
                    errs.at(
                        Sp::of(&*sl.elem),
                        format!("buffer elements must be scalars, found `{}`", quote::quote!(#e)),
                    );
                    None
                }
            }
        }
        syn::Type::Paren(p) => parse_type(&p.elem, is_kernel, errs),
        _ => {
            let _ = t.span();
            bad(errs, text)
        }
    }
}
