//! The Phaser bf16 GEMMs against cuBLASLt in the same process: the builder version
//! (examples/src/gemm.rs) and the same kernel written in the DSL
//! (examples/src/gallery/gemm_dsl.rs; K-major B only).
//!
//! ```text
//! bench_gemm                       # correctness check + performance at the performance shapes
//! bench_gemm --perf --shapes 4096x4096x4096 --b kmajor
//! bench_gemm --impl dsl            # only the DSL GEMM (default: both, timed in the same rows)
//! bench_gemm --check --seed 42     # replay a check
//! bench_gemm --sweep               # tile shape x stages x cluster size at 4096^3 and 8192^3
//! bench_gemm --shape-sweep        # issue 23 §2 shapes, each with GemmConfig::choose's config
//! bench_gemm --print-choices      # no GPU: the configuration chosen per §2 shape, and why
//! bench_gemm --emit-ptx DIR        # no GPU: write the PTX of the default and sweep configs
//! bench_gemm --profile --shapes 8192x8192x8192   # for ncu: 3 + 3 warm launches, then one each
//! bench_gemm --perf --impl dsl --b kmajor --split-k 4 --block-n 128 --shapes 64x4096x4096
//! bench_gemm --decode-variants    # decode shapes: every decode candidate timed, the best cached
//! bench_gemm --profile --impl dsl --config-name phaser_gemm_128x64x64_s8_c1_g8_k4f_kmajor --shapes 64x4096x4096
//! ```
//!
//! Performance: every row (perf and sweep alike) times the Phaser GEMMs (builder and DSL, as
//! `--impl` says) and cuBLASLt (bf16 in/out, f32 compute, best heuristic algorithm, 32 MiB
//! workspace) the same way, interleaved on one Phaser stream (`timing::interleaved_on`: the
//! Phaser kernels through `Stream::launch`, cuBLAS on the stream's cudarc stream, every batch
//! between the stream's events): `--warmup-ms` of sustained load alternating the two, then
//! `--runs` rounds of one ~20 ms batch of back-to-back launches each, in alternating order;
//! TFLOP/s = 2MNK / median time per launch. cuBLAS is measured with each row, never reused
//! from another (the clocks differ between rows), and the SM clock and power `nvidia-smi`
//! reports during the timed batches are printed with the row. After timing, C is poisoned and
//! recomputed, and compared with cuBLAS's C (in full; 4096 samples in the sweep).
//!
//! Correctness (`--check`): random bf16 inputs in [-1, 1) (fresh seed, printed), C poisoned
//! with NaN before each run, every element compared with cuBLAS (and with an f64 CPU
//! reference: every element for small shapes, 512 samples otherwise) within
//! `2 * 2^-8 * |ref| + K * 2^-18`. Shapes that break a TMA constraint are refused with the
//! constraint named. Exit status 1 if any check fails.

use clap::{Parser, ValueEnum};
use half::bf16;
use phaser::{Device, Stream};
use phaser_examples::cublas::CublasLt;
use phaser_examples::gemm::args as gemm_args;
use phaser_examples::gemm::{self, *};
use phaser_examples::gemm_choice::{self, GemmChoice};
use phaser_examples::gemm_choice_cache::ChoiceCache;
use phaser_examples::timing::{self, BenchError, BenchResult, Queued};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Layouts {
    Kmajor,
    Nmajor,
    Both,
}

/// Which Phaser GEMMs to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Impls {
    Builder,
    Dsl,
    Both,
}

/// One Phaser GEMM kernel: the builder version or the DSL version of a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Impl {
    Builder,
    Dsl,
}

impl Impl {
    fn name(self) -> &'static str {
        match self {
            Impl::Builder => "builder",
            Impl::Dsl => "DSL",
        }
    }
    fn kernels(self, cfg: &GemmConfig) -> phaser::codegen::Result<GemmKernels> {
        GemmKernels::new(cfg, self == Impl::Dsl)
    }
}

#[derive(Parser, Debug, Clone)]
#[command(about = "Phaser's warp-specialized bf16 GEMM against cuBLASLt")]
struct Args {
    /// Run the correctness check (default: check and perf).
    #[arg(long)]
    check: bool,
    /// Run the performance comparison (default: check and perf).
    #[arg(long)]
    perf: bool,
    /// Sweep tile shape, stages and cluster size (K-major B; results checked at 4096 samples).
    #[arg(long)]
    sweep: bool,
    /// Time every shape of issue 23 §2 (or --shapes) with the configuration
    /// `GemmConfig::choose` picks for it, against cuBLAS in the same row.
    #[arg(long)]
    shape_sweep: bool,
    /// Print the configuration `GemmConfig::choose` picks per §2 shape (or --shapes) for
    /// --sms SMs, with the model's numbers, and exit (no GPU needed).
    #[arg(long)]
    print_choices: bool,
    /// SMs for --print-choices (the H200's 132 by default).
    #[arg(long, default_value_t = 132)]
    sms: u32,
    /// Shapes for --perf/--sweep/--shape-sweep, e.g. 4096x4096x4096,8192x8192x1024.
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<GemmShape>,
    /// B layouts to run.
    #[arg(long, value_enum, default_value_t = Layouts::Both)]
    b: Layouts,
    /// The Phaser GEMMs to run: the builder version, the DSL version (N-major B without a
    /// cluster), or both in the same rows.
    #[arg(long = "impl", value_enum, default_value_t = Impls::Both)]
    impls: Impls,
    /// Timed batches per side per measurement (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Sustained load before each measurement, in ms (both sides alternating).
    #[arg(long, default_value_t = 500)]
    warmup_ms: u64,
    /// For ncu: at the first of --shapes (default 8192^3), 3 launches of Phaser's default
    /// configuration (the builder's, the DSL's with `--impl dsl`), 3 of cuBLAS, then one of
    /// each (the two to profile); no timing.
    #[arg(long)]
    profile: bool,
    /// Input seed (default: fresh, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Override the default configuration's block_n / wg_m / stages / cluster_m / group_m.
    #[arg(long)]
    block_n: Option<u32>,
    #[arg(long)]
    wg_m: Option<u32>,
    #[arg(long)]
    stages: Option<u32>,
    #[arg(long)]
    cluster: Option<u32>,
    #[arg(long)]
    group_m: Option<u32>,
    /// Split-K slices for the default configuration (the DSL GEMM only: `--impl dsl`).
    #[arg(long)]
    split_k: Option<u32>,
    /// Split-K reduced in the kernel (one launch, `SplitReduce::InKernel`) for the default
    /// configuration, instead of the second launch.
    #[arg(long)]
    in_kernel_reduce: bool,
    /// The configuration by its kernel name (a model, sweep or decode candidate), for
    /// --profile and --perf instead of the default one; a comma-separated list times each
    /// (those of a --b layout, by the name's `_kmajor`/`_nmajor`) in its own perf row
    /// interleaved with cuBLAS (--profile and --check take the first).
    #[arg(long, value_delimiter = ',')]
    config_name: Vec<String>,
    /// Time every decode candidate (`gemm_choice::decode_candidates`, the DSL GEMM) at each
    /// decode shape (M in {1, 16, 64, 128, 256} x N, K in {4096, 8192}; or --shapes) for each
    /// --b layout, interleaved with cuBLAS, each C checked against cuBLAS's; the fastest that
    /// passes is recorded in the choice cache (where: printed).
    #[arg(long)]
    decode_variants: bool,
    /// --decode-variants: seconds of candidates in all (split evenly over the shapes of every
    /// layout; the candidates past a shape's share are listed as not timed).
    #[arg(long, default_value_t = 240)]
    decode_budget_s: u64,
    /// The choice cache's directory (default: the user's, `gemm_choice_cache::ChoiceCache::user`).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Write the PTX of the default and sweep configurations to DIR and exit (no GPU needed).
    #[arg(long)]
    emit_ptx: Option<PathBuf>,
    /// How the DSL GEMM's split-K reduction follows the GEMM in its timed graph: `plain`
    /// (after the GEMM ends, the default) or `programmatic` (a programmatic dependent launch:
    /// measured slower, run 24; `gemm_dsl::ReduceLaunch`).
    #[arg(long, value_enum, default_value_t = ReduceLaunchArg::Plain)]
    reduce_launch: ReduceLaunchArg,
    /// A diagnostic of --perf and --profile with --impl dsl: the DSL GEMM reads A from a copy
    /// with max(M, R) rows, zeros past M, its A map over all of them, so no row of an A box
    /// is out of bounds (TMA fills those with zeros itself otherwise). C is still M x N, and
    /// checked. Run 26's question: the 64 x 64 tile takes twice as long at M = 1 as at M = 64.
    /// R is at most 1024 (a tile's rows are at most 192: more pads nothing the kernel reads).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pad_a_rows: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ReduceLaunchArg {
    Programmatic,
    Plain,
}

