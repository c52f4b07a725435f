//! A kernel's PTX, printed once and kept beside the IR it was printed from.
//!
//! The cache keeps a copy of that IR and hands the text out only while the kernel still
//! equals it, so editing a kernel's public fields after a launch re-prints instead of
//! running stale PTX. Comparing IR is far cheaper than printing it. The text depends on the
//! printer's options (the watchdog's timeout is in it), so each is kept per options.

use super::printer::{emit_module, EmitOptions};
use crate::error::Result;
use crate::ir::{Kernel, Module};
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The IR as printed, and its text per options.
type Printed = (Box<Kernel>, Vec<(EmitOptions, Arc<str>)>);

#[derive(Default)]
pub struct PtxCache {
    printed: Mutex<Option<Printed>>,
    emissions: AtomicU32,
}

/// A clone starts empty: it is a separate kernel that may be edited on its own.
impl Clone for PtxCache {
    fn clone(&self) -> Self {
        PtxCache::default()
    }
}

/// The cache is not part of a kernel's identity.
impl PartialEq for PtxCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for PtxCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PtxCache {{ emissions: {} }}", self.emissions.load(Ordering::Relaxed))
    }
}

impl Kernel {
    /// This kernel's PTX (default [`super::EmitOptions`]), printed on the first call and
    /// again only if the kernel was edited since.
    pub fn ptx(&self) -> Result<Arc<str>> {
        self.ptx_with(&EmitOptions::default())
    }

    /// This kernel's PTX printed with `opts` (what the CUDA backend loads: the launch's
    /// watchdog decides the options), cached per options like [`Kernel::ptx`].
    pub fn ptx_with(&self, opts: &EmitOptions) -> Result<Arc<str>> {
        // Before comparing IR (recursive) with the cached copy.
        crate::arch::check::check_nesting(self)?;
        let cache = &self.ptx_cache;
        let mut printed = cache.printed.lock().unwrap_or_else(|p| p.into_inner());
        match printed.as_mut() {
            Some((ir, texts)) if **ir == *self => {
                if let Some((_, text)) = texts.iter().find(|(o, _)| o == opts) {
                    return Ok(text.clone());
                }
            }
            _ => *printed = Some((Box::new(self.clone()), Vec::new())),
        }
        let text: Arc<str> = emit_module(&Module::new(vec![self.clone()]), opts)?.into();
        cache.emissions.fetch_add(1, Ordering::Relaxed);
        if let Some((_, texts)) = printed.as_mut() {
            texts.push((opts.clone(), text.clone()));
        }
        Ok(text)
    }

    /// How many times [`Kernel::ptx`] printed this kernel (1 after any number of launches
    /// of an unedited kernel).
    pub fn ptx_emissions(&self) -> u32 {
        self.ptx_cache.emissions.load(Ordering::Relaxed)
    }
}
