//! Toolchain latency per gallery kernel, measured in one run on the GPU machine: IR build,
//! PTX print, and what turning PTX into a loaded module costs on each path the runtime has
//! (`runtime/src/cuda/jit.rs`) — the driver's PTX JIT cold and warm (its on-disk cache), the
//! driver's linker with line info cold and again (does the driver cache it?), and a hit in
//! Phaser's own cubin cache, and a cubin `ptxas` assembled ahead of time loaded from the
//! prebuilt directory (`PHASER_CUBIN_DIR`: no JIT at all; the ptxas time is build time and is
//! reported apart) — next to NVRTC compiling the same kernel written in CUDA C++
//! with `cuda::ptx` (`bench/jit_reference.cu`), whose outputs are then compared with Phaser's
//! build of the same kernel on the device (NVRTC interop for reference kernels). See `bench/jit.md`.
//!
//! "Cold" is made certain, not hoped for: each kernel's PTX gets a unique comment, so neither
//! the driver's cache nor ours has seen the text. "Warm" loads that same text again (a new
//! module). The first JIT of the process also pays for loading the JIT compiler library; it
//! is reported as its own row.
//!
//! ```text
//! ./bin/bench_jit                                  # all gallery kernels
//! CUDA_CACHE_DISABLE=1 ./bin/bench_jit             # the driver's cache off: warm == cold?
//! ./bin/bench_jit --reference bench/jit_reference.cu --include /usr/local/cuda/include
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]

use clap::Parser;
use phaser::codegen::{emit_module, Kernel, Module, Target};
use phaser::runtime::cuda::jit::{self, CubinCache, JitOptions};
use phaser::{Device, RuntimeError};
use phaser_examples::{gallery, timing};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    about = "IR build, PTX print, driver JIT (cold/warm), line-info link and cubin-cache latency per gallery kernel"
)]
struct Opts {
    /// Repetitions of the host-only steps (build, print); the median is reported.
    #[arg(long, default_value_t = 20)]
    runs: u32,
    /// The CUDA C++ kernel NVRTC compiles for comparison.
    #[arg(long, default_value = "bench/jit_reference.cu")]
    reference: PathBuf,
    /// CUDA include directories for NVRTC (default: from $CUDA_HOME, nvcc on PATH, /usr/local/cuda).
    #[arg(long)]
    include: Vec<PathBuf>,
    /// Only kernels whose name contains this.
    #[arg(long)]
    only: Option<String>,
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn opt_ms(d: Option<Duration>) -> String {
    d.map(ms).unwrap_or_else(|| "n/a".into())
}

/// The project's ptxas finder (`$PTXAS`, PATH, the nvidia wheel), else the CUDA toolkit's.
fn find_ptxas() -> Option<PathBuf> {
    let toolkit = PathBuf::from("/usr/local/cuda/bin/ptxas");
    phaser::codegen::ptxas::find().ok().or_else(|| toolkit.is_file().then_some(toolkit))
}

/// The last line of `ptxas --version` (its release), for the log.
fn ptxas_version(ptxas: &std::path::Path) -> String {
    phaser::codegen::ptxas::run_tool(std::process::Command::new(ptxas).arg("--version"))
        .map(|o| o.stdout.lines().last().unwrap_or("").to_string())
        .unwrap_or_else(|e| format!("--version failed: {e}"))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn nonce() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// `$CUDA_HOME/include`, `<nvcc's dir>/../include`, `/usr/local/cuda/include`, each with its
/// `cccl` subdirectory (where CUDA 13 keeps libcu++'s `cuda/ptx`) when present.
fn cuda_includes() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        roots.push(PathBuf::from(h).join("include"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            if d.join("nvcc").is_file() {
                roots.push(d.join("..").join("include"));
            }
        }
    }
    roots.push(PathBuf::from("/usr/local/cuda/include"));
    let mut out = Vec::new();
    for r in roots.into_iter().filter(|r| r.join("cuda_runtime.h").is_file()) {
        if r.join("cccl").is_dir() {
            out.push(r.join("cccl"));
        }
        out.push(r);
    }
    out
}

struct Row {
    name: String,
    build: Duration,
    print: Duration,
    ptx_kib: f64,
    driver_cold: Duration,
    driver_warm: Duration,
    link_cold: Duration,
    link_again: Duration,
    cache_hit: Duration,
    cubin_kib: f64,
    /// ptxas assembling the PTX ahead of time (build time, not load time).
    aot_ptxas: Option<Duration>,
    /// `jit::load` finding that cubin in the prebuilt directory and loading it.
    aot_load: Option<Duration>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = Opts::parse();
    let dev = Device::cuda(0)?;
    let Device::Cuda(cuda) = &dev else { unreachable!() };
    let ctx = cuda.context().clone();
    let mut driver_version = 0;
    // SAFETY: writes one int.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) };
    println!(
        "device: {} | driver {} | CUDA_CACHE_DISABLE={} | CUDA_CACHE_PATH={}",
        dev.describe(),
        driver_version,
        std::env::var("CUDA_CACHE_DISABLE").unwrap_or_default(),
        std::env::var("CUDA_CACHE_PATH").unwrap_or_default()
    );
    // The PTX the device's launches print (its policy: `PHASER_WAIT_LOOP`, `PHASER_WATCHDOG`).
    let emit_opts = cuda.default_emit_options();
    let emit_kernel = |k: &Kernel| emit_module(&Module::new(vec![k.clone()]), &emit_opts);
    let plain = JitOptions::plain();
    let cache_dir = tempfile::tempdir()?;
    let cache = CubinCache { dir: cache_dir.path().to_path_buf() };
    let prebuilt_dir = tempfile::tempdir()?;
    let aot = JitOptions { prebuilt_dir: Some(prebuilt_dir.path().to_path_buf()), ..JitOptions::plain() };
    let ptxas = find_ptxas();
    match &ptxas {
        Some(p) => println!("ptxas for the prebuilt cubins: {} ({})", p.display(), ptxas_version(p)),
        None => println!("ptxas not found ($PTXAS, PATH, the nvidia wheel, /usr/local/cuda/bin): prebuilt column n/a"),
    }

