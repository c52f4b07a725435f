//! The engine: the program (`program`: IR lowered to ops with jumps, `arith`: PTX arithmetic,
//! `interp`: the warp loop), memory (`memory`: global arena, shared layout; `global_view`: a
//! cluster's view of global memory during an epoch) and execution state (`grid`: clusters
//! interleaved, `cluster`: one cluster's state, `warp`, `run_loop`: rounds, waking, blocking,
//! `chooser`: every choice the engine makes, `scheduler`: seeded choices, `step_round`: one actor
//! per round, for the explorer and replayed schedules).

pub(crate) mod arith;
pub(crate) mod chooser;
pub(crate) mod cluster;
pub(crate) mod global_view;
pub(crate) mod grid;
pub(crate) mod interp;
pub mod memory;
pub(crate) mod program;
pub(crate) mod run_loop;
pub mod scheduler;
pub(crate) mod step_round;
pub(crate) mod warp;
