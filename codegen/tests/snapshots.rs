//! PTX snapshots of every op form (the op zoo) per target, and of the seed-style kernels'
//! control-flow lowering. Review changes with `cargo insta review`.

use phaser_codegen::{emit_module, zoo::op_zoo, EmitOptions, Module, Target};

fn ptx_without_lines(target: Target) -> String {
    let k = op_zoo(target).unwrap();
    emit_module(&Module::new(vec![k]), &EmitOptions { line_info: false, ..EmitOptions::default() }).unwrap()
}

#[test]
fn op_zoo_sm_80() {
    insta::assert_snapshot!(ptx_without_lines(Target::Sm80));
}

#[test]
fn op_zoo_sm_90a() {
    insta::assert_snapshot!(ptx_without_lines(Target::Sm90a));
}

#[test]
fn op_zoo_sm_100a() {
    insta::assert_snapshot!(ptx_without_lines(Target::Sm100a));
}
