//! Seeded host inputs: the same seed gives the same inputs on every backend and with any
//! `rand` version (ChaCha8, named), so a printed seed replays a run.

use rand::{Rng, SeedableRng};

/// `n` random `u32`s from `seed` (tests must not run on zeros).
pub fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random()).collect()
}

/// `n` random `f32`s in [-1, 1) from `seed` (ChaCha8, like [`random_u32`]).
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect()
}

/// A poison value for `u32` outputs ([`super::Problem::output`]), so unwritten elements are caught.
pub const POISON_U32: u32 = 0xDEAD_BEEF;
