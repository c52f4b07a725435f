//! Run the TMA / pipeline / cluster gallery entries on the GPU (or the simulator) and check
//! each against its CPU reference; prints one summary table at the end and exits non-zero
//! if anything failed.
//!
//! ```text
//! cargo run --release --bin gpu_tma                 # tma_two_stage, stream_axpb, cluster_multicast; quick then full
//! cargo run --release --bin gpu_tma -- --size quick # quick sizes only
//! cargo run --release --bin gpu_tma -- --size full stream_axpb
//! cargo run --release --bin gpu_tma -- --all        # every gallery entry (seeds too)
//! cargo run --release --bin gpu_tma -- --sim        # the CPU simulator instead of the GPU
//! ```

use clap::Parser;
use phaser::Device;
use phaser_examples::gallery::{self, examples, Size};
use std::process::ExitCode;
use std::time::Instant;

const TMA_ENTRIES: [&str; 3] = ["tma_two_stage", "stream_axpb", "cluster_multicast"];

#[derive(Parser)]
#[command(about = "Run the TMA / pipeline / cluster gallery entries and check them against their CPU references")]
struct Opts {
    /// Gallery entries to run (default: tma_two_stage, stream_axpb, cluster_multicast).
    names: Vec<String>,
    /// Every gallery entry.
    #[arg(long, conflicts_with = "names")]
    all: bool,
    /// Sizes to run, in order (default: quick, then full).
    #[arg(long, value_enum, value_delimiter = ',')]
    size: Vec<Size>,
    /// The CPU simulator instead of the GPU.
    #[arg(long)]
    sim: bool,
    /// Fix the inputs' seed (default: a fresh one per run, printed).
    #[arg(long)]
    seed: Option<u64>,
}

fn main() -> ExitCode {
    let o = Opts::parse();
    let sizes = if o.size.is_empty() { vec![Size::Quick, Size::Full] } else { o.size.clone() };
    let dev = if o.sim {
        Device::sim(Default::default())
    } else {
        match Device::cuda(0) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e} (use --sim for the simulator)");
                return ExitCode::from(2);
            }
        }
    };
    println!("device: {}", dev.describe());
    let selected: Vec<_> = examples()
        .into_iter()
        .filter(|e| {
            if !o.names.is_empty() {
                o.names.iter().any(|n| n == e.name)
            } else {
                o.all || TMA_ENTRIES.contains(&e.name)
            }
        })
        .collect();
    if let Some(unknown) = o.names.iter().find(|n| !selected.iter().any(|e| e.name == n.as_str())) {
        eprintln!("error: no gallery entry is named {unknown:?} (`phaser list` lists them)");
        return ExitCode::from(2);
    }
    struct Row {
        name: &'static str,
        size: Size,
        seed: u64,
        run: Result<gallery::Run, String>,
        wall: f64,
    }
    let mut rows = Vec::new();
    for size in &sizes {
        for e in &selected {
            let seed = o.seed.unwrap_or_else(gallery::fresh_seed);
            print!("running {} ({size:?}, seed {seed}) ... ", e.name);
            let t0 = Instant::now();
            let r = gallery::run(e, &dev, *size, seed).map_err(|err| err.to_string());
            let wall = t0.elapsed().as_secs_f64();
            match &r {
                Ok(r) => println!("{} in {wall:.2} s: {}", r.outcome.verdict(), r.outcome.detail),
                Err(err) => println!("ERROR in {wall:.2} s: {err}"),
            }
            rows.push(Row { name: e.name, size: *size, seed, run: r, wall });
        }
    }
    println!();
    println!("| example | size | seed | result | kernel ms (last launch) | wall s | detail |");
    println!("|---|---|---|---|---|---|---|");
    let (mut failed, mut skipped) = (0, 0);
    for Row { name, size, seed, run, wall } in &rows {
        let (res, ms, detail) = match run {
            Ok(r) => (
                r.outcome.verdict(),
                r.elapsed.map(|d| format!("{:.3}", d.as_secs_f64() * 1e3)).unwrap_or_else(|| "-".into()),
                r.outcome.detail.clone(),
            ),
            Err(e) => ("ERROR", "-".into(), e.clone()),
        };
        match res {
            "PASS" => {}
            "SKIP" => skipped += 1,
            _ => failed += 1,
        }
        println!("| {name} | {size:?} | {seed} | {res} | {ms} | {wall:.2} | {} |", detail.replace('|', "/"));
    }
    println!("\n{} of {} passed, {failed} failed, {skipped} skipped", rows.len() - failed - skipped, rows.len());
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
