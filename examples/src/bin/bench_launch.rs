//! Host cost of a launch (bench/launch.md): Phaser's async launch (`Stream::launch`, one
//! `Launch` guard per launch) against a raw cudarc launch of the same function of the same
//! module on the same kind of stream, and Phaser's synchronous `Device::launch` for scale.
//!
//! ```text
//! bench_launch                      # 10,000 back-to-back launches per row, median of 5
//! bench_launch --launches 1000 --runs 3
//! ```
//!
//! The kernel is one CTA of 32 threads reading one element each (no output), so every launch
//! borrows its buffer shared and all of them stay in flight together. Reported per row: host
//! µs per launch (submission loop only; the guards are dropped, waiting, after the clock
//! stops) and the ratio to cudarc's row; and one CUDA graph of 100 launches, replayed (host µs
//! per launch of the replay call, and a replay's time to completion).

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

    // Phaser, async: every guard kept until the loop ends.
    let phaser_async = |stream: &phaser::Stream| -> Result<f64, phaser::RuntimeError> {
        let mut guards = Vec::with_capacity(n);
        let t0 = Instant::now();
        for i in 0..n {
            guards.push(stream.launch(&k, cfg, [Arg::buffer(&inp), Arg::scalar(i as u32)])?);
        }
        let host = t0.elapsed();
        for g in guards {
            g.wait()?;
        }
        Ok(host.as_secs_f64() * 1e6 / n as f64)
    };

    // cudarc, raw: the function Phaser launches (same PTX, same module cache entry).
    let raw_stream = cuda.context().new_stream()?;
    let f = raw_function(cuda, &k)?;
    let slice = inp.as_cuda_slice().expect("a GPU buffer");
    let lc = cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    let raw = || -> Result<f64, cudarc::driver::DriverError> {
        let t0 = Instant::now();
        for i in 0..n {
            let kk = i as u32;
            let mut b = raw_stream.launch_builder(&f);
            b.arg(slice).arg(&kk);
            // SAFETY: the kernel takes (a .u64 pointer to u32, a u32), as pushed; the slice is
            // 32 elements, one per thread, and outlives the synchronize below.
            unsafe { b.launch(lc) }?;
        }
        let host = t0.elapsed();
        raw_stream.synchronize()?;
        Ok(host.as_secs_f64() * 1e6 / n as f64)
    };

    // Phaser, synchronous: launch and wait, per launch.
    let sync = || -> Result<f64, phaser::RuntimeError> {
        let m = n.min(1000);
        let t0 = Instant::now();
        for i in 0..m {
            dev.launch(&k, cfg, &[Arg::buffer(&inp), Arg::scalar(i as u32)])?;
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / m as f64)
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
    phaser_async(&stream)?;
    raw()?;
    sync()?;
    let mut rows: Vec<(&str, f64)> = Vec::new();
    let raw_us = median((0..args.runs).map(|_| raw()).collect::<Result<_, _>>()?);
    rows.push(("cudarc launch_builder (raw)", raw_us));
    rows.push(("Phaser Stream::launch (async, guard)", median((0..args.runs).map(|_| phaser_async(&stream)).collect::<Result<_, _>>()?)));
    rows.push(("Phaser Device::launch (launch + wait)", median((0..args.runs).map(|_| sync()).collect::<Result<_, _>>()?)));

    println!("# Launch overhead on {} ({} back-to-back launches, median of {})\n", dev.describe(), n, args.runs);
    println!("| launch | host µs per launch | vs cudarc |");
    println!("| --- | ---: | ---: |");
    for (name, us) in &rows {
        println!("| {name} | {us:.2} | {:.2}x |", us / raw_us);
    }
    println!("| Phaser Graph::replay ({GRAPH_LAUNCHES} launches), per launch | {graph_host:.2} | {:.2}x |", graph_host / raw_us);
    println!("\nOne replay of the {GRAPH_LAUNCHES}-launch graph, queued to completed: {graph_done:.1} µs (median).");
    Ok(())
}

/// The function Phaser's launch of `k` uses on `d`: the same PTX (the device's default emit
/// options) from the same module cache.
fn raw_function(d: &CudaDevice, k: &phaser::Kernel) -> Result<cudarc::driver::CudaFunction, phaser::RuntimeError> {
    let ptx = k.ptx_with(&d.default_emit_options())?;
    let symbol = phaser::codegen::emit::entry_symbol(k.name());
    d.modules.function(d.context(), &ptx, &symbol)
}
