//! The DSL at scale: a kernel of 4096 statements and an expression of 4097 terms
//! expand, compile and build (the expansion is flat and linear in the source; before, the
//! long sum overflowed rustc's parser and 4000 statements took minutes), and the kernels
//! compute the right values in the simulator.
//!
//! (The statements are assignments: thousands of `let`s in one function overflow rustc's
//! own debug-info generation, DSL or not: `rustc -g` on 4096 macro-made `let`s does.)

use phaser::runtime::sim::SimConfig;
use phaser::{Device, LaunchConfig};

/// Doubles the token list `[..]` once per token of the counter, then hands `prefix` and the
/// copies to `$then!`: 2^12 copies from 12 steps of macro recursion. (The names the copies
/// use come in the prefix, from the same place: `macro_rules!` locals are hygienic.)
macro_rules! doubled {
    (@go $then:ident [$($prefix:tt)*] [$($acc:tt)*] []) => { $then!($($prefix)* $($acc)*); };
    (@go $then:ident [$($prefix:tt)*] [$($acc:tt)*] [$_step:tt $($rest:tt)*]) => {
        doubled!(@go $then [$($prefix)*] [$($acc)* $($acc)*] [$($rest)*]);
    };
}

macro_rules! sum_kernel {
    ($x:ident $($terms:tt)*) => {
        /// `x + x + ... + x`: 4097 terms in one expression.
        #[phaser::kernel(target = "sm_90a")]
        fn long_sum(out: &mut [u32], $x: u32) {
            out[0] = $x $($terms)*;
        }
    };
}
doubled!(@go sum_kernel [x] [+ x] [1 2 3 4 5 6 7 8 9 10 11 12]);

macro_rules! statements_kernel {
    ($acc:ident; $($stmts:tt)*) => {
        /// 4096 statements, then a `let` that snapshots the `let mut` it reads.
        #[phaser::kernel(target = "sm_90a")]
        fn many_statements(out: &mut [u32]) {
            let mut $acc = 0u32;
            $($stmts)*
            let total = $acc;
            $acc = 0;
            out[0] = total + $acc;
        }
    };
}
doubled!(@go statements_kernel [acc;] [acc = acc + 1;] [1 2 3 4 5 6 7 8 9 10 11 12]);

fn run_one(build: impl FnOnce(&Device, &mut phaser::Buffer<u32>)) -> u32 {
    let dev = Device::sim(SimConfig::fast());
    let mut out = dev.alloc::<u32>(1).unwrap();
    build(&dev, &mut out);
    dev.download(&out).unwrap()[0]
}

#[test]
fn an_expression_of_4097_terms_builds_and_sums() {
    let got = run_one(|dev, out| {
        long_sum::launch(dev, LaunchConfig::linear(1, 1), out, 3).unwrap();
    });
    assert_eq!(got, 3 * 4097);
}

#[test]
fn a_kernel_of_4096_statements_builds_and_counts() {
    let got = run_one(|dev, out| {
        many_statements::launch(dev, LaunchConfig::linear(1, 1), out).unwrap();
    });
    assert_eq!(got, 4096);
}
