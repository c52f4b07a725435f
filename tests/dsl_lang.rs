//! The language core of the DSL in the simulator (the kernels and their checks are in
//! `tests/lang_kernels/`, which `tests/gpu_lang.rs` runs on the GPU), plus what needs no
//! device: `ptxas -v` on register arrays, and the build-time checks with the Rust line.

mod lang_kernels;

use lang_kernels::*;
use phaser::codegen::ptxas;
use phaser::runtime::sim::SimConfig;
use phaser::Device;

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

#[test]
fn consts_lets_and_ifs_are_compile_time() {
    check_compile_time_values(&sim());
}

#[test]
fn register_arrays_compute_what_rust_computes() {
    check_register_sums(&sim());
}

#[test]
fn device_functions_write_the_callers_register_array() {
    check_helper_registers(&sim());
}

#[test]
fn tiles_read_what_tma_wrote_with_every_swizzle() {
    check_tiles(&sim());
}

#[test]
fn a_misaligned_inner_tma_coordinate_is_a_finding_not_a_window() {
    check_misaligned_inner_coordinate(&sim());
}

#[test]
fn a_map_that_does_not_match_the_declaration_is_a_launch_error() {
    check_launch_errors(&sim());
}

#[test]
fn tile_copies_imply_the_maps_box() {
    check_implied_box();
}

/// `(stack frame, spill stores, spill loads)` bytes from `ptxas -v`, and whether it reports
/// local memory (`lmem`).
fn local_memory(ptx: &str) -> (u32, u32, u32, bool) {
    let log = ptxas::assemble_with(&ptxas::require(), ptx, "sm_90a", &["-v"]).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let line = log.lines().find(|l| l.contains("bytes stack frame")).unwrap_or_else(|| panic!("no frame line:\n{log}"));
    let nums: Vec<u32> = line.split(',').map(|p| p.split_whitespace().next().unwrap().parse().unwrap()).collect();
    (nums[0], nums[1], nums[2], log.contains("lmem"))
}

#[test]
fn register_arrays_stay_in_registers() {
    for n in [4u32, 6] {
        assert_eq!(local_memory(&register_sums::ptx_for(n).unwrap()), (0, 0, 0, false), "N = {n}");
    }
}

#[test]
fn the_local_memory_check_sees_spills() {
    // The negative control of the test above: 240 live values under a 32-register cap spill.
    let (frame, stores, loads, _) = local_memory(&spills::ptx().unwrap());
    assert!(frame > 0 && stores > 0 && loads > 0, "{frame} {stores} {loads}");
}

// ---- build-time checks with the Rust line -----------------------------------------------------

const ZERO: u32 = 0;
const WIDE: u32 = 256;

#[phaser::kernel(target = "sm_90a")]
fn const_count_checked_when_built() {
    let bars = T.alloc_barriers(2);
    T.ptx.mbarrier.init(bars.ptr_to([0]), ZERO);
}

#[phaser::kernel(target = "sm_90a")]
fn const_index_checked_when_built() {
    let bars = T.alloc_barriers(2);
    T.ptx.mbarrier.init(bars.ptr_to([WIDE / 128]), 1);
}

#[phaser::kernel(target = "sm_90a")]
fn too_much_shared(out: &mut [f32]) {
    let a = T.alloc_shared::<f32>([WIDE, WIDE], "128B");
    let b = T.alloc_shared::<f32>([64, 32]);
    out[0] = a[0][0] + b[0][0];
}

#[test]
fn const_items_are_range_checked_at_build_time_with_the_line() {
    let line = |needle: &str| {
        let src = include_str!("dsl_lang.rs");
        src.lines().position(|l| l.contains(needle)).unwrap() + 1
    };
    let e = const_count_checked_when_built::kernel().unwrap_err().to_string();
    assert!(e.contains(&format!("dsl_lang.rs:{}", line("bars.ptr_to([0]), ZERO)"))), "{e}");
    assert!(e.contains("mbarrier arrival count 0 is out of range: must be in 1..=1048575"), "{e}");
    let e = const_index_checked_when_built::kernel().unwrap_err().to_string();
    assert!(e.contains(&format!("dsl_lang.rs:{}", line("ptr_to([WIDE / 128])"))), "{e}");
    assert!(e.contains("barrier index 2 is out of bounds for a barrier array of 2 barriers"), "{e}");
}

