//! Phaser's compiler library: the kernel IR, its builder, target checks and the PTX printer.
//!
//! Data flows one way: builder (or the `#[phaser::kernel]` macro) → [`ir::Kernel`] →
//! [`arch::check_kernel`] → [`emit::emit_module`] → PTX text.

pub mod arch;
pub mod builder;
pub mod emit;
pub mod error;
pub mod eval;
pub mod ir;

pub use arch::{PtxVersion, Target};
pub use builder::KernelBuilder;
pub use emit::{emit_kernel, emit_module, EmitOptions};
pub use error::{CodegenError, Diagnostic, InvalidSetting, Result};
pub use ir::{Kernel, Module, SourceLoc, Type, Value};
pub mod ptx_text;
pub mod ptxas;
/// The op registry behind the `T.*` ops: `pub` for `phaser-dsl`, which checks and expands
/// ops through it, not a stable API (the ops themselves are documented in `dsl/README.md`).
#[doc(hidden)]
pub mod registry;
/// Every op form, for the workspace's ptxas and snapshot tests (not part of the stable API).
#[cfg(any(test, feature = "test-support"))]
pub mod zoo;
