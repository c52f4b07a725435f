//! Back-to-back launches timed with events, for the benchmarks that compare Phaser kernels
//! with vendor code in the same process (`bench_gemm` against cuBLASLt, `bench_pingpong`
//! against nvcc's cubin).
//!
//! Phaser kernels go through the public API: [`phaser::Stream::launch`] queues them (a side
//! returns the launch's guard, kept until its batch is done), and the stream's events
//! ([`phaser::Stream::record`], [`phaser::Event::elapsed_since`]) time them. Only the foreign
//! code compared against is launched through cudarc, on the same stream
//! ([`phaser::Stream::as_cuda`]): a cubin nvcc built ([`load_file`], [`launch_raw`]) or
//! cuBLAS.
//!
//! `bench_attention` replays a graph of its launch on the stream (`Stream::graph`: a guard
//! holds a written buffer until its kernel is done, so one buffer's back-to-back launches are
//! a graph's replays). The device's own cudarc stream with cudarc's events ([`Timeline`] for
//! [`CudaDevice`], [`time`]) is foreign code's only: cuBLAS in the GEMM checks
//! (`gemm::check_against_cublas`, whose Phaser side is `Device::launch`).

use cudarc::driver::sys::{CUevent_flags, CUfunction_attribute_enum};
use cudarc::driver::{CudaEvent, CudaFunction, CudaStream, DeviceRepr, PushKernelArg};
use phaser::runtime::cuda::CudaDevice;
use phaser::{Device, Event, Launch, Stream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What can go wrong here, as a message that says what was being done.
#[derive(Debug)]
pub struct BenchError(pub String);

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BenchError {}

pub type BenchResult<T> = Result<T, BenchError>;

fn err(context: impl std::fmt::Display) -> impl FnOnce(cudarc::driver::DriverError) -> BenchError {
    let c = context.to_string();
    move |e| BenchError(format!("{c}: {e:?}"))
}

impl From<phaser::RuntimeError> for BenchError {
    fn from(e: phaser::RuntimeError) -> Self {
        BenchError(e.to_string())
    }
}
impl From<phaser::codegen::CodegenError> for BenchError {
    fn from(e: phaser::codegen::CodegenError) -> Self {
        BenchError(e.to_string())
    }
}

/// The CUDA backend of a device, or an error for the simulator.
pub fn cuda(dev: &Device) -> BenchResult<&CudaDevice> {
    match dev {
        Device::Cuda(d) => Ok(d),
        Device::Sim(_) => Err(BenchError("this benchmark needs a CUDA GPU".into())),
    }
}

/// A `CUtensorMap` passed by value (128 bytes, 64-byte aligned, like the PTX parameter).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct TensorMapArg(pub [u64; 16]);
// SAFETY: plain bytes with the layout the kernel parameter declares (`.align 64 .b8 [128]`).
unsafe impl DeviceRepr for TensorMapArg {}

/// One launch argument, by value.
#[derive(Clone, Copy, Debug)]
pub enum RawArg {
    U32(u32),
    U64(u64),
    Map(TensorMapArg),
}

/// A loaded function with the launch shape it needs.
pub struct Loaded {
    pub name: String,
    func: CudaFunction,
}

impl Loaded {
    /// Allow `bytes` of dynamic shared memory (above the 48 KiB default).
    pub fn set_dynamic_smem(&self, bytes: u32) -> BenchResult<()> {
        self.func
            .set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
            .map_err(err(format!("raising the dynamic shared memory of `{}` to {bytes} bytes", self.name)))
    }
}

/// Load function `name` of a cubin (or PTX) file, e.g. one nvcc built.
pub fn load_file(dev: &CudaDevice, path: &Path, name: &str) -> BenchResult<Loaded> {
    let module = dev
        .context()
        .load_module(cudarc::nvrtc::Ptx::from_file(path))
        .map_err(err(format!("loading {}", path.display())))?;
    let func = module.load_function(name).map_err(err(format!("finding `{name}` in {}", path.display())))?;
    Ok(Loaded { name: name.to_string(), func })
}

/// Grid, block and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub grid: u32,
    pub block: u32,
    pub smem: u32,
}

