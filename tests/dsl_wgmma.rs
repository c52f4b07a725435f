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
