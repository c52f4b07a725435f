//! The builder GEMM's configurations ([`GemmConfig`]) taken to the DSL GEMM
//! (`gallery::gemm_dsl`, whose own host side knows only its [`Tiles`]): the benchmarks, the
//! GPU tests and the candle op run either kernel from one configuration.

use super::{BLayout, GemmBuffers, GemmConfig, GemmShape, SplitReduce};
pub use crate::gallery::gemm_dsl::ReduceLaunch;
use crate::gallery::gemm_dsl::{Reduce, Tiles, BLOCK_K, EPI};
use phaser::{Arg, Buffer, Device, Kernel, LaunchConfig, TensorMap};

/// Why the DSL GEMM does not implement `cfg`, if it does not: it reads an N-major B only
/// without a cluster and an A tile of one TMA box ([`Tiles::layout_problem`]), and its
/// accumulators must fit the registers ([`Tiles::register_problem`]); every other choice of
/// [`GemmConfig`] (one, two or three consumer warpgroups included) it takes as `#[comptime]`.
pub fn unsupported(cfg: &GemmConfig) -> Option<String> {
    let t = tiles(cfg);
    if let Some(why) = t.layout_problem().or_else(|| t.register_problem()).or_else(|| t.a_box_problem()) {
        return Some(why);
    }
    // One epilogue sub-tile per warpgroup (block_n = 64, one slab) is an odd count: the tile's
    // first sub-tile waits for every store before reusing the staging tile (the kernel's rule
    // since the 192-wide tiles), and block_n = 32 stores C from the registers.
    cfg.problem()
}

/// The DSL kernel's configuration of `cfg` (which [`unsupported`] accepts).
pub fn tiles(cfg: &GemmConfig) -> Tiles {
    Tiles {
        block_n: cfg.block_n,
        wg_m: cfg.wg_m,
        stages: cfg.stages,
        cluster: cfg.cluster_m,
        group_m: cfg.group_m,
        split: cfg.split_k,
        b_n_major: cfg.b_layout == BLayout::NMajor,
        reduce: match cfg.reduce {
            SplitReduce::TwoLaunch => Reduce::SecondLaunch,
            SplitReduce::InKernel => Reduce::LastSlice,
            SplitReduce::EverySlice => Reduce::EverySlice,
        },
        consumers: cfg.consumers,
        a_box_rows: cfg.a_box_rows,
    }
}

/// The DSL GEMM for `cfg` (built once per configuration and cached); a configuration it does
/// not implement is a kernel error that says why.
pub fn kernel(cfg: &GemmConfig) -> phaser::codegen::Result<Kernel> {
    if let Some(p) = unsupported(cfg) {
        let mut k = phaser::codegen::builder::KernelBuilder::new("gemm_dsl", phaser::Target::Sm90a);
        k.error(format!("GEMM configuration {}: {p}", cfg.kernel_name()));
        return k.finish();
    }
    tiles(cfg).kernel()
}

/// The gallery's configurations ([`Tiles::gallery`]) as builder configurations.
pub fn config(cluster: bool) -> GemmConfig {
    let t = Tiles::gallery(cluster);
    GemmConfig {
        block_n: t.block_n,
        wg_m: t.wg_m,
        consumers: t.consumers,
        stages: t.stages,
        cluster_m: t.cluster,
        group_m: t.group_m,
        split_k: t.split,
        ..GemmConfig::new(BLayout::KMajor)
    }
}

/// The DSL GEMM's launches for one configuration: the GEMM and, with split-K, the reduction
/// of its slices into C.
#[derive(Clone, Debug)]
pub struct DslKernels {
    pub cfg: GemmConfig,
    pub gemm: Kernel,
    pub reduce: Option<Kernel>,
}

/// The kernels of `cfg` (see [`kernel`]).
pub fn kernels(cfg: &GemmConfig) -> phaser::codegen::Result<DslKernels> {
    let gemm = kernel(cfg)?;
    let reduce =
        if cfg.split_k > 1 && !tiles(cfg).reduces_in_kernel() { Some(tiles(cfg).reduce_kernel()?) } else { None };
    Ok(DslKernels { cfg: *cfg, gemm, reduce })
}

/// Why `cfg` cannot run `shape` in the DSL GEMM (the configuration itself, or a split of K
/// into more slices than it has blocks), if it cannot, on any GPU.
pub fn shape_problem(cfg: &GemmConfig, shape: &GemmShape) -> Option<String> {
    unsupported(cfg).or_else(|| tiles(cfg).shape_problem(shape.m, shape.n, shape.k))
}

