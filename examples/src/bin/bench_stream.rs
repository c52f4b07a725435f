//! Bandwidth of the streaming kernel `y = a*x + b` (gallery `stream_axpb`) for pipeline
//! depths S = 2..8 against a device-to-device copy (`cuMemcpyDtoDAsync`) of the same bytes,
//! measured in the same run. Not a test: run it on the GPU.
//!
//! ```text
//! cargo run --release --bin bench_stream                      # 16384 x 16384 f32 (1 GiB in, 1 GiB out)
//! cargo run --release --bin bench_stream -- --runs 20 --warmup 5 --rows 32768 --stages 4,8
//! cargo run --release --bin bench_stream -- --sweep   # also 32-row tiles / one consumer warpgroup
//! ```
//!
//! Each timed launch is preceded by a device-side copy of a NaN-poisoned buffer into the
//! output, so the output checked against the CPU reference (bit for bit: the GPU's
//! `fma.rn.f32` and Rust's `f32::mul_add` round once) is the one the last timed launch wrote.
//! Times are CUDA events around each launch; the table reports the median (and min) of the
//! timed runs and GB/s counting bytes read + written.

use phaser::{Buffer, Device, Target};
use phaser_examples::gallery::stream_axpb::{self, StreamConfig, StreamProblem};
use phaser_examples::gallery::{fresh_seed, random_f32};
use std::time::Duration;

struct Opts {
    rows: u64,
    cols: u64,
    runs: usize,
    warmup: usize,
    stages: Vec<u32>,
    sweep: bool,
}

fn parse() -> Opts {
    let mut o = Opts {
        rows: 16384,
        cols: 16384,
        runs: 15,
        warmup: 3,
        stages: (stream_axpb::MIN_STAGES..=stream_axpb::MAX_STAGES).collect(),
        sweep: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        if args[i] == "--sweep" {
            o.sweep = true;
            i += 1;
            continue;
        }
        match args[i].as_str() {
            "--rows" => o.rows = v.parse().expect("--rows N"),
            "--cols" => o.cols = v.parse().expect("--cols N"),
            "--runs" => o.runs = v.parse().expect("--runs N"),
            "--warmup" => o.warmup = v.parse().expect("--warmup N"),
            "--stages" => o.stages = v.split(',').map(|s| s.parse().expect("--stages 2,4,8")).collect(),
            other => panic!("unknown argument `{other}`; see the header of examples/src/bin/bench_stream.rs"),
        }
        i += 2;
    }
    assert!(o.runs >= 1);
    o
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
    dst: &Buffer<f32>,
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
    let o = parse();
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
    let seed = fresh_seed();
    let x = random_f32(n, seed);
    let ab = random_f32(2, seed ^ 0xab);
    let (a, b) = (ab[0] + 1.5, ab[1]);
    println!("seed {seed}, a = {a}, b = {b}; computing the CPU reference ...");
    let want = stream_axpb::reference(&x, a, b);
    let mut p = StreamProblem::new(&dev, o.rows, o.cols, &x, a, b)?;
    let poison = dev.upload(&vec![f32::NAN; n])?;
    let copy_dst = dev.alloc::<f32>(n)?;
    println!("grid {} CTAs (persistent)", p.grid);

    let mut copy_times = Vec::new();
    time_copy(&dev, &p.input, &copy_dst, &o, &mut copy_times)?;

    struct Row {
        name: String,
        median: Duration,
        min: Duration,
        verified: String,
    }
    let mut rows = Vec::new();
    let mut all_ok = true;
    let mut configs: Vec<StreamConfig> = o.stages.iter().map(|&s| StreamConfig::new(s)).collect();
    if o.sweep {
        configs.extend(stream_axpb::sweep_configs());
    }
    for cfg in configs {
        let k = stream_axpb::kernel_with(Target::Sm90a, cfg)?;
        if (p.cfg.box_rows, p.cfg.consumer_wgs) != (cfg.box_rows, cfg.consumer_wgs) {
            p.set_config(&dev, cfg)?;
        }
        let mut times = Vec::new();
        for i in 0..o.warmup + o.runs {
            dev.copy(&poison, &p.output)?;
            let r = p.launch(&dev, &k, cfg)?;
            if i >= o.warmup {
                times.push(r.elapsed.expect("GPU launches are timed"));
            }
        }
        let got = dev.download(&p.output)?;
        let (bad, first) = stream_axpb::compare(&got, &want);
        let verified = if bad == 0 {
            "ok (bit-exact)".to_string()
        } else {
            all_ok = false;
            let i = first.unwrap_or(0);
            format!("FAIL: {bad} wrong, first at {i}: got {} want {}", got[i], want[i])
        };
        let m = median(&times);
        println!(
            "{}: median {:.3} ms, {:.0} GB/s, {verified}",
            cfg.name(),
            m.as_secs_f64() * 1e3,
            gbps(bytes_moved, m)
        );
        rows.push(Row { name: cfg.name(), median: m, min: *times.iter().min().unwrap(), verified });
    }
    // The copy again after the kernels, so clocks/thermals affect both sides alike.
    time_copy(&dev, &p.input, &copy_dst, &o, &mut copy_times)?;
    let copy_got = dev.download(&copy_dst)?;
    let copy_ok = copy_got.iter().zip(&x).all(|(g, w)| g.to_bits() == w.to_bits());
    all_ok &= copy_ok;
    let copy_med = median(&copy_times);
    let copy_bw = gbps(bytes_moved, copy_med);

    println!();
    println!("| variant | median ms | min ms | GB/s (read+write) | % of copy | output check |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| cuMemcpyDtoD (baseline) | {:.3} | {:.3} | {:.0} | 100.0 | {} |",
        copy_med.as_secs_f64() * 1e3,
        copy_times.iter().min().unwrap().as_secs_f64() * 1e3,
        copy_bw,
        if copy_ok { "ok" } else { "FAIL" }
    );
    for r in &rows {
        let bw = gbps(bytes_moved, r.median);
        println!(
            "| {} | {:.3} | {:.3} | {:.0} | {:.1} | {} |",
            r.name,
            r.median.as_secs_f64() * 1e3,
            r.min.as_secs_f64() * 1e3,
            bw,
            100.0 * bw / copy_bw,
            r.verified
        );
    }
    let best = rows.iter().map(|r| gbps(bytes_moved, r.median)).fold(0.0, f64::max);
    println!(
        "\nbest stream_axpb: {:.1}% of the copy (target >= 90%); outputs {}",
        100.0 * best / copy_bw,
        if all_ok { "all verified" } else { "NOT all verified" }
    );
    if !all_ok {
        std::process::exit(1);
    }
    Ok(())
}
