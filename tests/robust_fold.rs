//! Constant folding is the constant evaluator's (`phaser::codegen::eval`): a folded constant
//! equals what the instruction computes at run time, and a constant the type cannot hold (or
//! a division by zero) is refused at the user's line, never wrapped and then range-checked.

use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig};

const FILE: &str = "tests/robust_fold.rs";

/// The line of this file holding `marker` (in a comment).
fn line_of(marker: &str) -> u32 {
    let lines: Vec<&str> = include_str!("robust_fold.rs").lines().collect();
    let i = lines.iter().position(|l| l.contains(marker) && !l.contains("line_of")).unwrap();
    i as u32 + 1
}

/// The build error of a kernel: it must name the overflow at the marked line.
fn refused_at(e: phaser::codegen::CodegenError, marker: &str, expr: &str) {
    let d = e.diagnostics.iter().find(|d| d.message.contains("overflows")).unwrap_or_else(|| panic!("{e}"));
    assert!(d.message.contains(expr), "{e}");
    let loc = d.loc.unwrap_or_else(|| panic!("no location: {e}"));
    assert_eq!((loc.file, loc.line), (FILE, line_of(marker)), "{e}");
}

const BIG: u32 = 65536;

#[phaser::kernel(target = "sm_90a")]
fn tx_literal(out: &mut [u32]) {
    let bar = T.alloc_barriers(1);
    if T.thread_idx() == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
        T.ptx.mbarrier.arrive.expect_tx(bar.ptr_to([0]), 65536 * 65536 + 1); // TX-LITERAL
        out[0] = 1;
    }
}

#[phaser::kernel(target = "sm_90a")]
fn tx_const_item(out: &mut [u32]) {
    let bar = T.alloc_barriers(1);
    if T.thread_idx() == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
        T.ptx.mbarrier.arrive.expect_tx(bar.ptr_to([0]), BIG * BIG + 1); // TX-CONST
        out[0] = 1;
    }
}

#[phaser::kernel(target = "sm_90a")]
fn init_comptime(out: &mut [u32], #[comptime] N: u32) {
    let bar = T.alloc_barriers(1);
    if T.thread_idx() == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), N * N + 1); // INIT-COMPTIME
        out[0] = 1;
    }
}

#[test]
fn a_count_that_overflows_is_refused_at_its_line_not_wrapped() {
    // Each wrapped to 1 before: `expect_tx ... 1;` and an init count of 1.
    refused_at(tx_literal::kernel().unwrap_err(), "// TX-LITERAL", "65536 * 65536");
    refused_at(tx_const_item::kernel().unwrap_err(), "// TX-CONST", "65536 * 65536");
    refused_at(init_comptime::kernel_for(65536).unwrap_err(), "// INIT-COMPTIME", "65536 * 65536");
    // In range, the count is the value asked for.
    let ptx = init_comptime::ptx_for(31).unwrap();
    assert_eq!(
        ptx.lines()
            .filter(|l| l.trim_start().starts_with("mbarrier.init.shared::cta.b64") && l.contains(", 962;"))
            .count(),
        1,
        "{ptx}"
    );
}

#[phaser::kernel(target = "sm_90a")]
fn shifts(inp: &[i32], wide: &[i64], out: &mut [i32], out64: &mut [i64]) {
    if T.thread_idx() == 0 {
        let folded: i32 = -8;
        out[0] = folded >> 40;
        out[1] = inp[0] >> 40;
        let folded64: i64 = -1;
        out64[0] = folded64 >> 70;
        out64[1] = wide[0] >> 70;
    }
}

#[test]
fn signed_shifts_past_the_width_fold_to_the_sign_like_the_simulator() {
    // The constant operands are folded (a store of the constant), the loaded ones shifted by
    // `shr` at run time.
    let ptx = shifts::ptx().unwrap();
    let insts: Vec<&str> = ptx.lines().map(str::trim).collect();
    for (store, shr) in [("st.global.s32", "shr.s32"), ("st.global.s64", "shr.s64")] {
        assert_eq!(insts.iter().filter(|l| l.starts_with(store) && l.ends_with("], -1;")).count(), 1, "{ptx}");
        assert_eq!(insts.iter().filter(|l| l.starts_with(shr)).count(), 1, "{ptx}");
    }
    let dev = Device::sim(SimConfig::default());
    let inp = dev.upload(&[-8i32]).unwrap();
    let wide = dev.upload(&[-1i64]).unwrap();
    let out = dev.alloc::<i32>(2).unwrap();
    let out64 = dev.alloc::<i64>(2).unwrap();
    let args = [Arg::buffer(&inp), Arg::buffer(&wide), Arg::buffer(&out), Arg::buffer(&out64)];
    dev.launch(&shifts::kernel().unwrap(), LaunchConfig::linear(1, 32), &args).unwrap();
    assert_eq!(dev.download(&out).unwrap(), [-1, -1], "folded and computed at run time");
    assert_eq!(dev.download(&out64).unwrap(), [-1, -1], "folded and computed at run time");
}

#[test]
fn a_local_may_share_a_kernels_name() {
    // The kernel's item was a unit struct, which a `let` of the same name cannot shadow
    // ("let bindings cannot shadow unit structs").
    let shifts = 3u32;
    let tx_literal = shifts + 1;
    assert_eq!(tx_literal, 4);
    assert!(self::shifts::kernel().is_ok());
}
