//! Run the TMA / pipeline / cluster gallery entries on the GPU (or the simulator) and check
//! each against its CPU reference; prints one summary table at the end and exits non-zero
//! if anything failed.
//!
//! ```text
//! cargo run --release --bin gpu_tma                 # tma_two_stage, stream_axpb, cluster_multicast; quick then full
//! cargo run --release --bin gpu_tma -- --quick      # quick sizes only
//! cargo run --release --bin gpu_tma -- --full stream_axpb
//! cargo run --release --bin gpu_tma -- --all        # every gallery entry (seeds too)
//! cargo run --release --bin gpu_tma -- --sim        # the CPU simulator instead of the GPU
//! ```

use phaser::Device;
use phaser_examples::gallery::{examples, Outcome, Size};
use std::time::Instant;

const TMA_ENTRIES: [&str; 3] = ["tma_two_stage", "stream_axpb", "cluster_multicast"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let names: Vec<&str> = args.iter().filter(|a| !a.starts_with("--")).map(|s| s.as_str()).collect();
    let sizes: Vec<Size> = match (flag("--quick"), flag("--full")) {
        (true, false) => vec![Size::Quick],
        (false, true) => vec![Size::Full],
        _ => vec![Size::Quick, Size::Full],
    };
    let dev = if flag("--sim") {
        Device::sim(Default::default())
    } else {
        match Device::cuda(0) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e} (use --sim for the simulator)");
                std::process::exit(2);
            }
        }
    };
    println!("device: {}", dev.describe());
    let selected: Vec<_> = examples()
        .into_iter()
        .filter(|e| {
            if !names.is_empty() {
                names.contains(&e.name)
            } else if flag("--all") {
                true
            } else {
                TMA_ENTRIES.contains(&e.name)
            }
        })
        .collect();
    if selected.is_empty() {
        eprintln!("error: no gallery entry matches {names:?}");
        std::process::exit(2);
    }
    let mut rows: Vec<(String, Size, Result<Outcome, String>, f64)> = Vec::new();
    for size in &sizes {
        for e in &selected {
            print!("running {} ({size:?}) ... ", e.name);
            let t0 = Instant::now();
            let r = (e.run)(&dev, *size).map_err(|err| err.to_string());
            let wall = t0.elapsed().as_secs_f64();
            match &r {
                Ok(o) => println!("{} in {wall:.2} s: {}", if o.passed { "PASS" } else { "FAIL" }, o.detail),
                Err(err) => println!("ERROR in {wall:.2} s: {err}"),
            }
            rows.push((e.name.to_string(), *size, r, wall));
        }
    }
    println!();
    println!("| example | size | result | kernel ms (last launch) | wall s | detail |");
    println!("|---|---|---|---|---|---|");
    let mut failed = 0;
    for (name, size, r, wall) in &rows {
        let (res, ms, detail) = match r {
            Ok(o) => (
                if o.passed { "PASS" } else { "FAIL" },
                o.elapsed.map(|d| format!("{:.3}", d.as_secs_f64() * 1e3)).unwrap_or_else(|| "-".into()),
                o.detail.clone(),
            ),
            Err(e) => ("ERROR", "-".into(), e.clone()),
        };
        if res != "PASS" {
            failed += 1;
        }
        println!("| {name} | {size:?} | {res} | {ms} | {wall:.2} | {} |", detail.replace('|', "/"));
    }
    println!("\n{} of {} passed", rows.len() - failed, rows.len());
    if failed > 0 {
        std::process::exit(1);
    }
}
