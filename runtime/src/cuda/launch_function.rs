//! A function as launches use it: the driver's function, and the attributes launches raised
//! on it, so a launch sets an attribute only when it needs more than was set before (before,
//! every launch of a kernel with more than 48 KiB of shared memory made a driver call).

use super::driver_err_with;
use crate::error::Result;
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::CudaFunction;
use std::sync::{Arc, Mutex};

/// The attributes set on one driver function. Shared by every handle to the function: two
/// kernels with the same text load one function, and a second record of its attributes would
/// lower what the first raised.
#[derive(Debug, Default)]
pub(crate) struct Raised {
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` as last set (0: never); only raised,
    /// never lowered, so a launch on another thread never finds it below what it set.
    dynamic_shared: u32,
    /// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED` set.
    non_portable_cluster: bool,
}

/// A launch's function with its attributes' state.
#[derive(Clone)]
pub(crate) struct LaunchFunction {
    pub(crate) f: CudaFunction,
    raised: Arc<Mutex<Raised>>,
}

impl LaunchFunction {
    /// Let launches give the function `bytes` of dynamic shared memory (a driver call only
    /// when more than any launch asked before); `kernel` names it in the error.
    pub(crate) fn allow_dynamic_shared(&self, bytes: u32, kernel: &str) -> Result<()> {
        self.raised.lock().unwrap_or_else(|p| p.into_inner()).raise_dynamic_shared(bytes, || {
            self.f
                .set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
                .map_err(driver_err_with(|| {
                    format!("raising the dynamic shared memory limit of `{kernel}` to {bytes} bytes")
                }))
        })
    }

    /// Allow cluster shapes beyond the portable size (`cluster` names it in the error).
    pub(crate) fn allow_non_portable_cluster(&self, cluster: [u32; 3], kernel: &str) -> Result<()> {
        self.raised.lock().unwrap_or_else(|p| p.into_inner()).raise_non_portable_cluster(|| {
            self.f
                .set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                .map_err(driver_err_with(|| {
                    format!("allowing the non-portable cluster shape {cluster:?} of `{kernel}`")
                }))
        })
    }
}

impl Raised {
    /// Call `set` (the driver) when `bytes` is more than was set; remember it if `set` worked.
    fn raise_dynamic_shared(&mut self, bytes: u32, set: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.dynamic_shared < bytes {
            set()?;
            self.dynamic_shared = bytes;
        }
        Ok(())
    }

    /// Call `set` (the driver) the first time; remember it if `set` worked.
    fn raise_non_portable_cluster(&mut self, set: impl FnOnce() -> Result<()>) -> Result<()> {
        if !self.non_portable_cluster {
            set()?;
            self.non_portable_cluster = true;
        }
        Ok(())
    }
}

/// The attribute state of every function loaded for launches, by driver handle (a list:
/// searched only when a kernel text is first launched, and small beside a map in the device).
#[derive(Default)]
pub(crate) struct RaisedByFunction(Mutex<Vec<(usize, Arc<Mutex<Raised>>)>>);

impl RaisedByFunction {
    /// `f` with the state every other handle to the same driver function shares. (Entries
    /// live as long as the module cache, which keeps every module, so a handle's address is
    /// never reused while it is here.)
    pub(crate) fn wrap(&self, f: CudaFunction) -> LaunchFunction {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let key = f.cu_function() as usize;
        let raised = match all.iter().find(|(k, _)| *k == key) {
            Some((_, r)) => r.clone(),
            None => {
                let r = Arc::new(Mutex::new(Raised::default()));
                all.push((key, r.clone()));
                r
            }
        };
        LaunchFunction { f, raised }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RuntimeError;
    use std::cell::RefCell;

    #[test]
    fn attributes_are_set_only_when_a_launch_needs_more() {
        let mut raised = Raised::default();
        let calls = RefCell::new(Vec::new());
        let set = |bytes: u32| {
            let calls = &calls;
            move || {
                calls.borrow_mut().push(bytes);
                Ok(())
            }
        };
        for bytes in [100_000, 100_000, 60_000, 150_000, 100_000] {
            raised.raise_dynamic_shared(bytes, set(bytes)).unwrap();
        }
        assert_eq!(*calls.borrow(), [100_000, 150_000], "raised, never lowered, never repeated");
        let failed = raised.raise_dynamic_shared(200_000, || Err(RuntimeError::Config("refused".into())));
        assert!(failed.is_err());
        raised.raise_dynamic_shared(200_000, set(200_000)).unwrap();
        assert_eq!(*calls.borrow(), [100_000, 150_000, 200_000], "a failed raise is tried again");
        for _ in 0..3 {
            raised.raise_non_portable_cluster(set(1)).unwrap();
        }
        assert_eq!(calls.borrow().len(), 4, "the cluster permission once");
    }
}
