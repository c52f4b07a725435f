//! Typed device buffers; the storage belongs to one backend.

use crate::elem::Elem;
use std::marker::PhantomData;

/// Backend storage of a buffer.
pub enum RawBuffer {
    Cuda(cudarc::driver::CudaSlice<u8>),
    Sim(crate::sim::SimBuffer),
}

/// A buffer of `len` elements of `T` on a [`crate::Device`].
pub struct Buffer<T: Elem> {
    pub(crate) raw: RawBuffer,
    pub(crate) len: usize,
    pub(crate) _t: PhantomData<T>,
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
    pub fn raw(&self) -> &RawBuffer {
        &self.raw
    }
}
