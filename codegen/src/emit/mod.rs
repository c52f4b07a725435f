//! Emission of PTX text from the IR.

mod cache;
pub mod inst;
pub mod operand;
pub mod printer;
pub mod tcgen05;
pub mod wgmma;

pub use cache::PtxCache;
pub use printer::{
    emit_kernel, emit_module, emit_module_unchecked, EmitOptions, DEFAULT_WAIT_SUSPEND_HINT_NS, DEFAULT_WAIT_TIMEOUT_NS,
};
