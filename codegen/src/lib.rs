//! Phaser's compiler library: the kernel IR, its builder, target checks and the PTX printer.
//!
//! Data flows one way: builder (or the `#[phaser::kernel]` macro) → [`ir::Kernel`] →
//! [`target::check_kernel`] → [`emit::emit_module`] → PTX text.

pub mod build;
pub mod emit;
pub mod error;
pub mod ir;
pub mod target;

pub use build::KernelBuilder;
pub use emit::{emit_kernel, emit_module, EmitOptions};
pub use error::{CodegenError, Diagnostic, Result};
pub use ir::{Kernel, Module, SourceLoc, Type, Value};
pub use target::{PtxVersion, Target};
pub mod ptxas;
pub mod zoo;
