//! `bench_peer_copy --sim`: its bulk-copy and TMA kernels and the peer copy, on two simulated
//! devices, copy the source bit for bit (the bench checks every row before printing it) from
//! the device's own memory and from the peer's; the GPU run times the same code.

use std::process::Command;

#[test]
fn the_peer_copy_bench_copies_every_byte_in_the_simulator() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench_peer_copy"))
        .args(["--sim", "--runs", "1", "--warmup", "0"])
        .output()
        .expect("running bench_peer_copy");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for source in ["local (device 1)", "peer (device 0 -> device 1)"] {
        for method in ["bulk copy", "TMA copy", "driver memcpy"] {
            let row = format!("| {source} | 64 | {method} | bit-exact (simulator: no time) | |");
            assert!(text.lines().any(|l| l == row), "no row `{row}`:\n{text}");
        }
    }
}
