//! Phaser: asynchronous GPU pipelines synchronized by mbarriers, written in Rust.
extern crate self as phaser;
pub use phaser_codegen as codegen;
pub mod gallery;
