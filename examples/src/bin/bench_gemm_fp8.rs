//! The FP8 DSL GEMMs (examples/src/gallery/gemm_fp8_dsl.rs: per-tensor and DeepGEMM's
//! blockwise scaling, e4m3 in, bf16 out) on the GPU, and the files `bench/gemm_fp8_torch.py`
//! reads to time cuBLASLt FP8 (`torch._scaled_mm`) on the same inputs and compare C in the same
//! device run (`.ci/gpu-run.sh`: this binary with `--dump`, then the script).
//!
//! ```text
//! bench_gemm_fp8                                  # issue 23's shapes, both scalings
//! bench_gemm_fp8 --shapes 4096x4096x4096 --dump DIR
//! bench_gemm_fp8 --shapes 4096x4096x4096 --scalings blockwise --frags 2 --scales global --warmup-ms 0 --runs 1
//! bench_gemm_fp8 --shapes 64x8192x8192,128x8192x8192 --frags 1 --scales shared --outputs bf16 \
//!     --splits 1,2,4 --split-clusters 1,2 --dump DIR    # split-K at small M
//! ```
//!
//! Blockwise runs once per `--frags` with global scales (accumulator fragments in flight,
//! `kernel_with`: 1 waits for each K block before promoting it, 2 issues the next block first;
//! rows `blockwise`, `blockwise_frags2`) and, with `--scales` naming `shared`, once with its
//! scales through shared memory (`Scales::Shared`, 1 fragment; row `blockwise_smem_scales`) and,
//! with `--outputs` naming `e4m3`, that kernel with its output quantized to e4m3
//! (`Output::E4m3`; row `blockwise_e4m3_out`), and, with `--splits` / `--split-clusters`,
//! the shared-scales bf16 kernel with split-K (f32 partials, then `gemm_splitk_reduce`, both
//! launches in the timed graph; rows `blockwise_smem_scales_split{S}`), so one device run puts them all against cuBLASLt (bf16 C); the `--frags 2 --scales global` form is what `bench/gemm_fp8_ncu.sh`
//! profiles.
//!
//! With `--release warpgroup`, the shared-scales bf16 kernel once more releasing each stage
//! once per warpgroup after a 128-thread `bar.sync` (`Release::PerWarpgroup`; rows `_wgrel`).
//!
//! Each shape runs the configuration `gemm_fp8_dsl::choose` picks for it (printed as `choice:`
//! lines): the gallery's 2-CTA cluster, or none where M fits one block row (`tiles_for`), and,
//! blockwise into bf16 C, the tile width whose waves do the most useful work at its rate. A
//! row's name ends in `_c1` when it ran without a cluster, `_n192` on 192-wide tiles.
//!
//! Timing: `timing::interleaved_on` on one Phaser stream, each variant a graph replayed and timed
//! alone, as cuBLASLt is (`--together`: every variant of a shape one side of one interleaved
//! measurement, to compare the variants with each other; `--warmup-ms` of sustained load, then
//! `--runs` batches of ~20 ms of back-to-back launches between the stream's events; the
//! median batch, per launch); TFLOP/s = 2MNK / time. Check: after timing C is poisoned,
//! recomputed, and 4096 random elements (and the corners) are compared with the f64 product of
//! the dequantized inputs within `Quantized::tolerance` (2^-8 |ref| + 2^-9 sqrt(K0 / 128) sum |a b|,
//! K0 the K accumulated unpromoted: 128 blockwise, K per-tensor); the e4m3 output's bytes times
//! their scales within `Quantized::tolerance_e4m3`. With
//! `--dump DIR`, each shape's inputs, scales and both Cs are written under `DIR/MxNxK/`
//! (`meta.json` names the files) for the torch script. Exit status 1 if a check fails.

