//! A simulated system of several devices (`SimDevice::system`): which devices it has and
//! which of them were given peer access to which. Its devices share one global memory (their
//! buffers at distinct addresses, as CUDA's unified addressing places every GPU's memory), so
//! a kernel given a peer's buffer through a peer mapping addresses the peer's own bytes, and
//! launches of several devices run in one epoch loop (`engine/grid.rs`).

use std::collections::BTreeSet;
use std::sync::Mutex;

pub(crate) struct SimSystem {
    id: u64,
    devices: u32,
    /// `(from, to)`: kernels on device `from` may address device `to`'s memory.
    peers: Mutex<BTreeSet<(u32, u32)>>,
}

impl SimSystem {
    pub(crate) fn new(devices: u32) -> SimSystem {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SimSystem { id, devices, peers: Mutex::default() }
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Every device of a simulated system can reach every other (a fully connected NVLink
    /// system such as an HGX board).
    pub(crate) fn can_access(&self, from: u32, to: u32) -> bool {
        from != to && from < self.devices && to < self.devices
    }

    pub(crate) fn enable(&self, from: u32, to: u32) {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).insert((from, to));
    }

    pub(crate) fn enabled(&self, from: u32, to: u32) -> bool {
        self.peers.lock().unwrap_or_else(|p| p.into_inner()).contains(&(from, to))
    }
}