/// Why `cfg` cannot run `shape` on a GPU of `sm_count` SMs: [`shape_problem`], or a
/// reduction by every slice whose work units do not fit in one wave
/// ([`Tiles::wave_problem`]: its slices wait for each other).
pub fn launch_problem(cfg: &GemmConfig, shape: &GemmShape, sm_count: u32) -> Option<String> {
    shape_problem(cfg, shape).or_else(|| tiles(cfg).wave_problem(shape.m, shape.n, sm_count))
}

/// Split-K's f32 workspace `[split, m, n]` for `cfg` at `shape` (one element without split-K,
/// which the GEMM takes but never touches).
pub fn workspace(dev: &Device, cfg: &GemmConfig, shape: &GemmShape) -> phaser::runtime::Result<Buffer<f32>> {
    dev.alloc::<f32>(tiles(cfg).workspace_len(shape.m, shape.n))
}

/// The in-kernel reductions' flags for `cfg` at `shape`, zeroed (one element without one,
/// which the GEMM takes but never touches). The fix-up's launches leave them 0, every slice's
/// reduction alternates their two banks ([`Tiles::flags_len`]), so one allocation serves
/// any number of launches and graph replays, in stream order (two launches running at once
/// on one flags buffer would race).
pub fn flags(dev: &Device, cfg: &GemmConfig, shape: &GemmShape) -> phaser::runtime::Result<Buffer<u32>> {
    let len = tiles(cfg).flags_len(shape.m, shape.n);
    dev.upload(&vec![0u32; len])
}

/// The DSL GEMM's four tensor maps: A, B as a K-major `b` (box `{64, block_n / cluster}`), B
/// as an N-major `b_kn` (box `{64, 64}`), C. The kernel takes both B maps and reads the one
/// of `cfg`'s layout (the builder GEMM's, [`GemmBuffers::tensor_maps`]); the other is any map
/// of its box over the same B, never read.
pub fn tensor_maps(dev: &Device, cfg: &GemmConfig, bufs: &GemmBuffers) -> phaser::runtime::Result<[TensorMap; 4]> {
    let [a, b, c] = bufs.tensor_maps(dev, cfg)?;
    let (n, k) = (bufs.shape.n as u64, bufs.shape.k as u64);
    let sw = phaser::Swizzle::B128;
    let [b_nk, b_kn] = match cfg.b_layout {
        BLayout::KMajor => [b, dev.tensor_map(&bufs.b, &[k, n], &[EPI, BLOCK_K], sw)?],
        BLayout::NMajor => [dev.tensor_map(&bufs.b, &[n, k], &[BLOCK_K, cfg.block_n / cfg.cluster_m], sw)?, b],
    };
    Ok([a, b_nk, b_kn, c])
}

/// The GEMM's arguments: the maps of [`tensor_maps`], M, N and K, the workspace, the
/// fix-up's flags and C as a buffer (which only the in-kernel fix-up writes through).
pub fn args<'a>(
    maps: &'a [TensorMap; 4],
    s: &GemmShape,
    ws: &'a mut Buffer<f32>,
    flags: &'a mut Buffer<u32>,
    c: &'a mut Buffer<half::bf16>,
) -> [Arg<'a>; 10] {
    let [a, b, b_kn, cm] = maps.each_ref().map(Arg::TensorMap);
    let (ws, flags, c) = (Arg::buffer_mut(ws), Arg::buffer_mut(flags), Arg::buffer_mut(c));
    [a, b, b_kn, cm, Arg::scalar(s.m), Arg::scalar(s.n), Arg::scalar(s.k), ws, flags, c]
}

/// The GEMM's launch shape for `cfg` at `shape`: the persistent grid over its work units.
pub fn launch_config(cfg: &GemmConfig, shape: &GemmShape, sm_count: u32) -> LaunchConfig {
    LaunchConfig::linear(tiles(cfg).grid(shape.m, shape.n, sm_count), cfg.threads())
        .with_dynamic_shared(cfg.dynamic_smem_bytes())
}