use clap::Parser;
use half::bf16;
use phaser::runtime::GraphArg;
use phaser::{Arg, Device, LaunchConfig, F8E4M3};
use phaser_examples::gallery::gemm_dsl::{ReduceLaunch, Tiles, EPI, THREADS};
use phaser_examples::gallery::gemm_fp8_dsl::{
    blockwise_tiles, choose, e4m3_of_pairs, kernel_release, sfa_dims, sfa_stride, split_problem, tiles, tiles_for,
    Issue, Output, Quantized, Release, Scales, Scaling, BLOCKWISE_WIDTHS, BLOCK_K, SCALE_BLOCK,
};
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
    /// What the blockwise kernel with shared scales stores, comma-separated: `bf16`, `e4m3`
    /// (the fused output quantization, `Output::E4m3`; row `blockwise_e4m3_out`).
    #[arg(long, default_value = "bf16,e4m3")]
    outputs: String,
    /// Split-K slices of the blockwise kernel with shared scales and bf16 C, comma-separated
    /// (each timed; 1: no split, row `blockwise_smem_scales`; S > 1: row
    /// `blockwise_smem_scales_split{S}`, f32 partials then `gemm_splitk_reduce`, both launches
    /// in the timed graph). A split over a shape's K blocks (K / 128) is refused, naming it.
    #[arg(long, default_value = "1")]
    splits: String,
    /// CTAs per cluster of those split variants, comma-separated (each timed with every
    /// `--splits`): `auto` (the shape's choice, `gemm_fp8_dsl::tiles_for`, which every other
    /// variant runs: 2 with B multicast, or 1 where M fits one block row), 2, or 1 (a 128-row
    /// tile per CTA; rows with `_c1`).
    #[arg(long, default_value = "auto")]
    split_clusters: String,
    /// The order the blockwise kernel's consumer warpgroups issue their K blocks in,
    /// comma-separated: `together` (the gallery's), `turns` (`Issue::Turns`: each 1-fragment
    /// variant once more, in turns; rows with `_turns`).
    #[arg(long, default_value = "together")]
    issue: String,
    /// How the blockwise kernel with shared scales hands each stage back, comma-separated:
    /// `warp` (the gallery's: each consumer warp after its own scale reads), `warpgroup`
    /// (`Release::PerWarpgroup`: one thread per warpgroup after a 128-thread `bar.sync`; each
    /// shared-scales bf16 variant without split once more, rows with `_wgrel`).
    #[arg(long, default_value = "warp")]
    release: String,
    /// Tile widths (N of a tile) of the blockwise kernel with shared scales and bf16 C,
    /// comma-separated: `auto` (the shape's choice, `gemm_fp8_dsl::choose`, printed in its
    /// `choice:` line), 128 (the gallery's) and 192 (`gemm_fp8_dsl::blockwise_tiles(192)`: two
    /// B scales a stage, 4 stages). Rows of a 192-wide tile end in `_n192`.
    #[arg(long, default_value = "auto")]
    block_n: String,
    /// Time a shape's variants as the sides of one interleaved measurement (they see the same
    /// conditions: compare them with each other). By default each is timed alone, as
    /// `gemm_fp8_torch.py` times cuBLASLt: under the power cap a kernel interleaved with slower
    /// ones runs at a higher clock (run 22b against 22c: +3-6%), so only alone is a fair ratio.
    #[arg(long)]
    together: bool,
}

fn parse_output(s: &str) -> BenchResult<Output> {
    match s.trim() {
        "bf16" => Ok(Output::Bf16),
        "e4m3" => Ok(Output::E4m3),
        other => Err(BenchError(format!("--outputs: `{other}` is not `bf16` or `e4m3`"))),
    }
}

fn parse_scales(s: &str) -> BenchResult<Scales> {
    match s.trim() {
        "global" => Ok(Scales::Global),
        "shared" => Ok(Scales::Shared),
        other => Err(BenchError(format!("--scales: `{other}` is not `global` or `shared`"))),
    }
}

fn parse_issue(s: &str) -> BenchResult<Issue> {
    match s.trim() {
        "together" => Ok(Issue::Together),
        "turns" => Ok(Issue::Turns),
        other => Err(BenchError(format!("--issue: `{other}` is not `together` or `turns`"))),
    }
}

