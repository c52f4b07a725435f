//! The mbarrier ping-pong (examples/src/pingpong.rs), Phaser's kernels against
//! the same kernels in CUDA C++ built by nvcc (bench/pingpong.cu), timed in one process.
//!
//! ```text
//! bash bench/pingpong.sh                    # on the GPU machine: nvcc builds bench/pingpong.cubin
//! bench_pingpong                            # 1M round trips per launch, median of 5
//! bench_pingpong --cubin path/to/pingpong.cubin --rounds 2000000
//! bench_pingpong --emit-ptx DIR             # no GPU: the PTX (for ptxas/cuobjdump)
//! ```
//!
//! Variants, each for two warps of one CTA and for two CTAs of a cluster (remote arrives),
//! each loop shape (`x4`: unrolled 4x, as nvcc unrolls the CUDA loop; `rolled`: one round trip
//! per iteration, as with `#pragma unroll 1`):
//! - Phaser with the wait watchdog in its default layout (`first-try`) and in the other
//!   (`in-loop`; `codegen::emit::wait_loop`), and without the watchdog (CUTLASS's loop exactly);
//! - nvcc's kernels of the same shape.
//!
//! Reported: ns per round trip (one arrive + one wait per side), each Phaser row against the
//! nvcc row of the same variant and shape. Every row is timed the same way: `--runs` launches
//! of `--rounds` round trips each, one untimed launch first, the median reported.

use clap::Parser;
use phaser::codegen::emit::WaitLoop;
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
    /// `phaser first-try`, `phaser no-watchdog`, `nvcc`.
    who: String,
    /// `cta` or `cluster`.
    kind: &'static str,
    /// `x4` or `rolled`.
    shape_name: &'static str,
    func: Loaded,
    shape: Shape,
}

impl Variant {
    fn name(&self) -> String {
        format!("{} {} {}", self.who, self.kind, self.shape_name)
    }
}

fn shape_name(unroll: u32) -> &'static str {
    if unroll == 1 {
        "rolled"
    } else {
        "x4"
    }
}

fn main() {
    let args = Args::parse();
    if let Some(dir) = &args.emit_ptx {
        std::fs::create_dir_all(dir).expect("create the PTX directory");
        for k in pingpong::kernels().expect("the ping-pong kernels build") {
            for (suffix, opts) in emit_forms() {
                let ptx =
                    phaser::codegen::emit_module(&phaser::codegen::Module::new(vec![k.clone()]), &opts).expect("emit");
                std::fs::write(dir.join(format!("{}_{suffix}.ptx", k.name())), ptx).expect("write PTX");
            }
        }
        println!("PTX written to {}", dir.display());
        return;
    }
    if args.rounds % 4 != 0 {
        eprintln!("bench_pingpong: --rounds must be a multiple of 4 (the x4 kernels run 4 round trips per iteration)");
        std::process::exit(2);
    }
    if let Err(e) = run(&args) {
        eprintln!("bench_pingpong: {e}");
        std::process::exit(2);
    }
}

/// The printer settings compared: the watchdog in each layout, and no watchdog.
fn emit_forms() -> Vec<(&'static str, EmitOptions)> {
    let with = |wait_loop| EmitOptions { wait_loop, ..EmitOptions::default() };
    vec![
        (WaitLoop::FirstTry.name(), with(WaitLoop::FirstTry)),
        (WaitLoop::HintedFirst.name(), with(WaitLoop::HintedFirst)),
        (WaitLoop::InLoop.name(), with(WaitLoop::InLoop)),
        ("no-watchdog", EmitOptions { wait_timeout_ns: None, ..EmitOptions::default() }),
    ]
}

fn run(args: &Args) -> BenchResult<()> {
    let dev = Device::cuda(0)?;
    let cuda = timing::cuda(&dev)?;
    let cta = Shape { grid: 1, block: pingpong::CTA_THREADS, smem: 0 };
    let cluster = Shape { grid: pingpong::CLUSTER_CTAS, block: pingpong::CLUSTER_THREADS, smem: 0 };
    let mut variants = Vec::new();
    for unroll in pingpong::UNROLLS {
        let kernels =
            [("cta", pingpong::pingpong_cta(unroll)?, cta), ("cluster", pingpong::pingpong_cluster(unroll)?, cluster)];
        for (form, opts) in emit_forms() {
            for (kind, k, shape) in &kernels {
                let func = timing::load_phaser(cuda, k, &opts)?;
                variants.push(Variant {
                    who: format!("phaser {form}"),
                    kind,
                    shape_name: shape_name(unroll),
                    func,
                    shape: *shape,
                });
            }
        }
    }
    let nvcc = if args.cubin.is_file() {
        for (unroll, suffix) in [(4, ""), (1, "_rolled")] {
            for (kind, shape) in [("cta", cta), ("cluster", cluster)] {
                let func = timing::load_file(cuda, &args.cubin, &format!("pingpong_{kind}{suffix}"))?;
                variants.push(Variant { who: "nvcc".into(), kind, shape_name: shape_name(unroll), func, shape });
            }
        }
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
                println!("{} at {r} round trips: {:.1} ns per round trip", v.name(), t.as_secs_f64() * 1e9 / r as f64);
            }
        }
    }
    let rounds = [RawArg::U32(args.rounds)];
    let mut results = Vec::new();
    for v in &variants {
        let t = timing::median_per_launch(cuda, 1, args.runs, 1, || timing::launch(cuda, &v.func, v.shape, &rounds))?;
        let ns = t.as_secs_f64() * 1e9 / args.rounds as f64;
        println!("{}: {ns:.1} ns per round trip", v.name());
        results.push((v, ns));
    }
    println!();
    println!(
        "==================== ping-pong summary ({}, {} round trips, median of {} launches) ====================",
        dev.describe(),
        args.rounds,
        args.runs
    );
    println!("| variant | ns/round trip | vs nvcc (same kind and loop shape) |");
    for (v, ns) in &results {
        let base = results.iter().find(|(b, _)| b.who == "nvcc" && b.kind == v.kind && b.shape_name == v.shape_name);
        let ratio = match (nvcc, base) {
            (true, Some((_, b))) => format!("{:.3}", ns / b),
            _ => "-".into(),
        };
        println!("| {} | {ns:.1} | {ratio} |", v.name());
    }
    Ok(())
}
