//! Stage 1: syn → DSL AST. Syntax the DSL does not have is reported here, each with a span
//! and a suggestion; parsing goes on so one compile shows every problem.

pub mod ast;
mod expr;

use crate::types::{Scalar, Ty};
use ast::*;
use phaser_codegen::arch::check::TMA_RANKS;
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
    for a in &pt.attrs {
        if a.path().is_ident("comptime") {
            comptime = true;
        } else {
            errs.at(Sp::of(a), "unknown parameter attribute; the only one is `#[comptime]`");
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
    let ty = parse_type(&pt.ty, is_kernel, errs)?;
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
    if is_kernel {
        let ok = matches!(ty, Ty::Scalar(_) | Ty::Global { .. } | Ty::TensorMap(_));
        if !ok {
            errs.at(
                Sp::of(&*pt.ty),
                format!("a kernel parameter cannot be a {ty}; kernels take scalars, `&[T]`/`&mut [T]` buffers and `TensorMap<RANK>`"),
            );
        }
        if mutable && !matches!(ty, Ty::Scalar(_)) {
            errs.at(sp, "only scalar parameters can be `mut`");
        }
    } else if mutable && !ty.is_register() {
        errs.at(sp, "only scalar parameters can be `mut`");
    }
    Some(Param { name, ty, comptime, mutable })
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
`TensorMap<RANK>`, and in device functions `Barrier`, `Barriers`, `Shared<T>`, `State`, `RemoteBarrier`, `Pipeline`, `PipelineState`";

/// A parameter / result / `let` annotation type.
pub fn parse_type(t: &syn::Type, is_kernel: bool, errs: &mut Errors) -> Option<Ty> {
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
            let generic = match &last.arguments {
                syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => a.args.first(),
                _ => None,
            };
            match (name.as_str(), generic) {
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
                ("TensorMap", Some(syn::GenericArgument::Const(syn::Expr::Lit(l)))) => match &l.lit {
                    syn::Lit::Int(i) => match i.base10_parse::<u8>() {
                        Ok(r) if TMA_RANKS.contains(&r) => Some(Ty::TensorMap(r)),
                        _ => {
                            errs.at(
                                Sp::of(l),
                                format!("a tensor map has rank {} to {}", TMA_RANKS.start(), TMA_RANKS.end()),
                            );
                            None
                        }
                    },
                    _ => bad(errs, text),
                },
                ("TensorMap", Some(syn::GenericArgument::Type(syn::Type::Path(e)))) => {
                    // `TensorMap<2>` parses as a const; `TensorMap<N>` as a type path: say so.
                    let (lo, hi) = (TMA_RANKS.start(), TMA_RANKS.end());
                    errs.at(Sp::of(e), format!("the tensor-map rank must be a literal ({lo} to {hi})"));
                    None
                }
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
