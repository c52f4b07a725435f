//! The wait watchdog guards a flag wait's spin loop (`T.flag.wait`, `ir::FlagSpin`) as it
//! guards mbarrier waits: the loop is a wait site, counts its failed tries, reads the clock
//! every `WAIT_SPINS_PER_CHECK`, and past the limit (or on the alarm) writes an entry naming
//! the flag and traps; without a watchdog the loop is the bare acquire spin.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::emit::watchdog::{
    entry, FlagBuffer, WaitKind, CLAIM_SYMBOL, ENTRY_WORDS, HEADER_WORDS, RECORD_SYMBOL,
};
use phaser_codegen::emit::{WaitLoop, WAIT_SPINS_PER_CHECK};
use phaser_codegen::ir::{Dim, MemScope, Value};
use phaser_codegen::ptx_text::{count, instructions};
use phaser_codegen::{emit_module, ptxas, EmitOptions, Kernel, Module, Target, Type};

/// A barrier wait (site 0), then a wait on `flags[tid]` for 1 (site 1); the lines of both.
fn kernel(target: Target) -> (Kernel, u32, u32) {
    let mut k = KernelBuilder::new("flag_sites", target);
    let flags = k.param_global("flags", Type::U32, true);
    let bars = k.alloc_barriers("full", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    k.mbarrier_init(b, Value::u32(1));
    let bar_line = line!() + 1;
    k.mbarrier_wait(b, Value::u32(0));
    let tid = k.thread_idx(Dim::X);
    let flag_line = line!() + 1;
    k.flag_wait(flags, tid, Value::u32(1), MemScope::Gpu);
    (k.finish().unwrap(), bar_line, flag_line)
}

fn ptx(target: Target, opts: &EmitOptions) -> String {
    emit_module(&Module::new(vec![kernel(target).0]), opts).unwrap()
}

#[test]
fn the_flag_wait_is_a_site_named_by_its_buffer_and_line() {
    let (k, bar_line, flag_line) = kernel(Target::Sm90a);
    let sites = k.wait_sites();
    let kinds: Vec<&WaitKind> = sites.iter().map(|s| &s.kind).collect();
    assert_eq!(
        kinds,
        [
            &WaitKind::Barrier { parity: Some("0".into()) },
            &WaitKind::Flag { buffer: Some(FlagBuffer { name: "flags".into() }) }
        ]
    );
    let lines: Vec<u32> = sites.iter().map(|s| s.loc.expect("a line").line).collect();
    assert_eq!(lines, [bar_line, flag_line]);
    assert!(sites.iter().all(|s| s.loc.unwrap().file.ends_with("watchdog_flag.rs")), "{sites:?}");
}

/// The index of the first instruction at or after `from` matching `pattern`.
fn find(insts: &[phaser_codegen::ptx_text::Instruction], from: usize, pattern: &str) -> usize {
    (from..insts.len()).find(|&i| insts[i].matches(pattern)).unwrap_or_else(|| panic!("no `{pattern}` after {from}"))
}

#[test]
fn the_loop_counts_failed_tries_and_traps_with_the_flags_entry() {
    let text = ptx(Target::Sm90a, &EmitOptions::default());
    let insts = instructions(&text);
    // The spin: the acquire load, the exit when the flag is reached, then the failed try.
    let load = find(&insts, 0, "ld.acquire.gpu.global.u32");
    assert_eq!(count(&text, "ld.acquire.gpu.global.u32"), 1, "{text}");
    let tried = find(&insts, load, "add.u32 _, _, 1");
    let spins = insts[tried].operands[0];
    assert_eq!(insts[tried].operands[1], spins);
    // Zeroed once, before the loop.
    let zeroed = find(&insts, 0, &format!("mov.u32 {spins}, 0"));
    assert!(zeroed < load, "{text}");
    let every = find(&insts, tried, &format!("and.b32 %wait_rem, {spins}, {}", WAIT_SPINS_PER_CHECK - 1));
    let clock = find(&insts, every, "mov.u64 %wait_dt, %globaltimer");
    let limit = find(&insts, clock, "setp.lt.u64 %wait_done, %wait_dt, 4000000000");
    let alarm = find(&insts, limit, &format!("ld.volatile.global.u32 %wait_rem, [{CLAIM_SYMBOL}]"));
    // The entry: the flag's index (`tid`), the value waited for (1), the value read.
    let index = find(&insts, alarm, "mov.u32 %wd_bar, %r*");
    let expected = find(&insts, index, "mov.u32 %wd_par, 1");
    let at = |w: usize| format!("[%wd_ent+{}]", (HEADER_WORDS + w) * 4);
    let st_index = find(&insts, expected, &format!("st.volatile.global.u32 {}, %wd_bar", at(entry::FLAG_INDEX)));
    find(&insts, st_index, &format!("st.volatile.global.u32 {}, %wd_par", at(entry::FLAG_EXPECTED)));
    let seen = insts[load].operands[0];
    find(&insts, st_index, &format!("mov.u32 %wd_v, {seen}"));
    find(&insts, st_index, &format!("st.volatile.global.u32 {}, %wd_v", at(entry::FLAG_SEEN)));
    find(&insts, alarm, "trap");
    // No barrier operation in the flag's trap path.
    let flag_path = &insts[alarm..];
    assert!(!flag_path.iter().any(|i| i.opcode.starts_with("mbarrier.") || i.opcode.starts_with("ld.volatile.shared")));
    // Both waits are sites of the record: two entries, one per site.
    for site in 0..2 {
        let c = format!("// watchdog: record this starved wait (site {site}) in the table, then trap (emit::watchdog)");
        assert_eq!(text.matches(&c).count(), 1, "{text}");
    }
    assert_eq!(count(&text, "trap"), 2, "{text}");
}

/// The byte offsets `[%wd_ent+N]` the PTX stores through.
fn entry_stores(text: &str) -> std::collections::BTreeSet<usize> {
    let pat = "st.volatile.global.u32 [%wd_ent+";
    text.lines()
        .filter_map(|l| l.find(pat).map(|i| &l[i + pat.len()..]))
        .map(|rest| rest[..rest.find(']').unwrap()].parse().unwrap())
        .collect()
}

/// A kernel with only a flag wait stores every word of the entry (the barrier's words as
/// `NONE`): the layout has no word the flag's path leaves stale.
#[test]
fn a_flag_entry_writes_every_word_of_the_layout() {
    let mut k = KernelBuilder::new("only_flag", Target::Sm90a);
    let flags = k.param_global("flags", Type::U32, true);
    k.flag_wait(flags, Value::u32(3), Value::u32(2), MemScope::Sys);
    let text = emit_module(&Module::new(vec![k.finish().unwrap()]), &EmitOptions::default()).unwrap();
    let want: std::collections::BTreeSet<usize> = (0..ENTRY_WORDS).map(|w| (HEADER_WORDS + w) * 4).collect();
    assert_eq!(entry_stores(&text), want, "{text}");
    assert!(count(&text, "mov.u32 %wd_bar, 3") == 1 && count(&text, "mov.u32 %wd_par, 2") == 1, "{text}");
}

#[test]
fn without_a_watchdog_the_loop_is_the_bare_spin() {
    let off = EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() };
    let text = ptx(Target::Sm90a, &off);
    let insts = instructions(&text);
    assert!(!text.contains(RECORD_SYMBOL) && !text.contains("%globaltimer"), "{text}");
    assert_eq!(count(&text, "trap"), 0);
    // Nothing counts: the loop between the load and its backward branch is the compare.
    assert_eq!(count(&text, "add.u32 _, _, 1"), 0, "{text}");
    assert!(insts.iter().all(|i| !i.opcode.starts_with("and.b32")), "{text}");
    // Without the record, the watchdog traps bare.
    let bare = ptx(Target::Sm90a, &EmitOptions { watchdog_record: false, ..EmitOptions::default() });
    assert!(!bare.contains(RECORD_SYMBOL) && !bare.contains("%wd_"), "{bare}");
    assert_eq!(count(&bare, "trap"), 2, "{bare}");
    assert_eq!(count(&bare, "mov.u64 %wait_dt, %globaltimer"), 2, "{bare}");
}

#[test]
fn every_form_assembles() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for (target, sm) in [(Target::Sm90a, "sm_90a"), (Target::Sm100a, "sm_100a")] {
        for opts in [
            EmitOptions::default(),
            EmitOptions { watchdog_record: false, ..EmitOptions::default() },
            EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() },
            EmitOptions { wait_suspend_hint_ns: None, wait_loop: WaitLoop::InLoop, ..EmitOptions::default() },
        ] {
            let text = ptx(target, &opts);
            if let Err(msg) = ptxas::assemble(&ptxas, &text, sm) {
                panic!("{sm} {opts:?}: ptxas rejected the flag wait's watchdog:\n{msg}\n{text}");
            }
        }
    }
}
