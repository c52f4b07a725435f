//! The gallery's `phaser` binary is `phaser::cli::main()` with the gallery registered: it
//! lists every example and `#[phaser::kernel]`, and the README's PTX command still works.

use phaser_examples::gallery;
use std::process::Command;

fn phaser(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_phaser")).args(args).output().expect("running phaser");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn list_json_names_every_example_and_dsl_kernel() {
    let (code, stdout, stderr) = phaser(&["list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let examples: Vec<&str> = doc["examples"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    let want: Vec<&str> = gallery::examples().iter().map(|e| e.name).collect();
    assert_eq!(examples, want, "the registered examples are the gallery's, in its order");
    let kernels = doc["kernels"].as_array().unwrap();
    let flip = kernels.iter().find(|k| k["name"] == "dsl_seed_phase_flip").expect("the macro registered it");
    assert_eq!(flip["comptime"], serde_json::json!(["ROUNDS"]));
    assert_eq!(flip["file"], "examples/src/gallery/dsl_seeds.rs");
    for name in
        ["dsl_seed_thread_arrive_wait", "dsl_seed_producer_consumer", "dsl_phase_tma", "dsl_pipeline_axpb", "op_zoo"]
    {
        assert!(kernels.iter().any(|k| k["name"] == name), "{name} not listed");
    }
}

#[test]
fn the_readme_ptx_command_writes_and_assembles_every_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ptx");
    let (code, stdout, stderr) = phaser(&["ptx", out.to_str().unwrap(), "--check"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Every gallery kernel (each distinct specialization) has its file, and the op zoo too.
    let stems = gallery::file_stems(&gallery::all_kernels(phaser::Target::Sm90a).unwrap());
    for stem in stems.iter().chain(std::iter::once(&"op_zoo".to_string())) {
        assert!(out.join(format!("{stem}.ptx")).is_file(), "{stem}.ptx missing:\n{stdout}");
    }
}

#[test]
fn check_runs_the_gallery_in_the_simulator() {
    let (code, stdout, stderr) = phaser(&["check", "--only", "seed_phase_flip", "--exact", "--json"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let runs = doc["examples"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["example"], "seed_phase_flip");
    assert_eq!(runs[0]["passed"], true);
    assert_eq!(doc["device"], "Phaser CPU simulator");
    let (code, _, stderr) = phaser(&["run", "--only", "no_such_example"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no example name contains \"no_such_example\""), "{stderr}");
}

/// `phaser emit --cubin-dir DIR` writes each kernel's cubin under the name the runtime looks
/// up for the PTX a CUDA device loads (default watchdog), so `PHASER_CUBIN_DIR=DIR` finds it.
#[test]
fn emit_cubin_dir_writes_the_cubin_the_runtime_looks_up() {
    use phaser::codegen::emit::EmitOptions;
    use phaser::runtime::cuda::jit::prebuilt_cubin_name;
    let dir = tempfile::tempdir().unwrap();
    let (out, prebuilt) = (dir.path().join("ptx"), dir.path().join("cubins"));
    let args = ["emit", "--kernel", "seed_producer_consumer", "--out", out.to_str().unwrap(), "--cubin-dir"];
    let (code, stdout, stderr) = phaser(&[&args[..], &[prebuilt.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // What a CUDA device launching the gallery kernel prints (the launch's watchdog decides).
    let k = gallery::seeds::producer_consumer(phaser::Target::Sm90a).unwrap();
    let opts = EmitOptions {
        wait_timeout_ns: phaser::runtime::watchdog::Watchdog::DEFAULT.timeout_ns(),
        ..Default::default()
    };
    let launched = k.ptx_with(&opts).unwrap();
    assert_eq!(std::fs::read_to_string(out.join("seed_producer_consumer.ptx")).unwrap(), *launched);
    let want = prebuilt_cubin_name(&launched).unwrap();
    assert!(want.ends_with(".sm_90a.cubin"), "{want}");
    let written: Vec<String> =
        std::fs::read_dir(&prebuilt).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(written, std::slice::from_ref(&want), "one kernel, one cubin, under the runtime's name");
    assert!(std::fs::read(prebuilt.join(&want)).unwrap().starts_with(b"\x7fELF"), "not a cubin");
    assert!(stdout.contains(&want), "the table names the cubin:\n{stdout}");
}

#[test]
fn a_usage_error_with_json_is_a_json_document() {
    // `--json` with a usage error printed nothing on stdout.
    let (code, stdout, stderr) = phaser(&["--json", "bench", "--runs", "0"]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(doc["exit"], 2, "{doc}");
    assert!(doc["error"].as_str().is_some_and(|e| e.contains("'0' for '--runs <RUNS>'")), "{doc}");
}

#[test]
fn check_exhaustive_explores_each_launch_and_says_what_it_covered() {
    let (code, stdout, stderr) = phaser(&["check", "--exhaustive", "--only", "fe_pipeline", "--exact"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let line = stdout.lines().find(|l| l.contains("PASS fe_pipeline")).unwrap_or_else(|| panic!("{stdout}"));
    let bounds = "(bounds: 100000 executions, 100000 steps per execution, 1073741824 bytes of exploration state)";
    let complete = format!(" states, complete {bounds}");
    assert!(line.contains("`fe_pipeline` explored: ") && line.ends_with(&complete), "{line}");
    // The instance's bounds, as the report states them (`ExploreReport::instance_text`).
    let instance = line.split("`fe_pipeline` explored: ").nth(1).and_then(|r| r.split("; ").next());
    assert_eq!(instance, Some("stages: none declared (no `T.pipeline`)"), "{line}");
    assert!(line.contains("; iterations per role (the most any execution ran): "), "{line}");
}

/// `--barriers-only` explores the synchronization skeleton, and the line says so, with the
/// bounds (`--max-executions` among them) and whether they cut the exploration.
#[test]
fn check_exhaustive_barriers_only_says_which_mode_ran_and_its_bounds() {
    let args =
        ["check", "--exhaustive", "--barriers-only", "--max-executions", "5000", "--only", "fe_pipeline", "--exact"];
    let (code, stdout, stderr) = phaser(&args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let line = stdout.lines().find(|l| l.contains("PASS fe_pipeline")).unwrap_or_else(|| panic!("{stdout}"));
    let bounds = "(bounds: 5000 executions, 100000 steps per execution, 1073741824 bytes of exploration state)";
    assert!(line.contains("`fe_pipeline` explored (barriers only, skeleton): "), "{line}");
    assert!(line.ends_with(&format!(" states, complete {bounds}")), "{line}");
    // The flag belongs to an exhaustive check.
    let (code, _, stderr) = phaser(&["check", "--barriers-only", "--only", "fe_pipeline", "--exact"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--exhaustive"), "{stderr}");
}

#[test]
fn check_replays_a_schedule_file_and_refuses_one_that_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "w0 x1").unwrap();
    let bad = bad.to_str().unwrap();
    let (code, _, stderr) = phaser(&["check", "--schedule", bad, "--only", "seed_phase_flip", "--exact"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("schedule token 2 (`x1`)"), "{stderr}");
    let wrong = dir.path().join("wrong.txt");
    std::fs::write(&wrong, "w0 w9").unwrap();
    let (code, stdout, _) =
        phaser(&["check", "--schedule", wrong.to_str().unwrap(), "--only", "seed_phase_flip", "--exact"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("`w9` cannot run at this step (the actors that can: w0)"), "{stdout}");
}
