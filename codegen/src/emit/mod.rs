//! Emission of PTX text from the IR.

mod cache;
pub mod escape;
pub mod inst;
pub mod names;
pub mod operand;
pub mod printer;
pub mod tcgen05;
pub mod wait_loop;
pub mod warp;
pub mod watchdog;
pub mod wgmma;

pub use names::entry_symbol;
pub use printer::{
    emit_kernel, emit_module, emit_module_unchecked, EmitOptions, DEFAULT_WAIT_SUSPEND_HINT_NS, DEFAULT_WAIT_TIMEOUT_NS,
};
pub use wait_loop::{WaitLoop, WAIT_SPINS_PER_CHECK};
pub use watchdog::WaitSite;
