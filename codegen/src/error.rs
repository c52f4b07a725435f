//! Errors of building, checking and emitting kernels: each names the kernel and, where
//! known, the Rust source line the offending op came from.

use crate::ir::SourceLoc;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    pub kernel: String,
    pub loc: Option<SourceLoc>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = self.loc {
            write!(f, "{loc}: ")?;
        }
        write!(f, "kernel `{}`: {}", self.kernel, self.message)
    }
}

/// One or more diagnostics; building a kernel reports all it found, not just the first.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct CodegenError {
    pub diagnostics: Vec<Diagnostic>,
}

impl CodegenError {
    pub fn new(kernel: &str, loc: Option<SourceLoc>, message: impl Into<String>) -> Self {
        CodegenError { diagnostics: vec![Diagnostic { kernel: kernel.to_string(), loc, message: message.into() }] }
    }
    /// The first diagnostic's message (handy in tests).
    pub fn first_message(&self) -> &str {
        self.diagnostics.first().map(|d| d.message.as_str()).unwrap_or("")
    }
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {d}")?;
        }
        Ok(())
    }
}

pub type Result<T, E = CodegenError> = std::result::Result<T, E>;

/// A setting (a field of an options struct: `EmitOptions`, the runtime's `SimConfig` and
/// `LaunchConfig`) whose value cannot be used, named by its field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("setting `{setting}` = {value}: {problem}")]
#[non_exhaustive]
pub struct InvalidSetting {
    /// `Type::field`.
    pub setting: &'static str,
    /// The value given, as written in Rust.
    pub value: String,
    /// Why it cannot be used, and what to write instead.
    pub problem: String,
}

impl InvalidSetting {
    pub fn new(setting: &'static str, value: impl fmt::Debug, problem: impl Into<String>) -> Self {
        InvalidSetting { setting, value: format!("{value:?}"), problem: problem.into() }
    }
}
