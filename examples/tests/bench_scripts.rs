//! The GPU run's shell checks and tables, tested here on the forms the NVIDIA tools print (no GPU
//! needed).

use std::path::Path;
use std::process::Command;

/// `bench/lineinfo.sh`'s matcher: the tools' `basename.rs:LINE`, full paths, cuda-gdb's
/// `Line N of "..."` and nvdisasm's `File "..."` count; a wrong line, a longer line number,
/// another file with the same suffix, or the `expected:` line itself do not.
#[test]
fn lineinfo_matcher_accepts_the_tools_forms_only() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/lineinfo.sh");
    let out = Command::new("bash").arg(&script).arg("selftest").output().expect("running bash");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let summary = text.lines().last().unwrap_or_default();
    assert!(summary.starts_with("selftest: ") && summary.contains(" cases as expected"), "{text}");
    let counts: Vec<u32> = summary.split(' ').filter_map(|w| w.parse().ok()).collect();
    assert!(counts.len() == 2 && counts[0] == counts[1] && counts[0] >= 19, "{text}");
}

/// Where the saved ncu CSVs and the tables they print are.
fn ncu_testdata() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/testdata/ncu")
}

/// Runs `bash -c script` with `args` and `envs` in the workspace root: its stdout, after
/// asserting it succeeded.
fn bash(script: &str, args: &[&str], envs: &[(&str, &Path)]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg("bash")
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(&root)
        .output()
        .expect("running bash");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{script}: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

/// The three tables `bench/ncu_table.sh` prints from ncu's raw CSV (the program's lines before
/// the header, a units row, whole launches; gemm: every metric column, Phaser next to cuBLAS;
/// fp8: the three variants' single launches; decode: the last instance of each kernel name,
/// units converted), each the table the scripts printed before their table code was shared,
/// line for line (`bench/testdata/ncu/*.expected`).
#[test]
fn ncu_tables_from_saved_csvs_are_the_saved_tables() {
    let d = ncu_testdata();
    let p = |f: &str| d.join(f).to_string_lossy().into_owned();
    let cases: [(&[String], &str); 3] = [
        (&["gemm".into(), p("gemm_metrics.csv")], "gemm_metrics.expected"),
        (&["fp8".into(), p("fp8_frags1.csv"), p("fp8_frags2.csv"), p("fp8_smem_scales.csv")], "fp8.expected"),
        (&["decode".into(), p("decode_raw.csv"), "64x4096x4096".into(), "phaser_gemm_x".into()], "decode_raw.expected"),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let got = bash("source bench/ncu_table.sh && ncu_table \"$@\"", &args, &[]);
        let want = std::fs::read_to_string(d.join(expected)).unwrap();
        assert_eq!(got, want, "ncu_table {args:?}");
    }
    // A file with no CSV in it names the script and the file, and fails.
    let empty = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new("python3")
        .arg(d.join("../../ncu_table.py"))
        .args(["decode", &empty.path().to_string_lossy(), "64x4096x4096", "x"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && text.starts_with("decode_ncu: no CSV from ncu in "), "{text}");
}

/// Each ncu script end to end with a stand-in ncu (`bench/testdata/ncu/fake_ncu.sh`, which
/// prints the saved CSVs): it finds ncu, notes the metric the stand-in lacks, asks for every
/// metric its saved CSV holds (and not the one the stand-in lacks), and ends with the saved
/// table.
#[test]
fn ncu_scripts_end_with_their_tables_given_ncus_csv() {
    let d = ncu_testdata();
    let logs = tempfile::tempdir().unwrap();
    let fake = d.join("fake_ncu.sh");
    for (script, shape, expected, csv) in [
        ("bench/gemm_ncu.sh", "8192x8192x8192", "gemm_metrics.expected", "gemm_metrics.csv"),
        // Five variants: the saved three, `smem_scales_turns` (`--issue turns`) and
        // `smem_scales_wgrel` (`--release warpgroup`), each its own CSV.
        ("bench/gemm_fp8_ncu.sh", "4096x4096x4096", "fp8_variants.expected", "fp8_frags1.csv"),
        ("bench/decode_ncu.sh", "64x4096x4096", "decode_raw.expected", "decode_raw.csv"),
    ] {
        let asked = logs.path().join(format!("{}.calls", &script[6..]));
        let envs = [("NCU_BIN", fake.as_path()), ("NCU_OUT", logs.path()), ("FAKE_NCU_LOG", asked.as_path())];
        let got = bash("DECODE_CONFIG=phaser_gemm_x bash \"$@\"", &[script, "./bin/none", shape], &envs);
        let calls = std::fs::read_to_string(&asked).unwrap();
        let metrics: Vec<&str> =
            calls.split_whitespace().skip_while(|w| *w != "--metrics").nth(1).unwrap_or_default().split(',').collect();
        let saved = std::fs::read_to_string(d.join(csv)).unwrap();
        let header = saved.lines().find(|l| l.starts_with("\"ID\"")).unwrap();
        for m in header.split(',').map(|h| h.trim_matches('"')).filter(|h| h.contains("__")) {
            // Those the stall-reason metrics of decode's sections bring without asking.
            if !m.contains("issue_stalled") || script != "bench/decode_ncu.sh" {
                assert!(metrics.contains(&m), "{script} asks for {m}: {metrics:?}");
            }
        }
        assert!(!metrics.iter().any(|m| m.starts_with("sm__pipe_tensor_op_hmma")), "{script}: {metrics:?}");
        let want = std::fs::read_to_string(d.join(expected)).unwrap();
        assert!(got.starts_with(&format!("ncu: {}", fake.display())), "{script}: {got}");
        assert!(got.ends_with(&want), "{script} ends with {expected}: {got}");
        let notes = got.lines().filter(|l| l.starts_with("note: this ncu has no metric")).count();
        let want_notes = usize::from(script != "bench/decode_ncu.sh");
        assert_eq!(notes, want_notes, "{script}: {got}");
    }
}