impl ReduceLaunchArg {
    fn how(self) -> gemm::dsl::ReduceLaunch {
        match self {
            ReduceLaunchArg::Programmatic => gemm::dsl::ReduceLaunch::Programmatic,
            ReduceLaunchArg::Plain => gemm::dsl::ReduceLaunch::Plain,
        }
    }
}

impl Args {
    fn layouts(&self) -> Vec<BLayout> {
        match self.b {
            Layouts::Kmajor => vec![BLayout::KMajor],
            Layouts::Nmajor => vec![BLayout::NMajor],
            Layouts::Both => vec![BLayout::KMajor, BLayout::NMajor],
        }
    }
    /// The implementations to run for `cfg` (the DSL GEMM only where it implements it).
    fn impls_for(&self, cfg: &GemmConfig) -> Vec<Impl> {
        let dsl = gemm::dsl::unsupported(cfg).is_none();
        let builder = gemm::builder_unsupported(cfg).is_none();
        let wanted = match self.impls {
            Impls::Builder => vec![(Impl::Builder, builder)],
            Impls::Dsl => vec![(Impl::Dsl, dsl)],
            Impls::Both => vec![(Impl::Builder, builder), (Impl::Dsl, dsl)],
        };
        wanted.into_iter().filter(|&(_, implements)| implements).map(|(imp, _)| imp).collect()
    }
    /// The shapes of --shape-sweep and --print-choices.
    fn sweep_shapes(&self) -> Vec<GemmShape> {
        if self.shapes.is_empty() {
            gemm_choice::issue_shapes()
        } else {
            self.shapes.clone()
        }
    }
    /// The configuration of --config-name `name` for `layout`.
    fn named_config(name: &str, layout: BLayout) -> GemmConfig {
        match gemm_choice::named_config(name, layout) {
            Some(c) => c,
            None => {
                let layout = layout.name();
                eprintln!("bench_gemm: --config-name {name}: no {layout} candidate configuration of that name");
                std::process::exit(2);
            }
        }
    }
    /// The configurations --perf times for `layout`: every --config-name of that layout
    /// (none if only other layouts' are named), else the default one.
    fn perf_configs(&self, layout: BLayout) -> Vec<GemmConfig> {
        if self.config_name.is_empty() {
            return vec![self.config(layout)];
        }
        let suffix = format!("_{}", layout.name());
        self.config_name.iter().filter(|n| n.ends_with(&suffix)).map(|n| Self::named_config(n, layout)).collect()
    }
    fn config(&self, layout: BLayout) -> GemmConfig {
        if let Some(name) = self.config_name.first() {
            return Self::named_config(name, layout);
        }
        let mut c = GemmConfig::new(layout);
        // The DSL GEMM alone reads an N-major B without a cluster (`Tiles::layout_problem`):
        // its default there, unless --cluster says otherwise (then refused, naming why).
        if self.impls == Impls::Dsl && layout == BLayout::NMajor {
            c.cluster_m = 1;
        }
        c.block_n = self.block_n.unwrap_or(c.block_n);
        c.wg_m = self.wg_m.unwrap_or(c.wg_m);
        c.stages = self.stages.unwrap_or(c.stages);
        c.cluster_m = self.cluster.unwrap_or(c.cluster_m);
        c.group_m = self.group_m.unwrap_or(c.group_m);
        c.split_k = self.split_k.unwrap_or(c.split_k);
        if self.in_kernel_reduce {
            c.reduce = SplitReduce::InKernel;
        }
        c
    }
}

/// Kernels built once per configuration and implementation (the runtime loads each once).
struct Kernels {
    built: HashMap<(GemmConfig, Impl), GemmKernels>,
}

impl Kernels {
    fn get(&mut self, cfg: &GemmConfig, imp: Impl) -> BenchResult<&GemmKernels> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.built.entry((*cfg, imp)) {
            slot.insert(imp.kernels(cfg)?);
        }
        Ok(&self.built[&(*cfg, imp)])
    }
}