#[test]
fn shared_memory_over_the_limit_is_a_build_error_naming_the_allocations() {
    let e = too_much_shared::kernel().unwrap_err().to_string();
    assert!(e.contains("the kernel's shared memory needs"), "{e}");
    assert!(e.contains("but sm_90a allows 232448 bytes (227 KiB) per block"), "{e}");
    assert!(e.contains("`a` 262144 B (tests/dsl_lang.rs:"), "{e}");
    assert!(e.contains("`b` 8192 B (tests/dsl_lang.rs:"), "{e}");
}

#[phaser::kernel(target = "sm_90a")]
fn warp_specialized_registers(out: &mut [u32]) {
    T.require_block(384, 1, 1);
    if T.warpgroup_idx() == 0 {
        T.ptx.setmaxnreg.dec(40);
    } else {
        T.ptx.setmaxnreg.inc(232);
        out[T.thread_idx()] = 1;
    }
}

#[test]
fn setmaxnreg_with_a_declared_block_is_honoured() {
    let ptx = warp_specialized_registers::ptx().unwrap();
    use phaser::codegen::ptx_text::has_directive;
    assert!(has_directive(&ptx, ".reqntid 384, 1, 1") && has_directive(&ptx, ".minnctapersm 1"), "{ptx}");
    let log = ptxas::assemble_with(&ptxas::require(), &ptx, "sm_90a", &["-v"]).unwrap();
    assert!(!log.contains("C7508"), "ptxas ignored setmaxnreg:\n{log}");
    // Without the automatic `.minnctapersm 1` ptxas would ignore it: the check bites.
    let bare = ptx.replace(".minnctapersm 1\n", "");
    let log = ptxas::assemble_with(&ptxas::require(), &bare, "sm_90a", &["-v"]).unwrap();
    assert!(log.contains("C7508"), "{log}");
}

// ---- a wait parity is a u32 0/1 or a bool, true = 1 (`arch::parity`) ---------------------------

#[phaser::kernel(target = "sm_90a")]
fn bool_parity(out: &mut [u32]) {
    let bars = T.alloc_barriers(1);
    let bar = bars.ptr_to([0]);
    let t = T.thread_idx();
    if t == 0 {
        T.ptx.mbarrier.init(bar, 1);
        T.ptx.fence.mbarrier_init();
    }
    T.cuda.cta_sync();
    // A register bool (false in every thread) and the literal `true`.
    let odd = t > 100;
    if T.ptx.mbarrier.test_wait(bar, odd) {
        out[t] = 1;
    }
    if T.ptx.mbarrier.test_wait(bar, true) {
        out[32 + t] = 1;
    }
    T.cuda.cta_sync();
    if t == 0 {
        let _s = T.ptx.mbarrier.arrive(bar);
    }
    T.ptx.mbarrier.try_wait(bar, odd);
    if T.ptx.mbarrier.test_wait(bar, odd) {
        out[64 + t] = 1;
    }
    if T.ptx.mbarrier.test_wait(bar, true) {
        out[96 + t] = 1;
    }
}

/// `false` waits for phase 0 and `true` for phase 1, as 0 and 1 do: before the first phase
/// completes the parity-1 wait passes (the preceding phase) and the parity-0 one does not;
/// after it, the other way round.
#[test]
fn a_bool_parity_is_the_phase_parity_true_is_one() {
    let dev = sim();
    let mut out = dev.alloc::<u32>(128).unwrap();
    bool_parity::launch(&dev, phaser::LaunchConfig::linear(1, 32), &mut out).unwrap();
    let got = dev.download(&out).unwrap();
    let want: Vec<u32> = [0, 1, 1, 0].iter().flat_map(|&v| [v; 32]).collect();
    assert_eq!(got, want);
    let ptx = bool_parity::ptx().unwrap();
    assert!(phaser::codegen::ptx_text::has(&ptx, "selp.u32"), "a register bool is lowered with selp:\n{ptx}");
}

