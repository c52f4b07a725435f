//! Where a kernel's shared memory lives: the one layout function the PTX printer, the checks,
//! the simulator and the CUDA launch all read.
//!
//! Static allocations are placed in declaration order, each at the next multiple of its
//! alignment; the dynamic window starts at the first multiple of [`DYNAMIC_SHARED_ALIGN`]
//! after them (the printer declares `extern .shared .align 1024`). A launch uses
//! `dynamic_base + dynamic_bytes` bytes when it has dynamic shared memory, the static bytes
//! otherwise; that total is what the target's [`Limits::max_shared_per_block`] bounds.

use super::kernel::{Kernel, SharedAlloc};
use crate::arch::limits::{Limits, DYNAMIC_SHARED_ALIGN};
use crate::arch::Target;
use std::fmt;

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
        SharedLayout::of(&self.shared)
    }

    /// The target's limits.
    pub fn limits(&self) -> &'static Limits {
        self.target.limits()
    }

    /// The launch-time check, the same on every backend: `dynamic_bytes` of dynamic shared
    /// memory on top of this kernel's static layout must fit its target's per-block limit.
    pub fn check_shared_launch(&self, dynamic_bytes: u32) -> Result<SharedLayout, SharedOverLimit> {
        let layout = self.shared_layout();
        let total = layout.total(dynamic_bytes);
        let limit = self.limits().max_shared_per_block;
        if total > limit as u64 {
            return Err(SharedOverLimit {
                kernel: self.name.clone(),
                target: self.target,
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
