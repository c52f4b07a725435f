//! The FP8 DSL GEMMs (examples/src/gallery/gemm_fp8_dsl.rs: per-tensor and DeepGEMM's
//! blockwise scaling, e4m3 in, bf16 out) on the GPU, and the files `bench/gemm_fp8_torch.py`
//! reads to time cuBLASLt FP8 (`torch._scaled_mm`) on the same inputs and compare C in the same
//! device run (`.ci/gpu-run.sh`: this binary with `--dump`, then the script).
//!
//! ```text
//! bench_gemm_fp8                                  # issue 23's shapes, both scalings
//! bench_gemm_fp8 --shapes 4096x4096x4096 --dump DIR
//! bench_gemm_fp8 --shapes 4096x4096x4096 --scalings blockwise --frags 2 --scales global --warmup-ms 0 --runs 1
//! ```
//!
//! Blockwise runs once per `--frags` with global scales (accumulator fragments in flight,
//! `kernel_with`: 1 waits for each K block before promoting it, 2 issues the next block first;
//! rows `blockwise`, `blockwise_frags2`) and, with `--scales` naming `shared`, once with its
//! scales through shared memory (`Scales::Shared`, 1 fragment; row `blockwise_smem_scales`), so
//! one device run puts them all against cuBLASLt; the last form is what `bench/gemm_fp8_ncu.sh`
//! profiles.
//!
//! Timing: `timing::interleaved_on` on one Phaser stream (`--warmup-ms` of sustained load,
//! then `--runs` batches of ~20 ms of back-to-back launches between the stream's events; the
//! median batch, per launch); TFLOP/s = 2MNK / time. Check: after timing C is poisoned,
//! recomputed, and 4096 random elements (and the corners) are compared with the f64 product of
//! the dequantized inputs within `Quantized::tolerance` (2^-8 |ref| + 2^-9 sqrt(K0 / 128) sum |a b|,
//! K0 the K accumulated unpromoted: 128 blockwise, K per-tensor). With
//! `--dump DIR`, each shape's inputs, scales and both Cs are written under `DIR/MxNxK/`
//! (`meta.json` names the files) for the torch script. Exit status 1 if a check fails.

use clap::Parser;
use half::bf16;
use phaser::{Arg, Device, LaunchConfig, F8E4M3};
use phaser_examples::gallery::gemm_dsl::{EPI, THREADS};
use phaser_examples::gallery::gemm_fp8_dsl::{kernel_with, sfa_dims, tiles, Quantized, Scales, Scaling, BLOCK_K};
use phaser_examples::timing::{self, BenchError, BenchResult};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
struct Args {
    /// Shapes `MxNxK`, comma-separated (K a multiple of 128, N of 16).
    #[arg(long, default_value = "4096x4096x4096,8192x8192x8192,512x8192x8192,64x8192x8192")]
    shapes: String,
    /// Sustained load before the timed batches, in ms.
    #[arg(long, default_value_t = 500)]
    warmup_ms: u64,
    /// Timed batches (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Input seed.
    #[arg(long, default_value_t = 23)]
    seed: u64,
    /// Write each shape's inputs and Cs here for bench/gemm_fp8_torch.py.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Scalings to run, comma-separated: `per_tensor`, `blockwise`.
    #[arg(long, default_value = "per_tensor,blockwise")]
    scalings: String,
    /// The blockwise kernel's accumulator fragments in flight, comma-separated (each timed).
    #[arg(long, default_value = "1,2")]
    frags: String,
    /// Where the blockwise kernel reads its scales, comma-separated: `global` (once per
    /// `--frags`), `shared` (once, 1 fragment).
    #[arg(long, default_value = "global,shared")]
    scales: String,
}

fn parse_scales(s: &str) -> BenchResult<Scales> {
    match s.trim() {
        "global" => Ok(Scales::Global),
        "shared" => Ok(Scales::Shared),
        other => Err(BenchError(format!("--scales: `{other}` is not `global` or `shared`"))),
    }
}

fn parse_scaling(s: &str) -> BenchResult<Scaling> {
    match s.trim() {
        "per_tensor" => Ok(Scaling::PerTensor),
        "blockwise" => Ok(Scaling::Blockwise),
        other => Err(BenchError(format!("--scalings: `{other}` is not `per_tensor` or `blockwise`"))),
    }
}

fn parse_frags(s: &str) -> BenchResult<u32> {
    match s.trim().parse::<u32>() {
        Ok(f @ 1..=2) => Ok(f),
        _ => Err(BenchError(format!("--frags: `{s}` is not 1 or 2 (fragments in flight)"))),
    }
}

