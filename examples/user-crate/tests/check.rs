//! The user crate's `phaser check` runs its registered kernel, and the gallery examples it
//! compiles from the gallery's own files, in the simulator, and they pass; a selection that
//! names nothing is bad usage.

use std::process::Command;

fn cli(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_phaser-user-crate"))
        .args(args)
        .current_dir(dir.path())
        .output()
        .expect("the user crate's binary runs")
}

#[test]
fn phaser_check_runs_the_registered_kernel() {
    let out = cli(&["check", "--only", "staged_saxpy", "--exact"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "exit {:?}\n{text}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("staged_saxpy") && text.contains("128 elements match the CPU reference"), "{text}");
    assert!(text.contains("1 passed, 0 failed, 0 skipped"), "{text}");
}

/// The gallery's GEMM and attention examples, compiled here from their files unchanged (only
/// public API), run and pass their CPU references as they do in the gallery.
#[test]
fn the_gallery_examples_copied_here_pass_phaser_check() {
    let out = cli(&["check", "--only", "_dsl"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "exit {:?}\n{text}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    for name in ["gemm_dsl", "gemm_dsl_1cta", "gemm_dsl_splitk", "gemm_dsl_splitk_fixup", "gemm_dsl_splitk_every", "attention_dsl", "attention_dsl_causal"] {
        assert!(text.lines().any(|l| l.starts_with("PASS ") && l.split_whitespace().nth(1) == Some(name)), "{name}: {text}");
    }
    assert!(text.contains("elements exact") && text.contains("0 elements outside tolerance"), "{text}");
    assert!(text.contains("7 passed, 0 failed, 0 skipped"), "{text}");
}

#[test]
fn phaser_list_shows_the_kernel_and_the_example() {
    let out = cli(&["list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.matches("staged_saxpy").count() >= 2, "the kernel and the runnable example: {text}");
}

#[test]
fn an_unknown_selection_is_bad_usage() {
    let out = cli(&["check", "--only", "no_such_example", "--exact"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
}
