//! The DSL attention forward (`gallery::attention_dsl`) on the GPU: correctness, then speed.
//!
//! ```text
//! bench_attention                      # every shape: check, then time
//! bench_attention --check              # correctness only
//! bench_attention --shapes 128x8192    # head dim x sequence (both causal and not)
//! bench_attention --seed 42            # replay a check
//! ```
//!
//! Shapes (bench/attention.md): head dim 64, 128, 256 × sequence 1k, 4k, 8k, 16k × causal and
//! not × four variants (ping-pong on a persistent grid, no ping-pong on a persistent grid,
//! ping-pong with one CTA per tile, and the first with FlashAttention-3's wider key blocks); batch × heads fill the GPU the way FlashAttention-3's benchmark does (16k tokens per
//! batch: `batch = 16384 / seq`; `heads = 2048 / d`), one KV head per query head.
//!
//! Correctness: random bf16 inputs in [-1, 1) (a fresh seed, printed; `--seed` replays), O and
//! the LSE poisoned (NaN) before the launch, then 128 random rows of every shape (and the first
//! and last row of the first and last head) compared element by element with the f64 CPU
//! reference, within `O_ATOL + O_RTOL |ref|` (O) and `LSE_TOL (1 + |ref|)` (LSE).
//!
//! Speed: `timing::interleaved_on` (the GEMM's method) on a Phaser stream, the kernel's launch
//! captured once into a graph on it and replayed back to back: sustained load, then timed
//! batches between the stream's events; the median per launch, the SM clock sampled while the batches
//! ran; TFLOP/s = 4 · B · H · S² · D / t (÷ 2 causal). torch's SDPA backends are timed the same
//! way by `bench/attention_torch.py` in the same device run (`.ci/gpu-run.sh`).

use clap::Parser;
use half::bf16;
use phaser::runtime::GraphArg;
use phaser::{Device, LaunchConfig};
use phaser_examples::gallery::attention_dsl::{
    add_launch, compare, kernel, narrow_block_n, random_bf16, scale_log2, wide_block_n, AttentionShape, O_ATOL, O_RTOL,
    THREADS,
};
use phaser_examples::gallery::{fresh_seed, run_problem, Problem};
use phaser_examples::timing::{self, BenchError, BenchResult};
use std::time::Duration;

#[derive(Parser, Debug)]
struct Args {
    /// `DxS` pairs (head dim x sequence length), comma separated; default: every pair of
    /// 64/128/256 and 1024/4096/8192/16384.
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// Correctness only.
    #[arg(long)]
    check: bool,
    /// Input seed (default: fresh, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Timed batches per measurement (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Sustained load before each measurement, in ms.
    #[arg(long, default_value_t = 500)]
    warmup_ms: u64,
}

/// The benchmark's shape for head dim `d`, sequence `seq`.
fn bench_shape(d: u32, seq: u32, causal: bool, (pingpong, persistent, wide): Variant) -> AttentionShape {
    let batch = (16384 / seq).max(1);
    let heads = 2048 / d;
    let block_n = Some(if wide { wide_block_n(d) } else { narrow_block_n(d) });
    AttentionShape { batch, heads, kv_heads: heads, seq_q: seq, seq_k: seq, d, causal, pingpong, persistent, block_n }
}

/// One variant of a shape: (ping-pong, persistent grid, FlashAttention-3's wider key blocks).
type Variant = (bool, bool, bool);

/// The variants timed per shape.
const VARIANTS: [Variant; 4] = [(true, true, false), (false, true, false), (true, false, false), (true, true, true)];

fn pairs(args: &Args) -> BenchResult<Vec<(u32, u32)>> {
    if args.shapes.is_empty() {
        return Ok([64, 128, 256].iter().flat_map(|&d| [1024, 4096, 8192, 16384].map(|s| (d, s))).collect());
    }
    args.shapes
        .iter()
        .map(|s| {
            let (d, seq) =
                s.split_once('x').ok_or_else(|| BenchError(format!("shape `{s}`: write DxS, e.g. 128x8192")))?;
            let parse = |x: &str| x.parse::<u32>().map_err(|e| BenchError(format!("shape `{s}`: {e}")));
            Ok((parse(d)?, parse(seq)?))
        })
        .collect()
}

