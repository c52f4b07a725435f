//! PTX modules loaded once per distinct PTX text (keyed by its hash).

use super::driver_err;
use crate::error::Result;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct ModuleCache {
    modules: Mutex<HashMap<u64, Arc<CudaModule>>>,
}

impl ModuleCache {
    /// The function `name` of the module built from `ptx`, JIT-loading it on first use.
    pub fn function(&self, ctx: &Arc<CudaContext>, ptx: &str, name: &str) -> Result<CudaFunction> {
        let mut h = DefaultHasher::new();
        ptx.hash(&mut h);
        let key = h.finish();
        let module = {
            let mut map = self.modules.lock().unwrap_or_else(|p| p.into_inner());
            match map.get(&key) {
                Some(m) => m.clone(),
                None => {
                    let m = ctx
                        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
                        .map_err(driver_err(format!("JIT-loading the PTX of kernel `{name}`")))?;
                    map.insert(key, m.clone());
                    m
                }
            }
        };
        module.load_function(name).map_err(driver_err(format!("finding kernel `{name}` in its module")))
    }

    pub fn len(&self) -> usize {
        self.modules.lock().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