fn parse_shape(s: &str) -> BenchResult<(u32, u32, u32)> {
    let v: Vec<u32> = s
        .split('x')
        .map(|x| x.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|e| BenchError(format!("shape `{s}`: {e} (write MxNxK)")))?;
    match v[..] {
        [m, n, k] if k % BLOCK_K == 0 && n % 16 == 0 && m > 0 => Ok((m, n, k)),
        _ => Err(BenchError(format!("shape `{s}`: want MxNxK with K a multiple of {BLOCK_K} and N of 16"))),
    }
}

/// One timed kernel: TFLOP/s, its check and its C.
struct Row {
    tflops: f64,
    worst: f64,
    bad: usize,
    checked: usize,
    c: Vec<bf16>,
}

fn run(
    dev: &Device,
    stream: &phaser::Stream<'_>,
    args: &Args,
    q: &Quantized,
    frags: u32,
    scales: Scales,
) -> BenchResult<Row> {
    let t = tiles(q.scaling);
    let (m, n, k) = (q.m, q.n, q.k);
    let kern = kernel_with(q.scaling, &t, frags, scales)?;
    let a = dev.upload(&q.a)?;
    let b = dev.upload(&q.b)?;
    let mut c = dev.alloc::<bf16>((m as usize) * (n as usize))?;
    let sfa = dev.upload(&q.sfa)?;
    let sfb = dev.upload(&q.sfb)?;
    let sw = phaser::Swizzle::B128;
    let (m64, n64, k64) = (m as u64, n as u64, k as u64);
    let ma = dev.tensor_map(&a, &[k64, m64], &[BLOCK_K, t.block_m()], sw)?;
    let mb = dev.tensor_map(&b, &[k64, n64], &[BLOCK_K, t.block_n / t.cluster], sw)?;
    let mc = dev.tensor_map(&c, &[n64, m64], &[EPI, EPI], sw)?;
    // Blockwise: the A scales' map (a stage's K block of the tile's rows), both variants' argument.
    let msfa = match q.scaling {
        Scaling::Blockwise => Some(dev.tensor_map(&sfa, &sfa_dims(q), &[t.block_m(), 1], phaser::Swizzle::None)?),
        Scaling::PerTensor => None,
    };
    let launch = LaunchConfig::linear(t.grid(m, n, dev.sm_count()?), THREADS);
    let kernel_args = || -> Vec<Arg<'_>> {
        let mut v = vec![Arg::TensorMap(&ma), Arg::TensorMap(&mb), Arg::TensorMap(&mc)];
        match q.scaling {
            Scaling::Blockwise => {
                v.extend(msfa.as_ref().map(Arg::TensorMap));
                v.extend([Arg::buffer(&sfa), Arg::buffer(&sfb)]);
            }
            Scaling::PerTensor => v.push(Arg::scalar(q.sfa[0] * q.sfb[0])),
        }
        v.extend([Arg::scalar(m), Arg::scalar(n), Arg::scalar(k)]);
        v
    };
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let per_batch = ((2.0e-2 * 1.0e15 / flops).ceil() as usize).clamp(1, 500);
    let method = timing::Method { warmup: Duration::from_millis(args.warmup_ms), runs: args.runs };
    let mut side = || Ok(Some(stream.launch(&kern, launch, kernel_args())?));
    let timed = timing::interleaved_on(stream, &method, per_batch, &mut [&mut side])?;
    dev.fill(&mut c, bf16::from_bits(0xFFFF))?;
    stream.launch(&kern, launch, kernel_args())?.wait()?;
    let got = dev.download(&c)?;
    let (mu, nu) = (m as usize, n as usize);
    let mut positions = vec![(0, 0), (0, nu - 1), (mu - 1, 0), (mu - 1, nu - 1)];
    positions.extend(
        phaser::problem::random_u32(2 * 4096, args.seed).chunks(2).map(|r| (r[0] as usize % mu, r[1] as usize % nu)),
    );
    let (mut worst, mut bad) = (0f64, 0);
    for &(i, j) in &positions {
        let (want, magnitude) = q.reference(i, j);
        let err = (got[i * nu + j].to_f64() - want).abs() / q.tolerance(want, magnitude);
        worst = worst.max(err);
        bad += (err.is_nan() || err > 1.0) as usize;
    }
    Ok(Row { tflops: flops / timed.sides[0].median.as_secs_f64() / 1e12, worst, bad, checked: positions.len(), c: got })
}

