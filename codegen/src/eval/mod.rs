//! The one evaluator of constant arithmetic: the value of every integer and float operation
//! at every width, as the GPU computes it. The simulator executes with [`exec`]'s functions,
//! the builder folds immediates and the macro folds compile-time values with [`fold`]'s,
//! which are `exec`'s plus the refusals Rust makes of the same constant expression (an
//! integer overflow, a division by zero), so a folded constant never differs from what the
//! kernel would have computed at run time. [`math`] holds the float functions (`ex2`, `rcp`,
//! `sqrt`, ..) and the model of their `.approx` forms.

pub mod exec;
pub mod fold;
pub mod math;

pub use exec::{bin_fn, cmp_fn, cvt, cvt_rounded, f32_to_fp8, mad_fn, un_fn, BinFn, CmpFn, MadFn, UnFn};
pub use math::{
    approx_bound, float_bin_fn, half_approx_bound, math_fn, math_half2_fn, ulp_error, AbsBound, ApproxBound,
    HalfApproxBound,
};
pub use fold::{fold_binary, fold_compare, fold_convert, fold_u32, fold_unary, int_value, FoldError};