    // The first JIT of the process (loads the JIT compiler): its own row.
    let first = gallery::seeds::phase_flip(Target::Sm90a)?;
    let text = format!("{}\n// first JIT {}\n", emit_kernel(&first)?, nonce());
    let t = Instant::now();
    let (m, _) = jit::load(&ctx, &text, first.name(), &plain)?;
    let first_jit = t.elapsed();
    drop(m);
    println!("first PTX JIT of the process (includes loading the JIT compiler): {} ms\n", ms(first_jit));

    let mut rows = Vec::new();
    for e in gallery::examples() {
        // IR build: the example's kernels function (all its kernels), per kernel on average.
        let mut builds = Vec::new();
        let mut kernels: Vec<Kernel> = Vec::new();
        for _ in 0..o.runs.max(1) {
            let t = Instant::now();
            kernels = (e.kernels)(Target::Sm90a)?;
            builds.push(t.elapsed() / kernels.len().max(1) as u32);
        }
        let build = median(builds);
        for k in kernels.iter().filter(|k| o.only.as_deref().is_none_or(|s| k.name().contains(s))) {
            // The driver cannot JIT code for another architecture (sm_100a on an H200): skip it.
            if let Err(RuntimeError::TargetMismatch { target, major, minor, .. }) = dev.check_target(k) {
                println!("skip {}: needs {target}, device is sm_{major}{minor}", k.name());
                continue;
            }
            let mut prints = Vec::new();
            let mut text = String::new();
            for _ in 0..o.runs.max(1) {
                let t = Instant::now();
                text = emit_kernel(k)?;
                prints.push(t.elapsed());
            }
            let text = format!("{text}\n// bench_jit {}\n", nonce());
            let t = Instant::now();
            let (m, _) = jit::load(&ctx, &text, k.name(), &plain)?;
            let driver_cold = t.elapsed();
            drop(m);
            let t = Instant::now();
            let (m, _) = jit::load(&ctx, &text, k.name(), &plain)?;
            let driver_warm = t.elapsed();
            drop(m);
            // The line-info path: link (JIT) then load the cubin.
            let t = Instant::now();
            let cubin = jit::link_with_line_info(&text, k.name())?;
            let m = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin.clone()))?;
            let link_cold = t.elapsed();
            drop(m);
            let t = Instant::now();
            let again = jit::link_with_line_info(&text, k.name())?;
            let m = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(again))?;
            let link_again = t.elapsed();
            drop(m);
            let key = jit::key_of(&text, &dev.describe(), driver_version, true);
            cache.put(&key, &cubin)?;
            let t = Instant::now();
            let bytes = cache.get(&key).ok_or("the cubin cache lost a file")?;
            let m = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(bytes))?;
            let cache_hit = t.elapsed();
            drop(m);
            // Ahead of time: ptxas (build time), then the runtime's own load finding the cubin
            // in the prebuilt directory (nothing cached: a fresh module from a fresh file).
            let (mut aot_ptxas, mut aot_load) = (None, None);
            if let Some(p) = &ptxas {
                let name = jit::prebuilt_cubin_name(&text).ok_or("the PTX declares no .target")?;
                let t = Instant::now();
                phaser::codegen::ptxas::assemble_to(
                    p,
                    &text,
                    k.target().name(),
                    &["-lineinfo"],
                    &prebuilt_dir.path().join(name),
                )
                .map_err(|e| format!("ptxas on {}: {e}", k.name()))?;
                aot_ptxas = Some(t.elapsed());
                let t = Instant::now();
                let (m, stats) = jit::load(&ctx, &text, k.name(), &aot)?;
                aot_load = Some(t.elapsed());
                drop(m);
                if stats.path != jit::LoadPath::Prebuilt {
                    return Err(format!("{}: the prebuilt cubin was not used ({:?})", k.name(), stats.path).into());
                }
            }
            let row = Row {
                name: k.name().to_owned(),
                build,
                print: median(prints),
                ptx_kib: text.len() as f64 / 1024.0,
                driver_cold,
                driver_warm,
                link_cold,
                link_again,
                cache_hit,
                cubin_kib: cubin.len() as f64 / 1024.0,
                aot_ptxas,
                aot_load,
            };
            println!(
                "{:<28} build {} ms, print {} ms, driver JIT cold {} / warm {} ms, link+lineinfo cold {} / again {} ms, our cache hit {} ms, prebuilt cubin load {} ms (ptxas {} ms)",
                row.name,
                ms(row.build),
                ms(row.print),
                ms(row.driver_cold),
                ms(row.driver_warm),
                ms(row.link_cold),
                ms(row.link_again),
                ms(row.cache_hit),
                opt_ms(row.aot_load),
                opt_ms(row.aot_ptxas)
            );
            rows.push(row);
        }
    }
    println!("\n| kernel | IR build ms | PTX print ms | PTX KiB | driver JIT+load cold ms | warm (driver cache) ms | link w/ line info + load, cold ms | same link again ms | our cubin cache hit + load ms | cubin KiB | prebuilt cubin (ptxas AOT) load ms | ptxas (AOT build) ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {:.1} | {} | {} |",
            r.name,
            ms(r.build),
            ms(r.print),
            r.ptx_kib,
            ms(r.driver_cold),
            ms(r.driver_warm),
            ms(r.link_cold),
            ms(r.link_again),
            ms(r.cache_hit),
            r.cubin_kib,
            opt_ms(r.aot_load),
            opt_ms(r.aot_ptxas)
        );
    }
    let med = |f: fn(&Row) -> Duration| median(rows.iter().map(f).collect());
    let med_opt = |f: fn(&Row) -> Option<Duration>| {
        let v: Vec<Duration> = rows.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| median(v))
    };
    if !rows.is_empty() {
        println!(
            "\nmedians over {} kernels: build+print {} ms; driver JIT cold {} ms, warm {} ms; link cold {} ms, again {} ms; our cache hit {} ms; prebuilt cubin (ptxas AOT) load {} ms, ptxas build {} ms (goals: cold <= 10 ms, warm <= 1 ms)",
            rows.len(),
            ms(med(|r| r.build + r.print)),
            ms(med(|r| r.driver_cold)),
            ms(med(|r| r.driver_warm)),
            ms(med(|r| r.link_cold)),
            ms(med(|r| r.link_again)),
            ms(med(|r| r.cache_hit)),
            opt_ms(med_opt(|r| r.aot_load)),
            opt_ms(med_opt(|r| r.aot_ptxas))
        );
    }
    nvrtc(&o, &dev);
    Ok(())
}

