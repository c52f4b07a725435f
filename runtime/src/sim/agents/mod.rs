//! The async agents: `async_op` (copies as data), `agent` (copies landing in pieces),
//! `async_groups` (`cp.async` groups), `cp_async_arrive` (`cp.async.mbarrier.arrive`).

pub(crate) mod agent;
pub(crate) mod async_groups;
pub(crate) mod async_op;
pub(crate) mod cp_async_arrive;
