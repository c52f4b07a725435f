//! What a checked launch reports, as data: findings, the report of a simulated launch, its
//! barrier trace, probes and printed text, the schedule it ran under, and what an exhaustive exploration found. Part of the
//! backend-neutral core: [`crate::RuntimeError::Simulation`] carries a [`SimReport`], the
//! simulator (`crate::sim`) fills one in, and nothing here names a backend.

pub mod explore_report;
pub mod finding;
pub mod print;
pub mod probe;
pub mod schedule;
pub mod sim_report;
pub mod strategy;
pub mod trace;

pub use explore_report::{BoundHit, ExploreBounds, ExploreReport, LoopTrips};
pub use finding::{BarrierRef, Category, Finding, LoopIteration, Severity};
pub use print::PrintRecord;
pub use probe::{ProbeRecord, ProbeValue};
pub use schedule::{Actor, Schedule, ScheduleParseError};
pub use sim_report::{CutShort, DroppedFindings, SimReport, Stats};
pub use strategy::Strategy;
pub use trace::{Trace, TraceEvent, TraceKind};
