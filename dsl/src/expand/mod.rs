//! Stage 3: expansion. A kernel becomes a unit struct named after the fn, whose `build`
//! runs the body against a `KernelBuilder`; a device function becomes a unit struct whose
//! `DeviceFn` impl binds the caller's builder and whose `call` builds its body into it (inlining).

pub mod body;
mod table;

use crate::parse::ast::*;
use crate::types::Ty;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The Rust type a device function takes or returns for a DSL type.
pub fn device_rust_type(t: Ty) -> TokenStream {
    match t {
        Ty::Scalar(s) => {
            let r = s.rust_type();
            quote!(::phaser::__private::Scalar<#r>)
        }
        Ty::Bool => quote!(::phaser::__private::Scalar<bool>),
        Ty::State => quote!(::phaser::__private::Scalar<::phaser::__private::StateTy>),
        Ty::Barrier => quote!(::phaser::__private::Barrier),
        Ty::RemoteBarrier => quote!(::phaser::__private::RemoteBarrier),
        Ty::Barriers => quote!(::phaser::__private::BarrierArray),
        Ty::Pipeline => quote!(::phaser::__private::Pipeline),
        Ty::PipelineState => quote!(::phaser::__private::PipelineState),
        Ty::Shared(_) => quote!(::phaser::__private::SharedArray),
        Ty::RemoteShared(_) => quote!(::phaser::__private::RemoteShared),
        Ty::Global { .. } => quote!(::phaser::__private::GlobalPtr),
        Ty::TensorMap { .. } => quote!(::phaser::__private::TensorMapRef),
        Ty::Tile { .. } => quote!(::phaser::__private::SharedTile),
        Ty::Registers { .. } => quote!(::phaser::__private::RegisterArray),
        _ => quote!(()),
    }
}

const ALLOWS: &str = "non_snake_case, unused_variables, unused_mut, unused_braces, unused_parens, clippy::all";

fn allows() -> TokenStream {
    let a: TokenStream = ALLOWS.parse().expect("lint names");
    quote!(#[allow(#a)])
}

pub fn kernel(f: &FnDef) -> TokenStream {
    let FnKind::Kernel { target } = f.kind else { unreachable!("kernel") };
    let (attrs, vis, name) = (&f.attrs, &f.vis, &f.name);
    // `r#loop` names the kernel `loop`: the name a Rust reader sees (the PTX printer escapes
    // whatever is not a PTX identifier).
    let name_str = syn::ext::IdentExt::unraw(name).to_string();
    let target_variant = format_ident!("{}", format!("{target:?}"));
    let comptime: Vec<_> = f.params.iter().filter(|p| p.comptime).map(|p| body::comptime_ident(&p.name)).collect();
    let key_tys: Vec<_> = comptime.iter().map(|_| quote!(u32)).collect();

    let mut param_decls = Vec::new();
    let mut launch_params = Vec::new();
    let mut launch_args = Vec::new();
    // `launch_on`'s parameters: every borrow lives as long as the returned guard.
    let mut async_params = Vec::new();
    let mut async_args = Vec::new();
    for p in &f.params {
        let (n, s) = (&p.name, syn::ext::IdentExt::unraw(&p.name).to_string());
        if p.comptime {
            let c = body::comptime_ident(n);
            launch_params.push(quote!(#c: u32));
            async_params.push(quote!(#c: u32));
            continue;
        }
        match p.ty {
            Ty::Scalar(sc) => {
                let t = sc.codegen_type();
                let r = sc.rust_type();
                param_decls.push(if p.mutable {
                    quote!(let #n = { let __v = __k.param(#s, #t); __k.mut_var(__v) };)
                } else {
                    quote!(let #n = __k.param(#s, #t);)
                });
                launch_params.push(quote!(#n: #r));
                launch_args.push(quote!(::phaser::__private::Arg::scalar(#n)));
                async_params.push(quote!(#n: #r));
                async_args.push(quote!(::phaser::__private::Arg::scalar(#n)));
            }
            Ty::Global { elem, mutable } => {
                let t = elem.codegen_type();
                let r = elem.rust_type();
                param_decls.push(quote!(let #n = __k.param_global(#s, #t, #mutable);));
                if mutable {
                    launch_params.push(quote!(#n: &mut ::phaser::__private::Buffer<#r>));
                    launch_args.push(quote!(::phaser::__private::Arg::buffer(&*#n)));
                    async_params.push(quote!(#n: &'__a mut ::phaser::__private::Buffer<#r>));
                    async_args.push(quote!(::phaser::__private::Arg::buffer_mut(#n)));
                } else {
                    launch_params.push(quote!(#n: &::phaser::__private::Buffer<#r>));
                    launch_args.push(quote!(::phaser::__private::Arg::buffer(#n)));
                    async_params.push(quote!(#n: &'__a ::phaser::__private::Buffer<#r>));
                    async_args.push(quote!(::phaser::__private::Arg::buffer(#n)));
                }
            }
            Ty::TensorMap { rank, elem, .. } => {
                let attr = p.tma.as_ref();
                let swizzle = attr.and_then(|a| a.swizzle).map(|(sw, _)| format_ident!("{}", format!("{sw:?}")));
                // The box's compile-time values, built before the parameter (flat, like the body).
                let mut temps = body::Out::new();
                let box_dims = attr
                    .and_then(|a| a.box_dims.as_ref())
                    .map(|(d, _)| d.iter().rev().map(|x| body::konst(x, &mut temps)).collect::<Vec<_>>());
                if elem.is_none() && swizzle.is_none() && box_dims.is_none() {
                    param_decls.push(quote!(let #n = __k.param_tensor_map(#s, #rank);));
                } else {
                    let opt = |x: Option<TokenStream>| match x {
                        Some(x) => quote!(::core::option::Option::Some(#x)),
                        None => quote!(::core::option::Option::None),
                    };
                    let elem = opt(elem.map(|e| e.codegen_type()));
                    let swizzle = opt(swizzle.map(|sw| quote!(__p::Swizzle::#sw)));
                    let box_dims = opt(box_dims.map(|d| quote!(::std::vec![#(#d),*])));
                    param_decls.push(quote!(let #n = {
                        #(#temps)*
                        let __spec = __p::TensorMapSpec {
                            elem: #elem,
                            box_dims: #box_dims,
                            swizzle: #swizzle,
                            declared: true,
                            loc: ::core::option::Option::None,
                        };
                        __k.param_tensor_map_with(#s, #rank, __spec)
                    };));
                }
                launch_params.push(quote!(#n: &::phaser::__private::TensorMap));
                launch_args.push(quote!(::phaser::__private::Arg::TensorMap(#n)));
                async_params.push(quote!(#n: &'__a ::phaser::__private::TensorMap));
                async_args.push(quote!(::phaser::__private::Arg::TensorMap(#n)));
            }
            _ => {}
        }
    }
    let body = body::stmts(&f.body.stmts);
    let plain = if comptime.is_empty() {
        quote! {
            /// The kernel, built once for [`Self::TARGET`] and cached.
            pub fn kernel() -> ::core::result::Result<::phaser::__private::Kernel, ::phaser::__private::CodegenError> {
                Self::kernel_for()
            }
            /// The kernel's PTX text.
            pub fn ptx() -> ::core::result::Result<::std::string::String, ::phaser::__private::CodegenError> {
                Self::ptx_for()
            }
        }
    } else {
        quote!()
    };
    let allow = allows();
    let registration = registration(name, &name_str, &target_variant, &f.params);
    let doc_build = format!("Build `{name_str}`'s IR for `target` (uncached; the `#[comptime]` values specialize it).");
    quote! {
        #(#attrs)*
        #[allow(non_camel_case_types)]
        // Braced, so the name lives in the type namespace only: a user's `let` of the same
        // name does not clash with it (a unit struct would be a pattern there).
        #vis struct #name {}

        #allow
        impl #name {
            /// The kernel's PTX entry name.
            pub const NAME: &'static str = #name_str;
            /// The target named in `#[phaser::kernel(target = ..)]`.
            pub const TARGET: ::phaser::__private::Target = ::phaser::__private::Target::#target_variant;

            pub fn name() -> &'static str {
                Self::NAME
            }

            #[doc = #doc_build]
            pub fn build(
                __target: ::phaser::__private::Target,
                #(#comptime: u32),*
            ) -> ::core::result::Result<::phaser::__private::Kernel, ::phaser::__private::CodegenError> {
                use ::phaser::__private as __p;
                let mut __kb = __p::KernelBuilder::new(Self::NAME, __target);
                {
                    let __k = &mut __kb;
                    #(#param_decls)*
                    #body
                    __k.set_loc(::core::option::Option::None);
                }
                __kb.finish()
            }

            /// The kernel for these `#[comptime]` values, built once per distinct values and cached.
            pub fn kernel_for(#(#comptime: u32),*) -> ::core::result::Result<::phaser::__private::Kernel, ::phaser::__private::CodegenError> {
                Self::__cache().get_or_build((#(#comptime,)*), || Self::build(Self::TARGET, #(#comptime),*))
            }

            /// How many `#[comptime]` specializations have been built and cached.
            pub fn specializations() -> usize {
                Self::__cache().len()
            }

            fn __cache() -> &'static ::phaser::__private::KernelCache<(#(#key_tys,)*)> {
                static __CACHE: ::phaser::__private::KernelCache<(#(#key_tys,)*)> = ::phaser::__private::KernelCache::new();
                &__CACHE
            }

            /// PTX text of [`Self::kernel_for`].
            pub fn ptx_for(#(#comptime: u32),*) -> ::core::result::Result<::std::string::String, ::phaser::__private::CodegenError> {
                ::phaser::__private::emit_kernel(&Self::kernel_for(#(#comptime),*)?)
            }

            #plain

            /// Launch on `dev`; the arguments follow the kernel's parameters (buffers by
            /// reference, `&mut` for `&mut [T]`; `#[comptime]` values as `u32`).
            pub fn launch(
                __dev: &::phaser::__private::Device,
                __cfg: ::phaser::__private::LaunchConfig,
                #(#launch_params),*
            ) -> ::core::result::Result<::phaser::__private::LaunchReport, ::phaser::__private::RuntimeError> {
                let __kernel = Self::kernel_for(#(#comptime),*)?;
                __dev.launch(&__kernel, __cfg, &[#(#launch_args),*])
            }

            /// Queue on `stream` and return at once: the guard keeps the buffers borrowed
            /// (`&mut` ones exclusively) until the kernel is done; `wait` for its report.
            pub fn launch_on<'__a>(
                __stream: &'__a ::phaser::__private::Stream<'_>,
                __cfg: ::phaser::__private::LaunchConfig,
                #(#async_params),*
            ) -> ::core::result::Result<::phaser::__private::Launch<'__a>, ::phaser::__private::RuntimeError> {
                let __kernel = Self::kernel_for(#(#comptime),*)?;
                __stream.launch(__kernel, __cfg, [#(#async_args),*])
            }
        }

        #registration
    }
}

/// The kernel registers itself (`inventory`), so `phaser::registry::kernels()` and the
/// `phaser` CLI (`list`, `emit`) know it without being told: name, target, `#[comptime]`
/// parameter names, where it is defined, and a build function taking the comptime values in
/// declaration order (the CLI checks their number).
fn registration(name: &syn::Ident, name_str: &str, target_variant: &syn::Ident, params: &[Param]) -> TokenStream {
    let names: Vec<String> = params.iter().filter(|p| p.comptime).map(|p| p.name.to_string()).collect();
    let values = (0..names.len()).map(|i| quote!(__values[#i]));
    let here = quote::quote_spanned!(name.span()=> ::core::file!(), ::core::line!());
    quote! {
        ::phaser::__private::inventory::submit! {
            ::phaser::__private::KernelEntry {
                name: #name_str,
                target: ::phaser::__private::Target::#target_variant,
                comptime: &[#(#names),*],
                location: (#here),
                build: {
                    fn __phaser_build(
                        __target: ::phaser::__private::Target,
                        __values: &[u32],
                    ) -> ::core::result::Result<::phaser::__private::Kernel, ::phaser::__private::CodegenError> {
                        #name::build(__target, #(#values),*)
                    }
                    __phaser_build
                },
            }
        }
    }
}

pub fn device(f: &FnDef) -> TokenStream {
    let (attrs, vis, name) = (&f.attrs, &f.vis, &f.name);
    let name_str = syn::ext::IdentExt::unraw(name).to_string();
    let mut params = Vec::new();
    let mut convs = Vec::new();
    for p in &f.params {
        let n = &p.name;
        let t = device_rust_type(p.ty);
        params.push(quote!(#n: #t));
        if p.ty.is_register() {
            convs.push(if p.mutable {
                quote!(let #n = { let __v = #n.value(); __k.mut_var(__v) };)
            } else {
                quote!(let #n = #n.value();)
            });
        }
    }
    let (ret, body) = match &f.ret {
        None => (quote!(()), body::stmts(&f.body.stmts)),
        Some((ty, _)) => {
            let (last, init) = f.body.stmts.split_last().expect("checked: a result");
            let tail = match last {
                Stmt::Expr { expr: Expr { kind: ExprKind::Return(Some(v)), .. }, .. } => &**v,
                Stmt::Expr { expr, .. } => expr,
                Stmt::Let(_) => unreachable!("checked: a result"),
            };
            let mut out = body::Out::new();
            body::stmts_into(init, &mut out);
            out.push(body::loc(tail.sp));
            let v = body::value(tail, &mut out);
            // A register array's element is copied out: the caller's array may change later.
            let v = if crate::check::reads_register_element(tail) {
                quote!({ let __v = #v; __p::Value::Reg(__k.var(__v)) })
            } else {
                v
            };
            let wrap = if ty.is_register() { quote!(__p::Scalar::new(#v)) } else { v };
            (device_rust_type(*ty), quote!(#(#out)* #wrap))
        }
    };
    let allow = allows();
    let bound = format_ident!("__phaser_device_{}", name_str);
    quote! {
        #(#attrs)*
        #[allow(non_camel_case_types)]
        // Braced, so the name lives in the type namespace only: a user's `let` of the same
        // name does not clash with it (a unit struct would be a pattern there).
        #vis struct #name {}

        /// The device function bound to a caller's kernel builder.
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
            /// Build this device function's body into the caller's kernel (it is inlined).
            pub fn call(self, #(#params),*) -> #ret {
                use ::phaser::__private as __p;
                let __k = self.0;
                // Inlining a function that (indirectly) calls itself would never end: the
                // builder reports the cycle and the call yields a placeholder.
                if !__k.enter_device(::core::concat!(::core::module_path!(), "::", #name_str)) {
                    return __p::Placeholder::placeholder();
                }
                let __ret = {
                    #(#convs)*
                    #body
                };
                __k.exit_device();
                __ret
            }
        }
    }
}
