//! The wait watchdog's trap path writes a record before it traps: the module declares the
//! record pointer and claim, each wait's trap path names its site (its index in
//! `Kernel::wait_sites`), checks every barrier array's range, and the fast path is the
//! same with or without the record.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::emit::watchdog::{
    entry, grace_ns, header, kernel_tag, BACKSTOP_GRACES, CLAIM_SYMBOL, ENTRY_CAPACITY, ENTRY_MAGIC, ENTRY_WORDS,
    HEADER_WORDS, RECORD_MAGIC, RECORD_SYMBOL, RECORD_WORDS,
};
use phaser_codegen::emit::WaitLoop;
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
            text.matches(&format!(
                "// watchdog: record this starved wait (site {site}) in the table, then trap (emit::watchdog)"
            ))
            .count(),
            1
        );
    }
    // Each trap path checks both barrier arrays' ranges (4 and 2 barriers of 8 bytes).
    assert_eq!(text.matches("sub.u32 %wd_v, %wd_bar, %smem_full_addr;").count(), 3, "{text}");
    assert_eq!(text.matches("sub.u32 %wd_v, %wd_bar, %smem_empty_addr;").count(), 3);
    assert_eq!(text.matches("setp.lt.u32 %wd_p, %wd_v, 32;").count(), 3);
    assert_eq!(text.matches("setp.lt.u32 %wd_p, %wd_v, 16;").count(), 3);
    assert_eq!(text.matches(&format!("mov.u32 %wd_v, {RECORD_MAGIC};")).count(), 3);
    assert_eq!(text.matches(&format!("mov.u32 %wd_v, {ENTRY_MAGIC};")).count(), 3);
    // One trap per wait, after the record.
    assert_eq!(text.matches("\ttrap;").count(), 3);
}

#[test]
fn the_record_is_only_in_the_timeout_branch() {
    let with = ptx(&EmitOptions::default());
    let without = ptx(&EmitOptions { watchdog_record: false, ..EmitOptions::default() });
    assert!(!without.contains(RECORD_SYMBOL) && !without.contains("%wd_"));
    // Everything outside the trap paths is identical: drop each wait's path past its limit
    // check (with the record: the alarm check, the entry, to the trap) and the module
    // declarations, and the texts agree.
    let strip = |t: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut skipping = false;
        for l in t.lines() {
            let was = skipping;
            if l.contains("setp.lt.u64 %wait_done, %wait_dt") {
                skipping = true;
            }
            if skipping && l.trim_start().starts_with("trap;") {
                skipping = false;
                continue;
            }
            if !was
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

/// The byte offsets `[%reg+N]` that the PTX stores through `reg`.
fn store_offsets(text: &str, reg: &str) -> std::collections::BTreeSet<usize> {
    let pat = format!("st.volatile.global.u32 [{reg}+");
    text.lines()
        .filter_map(|l| l.find(&pat).map(|i| &l[i + pat.len()..]))
        .map(|rest| rest[..rest.find(']').unwrap()].parse().unwrap())
        .collect()
}

/// Every word the trap path stores is a field of the layout, in bounds: the entry's fields
/// (relative to the entry's address) and the header's. One layout, read by printer and runtime.
#[test]
fn the_trap_path_stores_exactly_the_layouts_fields() {
    let text = ptx(&EmitOptions::default());
    let entry_fields = [
        (entry::MARKER, 1),
        (entry::KERNEL, 1),
        (entry::SITE, 1),
        (entry::ALLOC, 1),
        (entry::INDEX, 1),
        (entry::PARITY, 1),
        (entry::PHASE_PARITY, 1),
        (entry::BAR_ADDR, 1),
        (entry::SMID, 1),
        (entry::LANES, 1),
        (entry::ELAPSED_NS, 2),
        (entry::CTA, 3),
        (entry::THREAD, 3),
        (entry::RAW, 2),
    ];
    let words: Vec<usize> = entry_fields.iter().flat_map(|&(w, n)| w..w + n).collect();
    let mut distinct = words.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), words.len(), "entry fields overlap");
    assert!(distinct.iter().all(|&w| w < ENTRY_WORDS), "an entry field past ENTRY_WORDS");
    let want: std::collections::BTreeSet<usize> = distinct.iter().map(|w| (HEADER_WORDS + w) * 4).collect();
    assert_eq!(store_offsets(&text, "%wd_ent"), want, "{text}");
    let header_fields = [
        (header::MAGIC, 1),
        (header::CLAIMED, 1),
        (header::KERNEL, 1),
        (header::GRACE_NS, 2),
        (header::GRID, 3),
        (header::BLOCK, 3),
        (header::DYNAMIC_SHARED, 1),
    ];
    let hw: std::collections::BTreeSet<usize> = header_fields.iter().flat_map(|&(w, n)| w..w + n).collect();
    assert_eq!(hw.len(), header_fields.iter().map(|f| f.1).sum::<usize>(), "header fields overlap");
    assert!(hw.iter().all(|&w| w < HEADER_WORDS));
    assert_eq!(store_offsets(&text, "%wd_rec"), hw.iter().map(|w| w * 4).collect(), "{text}");
    // The entry's address: slot * entry size from the record; slots past the table are counted only.
    assert!(text.contains(&format!("mad.wide.u32 %wd_ent, %wd_slot, {}, %wd_rec;", ENTRY_WORDS * 4)), "{text}");
    assert!(text.contains(&format!("setp.ge.u32 %wd_p, %wd_slot, {ENTRY_CAPACITY};")), "{text}");
    assert_eq!(RECORD_WORDS, HEADER_WORDS + ENTRY_CAPACITY * ENTRY_WORDS);
    assert!(text.contains(&format!("mov.u32 %wd_v, {};", kernel_tag("sites"))), "{text}");
}

