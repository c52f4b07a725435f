//! `T.fragment.*` in the simulator (no Hopper GPU here; `tests/gpu_fragment.rs` runs the same
//! kernel on the H200): coordinates, row reductions, P as an A fragment and masks agree with
//! `arch::fragment`'s layouts and the CPU, under the checker, for several bounds.

mod fragment_kernels;

use fragment_kernels::*;
use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::Device;

#[test]
fn fragment_ops_match_the_layouts_in_the_simulator() {
    let dev = Device::sim(SimConfig::default().with_strategy(Strategy::Adversarial).with_seed(11));
    // A ragged tile cut inside an 8-column group, the causal diagonal through the tile
    // (negative: the first rows see nothing), and a bound that masks nothing.
    for (limit, diag) in [(37, 0), (64, -9), (5, 40), (64, 64)] {
        check_fragment_ops(&dev, limit, diag);
    }
}

/// A k-step past the accumulator's columns and a third row half: the macro cannot judge
/// `#[comptime]` values; the build names the value and the Rust line.
#[phaser::kernel(target = "sm_90a")]
fn fragment_bad(#[comptime] KSTEP: u32, #[comptime] HALF: u32) {
    T.require_block(128, 1, 1);
    let acc = T.registers::<f32>([32]);
    let mut p = T.registers::<u32>([4, 4]);
    T.fragment.to_a(p[0], acc, KSTEP);
    let m = T.fragment.row_max(acc, HALF);
}

#[test]
fn comptime_fragment_misuse_is_a_build_error_at_its_line() {
    let to_a_line = line!() - 6;
    let e = fragment_bad::kernel_for(4, 0).unwrap_err().to_string();
    assert!(e.contains("k-step 4 of a 64 x 64 accumulator, which has 4 of 16 columns"), "{e}");
    assert!(e.contains(&format!("dsl_fragment.rs:{to_a_line}:")), "{e}");
    let e = fragment_bad::kernel_for(3, 2).unwrap_err().to_string();
    assert!(e.contains("a thread holds 2 rows of the accumulator (half 0 or 1), not 2"), "{e}");
    assert!(e.contains(&format!("dsl_fragment.rs:{}:", to_a_line + 1)), "{e}");
    assert!(!e.contains("k-step"), "{e}");
}

#[test]
fn the_probe_assembles_for_sm_90a() {
    let ptxas = phaser::codegen::ptxas::require();
    let ptx = fragment_probe::ptx().unwrap_or_else(|e| panic!("{e}"));
    if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
        panic!("ptxas:\n{msg}");
    }
    // P · I: four k-steps, each with A from the four registers `T.fragment.to_a` packed.
    let rs = phaser::codegen::ptx_text::find_all(&ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16");
    assert_eq!(rs.len(), 4, "{ptx}");
    assert!(rs.iter().all(|i| i.operands[1].starts_with("{%r")), "{ptx}");
    assert_eq!(phaser::codegen::ptx_text::count(&ptx, "cvt.rn.bf16x2.f32 %r*, %f*, %f*"), 16, "{ptx}");
}