/// Launches per timed batch: about 20 ms of work at ~700 TFLOP/s.
fn per_batch(shape: &GemmShape) -> usize {
    ((2.0e-2 * 7.0e14 / shape.flops()).ceil() as usize).clamp(1, 500)
}

fn tflops(shape: &GemmShape, t: Duration) -> f64 {
    shape.flops() / t.as_secs_f64() / 1e12
}

/// Uploaded A, B, C and a C for cuBLAS, per shape and layout.
type Inputs = HashMap<(GemmShape, BLayout), (GemmBuffers, phaser::Buffer<bf16>)>;

/// One Phaser GEMM's side of a row: TFLOP/s and its C against cuBLAS's.
struct Side {
    imp: Impl,
    tflops: f64,
    check: Comparison,
}

struct PerfRow {
    shape: GemmShape,
    layout: BLayout,
    config: GemmConfig,
    ours: Vec<Side>,
    cublas: f64,
    /// The GPU during the timed batches.
    gpu: Option<timing::GpuState>,
}

impl PerfRow {
    fn side(&self, imp: Impl) -> Option<&Side> {
        self.ours.iter().find(|s| s.imp == imp)
    }
    /// TFLOP/s of `imp` (`-` when not run).
    fn tflops(&self, imp: Impl) -> String {
        self.side(imp).map(|s| format!("{:.1}", s.tflops)).unwrap_or_else(|| "-".into())
    }
    /// `imp` relative to cuBLAS.
    fn ratio(&self, imp: Impl) -> String {
        self.side(imp).map(|s| format!("{:.3}", s.tflops / self.cublas)).unwrap_or_else(|| "-".into())
    }
    /// The DSL GEMM relative to the builder's.
    fn dsl_vs_builder(&self) -> String {
        match (self.side(Impl::Dsl), self.side(Impl::Builder)) {
            (Some(d), Some(b)) => format!("{:.3}", d.tflops / b.tflops),
            _ => "-".into(),
        }
    }
    fn passed(&self) -> bool {
        self.ours.iter().all(|s| s.check.passed())
    }
    /// The best ratio to cuBLAS of the row's sides (the sweep's sort key).
    fn best_ratio(&self) -> f64 {
        self.ours.iter().map(|s| s.tflops / self.cublas).fold(0.0, f64::max)
    }
    /// `builder 712.3 TFLOP/s (0.996x), DSL 710.2 TFLOP/s (0.993x)`.
    fn describe_sides(&self) -> String {
        let v: Vec<String> = self
            .ours
            .iter()
            .map(|s| format!("{} {:.1} TFLOP/s ({:.3}x)", s.imp.name(), s.tflops, s.tflops / self.cublas))
            .collect();
        v.join(", ")
    }
    /// The checks against cuBLAS's C: `PASS 0.12 / PASS 0.12`.
    fn checks(&self) -> String {
        let v: Vec<String> = self
            .ours
            .iter()
            .map(|s| {
                format!("{} {} {:.2}", s.imp.name(), if s.check.passed() { "PASS" } else { "FAIL" }, s.check.worst)
            })
            .collect();
        v.join(" / ")
    }
    fn clocks(&self) -> String {
        match self.gpu {
            Some(g) => format!("{:.0} MHz, {:.0} W, {:.0} C, reasons {:#x}", g.sm_mhz, g.power_w, g.temp_c, g.reasons),
            None => "no nvidia-smi".into(),
        }
    }
    fn mhz(&self) -> String {
        self.gpu.map(|g| format!("{:.0}", g.sm_mhz)).unwrap_or_else(|| "-".into())
    }
    fn watts(&self) -> String {
        self.gpu.map(|g| format!("{:.0}", g.power_w)).unwrap_or_else(|| "-".into())
    }
}

/// The timing method of every row.
fn method(args: &Args) -> timing::Method {
    timing::Method { warmup: Duration::from_millis(args.warmup_ms), runs: args.runs }
}

/// A's values at `shape` for `seed` (those [`inputs_for`] uploads; `--pad-a-rows` copies them).
fn a_values(shape: GemmShape, seed: u64) -> Vec<bf16> {
    random_bf16(shape.m as usize * shape.k as usize, seed)
}

/// Uploaded inputs for `shape` and `layout` (a sweep reuses them for every configuration).
fn inputs_for<'a>(
    dev: &Device,
    inputs: &'a mut Inputs,
    shape: GemmShape,
    layout: BLayout,
    seed: u64,
) -> BenchResult<&'a mut (GemmBuffers, phaser::Buffer<bf16>)> {
    if !inputs.contains_key(&(shape, layout)) {
        inputs.clear(); // one shape's buffers at a time (8192^3 needs 400 MiB)
        let a = a_values(shape, seed);
        let b = random_bf16(b_len(&shape), seed ^ 0x9e37_79b9);
        let bufs = GemmBuffers::new(dev, shape, layout, &a, &b)?;
        let reference = dev.alloc::<bf16>(shape.m as usize * shape.n as usize)?;
        inputs.insert((shape, layout), (bufs, reference));
    }
    Ok(inputs.get_mut(&(shape, layout)).expect("inserted above"))
}

/// `--pad-a-rows R`: A of `shape` (the values [`inputs_for`] uploads) with max(M, R) rows,
/// zeros past M, and the DSL GEMM's A map of `cfg` over all of them; `None` without the flag.
/// The buffer must outlive every launch through the map (a launch refuses it once dropped).
fn padded_a(
    dev: &Device,
    cfg: &GemmConfig,
    shape: GemmShape,
    seed: u64,
    args: &Args,
) -> BenchResult<Option<(phaser::Buffer<bf16>, phaser::TensorMap)>> {
    let Some(rows) = args.pad_a_rows else { return Ok(None) };
    let rows = rows.max(shape.m);
    let mut a = a_values(shape, seed);
    a.resize(rows as usize * shape.k as usize, bf16::ZERO);
    let buf = dev.upload(&a)?;
    let dims = [shape.k as u64, rows as u64];
    let map = dev.tensor_map(&buf, &dims, &[gemm::BLOCK_K, cfg.a_rows()], phaser::Swizzle::B128)?;
    println!("pad-a-rows: A read as {rows} x {} rows x K, zeros past M = {}", shape.k, shape.m);
    Ok(Some((buf, map)))
}

