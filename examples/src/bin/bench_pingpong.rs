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
//! of `--rounds` round trips each, one untimed launch first, the median reported, each launch
//! between a Phaser stream's events.
//!
//! The Phaser kernels run through the public API, as an application would choose the forms:
//! the wait layout is a device's launch policy (one `Device` per layout, all on one CUDA
//! context: `CudaDevice::on`), no watchdog is the launch's `LaunchConfig::with_watchdog(Off)`,
//! and each launch is a `Stream::launch`. Only nvcc's cubin is launched through cudarc.

use clap::Parser;
use phaser::codegen::emit::WaitLoop;
use phaser::runtime::cuda::{CudaDevice, LaunchPolicy};
use phaser::runtime::Watchdog;
use phaser::{Arg, Device, Kernel, LaunchConfig, Stream};
use phaser_examples::pingpong;
use phaser_examples::timing::{self, BenchError, BenchResult, Loaded, Queued, RawArg, Shape};
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
    runs: Runs,
}

/// How a variant is launched.
enum Runs {
    /// A Phaser kernel on the stream of form `form` (see [`forms`]).
    Phaser { form: usize, kernel: Box<Kernel>, cfg: LaunchConfig },
    /// nvcc's function, on the first form's stream.
    Nvcc { func: Loaded, shape: Shape },
}

impl Variant {
    /// Queue one launch of `rounds` round trips.
    fn launch<'a>(&'a self, streams: &'a [Stream<'a>], rounds: u32) -> BenchResult<Queued<'a>> {
        match &self.runs {
            Runs::Phaser { form, kernel, cfg } => {
                Ok(Some(streams[*form].launch(&**kernel, *cfg, [Arg::scalar(rounds)])?))
            }
            Runs::Nvcc { func, shape } => {
                let on = streams[0].as_cuda().ok_or_else(|| BenchError("needs a CUDA GPU".into()))?;
                timing::launch_raw(on, func, *shape, &[RawArg::U32(rounds)]).map(|()| None)
            }
        }
    }

    /// The stream its launches are timed on.
    fn stream<'s>(&self, streams: &'s [Stream<'s>]) -> &'s Stream<'s> {
        match &self.runs {
            Runs::Phaser { form, .. } => &streams[*form],
            Runs::Nvcc { .. } => &streams[0],
        }
    }
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
        let jit = LaunchPolicy::from_env().expect("the PHASER_* settings").jit;
        for k in pingpong::kernels().expect("the ping-pong kernels build") {
            for form in forms() {
                let (suffix, opts) = (form.name, form.policy(&jit).emit_options(form.watchdog));
                let ptx = k.ptx_with(&opts).expect("emit");
                std::fs::write(dir.join(format!("{}_{suffix}.ptx", k.name())), ptx.as_bytes()).expect("write PTX");
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

/// One form of the Phaser kernels: a wait layout (the device's launch policy) and the
/// launch's watchdog.
struct Form {
    name: &'static str,
    wait_loop: WaitLoop,
    watchdog: Watchdog,
}

impl Form {
    fn policy(&self, jit: &phaser::runtime::cuda::JitOptions) -> LaunchPolicy {
        LaunchPolicy { watchdog: Watchdog::DEFAULT, wait_loop: self.wait_loop, jit: jit.clone() }
    }
}

/// The forms compared: the watchdog in each layout, and no watchdog (CUTLASS's loop exactly).
fn forms() -> Vec<Form> {
    let mut v: Vec<Form> = [WaitLoop::FirstTry, WaitLoop::HintedFirst, WaitLoop::InLoop]
        .into_iter()
        .map(|w| Form { name: w.name(), wait_loop: w, watchdog: Watchdog::DEFAULT })
        .collect();
    v.push(Form { name: "no-watchdog", wait_loop: WaitLoop::default(), watchdog: Watchdog::Off });
    v
}

fn run(args: &Args) -> BenchResult<()> {
    let dev = Device::cuda(0)?;
    let ctx = timing::cuda(&dev)?.context().clone();
    let jit = LaunchPolicy::from_env()?.jit;
    // One device per form, all on the one context (a device's policy decides the layout).
    let forms = forms();
    let devices = forms
        .iter()
        .map(|f| Ok(Device::Cuda(CudaDevice::on(ctx.clone(), ctx.default_stream(), f.policy(&jit))?)))
        .collect::<BenchResult<Vec<_>>>()?;
    let streams = devices.iter().map(|d| d.stream()).collect::<Result<Vec<_>, _>>()?;
    let cta = Shape { grid: 1, block: pingpong::CTA_THREADS, smem: 0 };
    let cluster = Shape { grid: pingpong::CLUSTER_CTAS, block: pingpong::CLUSTER_THREADS, smem: 0 };
    let mut variants = Vec::new();
    for unroll in pingpong::UNROLLS {
        let kernels =
            [("cta", pingpong::pingpong_cta(unroll)?, cta), ("cluster", pingpong::pingpong_cluster(unroll)?, cluster)];
        for (form, f) in forms.iter().enumerate() {
            for (kind, k, shape) in &kernels {
                let cfg = LaunchConfig::linear(shape.grid, shape.block).with_watchdog(f.watchdog);
                variants.push(Variant {
                    who: format!("phaser {}", f.name),
                    kind,
                    shape_name: shape_name(unroll),
                    runs: Runs::Phaser { form, kernel: Box::new(k.clone()), cfg },
                });
            }
        }
    }
    let nvcc = if args.cubin.is_file() {
        for (unroll, suffix) in [(4, ""), (1, "_rolled")] {
            for (kind, shape) in [("cta", cta), ("cluster", cluster)] {
                let func = timing::load_file(timing::cuda(&dev)?, &args.cubin, &format!("pingpong_{kind}{suffix}"))?;
                let runs = Runs::Nvcc { func, shape };
                variants.push(Variant { who: "nvcc".into(), kind, shape_name: shape_name(unroll), runs });
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
                let t = timing::median_per_launch(v.stream(&streams), 1, args.runs, 1, || v.launch(&streams, r))?;
                println!("{} at {r} round trips: {:.1} ns per round trip", v.name(), t.as_secs_f64() * 1e9 / r as f64);
            }
        }
    }
    let mut results = Vec::new();
    for v in &variants {
        let t = timing::median_per_launch(v.stream(&streams), 1, args.runs, 1, || v.launch(&streams, args.rounds))?;
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