/// NVRTC compiling `bench/jit_reference.cu` (the C++ `cuda::ptx` version of
/// seed_producer_consumer) to PTX, twice (the second has NVRTC's own warm state).
fn nvrtc(o: &Opts, dev: &Device) {
    // Linked instead of loaded, libnvrtc is there.
    #[cfg(feature = "dynamic-loading")]
    // SAFETY: only asks the dynamic loader whether libnvrtc is there.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        println!("\nNVRTC: libnvrtc not found (put nvidia/cu13/lib of the nvidia-cuda-nvrtc wheel on LD_LIBRARY_PATH)");
        return;
    }
    let src = match std::fs::read_to_string(&o.reference) {
        Ok(s) => s,
        Err(e) => {
            println!("\nNVRTC: reading {}: {e}", o.reference.display());
            return;
        }
    };
    let includes: Vec<PathBuf> = if o.include.is_empty() { cuda_includes() } else { o.include.clone() };
    println!("\nNVRTC of {} with includes {:?}:", o.reference.display(), includes);
    for i in 0..2 {
        let opts = cudarc::nvrtc::CompileOptions {
            arch: Some("sm_90a"),
            include_paths: includes.iter().map(|p| p.display().to_string()).collect(),
            options: vec!["-std=c++17".into()],
            ..Default::default()
        };
        let t = Instant::now();
        match cudarc::nvrtc::compile_ptx_with_opts(&src, opts) {
            Ok(ptx) => {
                println!("  compile {}: {} ms", i + 1, ms(t.elapsed()));
                if i == 1 {
                    compare_with_phaser(dev, &ptx.to_src());
                }
            }
            Err(e) => {
                println!("  compile {}: failed after {} ms: {e:?}", i + 1, ms(t.elapsed()));
                return;
            }
        }
    }
}

