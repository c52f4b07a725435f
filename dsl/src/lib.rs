//! `#[phaser::kernel]` and `#[phaser::device]`: write mbarrier pipelines as Rust functions.
//!
//! The macro is thin and works in three stages, one private module each:
//! - `parse`: syn → DSL AST with spans (unsupported syntax is reported here);
//! - `check`: names, arity, argument kinds, types, mutability, literal ranges and the
//!   target's ISA (codegen's own table) — every error points at the offending tokens;
//! - `expand`: Rust code that calls codegen's `KernelBuilder`, so `#[comptime]` parameters
//!   specialize the IR when it is built.
//!
//! The `T.*` ops are codegen's op registry (`phaser_codegen::registry`), which all three
//! stages read: the checker its parameters and, for the target check, its lowering; the
//! expansion calls the entry's lowering. See `dsl/README.md`.

mod check;
mod expand;
mod parse;
mod stub;
mod suggest;
#[cfg(test)]
mod tests;
mod types;

use proc_macro::TokenStream;
use quote::quote;

/// A kernel: `#[phaser::kernel(target = "sm_90a")] fn name(params) { body }`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errs = parse::Errors::default();
    let target = parse::parse_kernel_attr(attr.into(), &mut errs);
    run(item, parse::ast::FnKind::Kernel { target }, errs, expand::kernel)
}

/// A helper inlined into the kernels that call it: `#[phaser::device] fn f(x: u32) -> u32 { .. }`.
#[proc_macro_attribute]
pub fn device(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errs = parse::Errors::default();
    if !attr.is_empty() {
        let a: proc_macro2::TokenStream = attr.into();
        errs.push(syn::Error::new_spanned(a, "`#[phaser::device]` takes no options"));
    }
    run(item, parse::ast::FnKind::Device, errs, expand::device)
}

fn run(
    item: TokenStream,
    kind: parse::ast::FnKind,
    mut errs: parse::Errors,
    expand: fn(&parse::ast::FnDef) -> proc_macro2::TokenStream,
) -> TokenStream {
    let item = match syn::parse::<syn::ItemFn>(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error().into(),
    };
    let shape = stub::Shape::of(&item);
    let f = parse::parse_fn(item, kind, &mut errs);
    check::check_fn(&f, &mut errs);
    if errs.is_empty() {
        return expand(&f).into();
    }
    // The item's API stays defined (with `compile_error!`s above it), so the errors above are
    // the only ones: no "no function `launch`" at every call site.
    let errors = errs.into_compile_errors();
    let stub = stub::stub(&f, &shape);
    quote!(#errors #stub).into()
}
