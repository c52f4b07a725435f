//! `phaser`: run the gallery (GPU when present, else the simulator) and dump PTX.

use clap::{Parser, Subcommand, ValueEnum};
use phaser::{Device, Target};
use phaser_examples::gallery::{self, Example, Outcome, Size};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "phaser", about = "Phaser: mbarrier pipelines in Rust — run examples, emit PTX")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Backend {
    /// The GPU when one is present, otherwise the simulator.
    Auto,
    Gpu,
    Sim,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every gallery example and check its output against a CPU reference.
    Run {
        #[arg(long, value_enum, default_value_t = Backend::Auto)]
        backend: Backend,
        /// Full-size problems (default on a GPU); the simulator uses quick sizes.
        #[arg(long, conflicts_with = "quick")]
        full: bool,
        /// Quick sizes even on a GPU (small, ragged shapes).
        #[arg(long)]
        quick: bool,
        /// Only examples whose name contains this.
        #[arg(long)]
        only: Option<String>,
        /// Fix the random inputs' seed (otherwise each run draws fresh inputs).
        #[arg(long)]
        seed: Option<u64>,
        /// Simulator only: write each launch's Perfetto trace and probe tables into this directory.
        #[arg(long)]
        trace_dir: Option<PathBuf>,
    },
    /// Differential check: run every example on the GPU and in the simulator with the same
    /// inputs (quick sizes) and compare digests of all their outputs bit for bit.
    Diff {
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Write the PTX of every kernel in the project into DIR, one `.ptx` file per kernel.
    Ptx {
        dir: PathBuf,
        #[arg(long, default_value = "sm_90a")]
        target: Target,
        /// Also assemble each file with ptxas.
        #[arg(long)]
        check: bool,
    },
    /// List the gallery examples.
    List,
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Run { backend, full, quick, only, seed, trace_dir } => {
            if let Some(s) = seed {
                gallery::set_seed(s);
            }
            run(backend, full, quick, only, trace_dir)
        }
        Cmd::Diff { seed } => diff(seed.unwrap_or_else(gallery::fresh_seed)),
        Cmd::Ptx { dir, target, check } => ptx(dir, target, check),
        Cmd::List => {
            for e in gallery::examples() {
                println!("{:<32} {}", e.name, e.about);
            }
            ExitCode::SUCCESS
        }
    }
}

