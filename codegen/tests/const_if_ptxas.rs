//! A condition folded to a constant (`Value::pred`) prints only the taken branch: PTX has no
//! immediate guard (`@!1 bra` is a syntax error), so every form must still assemble.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::*;
use phaser_codegen::{emit_kernel, ptxas, Target};

#[test]
fn constant_conditions_print_the_taken_branch_and_assemble() {
    let mut k = KernelBuilder::new("const_if", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    k.if_else(Value::pred(true), |k| k.st_global(out, tid, Value::u32(11)), |k| k.st_global(out, tid, Value::u32(22)));
    k.if_else(Value::pred(false), |k| k.st_global(out, tid, Value::u32(33)), |k| k.st_global(out, tid, Value::u32(44)));
    k.if_then(Value::pred(false), |k| k.st_global(out, tid, Value::u32(55)));
    k.loop_(|k| {
        k.if_then(Value::pred(false), |k| k.break_());
        k.st_global(out, tid, Value::u32(66));
        k.if_then(Value::pred(true), |k| k.break_());
    });
    let ptx = emit_kernel(&k.finish().unwrap()).unwrap();
    assert!(!ptx.contains("@!1") && !ptx.contains("@1 ") && !ptx.contains("@0 "), "{ptx}");
    for (stored, printed) in [(11, true), (22, false), (33, false), (44, true), (55, false), (66, true)] {
        let store = format!("st.global.u32 [%rd*], {stored}");
        assert_eq!(phaser_codegen::ptx_text::has(&ptx, &store), printed, "store of {stored}:\n{ptx}");
    }
    ptxas::assemble(&ptxas::require(), &ptx, "sm_90a").unwrap_or_else(|e| panic!("{e}\n{ptx}"));
}
