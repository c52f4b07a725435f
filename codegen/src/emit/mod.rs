//! Emission of PTX text from the IR.

pub mod inst;
pub mod operand;
pub mod printer;
pub mod wgmma;

pub use printer::{emit_kernel, emit_module, EmitOptions, DEFAULT_WAIT_SUSPEND_HINT_NS, DEFAULT_WAIT_TIMEOUT_NS};