/// Time the Phaser kernels (`args.impls_for(cfg)`) and cuBLAS at one shape the same way
/// (interleaved on `stream`, in one measurement), then verify each Phaser C against cuBLAS's.
#[allow(clippy::too_many_arguments)]
fn perf_one(
    dev: &Device,
    stream: &Stream,
    kernels: &mut Kernels,
    blas: &CublasLt,
    cfg: &GemmConfig,
    shape: GemmShape,
    seed: u64,
    args: &Args,
    inputs: &mut Inputs,
    full_check: bool,
) -> BenchResult<PerfRow> {
    let impls = args.impls_for(cfg);
    if impls.is_empty() {
        return Err(BenchError(format!(
            "{}: no Phaser GEMM to time ({})",
            cfg.kernel_name(),
            gemm::dsl::unsupported(cfg).or_else(|| gemm::builder_unsupported(cfg)).unwrap_or_default()
        )));
    }
    for &imp in &impls {
        kernels.get(cfg, imp)?;
    }
    let (bufs, reference) = inputs_for(dev, inputs, shape, cfg.b_layout, seed)?;
    let maps = bufs.tensor_maps(dev, cfg)?;
    let launch = launch_config(cfg, &shape, dev.sm_count()?);
    let plan = blas.plan(shape.m as u64, shape.n as u64, shape.k as u64, cfg.b_layout)?;
    let (pa, pb, pc) = (dev.buffer_addr(&bufs.a)?, dev.buffer_addr(&bufs.b)?, dev.buffer_addr(reference)?);
    let on = cuda_stream(stream)?;
    let ks: Vec<&GemmKernels> = impls.iter().map(|&imp| &kernels.built[&(*cfg, imp)]).collect();
    // The DSL GEMM runs as a graph of its launches (the GEMM, and split-K's reduction).
    let mut ws = gemm::dsl::workspace(dev, cfg, &shape)?;
    let mut flags = gemm::dsl::flags(dev, cfg, &shape)?;
    let padded = padded_a(dev, cfg, shape, seed, args)?;
    let mut dsl_maps = gemm::dsl::tensor_maps(dev, cfg, &bufs)?;
    if let Some((_, map)) = &padded {
        dsl_maps[0] = map.clone();
    }
    let mut graph = match ks.iter().find_map(|k| match k {
        GemmKernels::Dsl(d) => Some(d),
        GemmKernels::Builder(_) => None,
    }) {
        Some(d) => Some(gemm::dsl::graph(
            stream,
            d,
            &dsl_maps,
            &shape,
            &mut ws,
            &mut flags,
            &mut bufs.c,
            args.reduce_launch.how(),
        )?),
        None => None,
    };
    let t = {
        let mut dsl_graph = graph.as_mut();
        let mut ours: Vec<Box<QueueOne<'_, '_>>> = Vec::new();
        for &k in &ks {
            ours.push(match k {
                GemmKernels::Builder(k) => {
                    let maps = &maps;
                    Box::new(move || Ok(Some(stream.launch(k, launch, gemm_args(maps, &shape))?)))
                }
                GemmKernels::Dsl(_) => {
                    let g = dsl_graph.take().expect("one DSL side");
                    Box::new(move || {
                        g.replay()?;
                        Ok(None)
                    })
                }
            });
        }
        let mut theirs = || blas.run(on, &plan, pa, pb, pc).map(|()| None);
        let mut sides: Vec<&mut QueueOne<'_, '_>> = ours.iter_mut().map(|f| &mut **f as _).collect();
        sides.push(&mut theirs);
        timing::interleaved_on(stream, &method(args), per_batch(&shape), &mut sides)?
    };
    if let Some(g) = &graph {
        // A fault in a replay names the starved wait here.
        g.synchronize()?;
    }
    drop(graph);
    // Verify each timed kernel: poison, one more run, compare with cuBLAS's C.
    timing::time_on(stream, || blas.run(on, &plan, pa, pb, pc).map(|()| None))?;
    let theirs = dev.download(reference)?;
    let (m, n) = (shape.m as usize, shape.n as usize);
    let positions: Vec<(usize, usize)> = if full_check {
        (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
    } else {
        use rand::{Rng, SeedableRng};
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..4096).map(|_| (r.random_range(0..m), r.random_range(0..n))).collect()
    };
    let mut sides = Vec::new();
    for (i, (&imp, k)) in impls.iter().zip(&ks).enumerate() {
        dev.fill(&mut bufs.c, POISON)?;
        k.run(dev, cfg, bufs)?;
        let c = dev.download(&bufs.c)?;
        let check = compare(&c, &shape, positions.iter().copied(), |i, j| theirs[i * n + j].to_f64());
        sides.push(Side { imp, tflops: tflops(&shape, t.sides[i].median), check });
    }
    Ok(PerfRow {
        shape,
        layout: cfg.b_layout,
        config: *cfg,
        cublas: tflops(&shape, t.sides[impls.len()].median),
        ours: sides,
        gpu: t.gpu,
    })
}

/// One side of an interleaved measurement: queues one launch on the stream.
type QueueOne<'a, 'b> = dyn FnMut() -> BenchResult<Queued<'a>> + 'b;

/// The cudarc stream of a Phaser stream (cuBLAS runs on it, in order with the Phaser kernels).
fn cuda_stream<'s>(stream: &'s Stream) -> BenchResult<&'s cudarc::driver::CudaStream> {
    stream.as_cuda().map(|s| &**s).ok_or_else(|| BenchError("this benchmark needs a CUDA GPU".into()))
}

