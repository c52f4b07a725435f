//! `T.ptx.wgmma.*` in the simulator (no Hopper GPU here; `tests/gpu_wgmma.rs` runs the same
//! kernel on the H200): every form of `mma_async` computes the exact product under the
//! checker, and the kernel assembles for sm_90a with the shapes derived from the tiles and the
//! accumulator (m64n64k16), the transposed and negated forms as the PTX ISA spells them.

mod wgmma_kernels;

use phaser::codegen::ptx_text;
use phaser::runtime::sim::{SimConfig, Strategy};
use phaser::Device;
use wgmma_kernels::*;

#[test]
fn every_wgmma_form_is_exact_in_the_simulator() {
    for strategy in [Strategy::RoundRobin, Strategy::Adversarial] {
        check_wgmma_forms(&Device::sim(SimConfig::default().with_strategy(strategy).with_seed(7)));
    }
}

/// The immediates after each `wgmma.mma_async`'s operands, in program order: scale-d,
/// imm-scale-a, imm-scale-b, then imm-trans-a and imm-trans-b (descriptor form) or imm-trans-b
/// alone (A from registers).
fn immediates(ptx: &str) -> Vec<String> {
    ptx_text::find_all(ptx, "wgmma.mma_async.*")
        .iter()
        .map(|inst| {
            // The last `{...}` is the accumulator (or the A fragment); the descriptors after
            // it are registers.
            let ops = &inst.operands;
            let after = ops.iter().rposition(|o| o.starts_with('{')).expect("the accumulator list") + 1;
            ops[after..].iter().filter(|o| !o.starts_with('%')).copied().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn every_wgmma_form_assembles_for_sm_90a() {
    let ptxas = phaser::codegen::ptxas::require();
    let expect: [[&str; 4]; 4] = [
        ["0 1 1 0 0", "1 1 1 0 0", "1 1 1 0 0", "1 1 1 0 0"],
        ["0 1 1 0 1", "1 1 1 0 1", "1 1 1 0 1", "1 1 1 0 1"],
        ["0 -1 1 0 0", "1 -1 1 0 0", "1 1 -1 0 0", "1 1 1 0 0"],
        ["0 1 1 0", "1 1 1 0", "1 1 1 0", "1 1 1 0"],
    ];
    for (form, want) in expect.iter().enumerate() {
        let ptx = wgmma_forms::ptx_for(form as u32).unwrap_or_else(|e| panic!("{e}"));
        if let Err(msg) = phaser::codegen::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
            panic!("form {form}: ptxas:\n{msg}\n{ptx}");
        }
        let mma = ptx_text::find_all(&ptx, "wgmma.mma_async.*");
        assert_eq!(mma.len(), 4, "form {form}");
        assert!(mma.iter().all(|i| i.opcode == "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"), "{ptx}");
        assert_eq!(immediates(&ptx), want.to_vec(), "form {form}");
    }
    // Form 3 takes A from four registers per k-step.
    let rs = wgmma_forms::ptx_for(3).unwrap();
    assert_eq!(rs.matches("}, {%r").count(), 4, "{rs}");
}

/// The accumulator's length `N / 2` of `wgmma_bad_n`, from a `const` item: the macro cannot
/// judge it, the build does.
const HALF_N: u32 = 132;

/// A k-loop of wgmmas whose N comes from a `#[comptime]` value (and, in form 1, a `const`
/// item): N = 264 is no wgmma N, found when the kernel is built.
#[phaser::kernel(target = "sm_90a")]
fn wgmma_bad_n(#[comptime] N: u32, #[comptime] FORM: u32) {
    T.require_block(128, 1, 1);
    let a = T.alloc_shared::<bf16>([64, 64], "128B");
    let b = T.alloc_shared::<bf16>([N, 64], "128B");
    let acc = T.registers::<f32>([N / 2]);
    let acc_of_const = T.registers::<f32>([HALF_N]);
    T.ptx.wgmma.fence();
    #[unroll]
    for kk in 0..4 {
        if FORM == 0 {
            T.ptx.wgmma.mma_async(acc, a, b, kk, kk > 0);
        } else {
            T.ptx.wgmma.mma_async(acc_of_const, a, b, kk, kk > 0);
        }
    }
    T.ptx.wgmma.commit_group();
    T.ptx.wgmma.wait_group(0);
}

/// A shape error whose sizes the macro cannot know is reported once, at the offending
/// argument, when the kernel is built: not once per unrolled iteration, not at the statement.
#[test]
fn a_comptime_wgmma_shape_error_is_one_error_at_its_argument() {
    use phaser::Target;
    assert!(wgmma_bad_n::build(Target::Sm90a, 256, 0).is_ok(), "N = 256 is a wgmma N");
    for (form, token) in [(0, "acc, a, b"), (1, "acc_of_const, a, b")] {
        let e = wgmma_bad_n::build(Target::Sm90a, 264, form).expect_err("N = 264 is no wgmma N");
        assert_eq!(e.diagnostics.len(), 1, "one error for the four unrolled wgmmas: {e}");
        let d = &e.diagnostics[0];
        assert_eq!(
            d.message,
            "wgmma: an accumulator of 132 f32 registers is 64 x 264, but N must be a multiple of 8 in 8..=256: \
             `T.registers::<f32>([N / 2])` with N / 2 a multiple of 4 in 4..=128"
        );
        // The location is the accumulator argument's token.
        let loc = d.loc.expect("a build error has a location");
        assert!(loc.file.ends_with("dsl_wgmma.rs"), "{loc}");
        let source = include_str!("dsl_wgmma.rs");
        let line = source.lines().nth(loc.line as usize - 1).expect("the line exists");
        let at = &line[loc.column as usize - 1..];
        assert!(at.starts_with(token), "form {form}: {loc} points at `{at}`, not at the accumulator");
    }
}