/// The slot is taken with a device-memory atomic, one per warp group (the lowest lane of the
/// lanes at the same barrier and parity), and every loop of the path is bounded by the timer.
#[test]
fn slots_are_per_warp_group_and_every_loop_is_bounded() {
    let text = ptx(&EmitOptions::default());
    assert_eq!(text.matches(&format!("atom.global.add.u32 %wd_slot, [{CLAIM_SYMBOL}], 1;")).count(), 3, "{text}");
    assert_eq!(text.matches("match.any.sync.b64 %wd_mask, %wd_key, %wd_mask;").count(), 3);
    assert_eq!(text.matches("popc.b32 %wd_v, %wd_mask;").count(), 3);
    // The finalizer's grace period and the others' backstop, at the default 10 ms hint.
    let grace = grace_ns(Some(10_000_000));
    assert_eq!(grace, 1_280_000_000);
    assert_eq!(text.matches(&format!("add.u64 %wd_end, %wd_end, {grace};")).count(), 3, "{text}");
    assert_eq!(text.matches(&format!("add.u64 %wd_end, %wd_end, {};", grace * BACKSTOP_GRACES)).count(), 3);
    // Each backward branch of the path follows a timer comparison: no loop waits on another thread.
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for (i, l) in lines.iter().enumerate() {
        for lab in ["$L_wd_grace_", "$L_wd_nap_"] {
            if l.starts_with("@%wd_p bra ") && l.contains(lab) {
                assert_eq!(lines[i - 1], "setp.lt.u64 %wd_p, %wd_raw, %wd_end;", "{text}");
                assert_eq!(lines[i - 2], "mov.u64 %wd_raw, %globaltimer;", "{text}");
            }
        }
    }
    // Grace bounds: no hint, a small and a huge hint.
    assert_eq!(grace_ns(None), 50_000_000);
    assert_eq!(grace_ns(Some(100)), 50_000_000);
    assert_eq!(grace_ns(Some(u32::MAX)), 2_000_000_000);
}

/// Every layout, with parity registers and a wait on a state token, assembles for sm_90a.
#[test]
fn the_record_assembles_in_every_wait_layout() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    let mut k = KernelBuilder::new("token", Target::Sm90a);
    let bars = k.alloc_barriers("b", 2);
    let b = k.barrier_at(bars, Value::u32(1));
    k.mbarrier_init(b, Value::u32(1));
    let state = k.mbarrier_arrive(b);
    k.mbarrier_wait_state(b, state);
    let token = k.finish().unwrap();
    for wait_loop in WaitLoop::ALL {
        for hint in [Some(10_000_000), None] {
            let opts = EmitOptions { wait_loop, wait_suspend_hint_ns: hint, ..EmitOptions::default() };
            let text = emit_module(&Module::new(vec![kernel(), token.clone()]), &opts).unwrap();
            if let Err(msg) = ptxas::assemble(&ptxas, &text, "sm_90a") {
                panic!("{wait_loop:?}/{hint:?}: ptxas rejected the watchdog record:\n{msg}\n{text}");
            }
        }
    }
}
