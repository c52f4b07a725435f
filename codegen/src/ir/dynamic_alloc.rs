//! Tiles placed in a kernel's dynamic shared-memory window. Where they go is the shared
//! layout's rule (`arch::shared_layout`); the IR records where they went.

use super::source_loc::SourceLoc;

/// A tile placed in the dynamic window (`offset` from the window's start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicAlloc {
    pub name: String,
    /// Its element type (findings name an address as `name[element]`).
    pub elem: super::Type,
    pub offset: u32,
    pub bytes: u32,
    pub align: u32,
    /// The Rust line that allocated it (what a limit error points at).
    pub loc: Option<SourceLoc>,
}

impl DynamicAlloc {
    pub fn end(&self) -> u64 {
        self.offset as u64 + self.bytes as u64
    }
}
