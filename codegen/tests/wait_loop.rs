//! The blocking wait on every pipeline's hot path: without the watchdog it is CUTLASS's
//! `ClusterBarrier::wait` loop to the letter (what ptxas turns into nvcc's code); with it, the
//! watchdog reads `%globaltimer` only after a run of failed tries, in one block ending in `trap`.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::emit::{WaitLoop, DEFAULT_WAIT_TIMEOUT_NS, WAIT_SPINS_PER_CHECK};
use phaser_codegen::ir::Value;
use phaser_codegen::{emit_module, ptxas, EmitOptions, Module, Target};

fn wait_kernel() -> phaser_codegen::Kernel {
    let mut k = KernelBuilder::new("w", Target::Sm90a);
    let bars = k.alloc_barriers("b", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    k.mbarrier_init(b, Value::u32(1));
    k.mbarrier_wait(b, Value::u32(0));
    k.finish().unwrap()
}

/// The lines of the wait block, trimmed.
fn wait_block(ptx: &str) -> Vec<String> {
    let start = ptx.find("\t{\n").expect("wait block");
    let end = start + ptx[start..].find("\t}\n").expect("end of wait block");
    ptx[start..end].lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
}

fn tries(lines: &[String]) -> Vec<usize> {
    (0..lines.len()).filter(|&i| lines[i].starts_with("mbarrier.try_wait")).collect()
}

#[test]
fn first_try_form_tries_once_then_retries_with_the_hint() {
    let opts = EmitOptions { wait_loop: WaitLoop::FirstTry, ..EmitOptions::default() };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    let lines = wait_block(&ptx);
    let t = tries(&lines);
    assert_eq!(t.len(), 2, "{ptx}");
    // The first try carries no hint, and success leaves the block right away.
    assert_eq!(lines[t[0]], "mbarrier.try_wait.parity.shared::cta.b64 %wait_done, [%r0], 0;", "{ptx}");
    assert!(lines[t[0] + 1].starts_with("@%wait_done bra $L_waited_"), "{ptx}");
    // Nothing before the first failure reads the timer or touches the counter.
    let mut before = lines[..=t[0] + 1].iter().filter(|l| !l.starts_with(".reg"));
    assert!(before.all(|l| !l.contains("%globaltimer") && !l.contains("%wait_spins")), "{ptx}");
    // The retry loop: counter reset, then the hinted try at its head.
    assert_eq!(lines[t[1] - 2], "mov.u32 %wait_spins, 0;", "{ptx}");
    assert!(lines[t[1] - 1].starts_with("$L_wait_"), "{ptx}");
    assert!(lines[t[1]].ends_with(", 0, 10000000;"), "{ptx}");
    check_watchdog(&lines, t[1], &ptx);
}

#[test]
fn hinted_first_form_tries_with_the_hint_then_counts() {
    let opts = EmitOptions { wait_loop: WaitLoop::HintedFirst, ..EmitOptions::default() };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    let lines = wait_block(&ptx);
    let t = tries(&lines);
    assert_eq!(t.len(), 2, "{ptx}");
    // The first try is the head of CUTLASS's loop (with the hint); success leaves at once.
    assert_eq!(lines[t[0]], "mbarrier.try_wait.parity.shared::cta.b64 %wait_done, [%r0], 0, 10000000;", "{ptx}");
    assert!(lines[t[0] + 1].starts_with("@%wait_done bra $L_waited_"), "{ptx}");
    let mut before = lines[..=t[0] + 1].iter().filter(|l| !l.starts_with(".reg"));
    assert!(before.all(|l| !l.contains("%globaltimer") && !l.contains("%wait_spins")), "{ptx}");
    assert_eq!(lines[t[1] - 2], "mov.u32 %wait_spins, 0;", "{ptx}");
    assert!(lines[t[1]].ends_with(", 0, 10000000;"), "{ptx}");
    check_watchdog(&lines, t[1], &ptx);
}

#[test]
fn in_loop_form_starts_at_the_hinted_try() {
    let opts = EmitOptions { wait_loop: WaitLoop::InLoop, ..EmitOptions::default() };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    let lines = wait_block(&ptx);
    let t = tries(&lines);
    assert_eq!(t.len(), 1, "{ptx}");
    assert_eq!(lines[t[0] - 2], "mov.u32 %wait_spins, 0;", "{ptx}");
    assert!(lines[t[0] - 1].starts_with("$L_wait_") && lines[t[0]].ends_with(", 0, 10000000;"), "{ptx}");
    check_watchdog(&lines, t[0], &ptx);
}

/// After the retry at `retry`: success leaves, a failure is counted and retried, and every
/// `WAIT_SPINS_PER_CHECK`-th failure runs the watchdog block, which reads the timer once and
/// ends in `trap`.
fn check_watchdog(lines: &[String], retry: usize, ptx: &str) {
    let head = lines[retry - 1].trim_end_matches(':').to_string();
    assert!(lines[retry + 1].starts_with("@%wait_done bra $L_waited_"), "{ptx}");
    assert_eq!(lines[retry + 2], "add.u32 %wait_spins, %wait_spins, 1;", "{ptx}");
    assert_eq!(lines[retry + 3], format!("and.b32 %wait_rem, %wait_spins, {};", WAIT_SPINS_PER_CHECK - 1));
    assert_eq!(lines[retry + 4], "setp.ne.u32 %wait_done, %wait_rem, 0;", "{ptx}");
    assert_eq!(lines[retry + 5], format!("@%wait_done bra {head};"), "{ptx}");
    // The watchdog block: contiguous, from its comment to the trap.
    let start = lines.iter().position(|l| l.starts_with("// watchdog:")).expect("watchdog block");
    let trap = lines.iter().position(|l| l.starts_with("trap;")).expect("trap");
    assert_eq!(start, retry + 6, "{ptx}");
    let block = &lines[start..=trap];
    // The check reads the timer once; the record's path (after its comment) reads it again
    // only for its bounded sleeps (`emit::watchdog`).
    let record = block.iter().position(|l| l.starts_with("// watchdog: record")).unwrap_or(block.len());
    assert_eq!(block[..record].iter().filter(|l| l.contains("%globaltimer")).count(), 1, "{ptx}");
    assert_eq!(lines[..start].iter().filter(|l| l.contains("%globaltimer")).count(), 0, "{ptx}");
    // The first check of a wait starts its clock; the limit is the default timeout.
    assert!(block.contains(&format!("setp.eq.u32 %wait_done, %wait_spins, {WAIT_SPINS_PER_CHECK};")), "{ptx}");
    assert!(block.iter().any(|l| l.ends_with(&format!(", {DEFAULT_WAIT_TIMEOUT_NS};"))), "{ptx}");
    // Under the limit: back to the retry loop (with the record: unless the alarm is up, then
    // the record's path too); past it, the trap path (the watchdog record, `emit::watchdog`,
    // when the printer writes one) ends in the trap.
    let back = block.iter().rposition(|l| *l == format!("@%wait_done bra {head};")).expect("retry after the check");
    let with_record = block[back + 1].starts_with("$L_wd_record_") && block[back + 2].starts_with("// watchdog: record");
    assert!(with_record || back + 1 == block.len() - 1, "{ptx}");
    if with_record {
        // Past the limit, the alarm check is skipped: straight to the record.
        let past = block.iter().position(|l| l.starts_with("@!%wait_done bra $L_wd_record_")).expect("{ptx}");
        assert_eq!(block[past].trim_start_matches("@!%wait_done bra ").trim_end_matches(';'), block[back + 1].trim_end_matches(':'));
        assert!(block[past..back].iter().any(|l| l.contains("phaser_watchdog_claim")), "the alarm reads the slot counter: {ptx}");
    }
    assert!(lines[trap + 1].starts_with("$L_waited_"), "{ptx}");
}

#[test]
fn without_watchdog_it_is_cutlass_loop_to_the_letter() {
    let opts = EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    let lines = wait_block(&ptx);
    let body: Vec<&str> = lines.iter().map(|s| s.as_str()).filter(|l| !l.starts_with(".reg") && *l != "{").collect();
    // CUTLASS: `LAB_WAIT: try_wait P1, [bar], phase, 0x989680; @P1 bra DONE; bra LAB_WAIT; DONE:`.
    assert_eq!(body.len(), 5, "{ptx}");
    let label = body[0].trim_end_matches(':');
    assert!(body[0].starts_with("$L_wait_"), "{ptx}");
    assert_eq!(body[1], "mbarrier.try_wait.parity.shared::cta.b64 %wait_done, [%r0], 0, 10000000;", "{ptx}");
    let done = body[2].strip_prefix("@%wait_done bra ").expect("success branch").trim_end_matches(';');
    assert_eq!(body[3], format!("bra.uni {label};"), "{ptx}");
    assert_eq!(body[4], format!("{done}:"), "{ptx}");
    // No hint at all when asked.
    let opts = EmitOptions { wait_suspend_hint_ns: None, ..opts };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    assert!(!ptx.contains("10000000"));
}

#[test]
fn every_form_assembles() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for wait_loop in [WaitLoop::FirstTry, WaitLoop::HintedFirst, WaitLoop::InLoop] {
        for (timeout, hint) in
            [(Some(1_000_000_000), Some(10_000_000)), (None, Some(10_000_000)), (Some(5), None), (None, None)]
        {
            let opts = EmitOptions {
                wait_timeout_ns: timeout,
                wait_suspend_hint_ns: hint,
                wait_loop,
                ..EmitOptions::default()
            };
            let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
            if let Err(msg) = ptxas::assemble(&ptxas, &ptx, "sm_90a") {
                panic!("{wait_loop:?} {timeout:?}/{hint:?}: ptxas rejected the wait:\n{msg}\n{ptx}");
            }
        }
    }
}
