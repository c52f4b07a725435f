//! What one thread's device `printf` printed.

/// One `printf` of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintRecord {
    pub ctaid: [u32; 3],
    /// Linear thread index in the CTA.
    pub thread: u32,
    pub text: String,
}
