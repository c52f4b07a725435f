//! A kernel's PTX, printed once and kept beside it (`ir::Printed`). A finished kernel cannot
//! change, so the text printed from it stays right: no copy of the IR is kept or compared.
//! The text depends on the printer's options (the watchdog's timeout is in it), so each set
//! of options is printed once.

use super::printer::{emit_module, EmitOptions};
use crate::error::Result;
use crate::ir::{Kernel, Module};
use std::sync::Arc;

impl Kernel {
    /// This kernel's PTX (default [`EmitOptions`]), printed on the first call.
    pub fn ptx(&self) -> Result<Arc<str>> {
        self.ptx_with(&EmitOptions::default())
    }

    /// This kernel's PTX printed with `opts` (what the CUDA backend loads: the launch's
    /// watchdog decides the options), kept per options like [`Kernel::ptx`].
    pub fn ptx_with(&self, opts: &EmitOptions) -> Result<Arc<str>> {
        let print = || -> Result<Arc<str>> {
            // Before the clone into a module: cloning IR of unbounded depth would recurse
            // without bound.
            crate::arch::check::check_nesting(self)?;
            Ok(emit_module(&Module::new(vec![self.clone()]), opts)?.into())
        };
        if *opts == EmitOptions::default() {
            self.printed.default_or(print)
        } else {
            self.printed.keyed_or(opts, print)
        }
    }

    /// How many times this kernel's PTX was printed (1 after any number of launches with
    /// the same options).
    pub fn ptx_emissions(&self) -> u32 {
        self.printed.prints()
    }
}
