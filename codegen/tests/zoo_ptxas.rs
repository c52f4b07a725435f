//! Every op form the printer emits assembles with ptxas, for each target that has it: the
//! zoo (`phaser_codegen::zoo`: the builder's forms and every registry variant) of each target.

use phaser_codegen::arch::check::module_ptx_version;
use phaser_codegen::emit::emit_module_unchecked;
use phaser_codegen::registry::{self, variants};
use phaser_codegen::zoo::{registry_zoo, zoo};
use phaser_codegen::{emit_module, ptx_text, ptxas, EmitOptions, Module, Target};
use std::collections::BTreeSet;

#[test]
fn the_zoo_assembles_for_every_target() {
    let ptxas = ptxas::require();
    for target in Target::ALL {
        let m = zoo(target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let ptx = emit_module(&m, &EmitOptions::default()).unwrap_or_else(|e| panic!("{target}: {e}"));
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, target.name()) {
            panic!("ptxas -arch={target} rejected the zoo:\n{msg}\n--- PTX ---\n{ptx}");
        }
    }
}

/// Every variant of every registry op is in the zoo of some target, and on each target
/// exactly once (its kernel's instructions, not just its name, are in the zoo's PTX).
#[test]
fn every_registry_variant_is_in_the_zoo() {
    let mut seen = BTreeSet::new();
    for target in Target::ALL {
        let entries = registry_zoo(target).unwrap();
        let m = zoo(target).unwrap();
        let ptx = emit_module(&m, &EmitOptions::default()).unwrap();
        // The module's `.version` (some spellings depend on it: `st.shared::cta` from PTX 7.8).
        let (_, version) = module_ptx_version(&m, EmitOptions::default().max_ptx).unwrap();
        let zoo_insts: Vec<String> = ptx_text::instructions(&ptx).iter().map(|i| i.to_string()).collect();
        for e in &entries {
            assert!(seen.insert((e.op, e.variant.clone(), target)), "{} ({}) twice on {target}", e.op, e.variant);
            // The variant's own PTX at that version, instruction for instruction, is a run of
            // the zoo's.
            let alone = emit_module_unchecked(&Module::new(vec![e.kernel.clone()]), version, &EmitOptions::default());
            let own: Vec<String> = ptx_text::instructions(&alone).iter().map(|i| i.to_string()).collect();
            assert!(!own.is_empty(), "{} ({}): no instructions", e.op, e.variant);
            assert!(
                zoo_insts.windows(own.len()).any(|w| w == own.as_slice()),
                "{} ({}) on {target}: its instructions are not in the zoo",
                e.op,
                e.variant
            );
        }
    }
    let mut missing = Vec::new();
    let mut total = 0;
    for op in registry::ops() {
        for v in variants(op) {
            total += 1;
            let form = if v.literals { "literals" } else { "registers" };
            let variant = if v.label.is_empty() { form.to_string() } else { format!("{}; {form}", v.label) };
            if !Target::ALL.iter().any(|&t| seen.contains(&(op.path, variant.clone(), t))) {
                missing.push(format!("{} ({variant})", op.path));
            }
        }
    }
    assert!(missing.is_empty(), "registry variants no target's zoo has: {missing:#?}");
    assert!(total > 100, "{total} variants");
}

/// The families the hand-written kernel alone never had are in the zoo: collectives,
/// ldmatrix/stmatrix, printf, inline PTX, wgmma and tcgen05's MMA, loads and allocation.
#[test]
fn the_zoo_has_collectives_matrices_printf_wgmma_and_tcgen05() {
    let ptx = |t: Target| emit_module(&zoo(t).unwrap(), &EmitOptions::default()).unwrap();
    let (hopper, blackwell) = (ptx(Target::Sm90a), ptx(Target::Sm100a));
    for (ptx, pattern) in [
        (&hopper, "shfl.sync.*"),
        (&hopper, "vote.sync.*"),
        (&hopper, "ldmatrix.sync.aligned.*"),
        (&hopper, "stmatrix.sync.aligned.*"),
        (&hopper, "call.uni _, vprintf, _"),
        (&hopper, "wgmma.mma_async.*"),
        (&blackwell, "tcgen05.mma.*"),
        (&blackwell, "tcgen05.ld.*"),
        (&blackwell, "tcgen05.alloc.*"),
    ] {
        assert!(ptx_text::has(ptx, pattern), "no `{pattern}` in the zoo");
    }
    // Inline PTX: its template in a scope of its own.
    assert!(hopper.lines().any(|l| l.trim() == "{ // inline PTX"), "no inline PTX in the zoo");
}
