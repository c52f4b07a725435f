//! A kernel's PTX, printed once and kept beside the IR it was printed from.
//!
//! The cache keeps a copy of that IR and hands the text out only while the kernel still
//! equals it, so editing a kernel's public fields after a launch re-prints instead of
//! running stale PTX. Comparing IR is far cheaper than printing it.

use super::printer::emit_kernel;
use crate::error::Result;
use crate::ir::Kernel;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct PtxCache {
    /// The IR as printed and its text.
    printed: Mutex<Option<(Box<Kernel>, Arc<str>)>>,
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
    /// This kernel's PTX (default [`super::EmitOptions`], what the CUDA backend loads),
    /// printed on the first call and again only if the kernel was edited since.
    pub fn ptx(&self) -> Result<Arc<str>> {
        // Before comparing IR (recursive) with the cached copy.
        crate::arch::check::check_nesting(self)?;
        let cache = &self.ptx_cache;
        let mut printed = cache.printed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((ir, text)) = printed.as_ref() {
            if **ir == *self {
                return Ok(text.clone());
            }
        }
        let text: Arc<str> = emit_kernel(self)?.into();
        cache.emissions.fetch_add(1, Ordering::Relaxed);
        *printed = Some((Box::new(self.clone()), text.clone()));
        Ok(text)
    }

    /// How many times [`Kernel::ptx`] printed this kernel (1 after any number of launches
    /// of an unedited kernel).
    pub fn ptx_emissions(&self) -> u32 {
        self.ptx_cache.emissions.load(Ordering::Relaxed)
    }
}
