//! PTX modules loaded once per distinct PTX text.
//!
//! The map is keyed by the full PTX text: a hash only picks the bucket and the key's content
//! comparison decides, so two texts whose hashes collide never share a module.

use super::driver_err;
use crate::error::Result;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

/// Values loaded once per distinct PTX text; the hasher is a parameter so tests can force
/// collisions.
pub struct PtxKeyed<M, S = RandomState> {
    map: Mutex<HashMap<Arc<str>, M, S>>,
}

impl<M> Default for PtxKeyed<M> {
    fn default() -> Self {
        PtxKeyed::with_hasher(RandomState::new())
    }
}

impl<M, S> PtxKeyed<M, S> {
    pub fn with_hasher(hasher: S) -> Self {
        PtxKeyed { map: Mutex::new(HashMap::with_hasher(hasher)) }
    }
}

impl<M: Clone, S: BuildHasher> PtxKeyed<M, S> {
    /// The value for `ptx`, calling `load` only if this exact text was not loaded before.
    /// The lock is held while loading, so one text is never loaded twice.
    pub fn get_or_load<E>(&self, ptx: &str, load: impl FnOnce(&str) -> Result<M, E>) -> Result<M, E> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = map.get(ptx) {
            return Ok(m.clone());
        }
        let m = load(ptx)?;
        map.insert(Arc::from(ptx), m.clone());
        Ok(m)
    }

    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The CUDA modules of one context.
#[derive(Default)]
pub struct ModuleCache {
    modules: PtxKeyed<Arc<CudaModule>>,
}

impl ModuleCache {
    /// The module built from `ptx`, JIT-loading it on first use.
    pub fn module(&self, ctx: &Arc<CudaContext>, ptx: &str, kernel: &str) -> Result<Arc<CudaModule>> {
        self.modules.get_or_load(ptx, |text| {
            ctx.load_module(cudarc::nvrtc::Ptx::from_src(text))
                .map_err(driver_err(format!("JIT-loading the PTX of kernel `{kernel}`")))
        })
    }

    /// The function `name` of the module built from `ptx`.
    pub fn function(&self, ctx: &Arc<CudaContext>, ptx: &str, name: &str) -> Result<CudaFunction> {
        self.module(ctx, ptx, name)?
            .load_function(name)
            .map_err(driver_err(format!("finding kernel `{name}` in its module")))
    }

    pub fn len(&self) -> usize {
        self.modules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::hash::{BuildHasherDefault, Hasher};

    /// Every key hashes to 0: every lookup is a collision.
    #[derive(Default)]
    struct Colliding;
    impl Hasher for Colliding {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, _: &[u8]) {}
    }

    #[test]
    fn colliding_texts_never_share_an_entry() {
        let cache: PtxKeyed<usize, BuildHasherDefault<Colliding>> = PtxKeyed::with_hasher(Default::default());
        let loads = Cell::new(0);
        let load = |text: &str| -> Result<usize, ()> {
            loads.set(loads.get() + 1);
            Ok(text.len() * 1000 + loads.get())
        };
        let a = cache.get_or_load(".entry a {}", load).unwrap();
        let b = cache.get_or_load(".entry b {}", load).unwrap();
        assert_ne!(a, b, "same hash, different text: different entries");
        assert_eq!(loads.get(), 2);
        assert_eq!(cache.get_or_load(".entry a {}", load).unwrap(), a);
        assert_eq!(cache.get_or_load(".entry b {}", load).unwrap(), b);
        assert_eq!(loads.get(), 2, "a text already loaded is not loaded again");
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_failed_load_is_not_cached() {
        let cache: PtxKeyed<u32> = PtxKeyed::default();
        assert_eq!(cache.get_or_load("x", |_| Err::<u32, _>("bad")), Err("bad"));
        assert!(cache.is_empty());
        assert_eq!(cache.get_or_load("x", |_| Ok::<_, ()>(7)), Ok(7));
        assert_eq!(cache.len(), 1);
    }
}
