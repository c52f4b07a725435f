//! Where a kernel's shared memory lives: the one layout function the PTX printer, the checks,
//! the simulator and the CUDA launch all read.
//!
//! Static allocations are placed in declaration order, each at the next multiple of its
//! alignment; the dynamic window starts at the first multiple of [`DYNAMIC_SHARED_ALIGN`]
//! after them (the printer declares `extern .shared .align 1024`). A launch uses
//! `dynamic_base + dynamic_bytes` bytes when it has dynamic shared memory, the static bytes
//! otherwise; that total is what the target's [`Limits::max_shared_per_block`] bounds.
//!
//! Typed tiles live in the dynamic window: the builder places them in declaration order, each
//! at the next multiple of its alignment from the window's (1024-byte aligned) start
//! ([`DynamicAlloc`]), and a launch without an explicit dynamic size gets exactly what they
//! need ([`Kernel::declared_dynamic_bytes`]).
//!
//! The layout follows the target's rules (the dynamic window's alignment, the limit), so it
//! lives here rather than in the IR, which only records the allocations.

use super::limits::{Limits, DYNAMIC_SHARED_ALIGN};
use super::target::Target;
use crate::ir::{DynamicAlloc, Kernel, SharedAlloc, SourceLoc};
use std::fmt;

/// Where the next tile of `align` bytes goes after `placed` ones.
pub fn next_dynamic_offset(placed: &[DynamicAlloc], align: u32) -> u64 {
    align_up(placed.iter().map(DynamicAlloc::end).max().unwrap_or(0), align as u64)
}

/// Byte range `[start, end)` of one static allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub start: u64,
    pub end: u64,
}

/// The static layout of a kernel's shared memory (offsets from the CTA's shared window).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLayout {
    /// One placement per `Kernel::shared` entry, same order.
    pub placements: Vec<Placement>,
    /// End of the last static allocation.
    pub static_bytes: u64,
    /// Where the dynamic window starts: `static_bytes` rounded up to 1024.
    pub dynamic_base: u64,
}

fn align_up(x: u64, align: u64) -> u64 {
    x.div_ceil(align.max(1)) * align.max(1)
}

impl SharedLayout {
    /// Lay out `shared` (sizes in `u64`: a huge array cannot wrap around).
    pub fn of(shared: &[SharedAlloc]) -> SharedLayout {
        let mut placements = Vec::with_capacity(shared.len());
        let mut end = 0u64;
        for a in shared {
            let start = align_up(end, a.align as u64);
            end = start + a.elem.size() as u64 * a.len as u64;
            placements.push(Placement { start, end });
        }
        SharedLayout { placements, static_bytes: end, dynamic_base: align_up(end, DYNAMIC_SHARED_ALIGN as u64) }
    }

    /// Bytes a launch with `dynamic_bytes` of dynamic shared memory uses per block.
    pub fn total(&self, dynamic_bytes: u32) -> u64 {
        if dynamic_bytes == 0 {
            self.static_bytes
        } else {
            self.dynamic_base + dynamic_bytes as u64
        }
    }

    /// The first allocation whose end crosses `limit` bytes, if any.
    pub fn first_over(&self, limit: u32) -> Option<usize> {
        self.placements.iter().position(|p| p.end > limit as u64)
    }
}

/// A launch asks for more shared memory than the kernel's target has per block.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct SharedOverLimit {
    pub kernel: String,
    pub target: Target,
    pub static_bytes: u64,
    pub dynamic_base: u64,
    pub dynamic_bytes: u32,
    /// `dynamic_base + dynamic_bytes` (or the static bytes without dynamic memory).
    pub total: u64,
    pub limit: u32,
}

impl fmt::Display for SharedOverLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}`: {} bytes of shared memory per block (static {} bytes, dynamic window at {} + {} bytes) \
             exceed {}'s limit of {} bytes ({} KiB)",
            self.kernel,
            self.total,
            self.static_bytes,
            self.dynamic_base,
            self.dynamic_bytes,
            self.target,
            self.limit,
            self.limit / 1024
        )
    }
}

impl Kernel {
    /// This kernel's shared-memory layout.
    pub fn shared_layout(&self) -> SharedLayout {
        SharedLayout::of(self.shared())
    }

    /// End of the static shared allocations (see [`SharedLayout`]), saturated to `u32`.
    pub fn static_shared_bytes(&self) -> u32 {
        u32::try_from(self.shared_layout().static_bytes).unwrap_or(u32::MAX)
    }

    /// Why the kernel's declared shared memory (static arrays, then its tiles in the dynamic
    /// window) cannot fit its target, naming every allocation, largest first; `None` if it fits.
    pub fn declared_shared_problem(&self) -> Option<String> {
        let declared = self.declared_dynamic_bytes();
        if declared == 0 {
            return None;
        }
        let err = self.check_shared_launch(declared).err()?;
        let mut allocs: Vec<(&str, u64, Option<SourceLoc>)> = self
            .dynamic()
            .iter()
            .map(|d| (d.name.as_str(), d.bytes as u64, d.loc))
            .chain(self.shared().iter().map(|a| (a.name.as_str(), a.bytes() as u64, a.loc)))
            .collect();
        allocs.sort_by_key(|a| std::cmp::Reverse(a.1));
        let list: Vec<String> = allocs
            .iter()
            .map(|(name, bytes, loc)| match loc {
                Some(l) => format!("`{name}` {bytes} B ({l})"),
                None => format!("`{name}` {bytes} B"),
            })
            .collect();
        Some(format!(
            "the kernel's shared memory needs {} bytes (static {} B, tiles {declared} B from byte {} of the dynamic \
             window) but {} allows {} bytes ({} KiB) per block; allocations, largest first: {}",
            err.total,
            err.static_bytes,
            err.dynamic_base,
            err.target,
            err.limit,
            err.limit / 1024,
            list.join(", ")
        ))
    }

    /// The target's limits.
    pub fn limits(&self) -> &'static Limits {
        self.target().limits()
    }

    /// The launch-time check, the same on every backend: `dynamic_bytes` of dynamic shared
    /// memory on top of this kernel's static layout must fit its target's per-block limit.
    pub fn check_shared_launch(&self, dynamic_bytes: u32) -> Result<SharedLayout, SharedOverLimit> {
        let layout = self.shared_layout();
        let total = layout.total(dynamic_bytes);
        let limit = self.limits().max_shared_per_block;
        if total > limit as u64 {
            return Err(SharedOverLimit {
                kernel: self.name().to_owned(),
                target: self.target(),
                static_bytes: layout.static_bytes,
                dynamic_base: layout.dynamic_base,
                dynamic_bytes,
                total,
                limit,
            });
        }
        Ok(layout)
    }
}
