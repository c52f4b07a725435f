//! A user's crate gets the `phaser` CLI for its own kernels: this test binary is such a crate.
//! It defines a `#[phaser::kernel]` (registered by the macro) and registers two runnable
//! examples, one right and one wrong, then drives `phaser::cli::run` as `main` would.

use phaser::registry::{Example, ExampleRun, Examples, Size};
use phaser::{kernel, Buffer, Device, LaunchConfig};

/// Thread 0 writes `N`, every thread waits on the barrier's phase 0, then copies it out.
#[kernel(target = "sm_90a")]
fn user_fill(out: &mut [u32], #[comptime] N: u32) {
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1);
    }
    T.cuda.cta_sync();
    if tid == 0 {
        T.ptx.mbarrier.arrive(bar.ptr_to([0]));
    }
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
    out[tid] = N;
}

fn fill_run(dev: &Device, _: Size, _: u64, wrong: bool) -> Result<ExampleRun, phaser::RuntimeError> {
    let mut out: Buffer<u32> = dev.upload(&[0u32; 32])?;
    user_fill::launch(dev, LaunchConfig::linear(1, 32), &mut out, 7)?;
    let got = dev.download(&out)?;
    let want = if wrong { 8 } else { 7 };
    Ok(ExampleRun {
        passed: got.iter().all(|&v| v == want),
        detail: format!("out = {:?}..., expected {want}", &got[..4]),
        digest: got.iter().fold(0u64, |h, &v| h.wrapping_mul(31).wrapping_add(v as u64)),
        ..Default::default()
    })
}

fn examples() -> Vec<Example> {
    let kernels = |t| user_fill::build(t, 7).map(|k| vec![k]);
    vec![
        Example {
            name: "user_fill_ok".into(),
            about: "fills with N = 7 and expects 7".into(),
            kernels: Box::new(kernels),
            run: Box::new(|dev, size, seed| fill_run(dev, size, seed, false)),
        },
        Example {
            name: "user_fill_wrong".into(),
            about: "fills with N = 7 but expects 8: its check fails".into(),
            kernels: Box::new(kernels),
            run: Box::new(|dev, size, seed| fill_run(dev, size, seed, true)),
        },
    ]
}

phaser::registry::submit!(Examples(examples));

fn cli(args: &[&str]) -> u8 {
    phaser::cli::run(std::iter::once("phaser").chain(args.iter().copied()))
}

#[test]
fn the_macro_registered_the_kernel() {
    let k = phaser::registry::kernel("user_fill").expect("registered by #[phaser::kernel]");
    assert_eq!(k.comptime, ["N"]);
    assert_eq!(k.location.0, file!());
    let built = k.build_named(phaser::Target::Sm90a, &[("N".into(), 5)]).unwrap();
    assert_eq!(built, user_fill::build(phaser::Target::Sm90a, 5).unwrap());
    let missing = k.build_named(phaser::Target::Sm90a, &[]).unwrap_err();
    assert!(missing.contains("needs `--comptime N=VALUE`"), "{missing}");
    let unknown = k.build_named(phaser::Target::Sm90a, &[("M".into(), 1), ("N".into(), 1)]).unwrap_err();
    assert!(unknown.contains("no #[comptime] parameter `M`"), "{unknown}");
}

#[test]
fn emit_writes_the_kernels_ptx() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    assert_eq!(cli(&["emit", "--kernel", "user_fill", "--comptime", "N=9", "--out", out]), phaser::cli::EXIT_OK);
    let written = std::fs::read_to_string(dir.path().join("user_fill.ptx")).unwrap();
    assert_eq!(written, user_fill::ptx_for(9).unwrap());
    // A comptime value missing, malformed, or for an unknown kernel: usage errors.
    assert_eq!(cli(&["emit", "--kernel", "user_fill", "--out", out]), phaser::cli::EXIT_USAGE);
    assert_eq!(cli(&["emit", "--kernel", "user_fill", "--comptime", "N=x", "--out", out]), phaser::cli::EXIT_USAGE);
    assert_eq!(cli(&["emit", "--kernel", "no_such_kernel", "--out", out]), phaser::cli::EXIT_USAGE);
    // A value given twice is bad usage too (it exited 1, as a failed build).
    let twice = ["emit", "--kernel", "user_fill", "--comptime", "N=1", "--comptime", "N=2", "--out", out];
    assert_eq!(cli(&twice), phaser::cli::EXIT_USAGE);
}

#[test]
fn usage_and_output_errors_have_their_exit_codes() {
    // `--runs 0` said "0 runs" and ran once.
    assert_eq!(cli(&["bench", "--backend", "sim", "--runs", "0", "--only", "user_fill_ok"]), phaser::cli::EXIT_USAGE);
    assert_eq!(cli(&["--json", "bench", "--runs", "0"]), phaser::cli::EXIT_USAGE);
    // An unwritable trace directory is an output error (it was a failed example, exit 1).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let under_a_file = file.join("traces");
    let path = under_a_file.to_str().unwrap();
    assert_eq!(cli(&["run", "--backend", "sim", "--only", "user_fill_ok", "--trace-dir", path]), phaser::cli::EXIT_IO);
    assert_eq!(cli(&["trace", "--out", path, "--only", "user_fill_ok"]), phaser::cli::EXIT_IO);
}

#[test]
fn check_passes_the_right_example_and_fails_the_wrong_one() {
    assert_eq!(cli(&["check", "--only", "user_fill_ok", "--exact"]), phaser::cli::EXIT_OK);
    assert_eq!(cli(&["check", "--only", "user_fill_wrong", "--exact"]), phaser::cli::EXIT_FAILED);
    assert_eq!(cli(&["run", "--backend", "sim", "--only", "user_fill"]), phaser::cli::EXIT_FAILED);
    assert_eq!(cli(&["--json", "run", "--backend", "sim", "--only", "user_fill_ok"]), phaser::cli::EXIT_OK);
    assert_eq!(cli(&["check", "--only", "nothing_matches"]), phaser::cli::EXIT_USAGE);
    assert_eq!(cli(&["list"]), phaser::cli::EXIT_OK);
    assert_eq!(cli(&["no-such-command"]), phaser::cli::EXIT_USAGE);
}

#[test]
fn trace_writes_perfetto_traces() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(cli(&["trace", "--out", dir.path().to_str().unwrap(), "--only", "user_fill_ok"]), phaser::cli::EXIT_OK);
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().any(|n| n.starts_with("user_fill") && n.ends_with(".trace.json")), "{names:?}");
}