/// Upload inputs for `s`, launch once through the checked path (O and LSE poisoned) and
/// compare sampled rows with the f64 reference: (rows, elements outside tolerance, worst |ΔO|).
fn check_shape(dev: &Device, s: &AttentionShape, qkv: &Qkv, seed: u64) -> BenchResult<(usize, usize, f64, f64)> {
    let (q, k, v) = (&qkv.0, &qkv.1, &qkv.2);
    let mut p = Problem::new(seed);
    let inputs = (p.input(dev, q)?, p.input(dev, k)?, p.input(dev, v)?);
    let bufs = add_launch(&mut p, dev, s, inputs)?;
    let out = run_problem(dev, &mut p)?;
    let bh = (s.batch * s.heads) as usize;
    let mut rows = vec![(0, 0), (0, s.seq_q as usize - 1), (bh - 1, 0), (bh - 1, s.seq_q as usize - 1)];
    let r = phaser_examples::gallery::random_u32(256, seed);
    rows.extend(r.chunks(2).map(|c| ((c[0] as usize) % bh, (c[1] % s.seq_q) as usize)));
    let n = rows.len();
    let (bad, worst_o, worst_lse) = compare(s, (q, k, v), (out.get(0, bufs.o), out.get(0, bufs.lse)), rows.into_iter());
    Ok((n, bad, worst_o, worst_lse))
}

/// Host Q, K and V of one (head dim, sequence) pair, shared by its four variants.
type Qkv = (Vec<bf16>, Vec<bf16>, Vec<bf16>);

/// Random inputs in [-1, 1) for `s` from `seed`.
fn random_inputs(s: &AttentionShape, seed: u64) -> Qkv {
    let d = s.d as usize;
    let q = random_bf16((s.batch * s.heads * s.seq_q) as usize * d, seed);
    let k = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * d, seed ^ 0x9e37_79b9);
    let v = random_bf16((s.batch * s.kv_heads * s.seq_k) as usize * d, seed ^ 0x85eb_ca6b);
    (q, k, v)
}

/// The timed path, on a Phaser stream: one launch captured into a graph on the stream (its
/// arguments checked once, LSE bound exclusively for the graph's life), replayed back to back
/// and timed by `timing::interleaved_on` between the stream's events.
///
/// A graph and not `Stream::launch` per repetition: a launch's guard holds a buffer the kernel
/// writes (LSE, `&mut [f32]`) exclusively until the kernel is done, so back-to-back launches
/// writing one buffer cannot be queued through guards; the graph holds that borrow once.
fn time_shape(
    dev: &Device,
    s: &AttentionShape,
    qkv: &Qkv,
    args: &Args,
) -> BenchResult<(Duration, Option<timing::GpuState>)> {
    let k = kernel(s)?;
    let d = s.d as usize;
    let bh = (s.batch * s.heads) as u64;
    let (q, kk, v) = (dev.upload(&qkv.0)?, dev.upload(&qkv.1)?, dev.upload(&qkv.2)?);
    let o = dev.alloc::<bf16>(bh as usize * s.seq_q as usize * d)?;
    let mut lse = dev.alloc::<f32>(bh as usize * s.seq_q as usize)?;
    let sw = phaser::Swizzle::B128;
    let [(qd, qb), (kd, kb), (vd, vb), (od, ob)] = s.maps();
    let maps = [
        dev.tensor_map(&q, &qd, &qb, sw)?,
        dev.tensor_map(&kk, &kd, &kb, sw)?,
        dev.tensor_map(&v, &vd, &vb, sw)?,
        dev.tensor_map(&o, &od, &ob, sw)?,
    ];
    let stream = dev.stream()?;
    let launch = LaunchConfig::linear(s.grid(dev.sm_count()?), THREADS);
    let mut graph = {
        let mut g = stream.graph()?;
        let lse = g.bind_mut(&mut lse)?;
        let args: [GraphArg; 11] = [
            (&maps[0]).into(),
            (&maps[1]).into(),
            (&maps[2]).into(),
            (&maps[3]).into(),
            lse.into(),
            s.seq_q.into(),
            s.seq_k.into(),
            s.heads.into(),
            (s.heads / s.kv_heads).into(),
            s.tiles().into(),
            scale_log2(s.d).into(),
        ];
        g.launch(&k, launch, args)?;
        g.build()?
    };
    // About 20 ms of work per batch at ~500 TFLOP/s.
    let per_batch = ((2.0e-2 * 5.0e14 / s.flops()).ceil() as usize).clamp(1, 200);
    let method = timing::Method { warmup: Duration::from_millis(args.warmup_ms), runs: args.runs };
    let mut one = || -> BenchResult<timing::Queued> {
        graph.replay()?;
        Ok(None)
    };
    let r = timing::interleaved_on(&stream, &method, per_batch, &mut [&mut one])?;
    // A fault in a replay names the starved wait here (the watchdog's record, decoded).
    graph.synchronize()?;
    Ok((r.sides[0].median, r.gpu))
}

