//! `phaser`: run the gallery (GPU when present, else the simulator) and dump PTX.

use clap::{Parser, Subcommand, ValueEnum};
use phaser::gallery::{self, Outcome, Size};
use phaser::{Device, Target};
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
        Cmd::Run { backend, full, quick, only } => run(backend, full, quick, only),
        Cmd::Ptx { dir, target, check } => ptx(dir, target, check),
        Cmd::List => {
            for e in gallery::examples() {
                println!("{:<32} {}", e.name, e.about);
            }
            ExitCode::SUCCESS
        }
    }
}

fn run(backend: Backend, full: bool, quick: bool, only: Option<String>) -> ExitCode {
    let dev = match backend {
        Backend::Gpu => match Device::cuda(0) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Backend::Sim => Device::sim(Default::default()),
        Backend::Auto => {
            let (d, why) = Device::best();
            if let Some(why) = why {
                println!("No GPU found ({why}); running in the CPU simulator.");
            }
            d
        }
    };
    let size = if !quick && (full || dev.is_gpu()) { Size::Full } else { Size::Quick };
    println!("Device: {} | sizes: {size:?}\n", dev.describe());
    let mut rows: Vec<Outcome> = Vec::new();
    for e in gallery::examples() {
        if only.as_deref().is_some_and(|o| !e.name.contains(o)) {
            continue;
        }
        if e.gpu_only && !dev.is_gpu() {
            rows.push(Outcome::check(e.name, true, "skipped: needs a GPU feature the simulator does not model"));
            continue;
        }
        let t = std::time::Instant::now();
        let o = match (e.run)(&dev, size) {
            Ok(o) => o,
            Err(err) => Outcome::check(e.name, false, format!("error: {err}")),
        };
        println!("{} {:<32} ({:.2?}) {}", if o.passed { "PASS" } else { "FAIL" }, o.name, t.elapsed(), o.detail);
        rows.push(o);
    }
    let failed = rows.iter().filter(|o| !o.passed).count();
    println!("\n{:<32} | {:<6} | {:>12} | device", "example", "result", "kernel time");
    println!("{}", "-".repeat(72));
    for o in &rows {
        let t = o.elapsed.map(|d| format!("{:.3} ms", d.as_secs_f64() * 1e3)).unwrap_or_else(|| "-".into());
        println!("{:<32} | {:<6} | {:>12} | {}", o.name, if o.passed { "pass" } else { "FAIL" }, t, dev.describe());
    }
    println!("{} passed, {} failed", rows.len() - failed, failed);
    if failed == 0 {
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