/// The reduction's launch shape and arguments: the workspace read, C written.
pub fn reduce_launch<'a>(
    cfg: &GemmConfig,
    shape: &GemmShape,
    sm_count: u32,
    ws: &'a Buffer<f32>,
    c: &'a mut Buffer<half::bf16>,
) -> (LaunchConfig, [Arg<'a>; 3]) {
    let lc = tiles(cfg).reduce_launch(shape.m, shape.n, sm_count, ReduceLaunch::default());
    (lc, [Arg::buffer(ws), Arg::buffer_mut(c), Arg::scalar(shape.m * shape.n)])
}

/// Run the DSL GEMM on the buffers through [`Device::launch`]: the GEMM, then (split-K) the
/// reduction, the second after the first (a device launch is complete when it returns). A
/// shape the configuration cannot run is refused first, naming why.
pub fn launch(
    dev: &Device,
    kernels: &DslKernels,
    bufs: &mut GemmBuffers,
    ws: &mut Buffer<f32>,
    flags: &mut Buffer<u32>,
) -> phaser::runtime::Result<Vec<phaser::runtime::LaunchReport>> {
    launch_with(dev, kernels, bufs, ws, flags, ReduceLaunch::default())
}

/// [`launch`] with split-K's reduction launched `how`, as [`graph`] launches it: in the
/// simulator, `ReduceLaunch::Programmatic` checks the reduction's accesses before its
/// `griddepcontrol.wait` against what the GEMM touched (`early-dependent-access`).
pub fn launch_with(
    dev: &Device,
    kernels: &DslKernels,
    bufs: &mut GemmBuffers,
    ws: &mut Buffer<f32>,
    flags: &mut Buffer<u32>,
    how: ReduceLaunch,
) -> phaser::runtime::Result<Vec<phaser::runtime::LaunchReport>> {
    let (cfg, s) = (&kernels.cfg, bufs.shape);
    let sms = dev.sm_count()?;
    if let Some(why) = launch_problem(cfg, &s, sms) {
        return Err(phaser::runtime::RuntimeError::BadLaunch {
            kernel: kernels.gemm.name().into(),
            problem: format!("{s}: {why}"),
        });
    }
    let maps = tensor_maps(dev, cfg, bufs)?;
    let gemm = dev.launch(&kernels.gemm, launch_config(cfg, &s, sms), &args(&maps, &s, ws, flags, &mut bufs.c))?;
    let mut reports = vec![gemm];
    if let Some(reduce) = &kernels.reduce {
        let (lc, rargs) = reduce_launch(cfg, &s, sms, ws, &mut bufs.c);
        let lc = LaunchConfig { programmatic_dependent_launch: how == ReduceLaunch::Programmatic, ..lc };
        reports.push(dev.launch(reduce, lc, &rargs)?);
    }
    Ok(reports)
}

/// The DSL GEMM's launches captured into a graph on `stream` (GPU only), for back-to-back
/// replays: the GEMM, then (split-K) the reduction, in stream order. A graph and not
/// `Stream::launch` per run: each launch's guard holds the workspace (and the reduction's C)
/// exclusively until it is done, so runs could not be queued back to back through guards;
/// the graph holds those borrows once, for its life. Split-K's reduction is launched `how`
/// (`ReduceLaunch::default()`, or `bench_gemm --reduce-launch`).
#[allow(clippy::too_many_arguments)]
pub fn graph<'a>(
    stream: &'a phaser::Stream<'a>,
    kernels: &DslKernels,
    maps: &'a [TensorMap; 4],
    shape: &GemmShape,
    ws: &'a mut Buffer<f32>,
    flags: &'a mut Buffer<u32>,
    c: &'a mut Buffer<half::bf16>,
    how: ReduceLaunch,
) -> phaser::runtime::Result<phaser::Graph<'a>> {
    use phaser::runtime::GraphArg;
    let (cfg, s) = (&kernels.cfg, *shape);
    let sms = stream.device().sm_count()?;
    if let Some(why) = launch_problem(cfg, &s, sms) {
        return Err(phaser::runtime::RuntimeError::BadLaunch {
            kernel: kernels.gemm.name().into(),
            problem: format!("{s}: {why}"),
        });
    }
    let mut g = stream.graph()?;
    let w = g.bind_mut(ws)?;
    let f = g.bind_mut(flags)?;
    let c = g.bind_mut(c)?;
    let [a, b, b_kn, c_map] = maps.each_ref().map(GraphArg::from);
    let args: [GraphArg; 10] = [a, b, b_kn, c_map, s.m.into(), s.n.into(), s.k.into(), w.into(), f.into(), c.into()];
    g.launch(&kernels.gemm, launch_config(cfg, &s, sms), args)?;
    if let Some(reduce) = &kernels.reduce {
        g.launch(reduce, tiles(cfg).reduce_launch(s.m, s.n, sms, how), [w.into(), c.into(), (s.m * s.n).into()])?;
    }
    g.build()
}
