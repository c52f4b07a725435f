//! Targets, the ISA table and the checks that a kernel fits its target.

pub mod arch;
pub mod check;
pub mod isa;

pub use arch::{PtxVersion, Target};
pub use check::{check_kernel, module_ptx_version, MAX_PTX_LOADABLE};
pub use isa::{requirement, Requirement};
