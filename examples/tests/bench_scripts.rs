//! The GPU run's shell checks, tested here on the forms the NVIDIA tools print (no GPU needed).

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

/// `bench/decode_ncu.sh`'s summary of ncu's raw CSV: the last instance of each kernel name,
/// durations converted to us, DRAM bytes and B's bandwidth, the top stall reasons.
#[test]
fn decode_ncu_summary_reads_the_raw_csv() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/decode_ncu.sh");
    let out = Command::new("bash").arg(&script).arg("selftest").output().expect("running bash");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.lines().last(), Some("selftest: as expected"), "{text}");
}
