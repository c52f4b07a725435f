//! PTX arithmetic with GPU-exact results: the constant evaluator's execution functions
//! (`phaser_codegen::eval::exec`), one per operation and type, chosen once when the IR is
//! lowered. Folding calls the same functions, so a constant folded by the builder and the
//! value the simulator computes at run time cannot differ.

pub use phaser_codegen::eval::{
    bin_fn, cmp_fn, cvt, cvt_rounded, float_bin_fn, mad_fn, math_fn, math_half2_fn, un_fn, BinFn, CmpFn, MadFn, UnFn,
};
