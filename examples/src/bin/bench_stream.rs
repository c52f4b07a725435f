//! Bandwidth of the streaming kernel `y = a*x + b` (gallery `stream_axpb`) for pipeline
//! depths S = 2..8 against a device-to-device copy (`cuMemcpyDtoDAsync`) of the same bytes,
//! measured in the same run; with `--sweep` also the variants of `bench/stream.md` (other tile
//! shapes, evict-first loads, the linear view, direct stores, several CTAs per SM, and the
//! DSL's plain `stream_ldg`). Not a test: run it on the GPU.
//!
//! ```text
//! cargo run --release --bin bench_stream                      # 16384 x 16384 f32 (1 GiB in, 1 GiB out)
//! cargo run --release --bin bench_stream -- --runs 20 --warmup 5 --rows 32768 --stages 4,8
//! cargo run --release --bin bench_stream -- --sweep --stages 3,4,8   # every variant
//! cargo run --release --bin bench_stream -- --stages 4 --only ldg   # names containing "ldg"
//! ```
//!
//! Each timed launch is preceded by a device-side copy of a NaN-poisoned buffer into the
//! output, so the output checked against the CPU reference (bit for bit: the GPU's
//! `fma.rn.f32` and Rust's `f32::mul_add` round once) is the one the last timed launch wrote.
//! Times are a Phaser stream's events around each launch (`Stream::launch` through the
//! `phaser::problem::Problem::launch_on`, `Event::elapsed_since`); the table reports the median (and
//! min) of the timed runs and GB/s counting bytes read + written. The copy baseline is
//! `Device::copy` (timed with events around the copy the same way).

use clap::Parser;
use phaser::{Buffer, Device};
use phaser_examples::gallery::stream_axpb::{self, StreamConfig};
use phaser_examples::gallery::stream_ldg;
use phaser_examples::gallery::stream_plan::Variant;
use phaser_examples::gallery::{fresh_seed, Problem};
use phaser_examples::timing;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Bandwidth of stream_axpb (y = a*x + b) at each pipeline depth against a device-to-device copy")]
struct Opts {
    /// Rows of the f32 tensor.
    #[arg(long, default_value_t = 16384)]
    rows: u64,
    /// Columns of the f32 tensor.
    #[arg(long, default_value_t = 16384)]
    cols: u64,
    /// Timed launches per variant.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// Untimed launches before them.
    #[arg(long, default_value_t = 3)]
    warmup: u64,
    /// Pipeline depths of the default tile shape (comma-separated; default: all).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(stream_axpb::MIN_STAGES as i64..=stream_axpb::MAX_STAGES as i64))]
    stages: Vec<u32>,
    /// Also every variant: 32-row tiles and one consumer warpgroup, evict-first loads, the
    /// linear view, direct stores, 2 and 4 CTAs per SM, and the DSL's `stream_ldg`.
    #[arg(long)]
    sweep: bool,
    /// Keep only the variants whose name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Fix the inputs' seed (default: a fresh one, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Launch every selected variant with this many CTAs instead of its own grid (the TMA
    /// ring's tile loop takes any grid: `--only stream_axpb --grid 65536` gives each CTA one
    /// tile, the non-persistent shape; the `stream_ldg` grids cover their chunks exactly, so
    /// keep them out of such a run).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    grid: Option<u32>,
}

fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2
    }
}

