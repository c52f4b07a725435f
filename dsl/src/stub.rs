//! What a kernel or device function expands to after a macro error: its item with every
//! associated function of the real expansion (cubecl-macros style), each taking as many
//! arguments as the source declares, of any type, so call sites type-check and rustc reports
//! only the macro's errors.

use crate::parse::ast::{FnDef, FnKind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The parameter list as written (some parameters may not have parsed).
pub struct Shape {
    /// For each parameter, whether it is `#[comptime]`.
    comptime: Vec<bool>,
    /// For each parameter, its name (when it is a plain name).
    names: Vec<Option<String>>,
}

impl Shape {
    pub fn of(item: &syn::ItemFn) -> Shape {
        let comptime = item
            .sig
            .inputs
            .iter()
            .map(|i| match i {
                syn::FnArg::Typed(pt) => pt.attrs.iter().any(|a| a.path().is_ident("comptime")),
                syn::FnArg::Receiver(_) => false,
            })
            .collect();
        let names = item
            .sig
            .inputs
            .iter()
            .map(|i| match i {
                syn::FnArg::Typed(pt) => match &*pt.pat {
                    syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        Shape { comptime, names }
    }
}

pub fn stub(f: &FnDef, shape: &Shape) -> TokenStream {
    let (attrs, vis, name) = (&f.attrs, &f.vis, &f.name);
    let unreachable = quote!(::core::unreachable!("this item did not compile"));
    let allow = quote!(#[allow(non_camel_case_types, dead_code, unused_variables, clippy::all)]);
    let args = |n: usize, prefix: &str| -> (Vec<proc_macro2::Ident>, Vec<proc_macro2::Ident>) {
        let names = (0..n).map(|i| format_ident!("__{prefix}{i}")).collect();
        let tys = (0..n).map(|i| format_ident!("__{}{i}", prefix.to_uppercase())).collect();
        (names, tys)
    };
    match f.kind {
        FnKind::Kernel { target } => {
            let name_str = name.to_string();
            let target_variant = format_ident!("{}", format!("{target:?}"));
            let (c, ct) = args(shape.comptime.iter().filter(|c| **c).count(), "c");
            let (a, at) = args(shape.comptime.len(), "a");
            let res = |t: TokenStream| quote!(::core::result::Result<#t, ::phaser::__private::CodegenError>);
            let (kernel_t, string_t) = (res(quote!(::phaser::__private::Kernel)), res(quote!(::std::string::String)));
            let plain = if c.is_empty() {
                quote! {
                    pub fn kernel() -> #kernel_t { #unreachable }
                    pub fn ptx() -> #string_t { #unreachable }
                }
            } else {
                quote!()
            };
            quote! {
                #(#attrs)*
                #allow
                #vis struct #name {}

                #allow
                impl #name {
                    pub const NAME: &'static str = #name_str;
                    pub const TARGET: ::phaser::__private::Target = ::phaser::__private::Target::#target_variant;
                    pub fn name() -> &'static str { Self::NAME }
                    pub fn build<#(#ct),*>(__target: ::phaser::__private::Target, #(#c: #ct),*) -> #kernel_t { #unreachable }
                    pub fn kernel_for<#(#ct),*>(#(#c: #ct),*) -> #kernel_t { #unreachable }
                    pub fn specializations() -> usize { 0 }
                    pub fn ptx_for<#(#ct),*>(#(#c: #ct),*) -> #string_t { #unreachable }
                    #plain
                    pub fn launch<#(#at),*>(
                        __dev: &::phaser::__private::Device,
                        __cfg: ::phaser::__private::LaunchConfig,
                        #(#a: #at),*
                    ) -> ::core::result::Result<::phaser::__private::LaunchReport, ::phaser::__private::RuntimeError> {
                        #unreachable
                    }
                    pub fn launch_on<'__a, #(#at),*>(
                        __stream: &'__a ::phaser::__private::Stream<'_>,
                        __cfg: ::phaser::__private::LaunchConfig,
                        #(#a: #at),*
                    ) -> ::core::result::Result<::phaser::__private::Launch<'__a>, ::phaser::__private::RuntimeError> {
                        #unreachable
                    }
                }
            }
        }
        FnKind::Device => {
            let (a, at) = args(shape.comptime.len(), "a");
            // A parameter whose type the macro understood keeps it (the caller's expansion
            // converts arguments to it); the others take anything.
            let (mut generics, mut tys) = (Vec::new(), Vec::new());
            for (i, t) in at.iter().enumerate() {
                let known = shape.names[i]
                    .as_ref()
                    .and_then(|n| f.params.iter().find(|p| p.name == n.as_str()))
                    .filter(|p| !p.ty.is_lenient());
                match known {
                    Some(p) => tys.push(crate::expand::device_rust_type(p.ty)),
                    None => {
                        generics.push(t.clone());
                        tys.push(quote!(#t));
                    }
                }
            }
            let ret = match &f.ret {
                Some((ty, _)) => crate::expand::device_rust_type(*ty),
                None => quote!(()),
            };
            let bound = format_ident!("__phaser_device_{}", syn::ext::IdentExt::unraw(name).to_string());
            quote! {
                #(#attrs)*
                #allow
                #vis struct #name {}

                #[doc(hidden)]
                #allow
                #vis struct #bound<'k>(&'k mut ::phaser::__private::KernelBuilder);

                #allow
                impl ::phaser::__private::DeviceFn for #name {
                    type Bound<'k> = #bound<'k>;
                    fn bind(k: &mut ::phaser::__private::KernelBuilder) -> #bound<'_> {
                        #bound(k)
                    }
                }

                #allow
                impl #bound<'_> {
                    pub fn call<#(#generics),*>(self, #(#a: #tys),*) -> #ret {
                        #unreachable
                    }
                }
            }
        }
    }
}
