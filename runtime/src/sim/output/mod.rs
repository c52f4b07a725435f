//! What a run reports: `finding`, `report`, `trace` (barrier events as a Perfetto trace),
//! `probe` (probe records and tables), `printf` (the device's `printf` records, formatted).

pub mod finding;
pub mod printf;
pub mod probe;
pub mod report;
pub mod trace;
