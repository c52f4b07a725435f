//! The wait loop as ptxas assembles it (no GPU): the ping-pong kernels of `bench_pingpong`
//! in every wait layout assemble, and (cuobjdump, required next to ptxas) the SASS of
//! the watchdog-free wait is nvcc's for CUTLASS's loop: on the fast path one
//! `SYNCS.PHASECHK.TRANS64.TRYWAIT` followed by a branch to the out-of-line retry loop
//! (`NANOSLEEP.SYNCS`), never an inline sleep, and the timer only on the watchdog's path.

use phaser::codegen::emit::WaitLoop;
use phaser::codegen::{emit_module, ptxas, EmitOptions, Module};
use phaser_examples::pingpong;
use std::path::Path;

/// The SASS of `ptx` (one kernel), one instruction per line without addresses and encodings;
/// the cubin is written into `dir` (the calling test's own directory).
fn sass(dir: &Path, ptxas: &Path, cuobjdump: &Path, ptx: &str, name: &str) -> Vec<String> {
    let cubin = dir.join(format!("{name}.cubin"));
    ptxas::assemble_to(ptxas, ptx, "sm_90a", &["-O3"], &cubin)
        .unwrap_or_else(|e| panic!("ptxas rejected {name}:\n{e}"));
    let text = ptxas::sass(cuobjdump, &cubin).unwrap_or_else(|e| panic!("{e}"));
    // `        /*0120*/                   @P0 BRA 0x2b0 ;` -> `@P0 BRA 0x2b0`
    let insts: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("/*")?;
            let (addr, inst) = rest.split_once("*/")?;
            // The encoding follows as another `/* 0x... */`.
            let inst = inst.split("/*").next().unwrap_or("");
            (addr.len() == 4 && addr.chars().all(|c| c.is_ascii_hexdigit())).then(|| inst.trim())
        })
        .map(|i| i.trim_end_matches(';').trim().to_string())
        .filter(|i| !i.starts_with("NOP"))
        .collect();
    assert!(!insts.is_empty(), "{name}: no SASS instructions in:\n{text}");
    insts
}

fn forms() -> Vec<(&'static str, EmitOptions)> {
    vec![
        ("no-watchdog", EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() }),
        ("first-try", EmitOptions { wait_loop: WaitLoop::FirstTry, ..EmitOptions::default() }),
        ("hinted-first", EmitOptions { wait_loop: WaitLoop::HintedFirst, ..EmitOptions::default() }),
        ("in-loop", EmitOptions { wait_loop: WaitLoop::InLoop, ..EmitOptions::default() }),
    ]
}

#[test]
fn watchdog_free_wait_is_nvccs_and_the_timer_stays_off_the_fast_path() {
    let (ptxas, cuobjdump) = (ptxas::require(), ptxas::require_cuobjdump());
    let dir = tempfile::tempdir().unwrap();
    for k in pingpong::kernels().unwrap() {
        for (form, opts) in forms() {
            let ptx = emit_module(&Module::new(vec![k.clone()]), &opts).unwrap();
            let name = format!("{}_{form}", k.name());
            let insts = sass(dir.path(), &ptxas, &cuobjdump, &ptx, &name);
            // Out-of-line code (retry loops) follows the last EXIT.
            let exit = insts.iter().rposition(|i| i == "EXIT").expect("an EXIT");
            let timer: Vec<usize> = (0..insts.len()).filter(|&i| insts[i].contains("SR_GLOBALTIMER")).collect();
            if form == "no-watchdog" {
                // Each wait of the loop body: `TRYWAIT Pn` then `@!Pn BRA` (to the retry
                // loop, out of line after the EXIT), exactly as nvcc emits CUTLASS's loop.
                let waits = if k.name().contains("_x4") { 4 } else { 1 };
                let fast: Vec<usize> =
                    (0..exit).filter(|&i| insts[i].starts_with("SYNCS.PHASECHK.TRANS64.TRYWAIT")).collect();
                assert_eq!(fast.len(), 2 * waits, "{name}: one try per wait on each side:\n{}", insts.join("\n"));
                for &i in &fast {
                    // The next branch (ptxas may schedule independent instructions between).
                    let pred = insts[i].split_whitespace().nth(1).unwrap().trim_end_matches(',');
                    let br = (i + 1..insts.len()).find(|&j| insts[j].contains("BRA")).unwrap();
                    let between_syncs = insts[i + 1..br].iter().any(|x| x.contains("SYNCS"));
                    assert!(
                        insts[br].starts_with(&format!("@!{pred} BRA")) && !between_syncs,
                        "{name}: the try at {i} is not followed by its not-taken branch:\n{}",
                        insts.join("\n")
                    );
                }
                let sleeps: Vec<usize> =
                    (0..insts.len()).filter(|&i| insts[i].contains("NANOSLEEP.SYNCS 0x989680")).collect();
                let out_of_line = sleeps.iter().all(|&i| i > exit);
                assert!(!sleeps.is_empty() && out_of_line, "{name}: sleeps inline:\n{}", insts.join("\n"));
                assert!(timer.is_empty(), "{name}");
            } else {
                // The watchdog reads the timer only behind the failure counter: the instruction
                // before each read is not a try, and no read comes before the first try.
                let first_try = insts.iter().position(|i| i.contains("TRYWAIT")).unwrap();
                assert!(!timer.is_empty() && timer.iter().all(|&t| t > first_try), "{name}");
                assert!(insts.iter().any(|i| i.starts_with("BPT.TRAP")), "{name}");
            }
        }
    }
}
