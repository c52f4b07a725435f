//! The wait watchdog's trap path writes a record before it traps: the module declares the
//! record pointer and claim, each wait's trap path names its site (its index in
//! `Kernel::wait_sites`), checks every barrier array's range, and the fast path is the
//! same with or without the record.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::emit::watchdog::{CLAIM_SYMBOL, RECORD_MAGIC, RECORD_SYMBOL};
use phaser_codegen::ir::{Dim, Value};
use phaser_codegen::{emit_module, ptxas, EmitOptions, Kernel, Module, Target};

/// Two barrier arrays, three waits: one in each branch of an `if`, one in a loop.
fn kernel() -> Kernel {
    let mut k = KernelBuilder::new("sites", Target::Sm90a);
    let full = k.alloc_barriers("full", 4);
    let empty = k.alloc_barriers("empty", 2);
    let tid = k.thread_idx(Dim::X);
    let first = k.eq(tid, Value::u32(0));
    let f2 = k.barrier_at(full, Value::u32(2));
    let e1 = k.barrier_at(empty, Value::u32(1));
    k.mbarrier_init(f2, Value::u32(1));
    k.mbarrier_init(e1, Value::u32(1));
    k.if_else(first, |k| k.mbarrier_wait(f2, Value::u32(0)), |k| k.mbarrier_wait(e1, Value::u32(1)));
    k.for_range(Value::u32(0), Value::u32(3), |k, i| {
        let b = k.barrier_at(full, i);
        let p = k.and(i, Value::u32(1));
        k.mbarrier_wait(b, p);
    });
    k.finish().unwrap()
}

fn ptx(opts: &EmitOptions) -> String {
    emit_module(&Module::new(vec![kernel()]), opts).unwrap()
}

#[test]
fn every_wait_records_its_site_and_the_module_declares_the_record() {
    let k = kernel();
    assert_eq!(k.wait_sites().len(), 3);
    let text = ptx(&EmitOptions::default());
    assert_eq!(text.matches(&format!(".visible .global .align 8 .u64 {RECORD_SYMBOL} = 0;")).count(), 1, "{text}");
    assert_eq!(text.matches(&format!(".visible .global .align 4 .u32 {CLAIM_SYMBOL} = 0;")).count(), 1);
    for site in 0..3 {
        assert_eq!(
            text.matches(&format!("// watchdog: record which wait starved (site {site}), then trap")).count(),
            1
        );
    }
    // Each trap path checks both barrier arrays' ranges (4 and 2 barriers of 8 bytes).
    assert_eq!(text.matches("sub.u32 %wd_v, %wd_bar, %smem_full_addr;").count(), 3, "{text}");
    assert_eq!(text.matches("sub.u32 %wd_v, %wd_bar, %smem_empty_addr;").count(), 3);
    assert_eq!(text.matches("setp.lt.u32 %wd_p, %wd_v, 32;").count(), 3);
    assert_eq!(text.matches("setp.lt.u32 %wd_p, %wd_v, 16;").count(), 3);
    assert_eq!(text.matches(&format!("mov.u32 %wd_v, {RECORD_MAGIC};")).count(), 3);
    // One trap per wait, after the record.
    assert_eq!(text.matches("\ttrap;").count(), 3);
}

#[test]
fn the_record_is_only_in_the_timeout_branch() {
    let with = ptx(&EmitOptions::default());
    let without = ptx(&EmitOptions { watchdog_record: false, ..EmitOptions::default() });
    assert!(!without.contains(RECORD_SYMBOL) && !without.contains("%wd_"));
    // Everything outside the trap paths is identical: drop each record block (from its
    // comment to its trap) and the module declarations, and the texts agree.
    let strip = |t: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut skipping = false;
        for l in t.lines() {
            if l.contains("// watchdog: record which wait starved") {
                skipping = true;
            }
            if skipping && l.trim_start().starts_with("trap;") {
                skipping = false;
            }
            if !skipping
                && !l.contains(RECORD_SYMBOL)
                && !l.contains(CLAIM_SYMBOL)
                && !l.contains("The wait watchdog's record")
            {
                out.push(l.trim_end().to_string());
            }
        }
        out.retain(|l| !l.is_empty());
        out
    };
    assert_eq!(strip(&with), strip(&without));
    // No watchdog at all: no record either.
    let off = ptx(&EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() });
    assert!(!off.contains(RECORD_SYMBOL) && !off.contains("trap;"));
}

#[test]
fn kernels_without_waits_declare_nothing() {
    let mut k = KernelBuilder::new("no_wait", Target::Sm90a);
    let bars = k.alloc_barriers("b", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    k.mbarrier_init(b, Value::u32(1));
    let k = k.finish().unwrap();
    assert!(k.wait_sites().is_empty());
    assert!(!emit_module(&Module::new(vec![k]), &EmitOptions::default()).unwrap().contains(RECORD_SYMBOL));
}

#[test]
fn the_record_assembles() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for opts in [EmitOptions::default(), EmitOptions { watchdog_record: false, ..EmitOptions::default() }] {
        let text = ptx(&opts);
        if let Err(msg) = ptxas::assemble(&ptxas, &text, "sm_90a") {
            panic!("ptxas rejected the watchdog record:\n{msg}\n{text}");
        }
    }
}

#[test]
fn the_kernels_ptx_is_cached_per_options() {
    let k = kernel();
    let on = k.ptx().unwrap();
    assert_eq!(k.ptx().unwrap(), on);
    assert_eq!(k.ptx_emissions(), 1);
    let off_opts = EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() };
    let off = k.ptx_with(&off_opts).unwrap();
    assert_ne!(off, on, "the watchdog's setting is in the text");
    assert_eq!(k.ptx_with(&off_opts).unwrap(), off);
    assert_eq!(k.ptx().unwrap(), on);
    assert_eq!(k.ptx_emissions(), 2, "each setting printed once");
    let short = EmitOptions { wait_timeout_ns: Some(250_000_000), ..EmitOptions::default() };
    let ptx = k.ptx_with(&short).unwrap();
    assert!(phaser_codegen::ptx_text::has(&ptx, "setp.lt.u64 %wait_done, %wait_dt, 250000000"), "{ptx}");
    assert_eq!(k.ptx_emissions(), 3);
}
