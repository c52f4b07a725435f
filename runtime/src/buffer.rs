//! Typed device buffers; the storage belongs to one backend and one device.

use crate::elem::Elem;
use crate::error::Backend;
use cudarc::driver::CudaSlice;

/// Backend storage of a buffer of `T`.
pub enum Storage<T> {
    /// A typed cudarc allocation. It holds at least one element (the driver refuses empty
    /// allocations); the buffer's `len` says how many are in use.
    Cuda(CudaSlice<T>),
    Sim(crate::sim::SimBuffer),
}

/// A buffer of `len` elements of `T` on a [`crate::Device`]. Host writes take `&mut`.
pub struct Buffer<T: Elem> {
    pub(crate) storage: Storage<T>,
    pub(crate) len: usize,
}

impl<T: Elem> Buffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> usize {
        self.len * T::TYPE.size() as usize
    }
    pub fn storage(&self) -> &Storage<T> {
        &self.storage
    }
    pub fn backend(&self) -> Backend {
        match self.storage {
            Storage::Cuda(_) => Backend::Cuda,
            Storage::Sim(_) => Backend::Sim,
        }
    }
}
