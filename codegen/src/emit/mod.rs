//! Emission of PTX text from the IR.

//!
//! The public surface is the re-exports below and [`watchdog`] (the record's layout, which the
//! runtime decodes). The printer's own parts are private; the few the runtime and the
//! instruction-interface test share with it are `#[doc(hidden)]`, not a stable API.

mod cache;
pub(crate) mod escape;
/// One instruction's PTX lines; `pub` for `codegen/tests/inst_interface.rs`, which prints
/// every instruction through it.
#[doc(hidden)]
pub mod inst;
/// Symbol names; `pub` for the runtime, which looks up the entry and the dynamic-shared
/// symbol the printer declared.
#[doc(hidden)]
pub mod names;
/// Register names; `pub` for the simulator, whose messages name registers as the PTX does.
#[doc(hidden)]
pub mod operand;
mod printer;
mod tcgen05;
mod wait_loop;
mod warp;
pub mod watchdog;
mod wgmma;

pub use names::entry_symbol;
pub use printer::{emit_kernel, emit_module, EmitOptions, DEFAULT_WAIT_SUSPEND_HINT_NS, DEFAULT_WAIT_TIMEOUT_NS};
/// The printer without the target checks: only the ptxas tests print what a target lacks.
#[cfg(any(test, feature = "test-support"))]
pub use printer::emit_module_unchecked;
pub use wait_loop::{WaitLoop, WAIT_SPINS_PER_CHECK};
pub use watchdog::{FlagBuffer, WaitKind, WaitSite};
