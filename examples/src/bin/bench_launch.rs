//! Host cost of a launch (bench/launch.md): Phaser's async launch (`Stream::launch`, one
//! `Launch` guard per launch; untimed by default, and with `LaunchConfig::with_timing`)
//! against a raw cudarc launch of the same function of the same module on the same kind of
//! stream (alone, and with the two event records a timed launch adds), Phaser's synchronous
//! `Device::launch` for scale, and the launch checks alone (host only).
//!
//! ```text
//! bench_launch                      # 10,000 back-to-back launches per row, median of 5
//! bench_launch --launches 1000 --runs 3
//! ```
//!
//! The kernel is one CTA of 32 threads reading one element each (no output), so every launch
//! borrows its buffer shared and all of them stay in flight together. Reported per row: host
//! µs per launch of the submission loop, its ratio to cudarc's row, and µs per launch until
//! every launch is done (the guards waited for in order, or the stream synchronized); and
//! one CUDA graph of 100 launches, replayed (host µs per launch of the replay call, and a
//! replay's time to completion).

use clap::Parser;
use cudarc::driver::PushKernelArg;
use phaser::runtime::cuda::CudaDevice;
use phaser::{Arg, Device, LaunchConfig};
use std::time::Instant;

/// Each thread reads its element; nothing is written.
#[phaser::kernel(target = "sm_90a")]
fn launch_probe(inp: &[u32], k: u32) {
    let tid = T.thread_idx();
    let _v = inp[tid] + k;
}

/// Launches in the replayed graph.
const GRAPH_LAUNCHES: usize = 100;

