//! Shared-memory swizzle modes: an identifier the IR's tiles, tensor maps and matrix
//! descriptors carry. The address function and the encodings are `arch::swizzle`'s.

/// The swizzle modes shared by TMA tensor maps and wgmma matrix descriptors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// No swizzling: rows are one 16-byte chunk wide (wgmma's "interleaved" core matrices).
    None,
    B32,
    B64,
    B128,
}
