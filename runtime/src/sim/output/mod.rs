//! What a run collects: `collector` (findings, trace, probes and prints as a launch runs),
//! `printf` (the device's `printf`, formatted as C formats it). The report's types are data of
//! the backend-neutral core, `crate::report`.

pub mod collector;
pub mod printf;
