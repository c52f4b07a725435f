//! Every kernel the project emits — each gallery example's kernels, for each target it
//! supports — assembles with ptxas. A missing ptxas fails the test (CI installs it).

use phaser::codegen::{emit_kernel, ptxas};
use phaser::Target;
use phaser_examples::gallery;

#[test]
fn every_gallery_kernel_assembles_for_sm_90a() {
    let ptxas = ptxas::find().expect("ptxas is required (the README's test command installs it)");
    let kernels = gallery::all_kernels(Target::Sm90a).expect("gallery kernels build");
    assert!(!kernels.is_empty());
    let mut failures = Vec::new();
    for k in &kernels {
        let ptx = emit_kernel(k).unwrap_or_else(|e| panic!("{e}"));
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, k.target().name()) {
            failures.push(format!("{} ({}):\n{msg}", k.name(), k.target()));
        }
    }
    assert!(failures.is_empty(), "ptxas rejected:\n{}", failures.join("\n"));
    eprintln!("ptxas assembled {} gallery kernels", kernels.len());
}