#[derive(Parser, Debug)]
#[command(about = "host µs per launch: Phaser's async launch against raw cudarc")]
struct Args {
    /// Back-to-back launches per timed run.
    #[arg(long, default_value_t = 10_000)]
    launches: usize,
    /// Timed runs per row (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_launch: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.launches == 0 || args.runs == 0 {
        return Err("--launches and --runs must be at least 1".into());
    }
    let dev = Device::cuda(0)?;
    let Device::Cuda(cuda) = &dev else { unreachable!("Device::cuda makes a CUDA device") };
    let k = launch_probe::kernel()?;
    let inp = dev.upload(&[7u32; 32])?;
    let cfg = LaunchConfig::linear(1, 32);
    let stream = dev.stream()?;
    let n = args.launches;

    // Phaser, async: every guard kept until the loop ends, then waited for in order.
    let phaser_async = |cfg: LaunchConfig| -> Result<Timed, phaser::RuntimeError> {
        let mut guards = Vec::with_capacity(n);
        let t0 = Instant::now();
        for i in 0..n {
            guards.push(stream.launch(&k, cfg, [Arg::buffer(&inp), Arg::scalar(i as u32)])?);
        }
        let submit = t0.elapsed();
        for g in guards {
            g.wait()?;
        }
        Ok(Timed::per_launch(submit, t0.elapsed(), n))
    };

    // cudarc, raw: the function Phaser launches (same PTX, same module cache entry), and the
    // same with a pair of timing events recorded around each launch (what a timed launch adds).
    let raw_stream = cuda.context().new_stream()?;
    let f = raw_function(cuda, &k)?;
    let slice = inp.as_cuda_slice().expect("a GPU buffer");
    let lc = cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (ev_start, ev_end) = (cuda.context().new_event(timing)?, cuda.context().new_event(timing)?);
    let raw = |with_events: bool| -> Result<Timed, cudarc::driver::DriverError> {
        let t0 = Instant::now();
        for i in 0..n {
            let kk = i as u32;
            if with_events {
                ev_start.record(&raw_stream)?;
            }
            let mut b = raw_stream.launch_builder(&f);
            b.arg(slice).arg(&kk);
            // SAFETY: the kernel takes (a .u64 pointer to u32, a u32), as pushed; the slice is
            // 32 elements, one per thread, and outlives the synchronize below.
            unsafe { b.launch(lc) }?;
            if with_events {
                ev_end.record(&raw_stream)?;
            }
        }
        let submit = t0.elapsed();
        raw_stream.synchronize()?;
        Ok(Timed::per_launch(submit, t0.elapsed(), n))
    };

    // Phaser, synchronous: launch and wait, per launch.
    let sync = || -> Result<Timed, phaser::RuntimeError> {
        let m = n.min(1000);
        let t0 = Instant::now();
        for i in 0..m {
            dev.launch(&k, cfg, &[Arg::buffer(&inp), Arg::scalar(i as u32)])?;
        }
        Ok(Timed::per_launch(t0.elapsed(), t0.elapsed(), m))
    };

    // The launch checks alone (host only): what every Phaser launch runs before the driver.
    let checks = || -> Result<Timed, phaser::RuntimeError> {
        let t0 = Instant::now();
        for i in 0..n {
            let a = [Arg::buffer(&inp), Arg::scalar(i as u32)];
            phaser::runtime::args::check_args(&k, std::hint::black_box(&a))?;
            std::hint::black_box(phaser::runtime::device::check_config(&k, &cfg)?);
        }
        Ok(Timed::per_launch(t0.elapsed(), t0.elapsed(), n))
    };

    // One CUDA graph of 100 launches, replayed: host µs per launch (replay call / 100) and the
    // wall time of a replay to its completion.
    let graph_stream = dev.stream()?;
    let mut builder = graph_stream.graph()?;
    let bound = builder.bind(&inp)?;
    for i in 0..GRAPH_LAUNCHES {
        builder.launch(&k, cfg, [bound.into(), (i as u32).into()])?;
    }
    let mut graph = builder.build()?;
    let mut replay = || -> Result<(f64, f64), phaser::RuntimeError> {
        let t0 = Instant::now();
        graph.replay()?;
        let host = t0.elapsed();
        graph.synchronize()?;
        let done = t0.elapsed();
        Ok((host.as_secs_f64() * 1e6 / GRAPH_LAUNCHES as f64, done.as_secs_f64() * 1e6))
    };
    replay()?;
    let replays = (0..args.runs).map(|_| replay()).collect::<Result<Vec<_>, _>>()?;
    let graph_host = median(replays.iter().map(|r| r.0).collect());
    let graph_done = median(replays.iter().map(|r| r.1).collect());

    // One untimed run of each first (module load, first-use costs).
    phaser_async(cfg)?;
    phaser_async(cfg.with_timing())?;
    raw(false)?;
    raw(true)?;
    sync()?;
    checks()?;
    let runs = args.runs;
    let rows: Vec<(&str, Timed)> = vec![
        ("cudarc launch_builder (raw)", Timed::median((0..runs).map(|_| raw(false)).collect::<Result<_, _>>()?)),
        (
            "cudarc launch_builder + 2 cuEventRecord (raw, timed)",
            Timed::median((0..runs).map(|_| raw(true)).collect::<Result<_, _>>()?),
        ),
        (
            "Phaser Stream::launch (async, guard, default: untimed)",
            Timed::median((0..runs).map(|_| phaser_async(cfg)).collect::<Result<_, _>>()?),
        ),
        (
            "Phaser Stream::launch (async, guard, LaunchConfig::with_timing)",
            Timed::median((0..runs).map(|_| phaser_async(cfg.with_timing())).collect::<Result<_, _>>()?),
        ),
        ("Phaser Device::launch (launch + wait)", Timed::median((0..runs).map(|_| sync()).collect::<Result<_, _>>()?)),
        (
            "Phaser launch checks alone (check_args + check_config, host)",
            Timed::median((0..runs).map(|_| checks()).collect::<Result<_, _>>()?),
        ),
    ];
    let raw_us = rows[0].1.submit;

    println!("# Launch overhead on {} ({} back-to-back launches, median of {})\n", dev.describe(), n, args.runs);
    println!("| launch | host µs per launch | vs cudarc | µs per launch to all done |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, t) in &rows {
        println!("| {name} | {:.2} | {:.2}x | {:.2} |", t.submit, t.submit / raw_us, t.done);
    }
    println!(
        "| Phaser Graph::replay ({GRAPH_LAUNCHES} launches), per launch | {graph_host:.2} | {:.2}x | {:.2} |",
        graph_host / raw_us,
        graph_done / GRAPH_LAUNCHES as f64
    );
    println!("\nOne replay of the {GRAPH_LAUNCHES}-launch graph, queued to completed: {graph_done:.1} µs (median).");
    Ok(())
}

/// Host µs per launch of one timed run: the submission loop, and until every launch is done
/// (waits or the stream's synchronize included).
#[derive(Clone, Copy)]
struct Timed {
    submit: f64,
    done: f64,
}

impl Timed {
    fn per_launch(submit: std::time::Duration, done: std::time::Duration, n: usize) -> Timed {
        Timed { submit: submit.as_secs_f64() * 1e6 / n as f64, done: done.as_secs_f64() * 1e6 / n as f64 }
    }
    /// The median of each column over the runs.
    fn median(runs: Vec<Timed>) -> Timed {
        Timed {
            submit: median(runs.iter().map(|t| t.submit).collect()),
            done: median(runs.iter().map(|t| t.done).collect()),
        }
    }
}

/// The function Phaser's launch of `k` uses on `d`: the same PTX (the device's default emit
/// options) from the same module cache.
fn raw_function(d: &CudaDevice, k: &phaser::Kernel) -> Result<cudarc::driver::CudaFunction, phaser::RuntimeError> {
    let ptx = k.ptx_with(&d.default_emit_options())?;
    let symbol = phaser::codegen::emit::entry_symbol(k.name());
    d.modules.function(d.context(), &ptx, &symbol)
}