fn run(args: &Args) -> BenchResult<bool> {
    let dev = Device::cuda(0)?;
    let seed = args.seed.unwrap_or_else(fresh_seed);
    println!("device: {} ({} SMs), seed {seed}", dev.describe(), dev.sm_count()?);
    println!(
        "tolerance: |ΔO| <= {O_ATOL} + {O_RTOL} |ref| against the f64 reference, 128 random rows + corners per shape"
    );
    let mut ok = true;
    let mut rows = Vec::new();
    for (i, (d, seq)) in pairs(args)?.into_iter().enumerate() {
        let pair_seed = seed + i as u64;
        let qkv = random_inputs(&bench_shape(d, seq, false, VARIANTS[0]), pair_seed);
        for (causal, variant) in [false, true].into_iter().flat_map(|c| VARIANTS.map(|v| (c, v))) {
            let s = bench_shape(d, seq, causal, variant);
            let (pingpong, persistent, _) = variant;
            let bn = s.config().0;
            if let Some(p) = s.problem() {
                return Err(BenchError(format!("{s:?}: {p}")));
            }
            let (n, bad, worst_o, worst_lse) = check_shape(&dev, &s, &qkv, pair_seed)?;
            let verdict = if bad == 0 { "PASS" } else { "FAIL" };
            ok &= bad == 0;
            println!(
                "check d{d} seq {seq} causal {causal} pingpong {pingpong} persistent {persistent} bn {bn} (B {} H {}): {verdict}: {n} rows, {bad} outside tolerance, worst |ΔO| {worst_o:.2e}, |ΔLSE| {worst_lse:.2e}",
                s.batch, s.heads
            );
            if args.check {
                continue;
            }
            let (t, gpu) = time_shape(&dev, &s, &qkv, args)?;
            let tflops = s.flops() / t.as_secs_f64() / 1e12;
            let clock = gpu.map(|g| format!("{:.0} MHz, {:.0} W, reasons {:#x}", g.sm_mhz, g.power_w, g.reasons));
            let clock = clock.unwrap_or_else(|| "no nvidia-smi".into());
            println!(
                "time d{d} seq {seq} causal {causal} pingpong {pingpong} persistent {persistent} bn {bn}: {:.3} ms, {tflops:.1} TFLOP/s ({clock})",
                t.as_secs_f64() * 1e3
            );
            rows.push((d, seq, causal, pingpong, persistent, bn, tflops));
        }
    }
    if !rows.is_empty() {
        println!("==================== attention summary ({}, seed {seed}) ====================", dev.describe());
        println!(
            "{:>4} {:>6} {:>7} {:>9} {:>10} {:>4} {:>10}",
            "d", "seq", "causal", "pingpong", "persistent", "bn", "TFLOP/s"
        );
        for (d, seq, causal, pingpong, persistent, bn, tf) in rows {
            println!("{d:>4} {seq:>6} {causal:>7} {pingpong:>9} {persistent:>10} {bn:>4} {tf:>10.1}");
        }
    }
    Ok(ok)
}

fn main() {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("bench_attention: a correctness check failed");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("bench_attention: {e}");
            std::process::exit(1);
        }
    }
}