fn parse_release(s: &str) -> BenchResult<Release> {
    match s.trim() {
        "warp" => Ok(Release::PerWarp),
        "warpgroup" => Ok(Release::PerWarpgroup),
        other => Err(BenchError(format!("--release: `{other}` is not `warp` or `warpgroup`"))),
    }
}

fn parse_scaling(s: &str) -> BenchResult<Scaling> {
    match s.trim() {
        "per_tensor" => Ok(Scaling::PerTensor),
        "blockwise" => Ok(Scaling::Blockwise),
        other => Err(BenchError(format!("--scalings: `{other}` is not `per_tensor` or `blockwise`"))),
    }
}

/// `None`: the shape's choice (`auto`).
fn parse_block_n(s: &str) -> BenchResult<Option<u32>> {
    match s.trim() {
        "auto" => Ok(None),
        w => match w.parse::<u32>() {
            Ok(n) if BLOCKWISE_WIDTHS.contains(&n) => Ok(Some(n)),
            _ => Err(BenchError(format!(
                "--block-n: `{s}` is not `auto` or one of the blockwise tile widths {BLOCKWISE_WIDTHS:?}"
            ))),
        },
    }
}

fn parse_split(s: &str) -> BenchResult<u32> {
    match s.trim().parse::<u32>() {
        Ok(f) if f >= 1 => Ok(f),
        _ => Err(BenchError(format!("--splits: `{s}` is not a slice count of at least 1"))),
    }
}

