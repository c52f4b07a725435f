//! The blocking wait on every pipeline's hot path: its fast path is the loop nvcc emits for
//! CUTLASS's `ClusterBarrier::wait` (one `try_wait` and a branch, retries with the 10 ms
//! suspend-time hint), and the watchdog reads `%globaltimer` only after a run of failed tries.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::emit::inst::WAIT_SPINS_PER_CHECK;
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

#[test]
fn fast_path_is_one_try_and_a_branch() {
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &EmitOptions::default()).unwrap();
    let lines = wait_block(&ptx);
    let first = lines.iter().position(|l| l.starts_with("mbarrier.try_wait")).unwrap();
    // The first try carries no hint, and success leaves the block right away.
    assert_eq!(lines[first], "mbarrier.try_wait.parity.shared::cta.b64 %wait_done, [%r0], 0;", "{ptx}");
    assert!(lines[first + 1].starts_with("@%wait_done bra $L_waited_"), "{ptx}");
    // Nothing before the first failure reads the timer.
    assert!(lines[..=first + 1].iter().all(|l| !l.contains("%globaltimer")));
    // Retries carry CUTLASS's hint; the timer is read once per WAIT_SPINS_PER_CHECK failures.
    let retries: Vec<&String> = lines.iter().filter(|l| l.starts_with("mbarrier.try_wait")).skip(1).collect();
    assert_eq!(retries.len(), 1);
    assert!(retries[0].ends_with(", 0, 10000000;"), "{ptx}");
    assert_eq!(lines.iter().filter(|l| l.contains("%globaltimer")).count(), 1);
    assert!(lines.contains(&format!("mov.u32 %wait_spins, {WAIT_SPINS_PER_CHECK};")), "{ptx}");
    let spin = lines.iter().position(|l| l.starts_with("$L_spin_")).unwrap();
    let timer = lines.iter().position(|l| l.contains("%globaltimer")).unwrap();
    let retry = lines.iter().position(|l| std::ptr::eq(l, retries[0])).unwrap();
    assert!(spin < retry && retry < timer, "{ptx}");
    assert!(lines.iter().any(|l| l.starts_with("trap;")));
}

#[test]
fn without_watchdog_it_is_cutlass_loop() {
    let opts = EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    let lines = wait_block(&ptx);
    let body: Vec<&str> = lines.iter().map(|s| s.as_str()).filter(|l| !l.starts_with(".reg") && *l != "{").collect();
    assert_eq!(body.len(), 6, "{ptx}");
    assert!(body[0].ends_with("[%r0], 0;") && body[1].starts_with("@%wait_done bra $L_waited_"));
    assert!(body[2].starts_with("$L_wait_") && body[3].ends_with("[%r0], 0, 10000000;"));
    assert!(body[4].starts_with("@!%wait_done bra $L_wait_") && body[5].starts_with("$L_waited_"));
    // No hint at all when asked.
    let opts = EmitOptions { wait_suspend_hint_ns: None, ..opts };
    let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
    assert!(!ptx.contains("10000000"));
}

#[test]
fn every_form_assembles() {
    let ptxas = ptxas::find().expect("ptxas is required for this test");
    for (timeout, hint) in
        [(Some(1_000_000_000), Some(10_000_000)), (None, Some(10_000_000)), (Some(5), None), (None, None)]
    {
        let opts = EmitOptions { wait_timeout_ns: timeout, wait_suspend_hint_ns: hint, ..EmitOptions::default() };
        let ptx = emit_module(&Module::new(vec![wait_kernel()]), &opts).unwrap();
        if let Err(msg) = ptxas::assemble(&ptxas, &ptx, "sm_90a") {
            panic!("{timeout:?}/{hint:?}: ptxas rejected the wait:\n{msg}\n{ptx}");
        }
    }
}
