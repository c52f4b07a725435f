//! TMA tensor maps: a backend-independent description, validated, and (CUDA) its encoded
//! 128-byte `CUtensorMap`.

use phaser_codegen::Type;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

/// What a tensor map describes: a tiled view of a global buffer.
/// Dimension 0 is the innermost (contiguous) one.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMapDesc {
    pub dtype: Type,
    /// Global address of element (0, ..., 0).
    pub base: u64,
    /// Extent of each dimension, in elements.
    pub dims: Vec<u64>,
    /// Byte stride of dimensions 1.. (dimension 0 is contiguous).
    pub strides: Vec<u64>,
    /// The box (tile) copied per TMA op, in elements.
    pub box_dims: Vec<u32>,
    pub swizzle: Swizzle,
}

impl TensorMapDesc {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// Bytes one TMA copy of a full box moves (what `expect_tx` must register).
    pub fn box_bytes(&self) -> u32 {
        self.box_dims.iter().product::<u32>() * self.dtype.size()
    }
}

/// A tensor map ready to pass to a kernel.
#[derive(Clone, Debug)]
pub struct TensorMap {
    pub desc: TensorMapDesc,
    /// The encoded `CUtensorMap` (CUDA backend only).
    pub encoded: Option<[u64; 16]>,
}