/// `--profile`: the launches ncu profiles (`bench/gemm_ncu.sh`): at `shape`, 3 launches of
/// Phaser's default configuration (the builder's; the DSL's with `--impl dsl`) and 3 of cuBLAS
/// (warm-up), then one of each.
fn profile(args: &Args, shape: GemmShape, seed: u64) -> BenchResult<()> {
    let dev = Device::cuda(0)?;
    let cuda = timing::cuda(&dev)?;
    let blas = CublasLt::new(cuda)?;
    let stream = dev.stream()?;
    let on = cuda_stream(&stream)?;
    let cfg = args.config(BLayout::KMajor);
    let mut kernels = Kernels { built: HashMap::new() };
    let mut inputs = Inputs::new();
    let (bufs, reference) = inputs_for(&dev, &mut inputs, shape, cfg.b_layout, seed)?;
    let imp = if args.impls == Impls::Dsl { Impl::Dsl } else { Impl::Builder };
    let k = kernels.get(&cfg, imp)?;
    let maps = bufs.tensor_maps(&dev, &cfg)?;
    let launch = launch_config(&cfg, &shape, dev.sm_count()?);
    let plan = blas.plan(shape.m as u64, shape.n as u64, shape.k as u64, cfg.b_layout)?;
    let (pa, pb, pc) = (dev.buffer_addr(&bufs.a)?, dev.buffer_addr(&bufs.b)?, dev.buffer_addr(reference)?);
    let mut ws = gemm::dsl::workspace(&dev, &cfg, &shape)?;
    let mut flags = gemm::dsl::flags(&dev, &cfg, &shape)?;
    let padded = padded_a(&dev, &cfg, shape, seed, args)?;
    let mut dsl_maps = gemm::dsl::tensor_maps(&dev, &cfg, &bufs)?;
    if let Some((_, map)) = &padded {
        dsl_maps[0] = map.clone();
    }
    let mut graph = match k {
        GemmKernels::Dsl(d) => Some(gemm::dsl::graph(
            &stream,
            d,
            &dsl_maps,
            &shape,
            &mut ws,
            &mut flags,
            &mut bufs.c,
            args.reduce_launch.how(),
        )?),
        GemmKernels::Builder(_) => None,
    };
    for round in ["warm-up", "warm-up", "warm-up", "profiled"] {
        let t_ours = timing::time_on(&stream, || match (k, graph.as_mut()) {
            (_, Some(g)) => {
                g.replay()?;
                Ok(None)
            }
            (GemmKernels::Builder(k), None) => Ok(Some(stream.launch(k, launch, gemm_args(&maps, &shape))?)),
            (GemmKernels::Dsl(_), None) => Err(BenchError("the DSL GEMM runs as its graph".into())),
        })?;
        let t_blas = timing::time_on(&stream, || blas.run(on, &plan, pa, pb, pc).map(|()| None))?;
        println!(
            "profile {shape} kmajor ({round}): {} {} {:.1} TFLOP/s, cuBLAS {:.1} TFLOP/s",
            imp.name(),
            cfg.kernel_name(),
            tflops(&shape, t_ours),
            tflops(&shape, t_blas)
        );
    }
    Ok(())
}

/// The check line with the largest error ratio (the first number after "vs cuBLAS").
fn worst_line(lines: &[String]) -> String {
    let ratio = |l: &String| -> f64 {
        l.split("vs cuBLAS ").nth(1).and_then(|r| r.split(' ').next()).and_then(|x| x.parse().ok()).unwrap_or(0.0)
    };
    lines
        .iter()
        .filter(|l| l.contains("vs cuBLAS"))
        .max_by(|a, b| ratio(a).total_cmp(&ratio(b)))
        .map(|l| {
            format!("{:.3} of tolerance ({})", ratio(l), l.split(" | ").next().unwrap_or("").trim_start_matches("| "))
        })
        .unwrap_or_else(|| "-".into())
}

fn describe(c: &Comparison) -> String {
    let (i, j, got, want) = c.at;
    format!("{:.3} of tol over {} (worst at ({i},{j}): {got} vs {want:.5})", c.worst, c.compared)
}

fn main() {
    let args = Args::parse();
    if let Some(dir) = &args.emit_ptx {
        std::fs::create_dir_all(dir).expect("create the PTX directory");
        for layout in [BLayout::KMajor, BLayout::NMajor] {
            for cfg in std::iter::once(args.config(layout))
                .chain(sweep_configs(layout))
                .chain(gemm_choice::choice_candidates(layout))
            {
                for imp in args.impls_for(&cfg) {
                    let built = imp.kernels(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.kernel_name()));
                    // The DSL kernel has one entry name for every configuration.
                    let (k, file) = match &built {
                        GemmKernels::Builder(k) => (k, format!("{}.ptx", k.name())),
                        GemmKernels::Dsl(d) => (&d.gemm, format!("gemm_dsl_{}.ptx", cfg.kernel_name())),
                    };
                    let ptx = phaser::codegen::emit_kernel(k).expect("emit");
                    std::fs::write(dir.join(file), ptx).expect("write PTX");
                }
            }
        }
        println!("PTX written to {}", dir.display());
        return;
    }
    if args.print_choices {
        for layout in args.layouts() {
            for shape in args.sweep_shapes() {
                println!("choose {shape} {}: {}", layout.name(), GemmConfig::choose(&shape, layout, args.sms));
            }
        }
        return;
    }
    if args.profile {
        let shape = args.shapes.first().copied().unwrap_or(GemmShape::new(8192, 8192, 8192));
        let seed = args.seed.unwrap_or_else(phaser_examples::gallery::fresh_seed);
        if let Err(e) = profile(&args, shape, seed) {
            eprintln!("bench_gemm: {e}");
            std::process::exit(2);
        }
        return;
    }
    match run(&args) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("bench_gemm: {e}");
            std::process::exit(2);
        }
    }
}

