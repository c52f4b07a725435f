//! The tensor cores: `wgmma_state` (per-warp groups, pending registers), `mma` (operands
//! through descriptors, the multiply-accumulate), `regs` (which instructions touch wgmma
//! registers); Blackwell's tcgen05: `tmem` (tensor memory and its allocations), `umma` (the
//! MMA/copy/shift datapath on it).

pub(crate) mod mma;
pub(crate) mod regs;
pub(crate) mod tmem;
pub(crate) mod umma;
pub(crate) mod wgmma_state;
