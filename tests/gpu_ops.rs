//! The new ops on the GPU (run by `.ci/gpu-bundle`): the kernels and references of the
//! simulator tests (`tests/ops_kernels`), and `printf`, whose text must be what the simulator
//! prints.

mod ops_kernels;
use ops_kernels::*;

use phaser::{Device, LaunchConfig};

fn gpu() -> Device {
    Device::cuda(0).expect("needs a CUDA GPU")
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn new_ops_match_their_references_on_the_gpu() {
    let d = gpu();
    let mut failed = Vec::new();
    for (name, run) in scenarios() {
        match run(&d) {
            Ok(()) => eprintln!("gpu_ops: {name} ok"),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Runs in a child process (`printf_matches_the_simulator`): the GPU's printf goes to the
/// process's stdout when the launch synchronizes.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn printf_child() {
    if std::env::var_os("PHASER_PRINTF_CHILD").is_none() {
        return;
    }
    let d = gpu();
    lesson_arrive_wait::launch(&d, LaunchConfig::linear(1, 8), 4).unwrap();
    lesson_phase_flip::launch(&d, LaunchConfig::linear(1, 32)).unwrap();
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn printf_matches_the_simulator() {
    let exe = std::env::current_exe().unwrap();
    let child = std::process::Command::new(exe)
        .args(["--exact", "printf_child", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env("PHASER_PRINTF_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "child failed:\n{stdout}\n{}", String::from_utf8_lossy(&child.stderr));
    // libtest prints `test printf_child ... ` without a line break before the kernel's first
    // line: take that line from its `[exp 1]` on.
    let printed: Vec<&str> = stdout
        .lines()
        .map(|l| l.find("[exp 1]").map_or(l, |i| &l[i..]))
        .filter(|l| l.starts_with("[exp 1]") || l.starts_with("  thread") || l.starts_with("  round"))
        .collect();
    let (exp1, flips): (Vec<&str>, Vec<&str>) = printed.iter().partition(|l| !l.starts_with("  round"));
    // Experiment 1: the same lines; the barrier puts every arrival's line before every wait's.
    let want = lesson_arrive_wait_text();
    let mut want_sorted: Vec<&str> = want.lines().collect();
    let mut got_sorted = exp1.clone();
    want_sorted.sort();
    got_sorted.sort();
    assert_eq!(got_sorted, want_sorted, "GPU printed:\n{stdout}");
    assert!(exp1[0].starts_with("[exp 1]"), "{stdout}");
    let last_arrive = exp1.iter().rposition(|l| l.contains("arriving")).unwrap();
    let first_wait = exp1.iter().position(|l| l.contains("wait passed")).unwrap();
    assert!(last_arrive < first_wait, "{stdout}");
    // Experiment 3: one thread prints, in order: the text must be exactly the simulator's.
    let flips: String = flips.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(flips, lesson_phase_flip_text(), "GPU printed:\n{stdout}");
}
