//! Facts computed from a finished kernel once and kept beside it, like its printed text
//! (`printed.rs`): a finished `Kernel` cannot change, so neither can they. Every launch asks
//! for them, so a launch's checks cost what its arguments cost, not what the kernel's body
//! does.

use std::sync::OnceLock;

#[derive(Debug, Default)]
pub struct Derived {
    /// The deepest control-flow nesting of the body (`stmt::nesting_depth`).
    pub(crate) nesting_depth: OnceLock<usize>,
}