fn run(backend: Backend, full: bool, quick: bool, only: Option<String>, trace_dir: Option<PathBuf>) -> ExitCode {
    let sim_config = phaser::runtime::sim::SimConfig { trace_dir: trace_dir.clone(), ..Default::default() };
    let dev = match backend {
        Backend::Gpu => match Device::cuda(0) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Backend::Sim => Device::sim(sim_config),
        Backend::Auto => match Device::cuda(0) {
            Ok(d) => d,
            Err(why) => {
                println!("No GPU found ({why}); running in the CPU simulator.");
                Device::sim(sim_config)
            }
        },
    };
    if trace_dir.is_some() && dev.is_gpu() {
        println!("note: --trace-dir applies to the simulator only; ignored on the GPU");
    }
    let size = if !quick && (full || dev.is_gpu()) { Size::Full } else { Size::Quick };
    let selected: Vec<Example> =
        gallery::examples().into_iter().filter(|e| only.as_deref().is_none_or(|o| e.name.contains(o))).collect();
    if selected.is_empty() {
        eprintln!("error: no example name contains {:?} (`phaser list` lists them)", only.unwrap_or_default());
        return ExitCode::FAILURE;
    }
    println!("Device: {} | sizes: {size:?}\n", dev.describe());
    struct Row {
        name: &'static str,
        verdict: &'static str,
        elapsed: Option<std::time::Duration>,
        digest: Option<u64>,
    }
    let mut rows = Vec::new();
    for e in &selected {
        let t = std::time::Instant::now();
        let seed = gallery::fresh_seed();
        let (o, row) = match gallery::run(e, &dev, size, seed) {
            Ok(r) => {
                let digest = (!r.outcome.skipped).then_some(r.digest);
                let row = Row { name: e.name, verdict: r.outcome.verdict(), elapsed: r.elapsed, digest };
                (r.outcome, row)
            }
            Err(err) => (
                Outcome::new(false, format!("error (seed {seed}): {err}")),
                Row { name: e.name, verdict: "FAIL", elapsed: None, digest: None },
            ),
        };
        println!("{} {:<32} ({:.2?}) {}", o.verdict(), e.name, t.elapsed(), o.detail);
        rows.push(row);
    }
    let failed = rows.iter().filter(|r| r.verdict == "FAIL").count();
    let skipped = rows.iter().filter(|r| r.verdict == "SKIP").count();
    println!("\n{:<32} | {:<6} | {:>12} | {:<16} | device", "example", "result", "kernel time", "output digest");
    println!("{}", "-".repeat(92));
    for r in &rows {
        let t = r.elapsed.map(|d| format!("{:.3} ms", d.as_secs_f64() * 1e3)).unwrap_or_else(|| "-".into());
        let d = r.digest.map(|d| format!("{d:016x}")).unwrap_or_else(|| "-".into());
        let verdict = match r.verdict {
            "PASS" => "pass",
            "SKIP" => "skip",
            _ => "FAIL",
        };
        println!("{:<32} | {:<6} | {:>12} | {d:<16} | {}", r.name, verdict, t, dev.describe());
    }
    // A skipped example (its kernels need another architecture) is neither passed nor failed.
    println!("{} passed, {failed} failed, {skipped} skipped", rows.len() - failed - skipped);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn diff(seed: u64) -> ExitCode {
    let gpu = match Device::cuda(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: the differential check needs a GPU: {e}");
            return ExitCode::FAILURE;
        }
    };
    let sim = Device::sim(Default::default());
    println!("Differential run, seed {seed}: {} vs {} (quick sizes)\n", gpu.describe(), sim.describe());
    println!("{:<32} | {:<16} | {:<16} | verdict", "example", "GPU digest", "sim digest");
    println!("{}", "-".repeat(84));
    let (mut same, mut differ, mut skipped) = (0, 0, 0);
    for e in gallery::examples() {
        let g = gallery::run(&e, &gpu, Size::Quick, seed);
        if let Ok(r) = &g {
            if r.outcome.skipped {
                skipped += 1;
                println!("{:<32} | {:<16} | {:<16} | skipped: {}", e.name, "-", "-", r.outcome.detail);
                continue;
            }
        }
        let s = gallery::run(&e, &sim, Size::Quick, seed);
        let digest = |r: &Result<gallery::Run, _>| r.as_ref().ok().map(|r| r.digest);
        let (gd, sd) = (digest(&g), digest(&s));
        let passed = |r: &Result<gallery::Run, _>| r.as_ref().is_ok_and(|r| r.outcome.passed);
        let ok = passed(&g) && passed(&s) && gd == sd;
        let show = |d: Option<u64>| d.map(|d| format!("{d:016x}")).unwrap_or_else(|| "-".into());
        let verdict = if ok {
            same += 1;
            "bit-identical".to_string()
        } else {
            differ += 1;
            let why = |backend: &str, r: &Result<gallery::Run, phaser::RuntimeError>| match r {
                Ok(r) if r.outcome.passed => String::new(),
                Ok(r) => format!(" ({backend} failed its check: {})", r.outcome.detail),
                Err(err) => format!(" ({backend} error: {err})"),
            };
            format!("DIFFERENT{}{}", why("GPU", &g), why("sim", &s))
        };
        println!("{:<32} | {:<16} | {:<16} | {verdict}", e.name, show(gd), show(sd));
    }
    println!("{same} passed, {differ} failed, {skipped} skipped");
    if differ == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn ptx(dir: PathBuf, target: Target, check: bool) -> ExitCode {
    // The gallery's kernels plus the op zoo (one kernel using every op form of the target).
    let kernels = match gallery::all_kernels(target).and_then(|mut v| {
        phaser::codegen::zoo::op_zoo(target).map(|z| {
            v.push(z);
            v
        })
    }) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: creating {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let ptxas = if check {
        match phaser::codegen::ptxas::find() {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let mut bad = 0;
    let stems = gallery::file_stems(&kernels);
    for (k, stem) in kernels.iter().zip(&stems) {
        let text = match phaser::codegen::emit_kernel(k) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                bad += 1;
                continue;
            }
        };
        let path = dir.join(format!("{stem}.ptx"));
        if let Err(e) = std::fs::write(&path, &text) {
            eprintln!("error: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        let status = match &ptxas {
            Some(p) => match phaser::codegen::ptxas::assemble(p, &text, k.target.name()) {
                Ok(_) => "ptxas ok".to_string(),
                Err(msg) => {
                    bad += 1;
                    format!("ptxas FAILED:\n{msg}")
                }
            },
            None => String::new(),
        };
        println!("{} ({}) {status}", path.display(), k.target);
    }
    println!("{} kernels written to {}", kernels.len(), dir.display());
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
