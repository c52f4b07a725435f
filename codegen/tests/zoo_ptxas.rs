//! Every op form the printer emits assembles with ptxas, for each target that has it.

use phaser_codegen::{emit_kernel, ptxas, zoo::op_zoo, Target};

#[test]
fn op_zoo_assembles_for_every_target() {
    let ptxas = ptxas::find().expect("ptxas is required for this test (see README: the test command installs it)");
    for (target, arch) in
        [(Target::Sm80, "sm_80"), (Target::Sm90, "sm_90"), (Target::Sm90a, "sm_90a"), (Target::Sm100a, "sm_100a")]
    {
        let k = op_zoo(target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let ptx = emit_kernel(&k).unwrap();
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, arch) {
            panic!("ptxas -arch={arch} rejected the op zoo:\n{msg}\n--- PTX ---\n{ptx}");
        }
    }
}
