//! Where a piece of IR came from in the user's Rust source.

use std::fmt;

/// A Rust source position (file, 1-based line and column), carried from the DSL or from
/// `#[track_caller]` builder calls to PTX `.loc` directives and to diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    pub file: &'static str,
    pub line: u32,
    pub column: u32,
}

impl SourceLoc {
    pub const fn new(file: &'static str, line: u32, column: u32) -> Self {
        SourceLoc { file, line, column }
    }
    #[track_caller]
    pub fn caller() -> Self {
        let l = std::panic::Location::caller();
        SourceLoc { file: l.file(), line: l.line(), column: l.column() }
    }
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}
