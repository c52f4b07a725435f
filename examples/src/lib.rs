//! Phaser's examples crate (not published): the gallery of example kernels with their host
//! setups and checks, the mutation suite, and the `phaser` CLI and benchmark binaries. It uses
//! only the facade crate `phaser`, as a user's crate would.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod build_time;
pub mod cublas;
pub mod gallery;
pub mod gemm;
pub mod gemm_bugs;
pub mod gemm_choice;
pub mod gemm_choice_cache;
pub mod gemm_sm100;
pub mod mutate;
pub mod pingpong;
pub mod timing;
