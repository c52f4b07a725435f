//! Synchronization objects: `barrier` (the mbarrier state machine), `barrier_table` (a CTA's
//! mbarriers), `barrier_ops` (addressing, arrivals, tx, waits), `warp_sync` (`bar.warp.sync`),
//! `named_barrier` (the rules of `bar.sync`/`bar.arrive`: whole warps, one count per round).

pub mod barrier;
pub(crate) mod barrier_ops;
pub(crate) mod barrier_table;
pub(crate) mod named_barrier;
pub(crate) mod warp_sync;