mod typed_consts {
    pub const SCALE: f32 = 0.125;
    pub const LOG2_E: f32 = std::f32::consts::LOG2_E;
    pub const SHIFT: i32 = -3;
    pub const HALF: f64 = 0.5;
    pub const BLOCK: u32 = 64;
    pub const RATIO: f32 = 2.75;
}
use typed_consts::*;

/// `const` items of any scalar type: each takes the type its use gives it (rustc checks the
/// item has it), arithmetic on them folds with the evaluator, `as` converts them, and a
/// `u32` item still counts and sizes.
#[phaser::kernel(target = "sm_90a")]
fn typed_const_items(x: &[f32], out: &mut [f32], iout: &mut [i32], dout: &mut [f64], uout: &mut [u32]) {
    let i = T.thread_idx();
    let scale: f32 = SCALE * LOG2_E;
    out[i] = x[i] * scale;
    out[i + 32] = x[i] * SCALE - SCALE * 2.0;
    out[i + 64] = -SCALE + BLOCK as f32;
    iout[i] = i as i32 + SHIFT;
    dout[i] = HALF * 3.0 + T.rcp(HALF as f64);
    out[i + 96] = SCALE.exp2();
    uout[i] = RATIO as u32 + BLOCK / 32;
    let bars = T.alloc_barriers(BLOCK / 32);
    if i == 0 {
        T.ptx.mbarrier.init(bars.ptr_to([1]), 1);
    }
}

#[test]
fn const_items_of_float_and_signed_types_fold_and_run() {
    let k = typed_const_items::kernel().unwrap_or_else(|e| panic!("{e}"));
    let ptx = typed_const_items::ptx().unwrap();
    // SCALE * LOG2_E is one immediate: folded, not multiplied at run time.
    let folded = format!("0f{:08X}", (SCALE * LOG2_E).to_bits());
    assert!(ptx.contains(&folded), "SCALE * LOG2_E folded to {folded}:\n{ptx}");
    let dev = Device::sim(SimConfig::default());
    let xs: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 3.0).collect();
    let xb = dev.upload(&xs).unwrap();
    let (ob, ib) = (dev.upload(&[0f32; 128]).unwrap(), dev.upload(&[0i32; 32]).unwrap());
    let (db, ub) = (dev.upload(&[0f64; 32]).unwrap(), dev.upload(&[0u32; 32]).unwrap());
    use phaser::Arg;
    let args = [Arg::buffer(&xb), Arg::buffer(&ob), Arg::buffer(&ib), Arg::buffer(&db), Arg::buffer(&ub)];
    let rep = dev.simulate(&k, phaser::LaunchConfig::linear(1, 32), &args).unwrap();
    assert!(rep.findings.is_empty(), "{}", rep.text());
    let (o, iv, d, u) =
        (dev.download(&ob).unwrap(), dev.download(&ib).unwrap(), dev.download(&db).unwrap(), dev.download(&ub).unwrap());
    for (t, &x) in xs.iter().enumerate() {
        assert_eq!(o[t], x * (SCALE * LOG2_E));
        assert_eq!(o[t + 32], x * SCALE - SCALE * 2.0);
        assert_eq!(o[t + 64], -SCALE + BLOCK as f32);
        assert_eq!(iv[t], t as i32 + SHIFT);
        assert_eq!(d[t], HALF * 3.0 + 1.0 / HALF);
        assert_eq!(o[t + 96], (SCALE as f64).exp2() as f32, "the model of ex2.approx: 2^x rounded once");
        assert_eq!(u[t], RATIO as u32 + BLOCK / 32);
    }
}