fn gbps(bytes: u64, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

/// `warmup + runs` timed device-to-device copies; the timed ones go to `times`.
fn time_copy(
    dev: &Device,
    src: &Buffer<f32>,
    dst: &mut Buffer<f32>,
    o: &Opts,
    times: &mut Vec<Duration>,
) -> Result<(), Box<dyn std::error::Error>> {
    for i in 0..o.warmup + o.runs {
        let t = dev.copy(src, dst)?.expect("GPU copies are timed");
        if i >= o.warmup {
            times.push(t);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = Opts::parse();
    let dev = Device::cuda(0)?;
    let n = (o.rows * o.cols) as usize;
    let bytes_moved = 2 * (n as u64) * 4;
    println!(
        "device: {} ({} SMs); tensor {} x {} f32 = {:.2} GiB in + out; {} warm-up + {} timed runs per variant",
        dev.describe(),
        dev.sm_count()?,
        o.rows,
        o.cols,
        (n * 4) as f64 / (1u64 << 30) as f64,
        o.warmup,
        o.runs
    );
    let stages = if o.stages.is_empty() {
        (stream_axpb::MIN_STAGES..=stream_axpb::MAX_STAGES).collect()
    } else {
        o.stages.clone()
    };
    let mut variants: Vec<Variant> = stages.iter().map(|&s| Variant::Tma(StreamConfig::new(s))).collect();
    if o.sweep {
        let tma = stream_axpb::sweep_configs().into_iter().chain(stream_axpb::variant_configs());
        variants.extend(tma.map(Variant::Tma));
        variants.extend(stream_ldg::bench_configs().into_iter().map(Variant::Ldg));
    }
    if !o.only.is_empty() {
        variants.retain(|v| o.only.iter().any(|w| v.name().contains(w.as_str())));
    }
    variants.retain(|v| match v.problem(o.rows, o.cols) {
        Some(why) => {
            println!("skipped: {why}");
            false
        }
        None => true,
    });
    if variants.is_empty() {
        return Err("no variant to run (see --stages, --sweep, --only)".into());
    }
    // The gallery's setup: inputs, tensor maps and one launch per variant.
    let seed = o.seed.unwrap_or_else(fresh_seed);
    let mut p: Problem = stream_axpb::setup_with(&dev, o.rows, o.cols, &variants, o.grid, seed)?;
    let (input, output, want) = {
        let h: &stream_axpb::Host = p.host();
        println!("seed {seed}, a = {}, b = {}; computing the CPU reference ...", h.a, h.b);
        (h.input, h.output, stream_axpb::reference(&h.x, h.a, h.b))
    };
    let poison = dev.upload(&vec![f32::NAN; n])?;
    let mut copy_dst = dev.alloc::<f32>(n)?;
    let stream = dev.stream()?;

    let mut copy_times = Vec::new();
    time_copy(&dev, p.buffer(input), &mut copy_dst, &o, &mut copy_times)?;

    struct Row {
        name: String,
        grid: u32,
        median: Duration,
        min: Duration,
        verified: String,
    }
    let mut rows = Vec::new();
    let mut all_ok = true;
    for (i, v) in variants.iter().enumerate() {
        let mut times = Vec::new();
        for run in 0..o.warmup + o.runs {
            // A device-side copy re-poisons the output: what is checked is the last launch's.
            dev.copy(&poison, p.buffer_mut(output))?;
            let (queued, on) = (&mut p, &stream);
            let t = timing::time_on(on, move || Ok(Some(queued.launch_on(on, i)?)))?;
            if run >= o.warmup {
                times.push(t);
            }
        }
        let got = p.download(&dev, output)?;
        let (bad, first) = stream_axpb::compare(&got, &want);
        let verified = if bad == 0 {
            "ok (bit-exact)".to_string()
        } else {
            all_ok = false;
            let i = first.unwrap_or(0);
            format!("FAIL: {bad} wrong, first at {i}: got {} want {}", got[i], want[i])
        };
        let m = median(&times);
        let grid = p.launches[i].config.grid[0];
        println!(
            "{} (grid {grid}): median {:.3} ms, {:.0} GB/s, {verified}",
            v.name(),
            m.as_secs_f64() * 1e3,
            gbps(bytes_moved, m)
        );
        rows.push(Row { name: v.name(), grid, median: m, min: *times.iter().min().unwrap(), verified });
    }
    // The copy again after the kernels, so clocks/thermals affect both sides alike.
    time_copy(&dev, p.buffer(input), &mut copy_dst, &o, &mut copy_times)?;
    let copy_got = dev.download(&copy_dst)?;
    let copy_ok = copy_got.iter().zip(&p.host::<stream_axpb::Host>().x).all(|(g, w)| g.to_bits() == w.to_bits());
    all_ok &= copy_ok;
    let copy_med = median(&copy_times);
    let copy_min = *copy_times.iter().min().unwrap();
    let copy_bw = gbps(bytes_moved, copy_med);

    println!();
    println!(
        "| variant | grid | median ms | min ms | GB/s (read+write) | % of copy | % of copy (min/min) | output check |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| cuMemcpyDtoD (baseline) | - | {:.3} | {:.3} | {:.0} | 100.0 | 100.0 | {} |",
        copy_med.as_secs_f64() * 1e3,
        copy_min.as_secs_f64() * 1e3,
        copy_bw,
        if copy_ok { "ok" } else { "FAIL" }
    );
    // Ratios of medians (the headline) and of minimums (less sensitive to a noisy launch).
    let ratio = |r: &Row| 100.0 * gbps(bytes_moved, r.median) / copy_bw;
    let ratio_min = |r: &Row| 100.0 * copy_min.as_secs_f64() / r.min.as_secs_f64();
    for r in &rows {
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.0} | {:.1} | {:.1} | {} |",
            r.name,
            r.grid,
            r.median.as_secs_f64() * 1e3,
            r.min.as_secs_f64() * 1e3,
            gbps(bytes_moved, r.median),
            ratio(r),
            ratio_min(r),
            r.verified
        );
    }
    println!();
    let best_of = |label: &str, prefix: &str| {
        let best = rows.iter().filter(|r| r.name.starts_with(prefix)).max_by(|x, y| ratio(x).total_cmp(&ratio(y)));
        if let Some(r) = best {
            println!("best {label}: {} at {:.1}% of the copy ({:.1}% min/min)", r.name, ratio(r), ratio_min(r));
        }
    };
    best_of("stream_axpb (TMA)", "stream_axpb");
    best_of("stream_ldg (ld/st.global.v4)", "stream_ldg");
    best_of("overall", "stream_");
    println!(
        "target >= 98% of the copy and ahead of Triton's a*x+b (bench/stream_triton.py, same GPU run); outputs {}",
        if all_ok { "all verified" } else { "NOT all verified" }
    );
    if !all_ok {
        std::process::exit(1);
    }
    Ok(())
}