/// `None`: the shape's choice (`auto`).
fn parse_cluster(s: &str) -> BenchResult<Option<u32>> {
    match s.trim() {
        "auto" => Ok(None),
        c => match c.parse::<u32>() {
            Ok(c @ 1..=2) => Ok(Some(c)),
            _ => Err(BenchError(format!("--split-clusters: `{s}` is not `auto`, 1 or 2 (CTAs per cluster)"))),
        },
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

/// A variant: fragments, scale path, output, split-K slices, CTAs per cluster, issue order,
/// release, tile width.
type Variant = (u32, Scales, Output, u32, u32, Issue, Release, u32);

/// One kernel's launch, its buffers and maps: prepared before any is timed (so every variant
/// of a shape can run in one interleaved measurement, `--together`).
struct Prepared {
    name: String,
    output: Output,
    kern: phaser::Kernel,
    /// The inputs the maps point into, kept alive with them.
    _a: phaser::Buffer<F8E4M3>,
    _b: phaser::Buffer<F8E4M3>,
    /// bf16 C, or [`Output::E4m3`]'s packed pairs of e4m3 bytes (`[M][N / 2]`).
    c: phaser::Buffer<bf16>,
    sfa: phaser::Buffer<f32>,
    sfb: phaser::Buffer<f32>,
    /// [`Output::E4m3`]'s scales (`[ceil(N / 128)][sfa_stride(M)]`); bf16: one unused element.
    sfc: phaser::Buffer<f32>,
    /// Split-K's f32 partials `[split, M, N]` (one unused element without split-K).
    ws: phaser::Buffer<f32>,
    /// Split-K's second launch (`gemm_splitk_reduce`) and its launch shape.
    reduce: Option<(phaser::Kernel, LaunchConfig)>,
    maps: Vec<phaser::TensorMap>,
    launch: LaunchConfig,
}

impl Prepared {
    fn new(
        dev: &Device,
        q: &Quantized,
        name: String,
        (frags, scales, output, split, cluster, issue, release, block_n): Variant,
    ) -> BenchResult<Self> {
        let base = if q.scaling == Scaling::Blockwise { blockwise_tiles(block_n) } else { tiles(q.scaling) };
        let t = Tiles { split, cluster, ..base };
        let (m, n, k) = (q.m, q.n, q.k);
        if let Some(why) = split_problem(&t, m, n, k) {
            return Err(BenchError(format!("{m}x{n}x{k} {name}: {why}")));
        }
        let kern = kernel_release(q.scaling, &t, frags, scales, output, issue, release)?;
        let sms = dev.sm_count()?;
        let reduce = if split > 1 {
            Some((t.reduce_kernel()?, t.reduce_launch(m, n, sms, ReduceLaunch::default())))
        } else {
            None
        };
        let ws = dev.alloc::<f32>(t.workspace_len(m, n))?;
        let a = dev.upload(&q.a)?;
        let b = dev.upload(&q.b)?;
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        let c_cols = match output {
            Output::Bf16 => n64,
            Output::E4m3 => n64 / 2,
        };
        let c = dev.alloc::<bf16>(m as usize * c_cols as usize)?;
        let sfc = match output {
            Output::Bf16 => dev.alloc::<f32>(1)?,
            Output::E4m3 => dev.alloc::<f32>(n.div_ceil(SCALE_BLOCK) as usize * sfa_stride(m))?,
        };
        let sfa = dev.upload(&q.sfa)?;
        let sfb = dev.upload(&q.sfb)?;
        let sw = phaser::Swizzle::B128;
        let mut maps = vec![
            dev.tensor_map(&a, &[k64, m64], &[BLOCK_K, t.block_m()], sw)?,
            dev.tensor_map(&b, &[k64, n64], &[BLOCK_K, t.block_n / t.cluster], sw)?,
            dev.tensor_map(&c, &[c_cols, m64], &[EPI, EPI], sw)?,
        ];
        // Blockwise: the A scales' map (a stage's K block of the tile's rows), every variant's argument.
        if q.scaling == Scaling::Blockwise {
            maps.push(dev.tensor_map(&sfa, &sfa_dims(q), &[t.block_m(), 1], phaser::Swizzle::None)?);
        }
        let launch = LaunchConfig::linear(t.grid(m, n, sms), THREADS);
        Ok(Prepared { name, output, kern, _a: a, _b: b, c, sfa, sfb, sfc, ws, reduce, maps, launch })
    }

    /// The check's launch: `sfc` is written (`&mut [f32]`), so it is bound exclusively.
    fn launch_once(&mut self, stream: &phaser::Stream<'_>, q: &Quantized) -> BenchResult<()> {
        let mut v: Vec<Arg<'_>> = self.maps[..3].iter().map(Arg::TensorMap).collect();
        match q.scaling {
            Scaling::Blockwise => {
                v.push(Arg::TensorMap(&self.maps[3]));
                v.extend([
                    Arg::buffer(&self.sfa),
                    Arg::buffer(&self.sfb),
                    Arg::buffer_mut(&mut self.sfc),
                    Arg::buffer_mut(&mut self.ws),
                ]);
            }
            Scaling::PerTensor => v.push(Arg::scalar(q.sfa[0] * q.sfb[0])),
        }
        v.extend([Arg::scalar(q.m), Arg::scalar(q.n), Arg::scalar(q.k)]);
        stream.launch(&self.kern, self.launch, v)?.wait()?;
        if let Some((reduce, lc)) = &self.reduce {
            let args = [Arg::buffer(&self.ws), Arg::buffer_mut(&mut self.c), Arg::scalar(q.m * q.n)];
            stream.launch(reduce, *lc, args)?.wait()?;
        }
        Ok(())
    }
}

/// One timed kernel: TFLOP/s, its check and its C (bf16, or e4m3 bytes and their scales).
struct Row {
    tflops: f64,
    worst: f64,
    bad: usize,
    checked: usize,
    c: Vec<bf16>,
    sfc: Vec<f32>,
}

/// `variants` timed as the sides of one interleaved measurement (`together`), or each alone.
fn time_variants<'a>(
    stream: &'a phaser::Stream<'_>,
    method: &timing::Method,
    per_batch: usize,
    q: &'a Quantized,
    variants: &'a mut [Prepared],
    together: bool,
) -> BenchResult<Vec<timing::SideTime>> {
    // One graph per variant, replayed: the kernel writes `sfc` (`&mut [f32]`), and a stream
    // launch's guard holds a written buffer exclusively until the kernel is done, so back-to-back
    // launches writing one buffer cannot be queued through guards; a graph holds that borrow
    // once (as bench_attention does for its LSE).
    let mut graphs = Vec::with_capacity(variants.len());
    for v in variants.iter_mut() {
        let mut g = stream.graph()?;
        let mut args: Vec<GraphArg<'a>> = v.maps[..3].iter().map(GraphArg::from).collect();
        match q.scaling {
            Scaling::Blockwise => {
                args.push((&v.maps[3]).into());
                let (sfa, sfb, sfc) = (g.bind(&v.sfa)?, g.bind(&v.sfb)?, g.bind_mut(&mut v.sfc)?);
                let ws = g.bind_mut(&mut v.ws)?;
                args.extend([sfa.into(), sfb.into(), sfc.into(), ws.into()]);
                args.extend([q.m.into(), q.n.into(), q.k.into()]);
                g.launch(&v.kern, v.launch, args)?;
                // Split-K: the reduction of the partials into C, after the GEMM in the graph.
                if let Some((reduce, lc)) = &v.reduce {
                    let c = g.bind_mut(&mut v.c)?;
                    g.launch(reduce, *lc, [ws.into(), c.into(), (q.m * q.n).into()])?;
                }
            }
            Scaling::PerTensor => {
                args.push((q.sfa[0] * q.sfb[0]).into());
                args.extend([q.m.into(), q.n.into(), q.k.into()]);
                g.launch(&v.kern, v.launch, args)?;
            }
        }
        graphs.push(g.build()?);
    }
    type Side<'s, 'a> = dyn FnMut() -> BenchResult<timing::Queued<'a>> + 's;
    let mut sides: Vec<Box<Side<'_, 'a>>> = graphs
        .iter_mut()
        .map(|g| {
            Box::new(move || {
                g.replay()?;
                Ok(None)
            }) as Box<Side<'_, 'a>>
        })
        .collect();
    let mut refs: Vec<&mut dyn FnMut() -> BenchResult<timing::Queued<'a>>> =
        sides.iter_mut().map(|s| &mut **s as &mut dyn FnMut() -> BenchResult<timing::Queued<'a>>).collect();
    let timed = if together {
        timing::interleaved_on(stream, method, per_batch, &mut refs)?.sides
    } else {
        let mut alone = Vec::with_capacity(refs.len());
        for side in refs.iter_mut() {
            alone.extend(timing::interleaved_on(stream, method, per_batch, &mut [&mut **side])?.sides);
        }
        alone
    };
    drop(refs);
    drop(sides);
    // A fault in a replay names the starved wait here (the watchdog's record, decoded).
    for g in &graphs {
        g.synchronize()?;
    }
    Ok(timed)
}

/// Time `variants` of `q`'s shape together (`timing::interleaved_on`, one side each), then
/// check each one's C.
fn run(
    dev: &Device,
    stream: &phaser::Stream<'_>,
    args: &Args,
    q: &Quantized,
    variants: &mut [Prepared],
) -> BenchResult<Vec<Row>> {
    let (m, n, k) = (q.m, q.n, q.k);
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let per_batch = ((2.0e-2 * 1.0e15 / flops).ceil() as usize).clamp(1, 500);
    let method = timing::Method { warmup: Duration::from_millis(args.warmup_ms), runs: args.runs };
    let timed = time_variants(stream, &method, per_batch, q, variants, args.together)?;
    let (mu, nu) = (m as usize, n as usize);
    let mut positions = vec![(0, 0), (0, nu - 1), (mu - 1, 0), (mu - 1, nu - 1)];
    positions.extend(
        phaser::problem::random_u32(2 * 4096, args.seed).chunks(2).map(|r| (r[0] as usize % mu, r[1] as usize % nu)),
    );
    let mut rows = Vec::new();
    for (v, time) in variants.iter_mut().zip(&timed) {
        dev.fill(&mut v.c, bf16::from_bits(0xFFFF))?;
        dev.fill(&mut v.sfc, f32::NAN)?;
        v.launch_once(stream, q)?;
        let got = dev.download(&v.c)?;
        let sfc = dev.download(&v.sfc)?;
        let bytes = match v.output {
            Output::E4m3 => e4m3_of_pairs(&got),
            Output::Bf16 => Vec::new(),
        };
        let (mut worst, mut bad) = (0f64, 0);
        for &(i, j) in &positions {
            let (want, magnitude) = q.reference(i, j);
            let err = match v.output {
                Output::Bf16 => (got[i * nu + j].to_f64() - want).abs() / q.tolerance(want, magnitude),
                Output::E4m3 => {
                    let scale = sfc[j / SCALE_BLOCK as usize * sfa_stride(m) + i] as f64;
                    let c = bytes[i * nu + j].to_f32() as f64 * scale;
                    (c - want).abs() / q.tolerance_e4m3(want, magnitude, scale)
                }
            };
            worst = worst.max(err);
            bad += (err.is_nan() || err > 1.0) as usize;
        }
        let tflops = flops / time.median.as_secs_f64() / 1e12;
        rows.push(Row { tflops, worst, bad, checked: positions.len(), c: got, sfc });
    }
    Ok(rows)
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
        let outputs: Vec<Output> = args.outputs.split(',').map(parse_output).collect::<BenchResult<_>>()?;
        let splits: Vec<u32> = args.splits.split(',').map(parse_split).collect::<BenchResult<_>>()?;
        let split_clusters: Vec<Option<u32>> =
            args.split_clusters.split(',').map(parse_cluster).collect::<BenchResult<_>>()?;
        let issues: Vec<Issue> = args.issue.split(',').map(parse_issue).collect::<BenchResult<_>>()?;
        let releases: Vec<Release> = args.release.split(',').map(parse_release).collect::<BenchResult<_>>()?;
        let args_widths: Vec<Option<u32>> = args.block_n.split(',').map(parse_block_n).collect::<BenchResult<_>>()?;
        let dev = Device::cuda(0)?;
        let stream = dev.stream()?;
        let sms = dev.sm_count()?;
        let mut ok = true;
        println!(
            "method: {}",
            timing::Method { warmup: Duration::from_millis(args.warmup_ms), runs: args.runs }.describe("~20 ms")
        );
        // Each shape's configuration, and why (the variants below run it unless they name another).
        for &(m, n, k) in &shapes {
            for &scaling in &scalings {
                let (t, why) = choose(scaling, Output::Bf16, m, n, sms);
                println!(
                    "choice: {m}x{n}x{k} {scaling:?}: {}x{} tiles, cluster {} ({why})",
                    t.block_m(),
                    t.block_n,
                    t.cluster
                );
            }
        }
        println!("| shape | scaling | Phaser TFLOP/s | worst error / tolerance | checks |");
        println!("| --- | --- | --- | --- | --- |");
        for &(m, n, k) in &shapes {
            let shape = format!("{m}x{n}x{k}");
            let dir = args.dump.as_ref().map(|d| d.join(&shape));
            let mut meta = vec![format!("\"m\": {m}, \"n\": {n}, \"k\": {k}")];
            for &scaling in &scalings {
                let q = Quantized::random(m, n, k, scaling, args.seed);
                let chosen = tiles_for(scaling, m).0.cluster;
                let width = choose(scaling, Output::Bf16, m, n, sms).0.block_n;
                let mut widths: Vec<u32> = Vec::new();
                for w in args_widths.iter().map(|w| w.unwrap_or(width)) {
                    if !widths.contains(&w) {
                        widths.push(w);
                    }
                }
                let (name, variants) = match scaling {
                    Scaling::PerTensor => (
                        "per_tensor",
                        vec![(1, Scales::Global, Output::Bf16, 1, chosen, Issue::Together, Release::PerWarp, 256)],
                    ),
                    Scaling::Blockwise => {
                        let mut v: Vec<(u32, Scales, Output, u32, u32)> = Vec::new();
                        if scale_paths.contains(&Scales::Global) {
                            v.extend(frag_counts.iter().map(|&f| (f, Scales::Global, Output::Bf16, 1, chosen)));
                        }
                        if scale_paths.contains(&Scales::Shared) {
                            // bf16 C once per split (1: no split) and cluster, then the e4m3 output.
                            for &o in &outputs {
                                match o {
                                    Output::Bf16 => {
                                        for &c in &split_clusters {
                                            let c = c.unwrap_or(chosen);
                                            v.extend(splits.iter().map(|&s| (1, Scales::Shared, o, s, c)));
                                        }
                                    }
                                    Output::E4m3 => v.push((1, Scales::Shared, o, 1, chosen)),
                                }
                            }
                        }
                        // Each issue order of every 1-fragment variant (two fragments issue
                        // together), each release of the shared-scales bf16 ones issued
                        // together without split (the others release per warpgroup already).
                        let v = v
                            .into_iter()
                            .flat_map(|(f, s, o, sp, c)| {
                                let orders: Vec<Issue> = if f == 1 { issues.clone() } else { vec![Issue::Together] };
                                orders.into_iter().map(move |i| (f, s, o, sp, c, i))
                            })
                            .flat_map(|(f, s, o, sp, c, i)| {
                                let wg = (s, o, sp, i) == (Scales::Shared, Output::Bf16, 1, Issue::Together);
                                let how: Vec<Release> = if wg { releases.clone() } else { vec![Release::PerWarp] };
                                how.into_iter().map(move |r| (f, s, o, sp, c, i, r))
                            })
                            // Each width of the shared-scales bf16 variants (the others are 128 wide).
                            .flat_map(|(f, s, o, sp, c, i, r)| {
                                let ns: Vec<u32> = if (s, o) == (Scales::Shared, Output::Bf16) {
                                    widths.clone()
                                } else {
                                    vec![SCALE_BLOCK]
                                };
                                ns.into_iter().map(move |bn| (f, s, o, sp, c, i, r, bn))
                            })
                            .collect();
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
                // FRAGS = 1 keeps the names run 20 used; FRAGS = 2's C and time carry
                // `_frags2`, shared scales' `_smem_scales`, the e4m3 output's `_e4m3_out`
                // (bench/gemm_fp8_torch.py's names).
                let mut prepared = variants
                    .iter()
                    .map(|&(frags, scales, output, split, cluster, issue, release, block_n)| {
                        let c1 = if cluster == 1 { "_c1" } else { "" };
                        let turns = if issue == Issue::Turns { "_turns" } else { "" };
                        let wgrel = if release == Release::PerWarpgroup { "_wgrel" } else { "" };
                        let variant = match (frags, scales, output) {
                            (_, Scales::Shared, Output::E4m3) => format!("{name}_e4m3_out{c1}"),
                            (_, Scales::Shared, Output::Bf16) if split > 1 || cluster == 1 => {
                                format!("{name}_smem_scales_split{split}{c1}")
                            }
                            (_, Scales::Shared, Output::Bf16) => format!("{name}_smem_scales"),
                            (1, Scales::Global, _) => format!("{name}{c1}"),
                            _ => format!("{name}_frags{frags}{c1}"),
                        };
                        let wide = if block_n != SCALE_BLOCK && scaling == Scaling::Blockwise {
                            format!("_n{block_n}")
                        } else {
                            String::new()
                        };
                        let variant = format!("{variant}{turns}{wgrel}{wide}");
                        Prepared::new(
                            &dev,
                            &q,
                            variant,
                            (frags, scales, output, split, cluster, issue, release, block_n),
                        )
                    })
                    .collect::<BenchResult<Vec<_>>>()?;
                let rows = run(&dev, &stream, &args, &q, &mut prepared)?;
                for (v, row) in prepared.iter().zip(rows) {
                    let variant = &v.name;
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
                        let write = |file: String, bytes: Vec<u8>| {
                            std::fs::write(dir.join(&file), bytes).map_err(|e| BenchError(format!("{file}: {e}")))
                        };
                        match v.output {
                            Output::Bf16 => write(format!("{variant}_c.bf16"), bytes_of_bf16(&row.c))?,
                            Output::E4m3 => {
                                write(format!("{variant}_c.e4m3"), bytes_of_e4m3(&e4m3_of_pairs(&row.c)))?;
                                write(format!("{variant}_sfc.f32"), bytes_of_f32(&row.sfc))?;
                            }
                        }
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
