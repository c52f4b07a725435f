//! The builder API: how kernels are made, by hand or by the DSL's expansion.

pub mod arith;
pub mod control;
pub mod escape;
pub mod flag;
pub mod fragment;
pub mod fragment_ops;
pub mod handles;
pub mod kernel_builder;
pub mod math;
pub mod mbarrier;
pub mod memory;
pub mod pipeline;
pub mod registers;
pub mod special;
pub mod sync;
pub mod tcgen05;
pub mod tile;
pub mod tma;
pub mod unroll;
pub mod warp;
pub mod warp_spec;
pub mod wgmma;

pub use fragment::Accumulator;
pub use fragment_ops::{RowOp, RowScope};
pub use handles::*;
pub use kernel_builder::KernelBuilder;
pub use mbarrier::ArriveOpts;
pub use pipeline::{Arrivals, ClusterSync, Pipeline, PipelineConfig, PipelineState, ReleaseTo};
pub use registers::RegisterArray;
pub use tcgen05::{IdescReg, TmemAlloc, UmmaDesc};
pub use tile::{SharedTile, TileLayout, TileShape};
pub use warp_spec::WarpgroupRoles;
pub use wgmma::{MatrixDesc, MmaOptions, Negate};