fn bytes_of_bf16(v: &[bf16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
}

fn bytes_of_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_of_e4m3(v: &[F8E4M3]) -> Vec<u8> {
    v.iter().map(F8E4M3::to_bits).collect()
}

fn main() {
    let args = Args::parse();
    let result = (|| -> BenchResult<bool> {
        let shapes: Vec<(u32, u32, u32)> = args.shapes.split(',').map(parse_shape).collect::<BenchResult<_>>()?;
        let scalings: Vec<Scaling> = args.scalings.split(',').map(parse_scaling).collect::<BenchResult<_>>()?;
        let frag_counts: Vec<u32> = args.frags.split(',').map(parse_frags).collect::<BenchResult<_>>()?;
        let scale_paths: Vec<Scales> = args.scales.split(',').map(parse_scales).collect::<BenchResult<_>>()?;
        let dev = Device::cuda(0)?;
        let stream = dev.stream()?;
        let mut ok = true;
        println!(
            "method: {}",
            timing::Method { warmup: Duration::from_millis(args.warmup_ms), runs: args.runs }.describe("~20 ms")
        );
        println!("| shape | scaling | Phaser TFLOP/s | worst error / tolerance | checks |");
        println!("| --- | --- | --- | --- | --- |");
        for &(m, n, k) in &shapes {
            let shape = format!("{m}x{n}x{k}");
            let dir = args.dump.as_ref().map(|d| d.join(&shape));
            let mut meta = vec![format!("\"m\": {m}, \"n\": {n}, \"k\": {k}")];
            for &scaling in &scalings {
                let q = Quantized::random(m, n, k, scaling, args.seed);
                let (name, variants) = match scaling {
                    Scaling::PerTensor => ("per_tensor", vec![(1, Scales::Global)]),
                    Scaling::Blockwise => {
                        let mut v = Vec::new();
                        if scale_paths.contains(&Scales::Global) {
                            v.extend(frag_counts.iter().map(|&f| (f, Scales::Global)));
                        }
                        if scale_paths.contains(&Scales::Shared) {
                            v.push((1, Scales::Shared));
                        }
                        ("blockwise", v)
                    }
                };
                if let Some(dir) = &dir {
                    std::fs::create_dir_all(dir).map_err(|e| BenchError(format!("{}: {e}", dir.display())))?;
                    let write = |file: String, bytes: Vec<u8>| {
                        std::fs::write(dir.join(&file), bytes).map_err(|e| BenchError(format!("{file}: {e}")))
                    };
                    write(format!("{name}_a.e4m3"), bytes_of_e4m3(&q.a))?;
                    write(format!("{name}_b.e4m3"), bytes_of_e4m3(&q.b))?;
                    write(format!("{name}_sfa.f32"), bytes_of_f32(&q.sfa))?;
                    write(format!("{name}_sfb.f32"), bytes_of_f32(&q.sfb))?;
                }
                for &(frags, scales) in &variants {
                    let row = run(&dev, &stream, &args, &q, frags, scales)?;
                    // FRAGS = 1 keeps the names run 20 used; FRAGS = 2's C and time carry
                    // `_frags2`, shared scales' `_smem_scales` (bench/gemm_fp8_torch.py's names).
                    let variant = match (frags, scales) {
                        (_, Scales::Shared) => format!("{name}_smem_scales"),
                        (1, Scales::Global) => name.to_string(),
                        _ => format!("{name}_frags{frags}"),
                    };
                    ok &= row.bad == 0;
                    println!(
                        "| {shape} | {variant} | {:.1} | {:.3} | {} of {} {} |",
                        row.tflops,
                        row.worst,
                        row.checked - row.bad,
                        row.checked,
                        if row.bad == 0 { "PASS" } else { "FAIL" }
                    );
                    if let Some(dir) = &dir {
                        std::fs::write(dir.join(format!("{variant}_c.bf16")), bytes_of_bf16(&row.c))
                            .map_err(|e| BenchError(format!("{variant}_c.bf16: {e}")))?;
                        meta.push(format!("\"{variant}_tflops\": {:.3}", row.tflops));
                    }
                }
            }
            if let Some(dir) = &dir {
                std::fs::write(dir.join("meta.json"), format!("{{{}}}\n", meta.join(", ")))
                    .map_err(|e| BenchError(format!("meta.json: {e}")))?;
            }
        }
        Ok(ok)
    })();
    match result {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("bench_gemm_fp8: a check failed");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("bench_gemm_fp8: {}", e.0);
            std::process::exit(1);
        }
    }
}
