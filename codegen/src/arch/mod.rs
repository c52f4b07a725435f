//! Targets, the ISA table and the checks that a kernel fits its target.

pub mod check;
pub mod descriptor;
pub mod fragment;
pub mod isa;
pub mod limits;
pub mod parity;
pub mod shared_layout;
pub mod swizzle;
pub mod target;
pub mod tcgen05;
pub mod wgmma;

pub use check::{check_kernel, check_nesting, module_ptx_version, MAX_PTX_LOADABLE};
pub use isa::{requirement, Requirement};
pub use limits::{Limits, DYNAMIC_SHARED_ALIGN, MAX_ARRIVALS, MAX_TX_BYTES};
pub use shared_layout::{Placement, SharedLayout, SharedOverLimit};
pub use target::{PtxVersion, Target};