/// Enqueue one launch of a foreign function (a cubin nvcc built) on `stream` (a Phaser
/// stream's: [`phaser::Stream::as_cuda`]).
pub fn launch_raw(stream: &CudaStream, f: &Loaded, shape: Shape, args: &[RawArg]) -> BenchResult<()> {
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (shape.grid, 1, 1),
        block_dim: (shape.block, 1, 1),
        shared_mem_bytes: shape.smem,
    };
    let mut b = stream.launch_builder(&f.func);
    for a in args {
        match a {
            RawArg::U32(v) => b.arg(v),
            RawArg::U64(v) => b.arg(v),
            RawArg::Map(v) => b.arg(v),
        };
    }
    // SAFETY: the caller passes the arguments in the kernel's parameter order and types (the
    // benchmarks build them from the kernel they launch).
    unsafe { b.launch(cfg) }.map_err(err(format!("launching `{}`", f.name)))?;
    Ok(())
}

/// Where a benchmark queues its work and how it marks points in it to time what lies
/// between: a Phaser [`Stream`] (the public stream and event API), or, for cuBLAS in the GEMM
/// checks, the device's own cudarc stream with cudarc's events.
pub trait Timeline {
    type Mark;
    /// A point after the work queued so far.
    fn mark(&self) -> BenchResult<Self::Mark>;
    /// Device time from `start` to `end`; waits for `end` (a kernel fault surfaces here).
    fn between(&self, start: &Self::Mark, end: &Self::Mark) -> BenchResult<Duration>;
    /// Whether the work before `m` is done (never blocks).
    fn is_complete(&self, m: &Self::Mark) -> bool;
    /// Wait for every queued piece of work.
    fn synchronize(&self, what: &str) -> BenchResult<()>;
}

impl Timeline for Stream<'_> {
    type Mark = Event;
    fn mark(&self) -> BenchResult<Event> {
        Ok(self.record()?)
    }
    fn between(&self, start: &Event, end: &Event) -> BenchResult<Duration> {
        end.elapsed_since(start).map_err(|e| BenchError(format!("timing events (a kernel fault surfaces here): {e}")))
    }
    fn is_complete(&self, m: &Event) -> bool {
        m.is_complete().unwrap_or(true)
    }
    fn synchronize(&self, what: &str) -> BenchResult<()> {
        Stream::synchronize(self).map_err(|e| BenchError(format!("waiting for the {what}: {e}")))
    }
}

/// The device's own stream and cudarc events: foreign code's (cuBLAS in the GEMM checks).
impl Timeline for CudaDevice {
    type Mark = CudaEvent;
    fn mark(&self) -> BenchResult<CudaEvent> {
        let e = self.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(err("creating an event"))?;
        e.record(self.stream()).map_err(err("recording an event"))?;
        Ok(e)
    }
    fn between(&self, start: &CudaEvent, end: &CudaEvent) -> BenchResult<Duration> {
        end.synchronize().map_err(err("waiting for the timed work (a kernel fault surfaces here)"))?;
        let ms = start.elapsed_ms(end).map_err(err("reading the events"))?;
        Ok(Duration::from_secs_f64(ms as f64 / 1e3))
    }
    fn is_complete(&self, m: &CudaEvent) -> bool {
        m.is_complete()
    }
    fn synchronize(&self, what: &str) -> BenchResult<()> {
        self.stream().synchronize().map_err(err(format!("waiting for the {what}")))
    }
}

/// What one step of a benchmark queued on a [`Stream`]: a Phaser launch's guard (kept until
/// the work is timed, so its borrows last while the kernel runs), or `None` for foreign work
/// (cuBLAS, nvcc's cubin), which cudarc orders itself.
pub type Queued<'a> = Option<Launch<'a>>;

