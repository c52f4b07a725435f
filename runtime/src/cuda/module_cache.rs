//! PTX modules loaded once per distinct PTX text.
//!
//! The map is keyed by the full PTX text (which includes the watchdog's setting: its timeout
//! and record are printed into the text): a hash only picks the bucket and the key's content
//! comparison decides, so two texts whose hashes collide never share a module.

use super::driver_err;
use super::jit::{JitOptions, LoadStats};
use super::launch_function::{LaunchFunction, RaisedByFunction};
use crate::error::Result;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use phaser_codegen::emit::watchdog::RECORD_SYMBOL;
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

/// Functions keyed by the address of their PTX text, each entry keeping its text alive.
/// An entry: the text (kept alive), the entry name, the value.
type ByTextEntry<M> = (Arc<str>, String, M);

struct ByText<M>(Mutex<HashMap<usize, ByTextEntry<M>>>);

type FunctionsByText = ByText<LaunchFunction>;

impl<M> Default for ByText<M> {
    fn default() -> Self {
        ByText(Mutex::default())
    }
}

impl<M: Clone> ByText<M> {
    fn key(ptx: &Arc<str>) -> usize {
        Arc::as_ptr(ptx) as *const u8 as usize
    }

    fn get(&self, ptx: &Arc<str>, name: &str) -> Option<M> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(&Self::key(ptx)) {
            Some((text, n, f)) if Arc::ptr_eq(text, ptx) && n == name => Some(f.clone()),
            Some(_) | None => None,
        }
    }

    fn insert(&self, ptx: &Arc<str>, name: &str, f: &M) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(Self::key(ptx), (ptx.clone(), name.to_owned(), f.clone()));
    }
}

/// The CUDA modules of one context, and how they are made ([`JitOptions`]).
pub struct ModuleCache {
    modules: PtxKeyed<Arc<CudaModule>>,
    /// Launch functions by the identity of their PTX text (a kernel keeps its printed text
    /// in one `Arc`): a launch of a kernel seen before neither hashes its text nor asks the
    /// driver for the function again. The entry holds the text, so its address is not reused
    /// while the entry lives.
    functions: FunctionsByText,
    /// What launches raised of each function's attributes (shared by its handles); boxed, as
    /// it is read only when a kernel text is first launched, to keep `Device` small.
    raised: Box<RaisedByFunction>,
    jit: JitOptions,
    /// How the last module was made (`bench_jit` reads it).
    last_load: Mutex<Option<LoadStats>>,
}

impl ModuleCache {
    pub fn new(jit: JitOptions) -> ModuleCache {
        ModuleCache {
            modules: PtxKeyed::default(),
            functions: Default::default(),
            raised: Default::default(),
            jit,
            last_load: Mutex::new(None),
        }
    }

    pub fn jit_options(&self) -> &JitOptions {
        &self.jit
    }

    /// The module built from `ptx`, JIT-loading it on first use.
    pub fn module(&self, ctx: &Arc<CudaContext>, ptx: &str, kernel: &str) -> Result<Arc<CudaModule>> {
        self.load(ctx, ptx, kernel, None)
    }

    /// The function `name` of the module built from `ptx`.
    pub fn function(&self, ctx: &Arc<CudaContext>, ptx: &str, name: &str) -> Result<CudaFunction> {
        self.module(ctx, ptx, name)?
            .load_function(name)
            .map_err(driver_err(format!("finding kernel `{name}` in its module")))
    }

    /// Like [`ModuleCache::function`]; when the PTX declares the watchdog's record pointer,
    /// a newly loaded module gets it set to `record` (through `stream`) before any launch.
    pub fn function_with_record(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        ptx: &str,
        name: &str,
        record: u64,
    ) -> Result<CudaFunction> {
        self.load(ctx, ptx, name, Some((stream, record)))?
            .load_function(name)
            .map_err(driver_err(format!("finding kernel `{name}` in its module")))
    }

    /// [`ModuleCache::function_with_record`] for a launch: found by the text's identity
    /// first (see `functions`), loaded through the text-keyed cache otherwise.
    pub(crate) fn launch_function(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        ptx: &Arc<str>,
        name: &str,
        record: u64,
    ) -> Result<LaunchFunction> {
        if let Some(f) = self.functions.get(ptx, name) {
            return Ok(f);
        }
        let f = self.raised.wrap(self.function_with_record(ctx, stream, ptx, name, record)?);
        self.functions.insert(ptx, name, &f);
        Ok(f)
    }

    fn load(
        &self,
        ctx: &Arc<CudaContext>,
        ptx: &str,
        kernel: &str,
        record: Option<(&Arc<CudaStream>, u64)>,
    ) -> Result<Arc<CudaModule>> {
        self.modules.get_or_load(ptx, |text| {
            let (m, stats) = super::jit::load(ctx, text, kernel, &self.jit)?;
            *self.last_load.lock().unwrap_or_else(|p| p.into_inner()) = Some(stats);
            if let Some((stream, addr)) = record.filter(|_| declares_record(text)) {
                let mut global = m
                    .get_global(RECORD_SYMBOL, stream)
                    .map_err(driver_err(format!("finding the watchdog record pointer of `{kernel}`")))?;
                stream
                    .memcpy_htod(&addr.to_le_bytes(), &mut global)
                    .map_err(driver_err(format!("setting the watchdog record pointer of `{kernel}`")))?;
                stream.synchronize().map_err(driver_err("setting the watchdog record pointer"))?;
            }
            Ok(m)
        })
    }

    /// How the most recently loaded module was made.
    pub fn last_load(&self) -> Option<LoadStats> {
        *self.last_load.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.modules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether `ptx` declares the watchdog's record pointer (printed with the record on).
pub fn declares_record(ptx: &str) -> bool {
    ptx.lines().any(|l| l.starts_with(".visible .global") && l.contains(RECORD_SYMBOL))
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
    fn functions_are_found_by_the_identity_of_their_text_and_their_name() {
        let cache = ByText::<u32>::default();
        let text: Arc<str> = Arc::from(".entry k {}");
        cache.insert(&text, "k", &7);
        assert_eq!(cache.get(&text, "k"), Some(7));
        assert_eq!(cache.get(&text.clone(), "k"), Some(7), "a clone of the Arc is the same text");
        let equal: Arc<str> = Arc::from(".entry k {}");
        assert_eq!(cache.get(&equal, "k"), None, "equal text elsewhere is not this entry");
        assert_eq!(cache.get(&text, "other"), None, "another entry name");
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
    fn only_the_declaration_counts_as_declaring_the_record() {
        assert!(declares_record(".version 8.0\n.visible .global .align 8 .u64 phaser_watchdog_record = 0;\n"));
        assert!(!declares_record("// phaser_watchdog_record in a comment\n.visible .entry k() {}\n"));
        assert!(!declares_record("\tld.volatile.global.u64 %wd_rec, [phaser_watchdog_record];\n"));
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