fn run(args: &Args) -> BenchResult<bool> {
    let dev = Device::cuda(0)?;
    let cuda = timing::cuda(&dev)?;
    let blas = CublasLt::new(cuda)?;
    let seed = args.seed.unwrap_or_else(phaser_examples::gallery::fresh_seed);
    println!("device: {} ({} SMs), seed {seed}", dev.describe(), dev.sm_count()?);
    println!("timing (every perf and sweep row, Phaser and cuBLAS alike): {}", method(args).describe("~20 ms"));
    if let Some(g) = timing::sample_gpu() {
        println!("idle: SM {:.0} MHz, {:.0} W, {:.0} C", g.sm_mhz, g.power_w, g.temp_c);
    }
    let stream = dev.stream()?;
    let mut kernels = Kernels { built: HashMap::new() };
    let (do_check, do_perf) = match (args.check, args.perf, args.sweep || args.shape_sweep || args.decode_variants) {
        (false, false, false) => (true, true),
        (c, p, _) => (c, p),
    };
    let mut ok = true;
    let mut lines = Vec::new();

    if do_check {
        // A shape that breaks a TMA constraint is refused with the constraint named.
        let bad = GemmShape::new(128, 128, 100);
        match GemmBuffers::new(&dev, bad, BLayout::KMajor, &random_bf16(128 * 100, 1), &random_bf16(128 * 100, 2)) {
            Err(e) if e.to_string().contains("K must be a multiple of 8") => {
                lines.push(format!("| refuse {bad} | PASS | {e} |"))
            }
            other => {
                ok = false;
                lines
                    .push(format!("| refuse {bad} | FAIL | expected a K-multiple-of-8 error, got {:?} |", other.err()));
            }
        }
        for layout in args.layouts() {
            let cfgs = [args.config(layout), GemmConfig { cluster_m: 1, ..args.config(layout) }];
            for (i, shape) in check_shapes().into_iter().enumerate() {
                // The cluster-free variant on the smaller shapes too (the non-multicast path).
                for cfg in cfgs.iter().take(if shape.flops() < 2e10 { 2 } else { 1 }) {
                    for imp in args.impls_for(cfg) {
                        // A split of more slices than the shape's K blocks is refused (named).
                        if let Some(why) = gemm::dsl::shape_problem(cfg, &shape).filter(|_| imp == Impl::Dsl) {
                            lines.push(format!(
                                "| check {shape} {} {} {} | SKIP | {why} |",
                                layout.name(),
                                imp.name(),
                                cfg.kernel_name()
                            ));
                            println!("{}", lines.last().unwrap());
                            continue;
                        }
                        let k = kernels.get(cfg, imp)?;
                        let (vs_blas, vs_cpu) = check_against_cublas(&dev, &blas, k, cfg, shape, seed + i as u64)?;
                        let pass = vs_blas.passed() && vs_cpu.passed();
                        ok &= pass;
                        lines.push(format!(
                            "| check {shape} {} {} {} | {} | vs cuBLAS {} ; vs CPU {} |",
                            layout.name(),
                            imp.name(),
                            cfg.kernel_name(),
                            if pass { "PASS" } else { "FAIL" },
                            describe(&vs_blas),
                            describe(&vs_cpu)
                        ));
                        println!("{}", lines.last().unwrap());
                    }
                }
            }
        }
    }

    let mut rows = Vec::new();
    let mut inputs = Inputs::new();
    if do_perf {
        let shapes = if args.shapes.is_empty() { perf_shapes() } else { args.shapes.clone() };
        for layout in args.layouts() {
            for &shape in &shapes {
                for cfg in args.perf_configs(layout) {
                    if args.impls_for(&cfg).is_empty() {
                        continue;
                    }
                    let r = perf_one(&dev, &stream, &mut kernels, &blas, &cfg, shape, seed, args, &mut inputs, true)?;
                    ok &= r.passed();
                    let checks: Vec<String> =
                        r.ours.iter().map(|s| format!("{} {}", s.imp.name(), describe(&s.check))).collect();
                    println!(
                        "perf {shape} {}: {}, cuBLAS {:.1} TFLOP/s [{}]; C vs cuBLAS: {}",
                        layout.name(),
                        r.describe_sides(),
                        r.cublas,
                        r.clocks(),
                        checks.join("; ")
                    );
                    rows.push(r);
                }
            }
        }
    }

    let mut sweep = Vec::new();
    if args.sweep {
        let shapes = if args.shapes.is_empty() {
            vec![GemmShape::new(4096, 4096, 4096), GemmShape::new(8192, 8192, 8192)]
        } else {
            args.shapes.clone()
        };
        for &shape in &shapes {
            let default = args.config(BLayout::KMajor);
            let rasters = [4, 16].map(|g| GemmConfig { group_m: g, ..default });
            for cfg in sweep_configs(BLayout::KMajor).into_iter().chain(rasters) {
                match perf_one(&dev, &stream, &mut kernels, &blas, &cfg, shape, seed, args, &mut inputs, false) {
                    Ok(r) => {
                        println!(
                            "sweep {shape} {}: {}, cuBLAS {:.1} TFLOP/s [{}]",
                            cfg.kernel_name(),
                            r.describe_sides(),
                            r.cublas,
                            r.clocks()
                        );
                        ok &= r.passed();
                        sweep.push(r);
                    }
                    Err(e) => println!("sweep {shape} {}: error {e}", cfg.kernel_name()),
                }
            }
        }
    }

    let decode = if args.decode_variants {
        decode_variants(&dev, &stream, &mut kernels, &blas, seed, args, &mut inputs)?
    } else {
        Vec::new()
    };
    ok &= decode.iter().all(|r| r.row.passed());

    let mut chosen: Vec<(GemmChoice, PerfRow)> = Vec::new();
    if args.shape_sweep {
        let sms = dev.sm_count()?;
        // A measured choice (`--decode-variants` recorded it) over the model's.
        let cache = args.cache_dir.clone().map(ChoiceCache::new).or_else(ChoiceCache::user);
        let device = dev.describe();
        for layout in args.layouts() {
            for shape in args.sweep_shapes() {
                let measured = cache.as_ref().and_then(|c| c.lookup(&device, sms, &shape, layout));
                let how = if measured.is_some() { "measured (choice cache)" } else { "model" };
                let choice = measured.unwrap_or_else(|| GemmConfig::choose(&shape, layout, sms));
                println!("shape-sweep {shape} {}: chose ({how}) {choice}", layout.name());
                match perf_one(
                    &dev,
                    &stream,
                    &mut kernels,
                    &blas,
                    &choice.config,
                    shape,
                    seed,
                    args,
                    &mut inputs,
                    false,
                ) {
                    Ok(r) => {
                        println!(
                            "shape-sweep {shape} {}: {}, cuBLAS {:.1} TFLOP/s [{}]",
                            layout.name(),
                            r.describe_sides(),
                            r.cublas,
                            r.clocks()
                        );
                        ok &= r.passed();
                        chosen.push((choice, r));
                    }
                    Err(e) => {
                        ok = false;
                        println!("shape-sweep {shape} {}: error {e}", layout.name());
                    }
                }
            }
        }
    }

    // The summary: what the coordinator pastes back.
    println!();
    println!("==================== GEMM summary ({}, seed {seed}) ====================", dev.describe());
    // Checks in one line, failures listed (the per-check lines are above).
    let failed: Vec<&String> = lines.iter().filter(|l| l.contains("| FAIL |")).collect();
    if !lines.is_empty() {
        let skipped = lines.iter().filter(|l| l.contains("| SKIP |")).count();
        println!(
            "| checks | {}/{} PASS ({skipped} skipped) | worst {} |",
            lines.len() - failed.len() - skipped,
            lines.len() - skipped,
            worst_line(&lines)
        );
    }
    for l in failed {
        println!("{l}");
    }
    if !rows.is_empty() {
        println!(
            "| shape | B | config | builder TFLOP/s | DSL TFLOP/s | cuBLAS TFLOP/s | builder/cuBLAS | DSL/cuBLAS | \
             DSL/builder | SM MHz | W | C vs cuBLAS |"
        );
        for r in &rows {
            println!(
                "| {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} |",
                r.shape,
                r.layout.name(),
                r.config.kernel_name(),
                r.tflops(Impl::Builder),
                r.tflops(Impl::Dsl),
                r.cublas,
                r.ratio(Impl::Builder),
                r.ratio(Impl::Dsl),
                r.dsl_vs_builder(),
                r.mhz(),
                r.watts(),
                r.checks()
            );
        }
    }
    if !sweep.is_empty() {
        // Best ratio first per shape: the ratio, not the absolute TFLOP/s, is what the clocks
        // of the moment do not move.
        sweep.sort_by(|a, b| (a.shape.m, b.best_ratio()).partial_cmp(&(b.shape.m, a.best_ratio())).unwrap());
        println!(
            "| sweep shape | config | builder TFLOP/s | DSL TFLOP/s | cuBLAS TFLOP/s (same row) | builder/cuBLAS | \
             DSL/cuBLAS | SM MHz | W |"
        );
        for r in &sweep {
            println!(
                "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} |",
                r.shape,
                r.config.kernel_name(),
                r.tflops(Impl::Builder),
                r.tflops(Impl::Dsl),
                r.cublas,
                r.ratio(Impl::Builder),
                r.ratio(Impl::Dsl),
                r.mhz(),
                r.watts()
            );
        }
    }
    if !chosen.is_empty() {
        println!(
            "| shape | B | chosen config | tiles / waves | model: MMA work useful | builder TFLOP/s | DSL TFLOP/s | \
             cuBLAS TFLOP/s (same row) | builder/cuBLAS | DSL/cuBLAS | SM MHz | W | C vs cuBLAS |"
        );
        for (choice, r) in &chosen {
            println!(
                "| {} | {} | {} | {} / {} | {:.3} | {} | {} | {:.1} | {} | {} | {} | {} | {} |",
                r.shape,
                r.layout.name(),
                r.config.kernel_name(),
                choice.tiles,
                choice.waves,
                choice.efficiency,
                r.tflops(Impl::Builder),
                r.tflops(Impl::Dsl),
                r.cublas,
                r.ratio(Impl::Builder),
                r.ratio(Impl::Dsl),
                r.mhz(),
                r.watts(),
                r.checks()
            );
        }
        let worst = chosen.iter().map(|(_, r)| r.best_ratio()).fold(f64::INFINITY, f64::min);
        let below = chosen.iter().filter(|(_, r)| r.best_ratio() < 0.99).count();
        println!("shape-sweep: worst best-of-Phaser/cuBLAS {worst:.3}; {below} of {} rows below 0.99x", chosen.len());
    }
    if !decode.is_empty() {
        print_decode(&decode);
    }
    println!("gemm: {}", if ok { "all checks passed" } else { "SOME CHECKS FAILED" });
    Ok(ok)
}