/// Device time of `body` (which enqueues work on `tl`), between two marks; waits for the end,
/// so a fault surfaces here. What `body` returns (a launch's guard) lives until then.
pub fn time_with<T: Timeline, G>(tl: &T, body: impl FnOnce() -> BenchResult<G>) -> BenchResult<Duration> {
    let start = tl.mark()?;
    let kept = body()?;
    let end = tl.mark()?;
    let t = tl.between(&start, &end);
    drop(kept);
    t
}

/// [`time_with`] on a Phaser stream: `body` queues Phaser launches (returning a guard) or
/// foreign work on `stream.as_cuda()`.
pub fn time_on<'a>(stream: &Stream, body: impl FnOnce() -> BenchResult<Queued<'a>>) -> BenchResult<Duration> {
    time_with(stream, body)
}

/// [`time_with`] on the device's own stream: cuBLAS in the GEMM checks (see the module).
pub fn time(dev: &CudaDevice, body: impl FnOnce() -> BenchResult<()>) -> BenchResult<Duration> {
    time_with(dev, body)
}

/// The median of `runs` timings of `per_run` back-to-back repetitions of `one` on `stream`,
/// per repetition, after `warmup` untimed repetitions.
pub fn median_per_launch<'a>(
    stream: &Stream,
    warmup: usize,
    runs: usize,
    per_run: usize,
    mut one: impl FnMut() -> BenchResult<Queued<'a>>,
) -> BenchResult<Duration> {
    for _ in 0..warmup {
        drop(one()?);
    }
    stream.synchronize()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t = time_on(stream, || {
            let kept = (0..per_run.max(1)).map(|_| one()).collect::<BenchResult<Vec<_>>>()?;
            // One guard stands for the batch: the rest are done when it is.
            Ok(kept.into_iter().flatten().last())
        })?;
        times.push(t / per_run.max(1) as u32);
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// How every row of a comparison is timed, the same way for each side (e.g. Phaser and
/// cuBLAS): first `warmup` of sustained back-to-back load alternating the sides, so the clocks
/// have settled where a long run of this work keeps them (the H200 boosts after idle time and
/// settles lower under sustained tensor-core load, so an unsettled row reads high); then
/// `runs` rounds, each timing one batch of every side between CUDA events, in alternating
/// order (A B, B A, ...), all enqueued back to back (no host gaps); the median batch per side.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    pub warmup: Duration,
    pub runs: usize,
}

impl Method {
    pub fn describe(&self, per_batch: &str) -> String {
        format!(
            "{} ms of sustained load alternating the sides, then {} rounds of one batch per side ({per_batch}) \
             between CUDA events, in alternating order, enqueued back to back; median batch per side, per launch; \
             the same inputs and warm L2 (back-to-back launches) for every side",
            self.warmup.as_millis(),
            self.runs
        )
    }
}

/// The GPU as `nvidia-smi` reports it while a measurement runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuState {
    pub sm_mhz: f64,
    pub power_w: f64,
    pub temp_c: f64,
    /// `clocks_event_reasons.active`: why the clock is below its maximum (power cap 0x4, ...).
    pub reasons: u64,
}

/// One `nvidia-smi` query of GPU 0; `None` when the tool is missing or says something else.
pub fn sample_gpu() -> Option<GpuState> {
    for reasons in ["clocks_event_reasons.active", "clocks_throttle_reasons.active"] {
        let out = Command::new("nvidia-smi")
            .args(["-i", "0", "--format=csv,noheader,nounits"])
            .arg(format!("--query-gpu=clocks.sm,power.draw,temperature.gpu,{reasons}"))
            .output()
            .ok()?;
        if !out.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<&str> = text.trim().split(',').map(str::trim).collect();
        if let [mhz, w, c, r] = f.as_slice() {
            let hex = r.trim_start_matches("0x");
            return Some(GpuState {
                sm_mhz: mhz.parse().ok()?,
                power_w: w.parse().unwrap_or(f64::NAN),
                temp_c: c.parse().unwrap_or(f64::NAN),
                reasons: u64::from_str_radix(hex, 16).unwrap_or(0),
            });
        }
    }
    None
}

