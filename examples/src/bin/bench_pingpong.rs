//! The mbarrier ping-pong of issue 12 (examples/src/pingpong.rs), Phaser's kernels against
//! the same kernels in CUDA C++ built by nvcc (bench/pingpong.cu), timed in one process.
//!
//! ```text
//! bash bench/pingpong.sh                    # on the GPU machine: nvcc builds bench/pingpong.cubin
//! bench_pingpong                            # 1M round trips per launch, median of 5
//! bench_pingpong --cubin path/to/pingpong.cubin --rounds 2000000
//! bench_pingpong --emit-ptx DIR             # no GPU: the PTX (for ptxas/cuobjdump)
//! ```
//!
//! Variants: Phaser as printed by default (wait watchdog on), Phaser without the watchdog
//! (exactly CUTLASS's loop), and nvcc; each for two warps of one CTA and for two CTAs of a
//! cluster (remote arrives). Reported: ns per round trip (one arrive + one wait per side).

use clap::Parser;
use phaser::codegen::EmitOptions;
use phaser::Device;
use phaser_examples::pingpong;
use phaser_examples::timing::{self, BenchResult, Loaded, RawArg, Shape};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(about = "mbarrier ping-pong latency: Phaser against nvcc")]
struct Args {
    /// Round trips per launch.
    #[arg(long, default_value_t = 1_000_000)]
    rounds: u32,
    /// Timed launches per variant (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// The cubin nvcc built from bench/pingpong.cu (bench/pingpong.sh).
    #[arg(long, default_value = "bench/pingpong.cubin")]
    cubin: PathBuf,
    /// Write the PTX of the Phaser kernels to DIR and exit (no GPU needed).
    #[arg(long)]
    emit_ptx: Option<PathBuf>,
    /// Also time 10k and 100k round trips per launch (how much of a launch is start-up);
    /// accepted so `.ci/gpu-run.sh`'s `BENCH_ARGS=--sweep` reaches every benchmark.
    #[arg(long)]
    sweep: bool,
}

struct Variant {
    name: String,
    func: Loaded,
    shape: Shape,
}

fn main() {
    let args = Args::parse();
    if let Some(dir) = &args.emit_ptx {
        std::fs::create_dir_all(dir).expect("create the PTX directory");
        for k in pingpong::kernels().expect("the ping-pong kernels build") {
            for (suffix, opts) in [("", EmitOptions::default()), ("_nowatchdog", no_watchdog())] {
                let ptx =
                    phaser::codegen::emit_module(&phaser::codegen::Module::new(vec![k.clone()]), &opts).expect("emit");
                std::fs::write(dir.join(format!("{}{suffix}.ptx", k.name)), ptx).expect("write PTX");
            }
        }
        println!("PTX written to {}", dir.display());
        return;
    }
    if let Err(e) = run(&args) {
        eprintln!("bench_pingpong: {e}");
        std::process::exit(2);
    }
}

fn no_watchdog() -> EmitOptions {
    EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() }
}

fn run(args: &Args) -> BenchResult<()> {
    let dev = Device::cuda(0)?;
    let cuda = timing::cuda(&dev)?;
    let cta = Shape { grid: 1, block: pingpong::CTA_THREADS, smem: 0 };
    let cluster = Shape { grid: pingpong::CLUSTER_CTAS, block: pingpong::CLUSTER_THREADS, smem: 0 };
    let (k_cta, k_cluster) = (pingpong::pingpong_cta()?, pingpong::pingpong_cluster()?);
    let mut variants = Vec::new();
    for (label, opts) in [("phaser", EmitOptions::default()), ("phaser (no watchdog)", no_watchdog())] {
        variants.push(Variant {
            name: format!("{label} cta"),
            func: timing::load_phaser(cuda, &k_cta, &opts)?,
            shape: cta,
        });
        variants.push(Variant {
            name: format!("{label} cluster"),
            func: timing::load_phaser(cuda, &k_cluster, &opts)?,
            shape: cluster,
        });
    }
    let nvcc = if args.cubin.is_file() {
        variants.push(Variant {
            name: "nvcc cta".into(),
            func: timing::load_file(cuda, &args.cubin, "pingpong_cta")?,
            shape: cta,
        });
        variants.push(Variant {
            name: "nvcc cluster".into(),
            func: timing::load_file(cuda, &args.cubin, "pingpong_cluster")?,
            shape: cluster,
        });
        true
    } else {
        println!("note: {} not found (bench/pingpong.sh builds it with nvcc): Phaser rows only", args.cubin.display());
        false
    };
    if args.sweep {
        for r in [10_000u32, 100_000] {
            for v in &variants {
                let t = timing::median_per_launch(cuda, 1, args.runs, 1, || {
                    timing::launch(cuda, &v.func, v.shape, &[RawArg::U32(r)])
                })?;
                println!("{} at {r} round trips: {:.1} ns per round trip", v.name, t.as_secs_f64() * 1e9 / r as f64);
            }
        }
    }
    let rounds = [RawArg::U32(args.rounds)];
    let mut results = Vec::new();
    for v in &variants {
        let t = timing::median_per_launch(cuda, 1, args.runs, 1, || timing::launch(cuda, &v.func, v.shape, &rounds))?;
        let ns = t.as_secs_f64() * 1e9 / args.rounds as f64;
        println!("{}: {ns:.1} ns per round trip", v.name);
        results.push((v.name.clone(), ns));
    }
    println!();
    println!(
        "==================== ping-pong summary ({}, {} round trips) ====================",
        dev.describe(),
        args.rounds
    );
    println!("| variant | ns/round trip | vs nvcc |");
    for (name, ns) in &results {
        let kind = if name.ends_with("cluster") { "nvcc cluster" } else { "nvcc cta" };
        let base = results.iter().find(|(n, _)| n == kind).map(|r| r.1);
        let ratio = match (nvcc, base) {
            (true, Some(b)) => format!("{:.3}", ns / b),
            _ => "-".into(),
        };
        println!("| {name} | {ns:.1} | {ratio} |");
    }
    Ok(())
}