/// One timed decode candidate.
struct DecodeRow {
    row: PerfRow,
    /// Work units (tiles x K slices) over the grid's CTAs.
    units: u64,
    grid: u32,
}

impl DecodeRow {
    fn dsl(&self) -> &Side {
        self.row.side(Impl::Dsl).expect("the decode rows run the DSL GEMM")
    }
    /// Microseconds per GEMM (the median launch).
    fn us(&self, tflops: f64) -> f64 {
        self.row.shape.flops() / (tflops * 1e12) * 1e6
    }
    /// B's bytes over the time: the bandwidth a decode GEMM is bound by.
    fn b_tb_per_s(&self, tflops: f64) -> f64 {
        2.0 * self.row.shape.n as f64 * self.row.shape.k as f64 / (self.us(tflops) * 1e-6) / 1e12
    }
}

/// `--decode-variants`: at each decode shape, the model's choice and every decode candidate
/// that can run it, each timed interleaved with cuBLAS (the DSL GEMM alone, `--runs` at most 5
/// and `--warmup-ms` at most 50: ~0.3 s a candidate) and checked against cuBLAS's C (4096
/// samples); the fastest that passes is recorded in the choice cache.
fn decode_variants(
    dev: &Device,
    stream: &Stream,
    kernels: &mut Kernels,
    blas: &CublasLt,
    seed: u64,
    args: &Args,
    inputs: &mut Inputs,
) -> BenchResult<Vec<DecodeRow>> {
    let sms = dev.sm_count()?;
    let dargs = Args { impls: Impls::Dsl, runs: args.runs.min(5), warmup_ms: args.warmup_ms.min(50), ..args.clone() };
    let shapes = if args.shapes.is_empty() { gemm_choice::decode_shapes() } else { args.shapes.clone() };
    let cache = args.cache_dir.clone().map(ChoiceCache::new).or_else(ChoiceCache::user);
    let device = dev.describe();
    // Every (layout, shape) the autotune times, each with its share of the budget.
    let work: Vec<(BLayout, GemmShape)> =
        args.layouts().into_iter().flat_map(|l| shapes.iter().map(move |s| (l, *s))).collect();
    let started = std::time::Instant::now();
    let candidates = |layout: BLayout, shape: &GemmShape| {
        let model = GemmConfig::choose(shape, layout, sms);
        let mut rest: Vec<GemmChoice> = gemm_choice::decode_candidates(layout)
            .into_iter()
            .filter(|c| *c != model.config && gemm_choice::can_run(c, shape, sms))
            .map(|c| gemm_choice::score(c, shape, sms))
            .collect();
        // The model's order (its fastest first): what a shape's share leaves out is what
        // the model expects least of.
        rest.sort_by(|a, b| a.estimate_us().total_cmp(&b.estimate_us()));
        let mut v = vec![model.config];
        v.extend(rest.into_iter().map(|c| c.config));
        (model, v)
    };
    // Every kernel built and loaded (the driver's JIT) once before any shape's share starts,
    // by one launch at a small shape (16 K blocks: every split runs it).
    let mut all: Vec<GemmConfig> = work.iter().flat_map(|(l, s)| candidates(*l, s).1).collect();
    all.sort_by_key(|c| c.kernel_name());
    all.dedup();
    let warm = GemmShape::new(64, 256, 1024);
    for cfg in &all {
        let (bufs, _) = inputs_for(dev, inputs, warm, cfg.b_layout, seed)?;
        let ran = kernels.get(cfg, Impl::Dsl).and_then(|k| k.run(dev, cfg, bufs).map_err(BenchError::from));
        if let Err(e) = ran {
            println!("decode: {} does not run at {warm}: {e}", cfg.kernel_name());
        }
    }
    println!("decode: {} configurations built and loaded in {:.1} s", all.len(), started.elapsed().as_secs_f64());
    let mut rows = Vec::new();
    let budget = Duration::from_secs(args.decode_budget_s);
    let timing_started = std::time::Instant::now();
    let count = work.len();
    for (i, (layout, shape)) in work.into_iter().enumerate() {
        // This shape's share: what is left of the budget over the shapes left (a shape that
        // finishes early leaves its rest to the next).
        let share = budget.saturating_sub(timing_started.elapsed()) / (count - i) as u32;
        let t0 = std::time::Instant::now();
        let (model, cands) = candidates(layout, &shape);
        println!("decode {shape} {}: the model chose {model}", layout.name());
        let mut not_timed = Vec::new();
        let first = rows.len();
        for cfg in cands {
            if t0.elapsed() > share {
                not_timed.push(cfg.kernel_name());
                continue;
            }
            if gemm::dsl::launch_problem(&cfg, &shape, sms).is_some() {
                continue;
            }
            match perf_one(dev, stream, kernels, blas, &cfg, shape, seed, &dargs, inputs, false) {
                Ok(row) => {
                    let t = gemm::dsl::tiles(&cfg);
                    let units = gemm_choice::score(cfg, &shape, sms).tiles * cfg.split_k as u64;
                    let r = DecodeRow { row, units, grid: t.grid(shape.m, shape.n, sms) };
                    let d = r.dsl();
                    println!(
                        "decode {shape} {}: {:.1} us, {:.1} TFLOP/s ({:.3}x cuBLAS {:.1} TFLOP/s = {:.1} us), B at {:.2} TB/s (cuBLAS {:.2}); C vs cuBLAS {} [{}]",
                        cfg.kernel_name(),
                        r.us(d.tflops),
                        d.tflops,
                        d.tflops / r.row.cublas,
                        r.row.cublas,
                        r.us(r.row.cublas),
                        r.b_tb_per_s(d.tflops),
                        r.b_tb_per_s(r.row.cublas),
                        describe(&d.check),
                        r.row.clocks()
                    );
                    rows.push(r);
                }
                Err(e) => println!("decode {shape} {}: error {e}", cfg.kernel_name()),
            }
        }
        if !not_timed.is_empty() {
            println!("decode {shape} {}: past its {share:?} share, not timed: {}", layout.name(), not_timed.join(", "));
        }
        let best = rows[first..]
            .iter()
            .filter(|r| r.dsl().check.passed())
            .max_by(|a, b| (a.dsl().tflops / a.row.cublas).total_cmp(&(b.dsl().tflops / b.row.cublas)));
        match best {
            Some(b) => {
                let name = b.row.config.kernel_name();
                println!("decode {shape}: best {name} at {:.3}x cuBLAS", b.dsl().tflops / b.row.cublas);
                match &cache {
                    Some(c) => match c.record(&device, &shape, layout, &b.row.config) {
                        Ok(()) => {
                            println!("decode {shape}: recorded {name} in {}", c.path(&device, &shape, layout).display())
                        }
                        Err(e) => println!("decode {shape}: could not record in {}: {e}", c.dir().display()),
                    },
                    None => println!("decode {shape}: no choice cache (neither --cache-dir, XDG_CACHE_HOME nor HOME)"),
                }
            }
            None => println!("decode {shape}: no candidate passed its check; nothing recorded"),
        }
    }
    println!("decode-variants: {} candidates in {:.1} s", rows.len(), started.elapsed().as_secs_f64());
    Ok(rows)
}