/// The median of each field over `samples` (`None` for no samples).
pub fn median_state(samples: &[GpuState]) -> Option<GpuState> {
    if samples.is_empty() {
        return None;
    }
    let med = |f: &dyn Fn(&GpuState) -> f64| {
        let mut v: Vec<f64> = samples.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Some(GpuState {
        sm_mhz: med(&|g| g.sm_mhz),
        power_w: med(&|g| g.power_w),
        temp_c: med(&|g| g.temp_c),
        reasons: samples.iter().fold(0, |a, g| a | g.reasons),
    })
}

/// Per side: the median, smallest and largest time per launch over the timed batches.
#[derive(Clone, Copy, Debug)]
pub struct SideTime {
    pub median: Duration,
    pub min: Duration,
    pub max: Duration,
}

/// An interleaved measurement: one [`SideTime`] per side, and the GPU's state sampled while
/// the timed batches ran.
#[derive(Clone, Debug)]
pub struct Interleaved {
    pub sides: Vec<SideTime>,
    pub gpu: Option<GpuState>,
}

/// Time `sides` (each queues one launch on `stream`: a Phaser launch, returning its guard,
/// or foreign work on `stream.as_cuda()`) the same way, per [`Method`]: `per_batch` launches
/// per batch, timed between the stream's events.
pub fn interleaved_on<'a>(
    stream: &Stream,
    method: &Method,
    per_batch: usize,
    sides: &mut [&mut dyn FnMut() -> BenchResult<Queued<'a>>],
) -> BenchResult<Interleaved> {
    interleaved_with(stream, method, per_batch, sides)
}

/// The method itself, on any [`Timeline`]; what a side returns (a launch's guard) is kept
/// until its batch is known done, so no guard waits while the queue is full.
pub fn interleaved_with<T: Timeline, G>(
    tl: &T,
    method: &Method,
    per_batch: usize,
    sides: &mut [&mut dyn FnMut() -> BenchResult<G>],
) -> BenchResult<Interleaved> {
    let n = sides.len();
    let per_batch = per_batch.max(1);
    // Sustained load, alternating the sides, until the warm-up time has passed (at least one
    // batch of each).
    let t0 = Instant::now();
    loop {
        let mut kept = Vec::with_capacity(n * per_batch);
        for side in sides.iter_mut() {
            for _ in 0..per_batch {
                kept.push(side()?);
            }
        }
        tl.synchronize("warm-up (a kernel fault surfaces here)")?;
        drop(kept);
        if t0.elapsed() >= method.warmup {
            break;
        }
    }
    let mut batches = Vec::with_capacity(method.runs * n);
    let mut kept = Vec::with_capacity(method.runs * n * per_batch);
    for run in 0..method.runs.max(1) {
        for k in 0..n {
            let side = if run % 2 == 0 { k } else { n - 1 - k };
            let start = tl.mark()?;
            for _ in 0..per_batch {
                kept.push(sides[side]()?);
            }
            let end = tl.mark()?;
            batches.push((side, start, end));
        }
    }
    // The clocks while the batches run (nvidia-smi takes tens of ms per query).
    let mut samples = Vec::new();
    let last = &batches.last().expect("at least one batch").2;
    while !tl.is_complete(last) && samples.len() < 16 {
        match sample_gpu() {
            Some(s) => samples.push(s),
            None => break,
        }
    }
    let mut per_side = vec![Vec::new(); n];
    for (side, start, end) in &batches {
        per_side[*side].push(tl.between(start, end)? / per_batch as u32);
    }
    drop(kept);
    let sides = per_side
        .into_iter()
        .map(|mut t| {
            t.sort();
            SideTime { median: t[t.len() / 2], min: t[0], max: t[t.len() - 1] }
        })
        .collect();
    Ok(Interleaved { sides, gpu: median_state(&samples) })
}