/// The C++ reference kernel against Phaser's seed_producer_consumer on the same device: the
/// four consumers' outputs must be bit-identical.
fn compare_with_phaser(dev: &Device, ptx: &str) {
    let run = || -> Result<(Vec<f32>, Vec<f32>), Box<dyn std::error::Error>> {
        let file = tempfile::Builder::new().suffix(".ptx").tempfile()?;
        std::fs::write(file.path(), ptx)?;
        let cuda = timing::cuda(dev)?;
        let f = timing::load_file(cuda, file.path(), "seed_producer_consumer_cpp")?;
        let out_cpp = dev.upload(&[f32::NAN; 4 * 32])?;
        let shape = timing::Shape { grid: 1, block: 32, smem: 0 };
        timing::launch_raw(cuda.stream(), &f, shape, &[timing::RawArg::U64(dev.buffer_addr(&out_cpp)?)])?;
        let out_phaser = dev.upload(&[f32::NAN; 4 * 32])?;
        let k = gallery::seeds::producer_consumer(Target::Sm90a)?;
        dev.launch(&k, phaser::LaunchConfig::linear(1, 32), &[phaser::Arg::buffer(&out_phaser)])?;
        Ok((dev.download(&out_cpp)?, dev.download(&out_phaser)?))
    };
    match run() {
        Ok((cpp, ours)) => {
            let same = cpp.iter().zip(&ours).all(|(a, b)| a.to_bits() == b.to_bits());
            println!(
                "  the NVRTC kernel's outputs vs Phaser's seed_producer_consumer: {}",
                if same { "bit-identical" } else { "DIFFERENT" }
            );
        }
        Err(e) => println!("  running the NVRTC kernel: {e}"),
    }
}