/// The decode table (every candidate, the shape's best marked) and the best per shape.
fn print_decode(rows: &[DecodeRow]) {
    let ratio = |r: &DecodeRow| r.dsl().tflops / r.row.cublas;
    // A shape's rows are those of its layout too (the autotune times each --b layout).
    let key = |r: &DecodeRow| (r.row.shape, r.row.config.b_layout);
    let best_of = |k: (GemmShape, BLayout)| {
        rows.iter().filter(|r| key(r) == k && r.dsl().check.passed()).map(ratio).fold(0.0, f64::max)
    };
    println!(
        "| shape | config | reduce | units / CTAs | DSL us | cuBLAS us | DSL TFLOP/s | cuBLAS TFLOP/s (same row) | \
         DSL/cuBLAS | DSL B TB/s | cuBLAS B TB/s | SM MHz | C vs cuBLAS | best |"
    );
    for r in rows {
        let (c, d) = (&r.row.config, r.dsl());
        let reduce = match (c.split_k, c.reduce) {
            (1, _) => "-",
            (_, SplitReduce::TwoLaunch) => "two launches",
            (_, SplitReduce::InKernel) => "in kernel",
            (_, SplitReduce::EverySlice) => "every slice",
        };
        println!(
            "| {} | {} | {reduce} | {} / {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.3} | {:.2} | {:.2} | {} | {} | {} |",
            r.row.shape,
            c.kernel_name(),
            r.units,
            r.grid,
            r.us(d.tflops),
            r.us(r.row.cublas),
            d.tflops,
            r.row.cublas,
            ratio(r),
            r.b_tb_per_s(d.tflops),
            r.b_tb_per_s(r.row.cublas),
            r.row.mhz(),
            r.row.checks(),
            if d.check.passed() && ratio(r) == best_of(key(r)) { "best" } else { "" }
        );
    }
    println!("| shape | B | best config | DSL us | cuBLAS us | DSL/cuBLAS |");
    let mut keys: Vec<(GemmShape, BLayout)> = rows.iter().map(key).collect();
    keys.dedup();
    let mut worst = f64::INFINITY;
    for (shape, layout) in keys {
        let best = rows
            .iter()
            .filter(|r| key(r) == (shape, layout) && r.dsl().check.passed())
            .max_by(|a, b| ratio(a).total_cmp(&ratio(b)));
        if let Some(b) = best {
            worst = worst.min(ratio(b));
            println!(
                "| {shape} | {} | {} | {:.1} | {:.1} | {:.3} |",
                layout.name(),
                b.row.config.kernel_name(),
                b.us(b.dsl().tflops),
                b.us(b.row.cublas),
                ratio(b)
            );
        }
    }
    println!("decode-variants: worst best-of-shape DSL/cuBLAS {worst:.3}");
}
