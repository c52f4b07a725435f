//! CUDA graphs: a sequence of Phaser launches captured on a [`Stream`] once, replayed many
//! times (GPU only; the simulator refuses with `Unsupported`).
//!
//! A graph bakes in its buffers' addresses, so it holds their borrows for its whole life:
//! buffers are bound to the builder once ([`GraphBuilder::bind`] shared,
//! [`GraphBuilder::bind_mut`] exclusive) and the launches name them by handle, any number of
//! times. Capture happens in [`GraphBuilder::build`]: every function is loaded and every
//! address taken first (outside the capture: cudarc's event waits inside a capture are refused
//! by the driver, `CUDA_ERROR_STREAM_CAPTURE_ISOLATION`), then only the kernel launches are
//! captured. Each [`Graph::replay`] orders itself like any cudarc use of the bound buffers:
//! it waits for their last writes (and, for written ones, reads) on other streams and records
//! its reads and writes after the graph, so later work, downloads and frees wait for it; that
//! keeps a forgotten graph sound too. Dropping a graph waits for its replays.
//!
//! **The application's cudarc work in the same graph.** Between the launches, a graph can hold
//! copies and fills of bound buffers ([`GraphBuilder::memcpy`], [`GraphBuilder::memset_zeros`])
//! and any cudarc work of the application ([`GraphBuilder::cudarc`]: a closure run on the
//! capturing `CudaStream` at its place in the sequence, e.g. its own kernel launched through
//! `stream.launch_builder`), captured in the order they were added. The application's cudarc
//! memory binds like a Phaser buffer ([`GraphBuilder::bind_cudarc`], `bind_cudarc_mut`), so
//! the replays are ordered with its other users. Inside the capture, work must name memory by
//! the address the graph took before it began ([`CaptureScope::addr`]): passing a
//! `CudaSlice` to cudarc there makes cudarc wait on the slice's events, which the driver
//! refuses in a capture.
//!
//! Launch checks (arguments, shape, shared memory, target) run when a launch is added. The
//! watchdog works under replay: a starved wait traps, and [`Graph::synchronize`] reports the
//! record, decoded against the graph's kernel (a graph of several kernels decodes against the
//! first whose wait sites the record names).

use crate::args::{check_arg_shapes, ArgShape, ResolvedArg};
use crate::buffer::Buffer;
use crate::cuda::{self, driver_err, CudaBuf, CudaBufferArg, CudaBufferArgMut};
use crate::device::{Device, Storage};
use crate::launch::check_config;
use crate::elem::Elem;
use crate::error::{Backend, Result, RuntimeError};
use crate::launch::LaunchConfig;
use crate::stream::Stream;
use crate::buffer::LaunchHold;
use crate::tensor_map::{hold_maps, TensorMap};
use crate::watchdog::WatchdogReport;
use phaser_codegen::arch::SharedLayout;
use phaser_codegen::ir::ParamKind;
use phaser_codegen::{Kernel, Type};
use std::marker::PhantomData;

/// A buffer bound to a [`GraphBuilder`], named by its launches.
pub struct Bound<T> {
    index: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Bound<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Bound<T> {}

/// One argument of a captured launch.
pub enum GraphArg<'a> {
    Scalar { ty: Type, bits: u64 },
    /// A bound buffer (its index, element type).
    Buffer { index: usize, elem: Type },
    TensorMap(&'a TensorMap),
}

impl<'a, T: Elem> From<Bound<T>> for GraphArg<'a> {
    fn from(b: Bound<T>) -> Self {
        GraphArg::Buffer { index: b.index, elem: T::TYPE }
    }
}
impl<'a> From<&'a TensorMap> for GraphArg<'a> {
    fn from(t: &'a TensorMap) -> Self {
        GraphArg::TensorMap(t)
    }
}
macro_rules! graph_scalar_from {
    ($($t:ty),*) => {$(
        impl<'a> From<$t> for GraphArg<'a> {
            fn from(v: $t) -> Self { GraphArg::Scalar { ty: <$t as Elem>::TYPE, bits: Elem::to_bits(v) } }
        }
    )*};
}
graph_scalar_from!(u16, u32, u64, i16, i32, i64, f32, f64, half::f16, half::bf16);

/// A bound buffer: its storage, borrowed as bound, and its size.
struct BoundBuffer<'a> {
    storage: CudaBuf<'a>,
    bytes: usize,
}

/// A launch to capture, checked.
struct LaunchStep<'a> {
    kernel: Kernel,
    cfg: LaunchConfig,
    layout: SharedLayout,
    args: Vec<GraphArg<'a>>,
}

/// The application's cudarc work, run on the capturing stream at its place in the sequence.
type CudarcWork<'a> = Box<dyn FnMut(&CaptureScope<'_>) -> Result<()> + 'a>;

/// One captured step, in the order it was added.
enum Step<'a> {
    Launch(LaunchStep<'a>),
    /// Copy a whole bound buffer into another of the same size.
    Memcpy { src: usize, dst: usize },
    /// Zero every byte of a bound buffer.
    MemsetZeros { dst: usize },
    Cudarc(CudarcWork<'a>),
}

/// A step made ready to capture: nothing in it loads a module or waits on an event.
enum Ready<'s, 'a> {
    Launch { step: &'s LaunchStep<'a>, f: cuda::LaunchFunction, slots: Vec<cuda::Slot<'s>> },
    Memcpy { src: u64, dst: u64, bytes: usize },
    MemsetZeros { dst: u64, bytes: usize },
    Cudarc(&'s mut CudarcWork<'a>),
}

/// What the application's cudarc work sees inside the capture: the capturing stream and the
/// bound buffers' addresses (taken before the capture, see the module).
pub struct CaptureScope<'s> {
    stream: &'s std::sync::Arc<cudarc::driver::CudaStream>,
    addrs: &'s [u64],
    writable: &'s [bool],
}

impl CaptureScope<'_> {
    /// The capturing stream: queue the work on it (it is the graph's stream).
    pub fn stream(&self) -> &std::sync::Arc<cudarc::driver::CudaStream> {
        self.stream
    }

    /// The device address of a buffer the work only reads.
    pub fn addr<T>(&self, b: Bound<T>) -> Result<u64> {
        self.addrs.get(b.index).copied().ok_or_else(|| foreign_bound("CaptureScope::addr"))
    }

    /// The device address of a buffer the work may write: it must be bound exclusive, so the
    /// replays are ordered with its other users as a write.
    pub fn addr_mut<T>(&self, b: Bound<T>) -> Result<u64> {
        match self.writable.get(b.index) {
            Some(true) => Ok(self.addrs[b.index]),
            Some(false) => Err(RuntimeError::Config(
                "CaptureScope::addr_mut: the buffer is bound shared; bind it with `bind_mut` (or `bind_cudarc_mut`) for the graph's cudarc work to write it".into(),
            )),
            None => Err(foreign_bound("CaptureScope::addr_mut")),
        }
    }
}

fn foreign_bound(operation: &str) -> RuntimeError {
    RuntimeError::Config(format!("{operation}: the buffer was bound to another graph"))
}

/// Launches to capture into a graph on one stream ([`Stream::graph`]).
pub struct GraphBuilder<'a> {
    stream: &'a Stream<'a>,
    device: &'a cuda::CudaDevice,
    bound: Vec<BoundBuffer<'a>>,
    steps: Vec<Step<'a>>,
    holds: Vec<LaunchHold>,
}

impl<'d> Stream<'d> {
    /// Start a graph of launches on this stream (GPU only).
    pub fn graph<'a>(&'a self) -> Result<GraphBuilder<'a>> {
        match (self.device(), self.as_cuda()) {
            (Device::Cuda(d), Some(_)) => Ok(GraphBuilder { stream: self, device: d, bound: Vec::new(), steps: Vec::new(), holds: Vec::new() }),
            (Device::Sim(_), _) | (Device::Cuda(_), None) => {
                Err(RuntimeError::Unsupported { operation: "Stream::graph", needs: Backend::Cuda, device: Backend::Sim })
            }
        }
    }
}

impl<'a> GraphBuilder<'a> {
    fn bind_storage<T: Elem>(&mut self, storage: CudaBuf<'a>, len: usize) -> Result<Bound<T>> {
        if !storage.context().is_some_and(|c| self.device.owns(c)) {
            return Err(RuntimeError::ForeignBuffer { backend: Backend::Cuda, param: None });
        }
        self.bound.push(BoundBuffer { storage, bytes: len * T::TYPE.size() as usize });
        Ok(Bound { index: self.bound.len() - 1, _t: PhantomData })
    }

    /// Bind a buffer the graph's kernels only read; borrowed shared for the graph's life.
    pub fn bind<T: Elem>(&mut self, b: &'a Buffer<T>) -> Result<Bound<T>> {
        match &b.storage {
            Storage::Cuda(s) => self.bind_storage(CudaBuf::Read(s as &dyn CudaBufferArg), b.len),
            Storage::Sim(_) => Err(RuntimeError::BackendMismatch { buffer: Backend::Sim, device: Backend::Cuda }),
        }
    }

    /// Bind a buffer the graph's kernels may write; borrowed exclusively for the graph's life.
    pub fn bind_mut<T: Elem>(&mut self, b: &'a mut Buffer<T>) -> Result<Bound<T>> {
        match &mut b.storage {
            Storage::Cuda(s) => {
                let len = b.len;
                self.bind_storage(CudaBuf::Write(s as &mut dyn CudaBufferArgMut), len)
            }
            Storage::Sim(_) => Err(RuntimeError::BackendMismatch { buffer: Backend::Sim, device: Backend::Cuda }),
        }
    }

    /// Bind the application's cudarc memory that the graph only reads; its replays wait for
    /// the slice's last cudarc write and record their reads, as a cudarc launch does.
    pub fn bind_cudarc<T: Elem>(&mut self, s: &'a cudarc::driver::CudaSlice<T>) -> Result<Bound<T>> {
        self.bind_storage(CudaBuf::Read(s as &dyn CudaBufferArg), s.len())
    }

    /// Bind the application's cudarc memory that the graph may write (exclusive borrow).
    pub fn bind_cudarc_mut<T: Elem>(&mut self, s: &'a mut cudarc::driver::CudaSlice<T>) -> Result<Bound<T>> {
        let len = s.len();
        self.bind_storage(CudaBuf::Write(s as &mut dyn CudaBufferArgMut), len)
    }

    /// The bound buffer `b` for `operation`, checked bound here (and exclusive if `write`).
    fn bound_for<T>(&self, b: Bound<T>, operation: &str, write: bool) -> Result<&BoundBuffer<'a>> {
        let bound = self.bound.get(b.index).ok_or_else(|| foreign_bound(operation))?;
        if write && !matches!(bound.storage, CudaBuf::Write(_)) {
            return Err(RuntimeError::Config(format!(
                "{operation}: the destination is bound shared; bind it with `bind_mut` (or `bind_cudarc_mut`)"
            )));
        }
        Ok(bound)
    }

    /// Add a copy of all of `src` into `dst` (same element type and length), captured in order
    /// with the launches.
    pub fn memcpy<T: Elem>(&mut self, src: Bound<T>, dst: Bound<T>) -> Result<()> {
        let from = self.bound_for(src, "GraphBuilder::memcpy", false)?.bytes;
        let to = self.bound_for(dst, "GraphBuilder::memcpy", true)?.bytes;
        if from != to {
            return Err(RuntimeError::Config(format!(
                "GraphBuilder::memcpy: the source holds {from} bytes but the destination {to}; a graph copies whole buffers"
            )));
        }
        if src.index == dst.index {
            return Err(RuntimeError::Config("GraphBuilder::memcpy: the source and the destination are the same buffer".into()));
        }
        self.steps.push(Step::Memcpy { src: src.index, dst: dst.index });
        Ok(())
    }

    /// Add a fill of every byte of `dst` with zero, captured in order with the launches.
    pub fn memset_zeros<T: Elem>(&mut self, dst: Bound<T>) -> Result<()> {
        self.bound_for(dst, "GraphBuilder::memset_zeros", true)?;
        self.steps.push(Step::MemsetZeros { dst: dst.index });
        Ok(())
    }

    /// Add the application's own cudarc work: `work` runs once, inside the capture, at its
    /// place in the sequence, and queues its work on [`CaptureScope::stream`] (memory by
    /// [`CaptureScope::addr`] / [`CaptureScope::addr_mut`], see the module). An error it
    /// returns ends the capture and is [`GraphBuilder::build`]'s error.
    pub fn cudarc(&mut self, work: impl FnMut(&CaptureScope<'_>) -> Result<()> + 'a) {
        self.steps.push(Step::Cudarc(Box::new(work)));
    }

    /// Add a launch (checked now, as `Device::launch` checks it); a buffer the kernel may
    /// write must be bound with `bind_mut`.
    pub fn launch(
        &mut self,
        kernel: &Kernel,
        cfg: LaunchConfig,
        args: impl IntoIterator<Item = GraphArg<'a>>,
    ) -> Result<()> {
        let args: Vec<GraphArg<'a>> = args.into_iter().collect();
        let mut shapes = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            shapes.push(match a {
                GraphArg::Scalar { ty, .. } => ArgShape::Scalar(*ty),
                GraphArg::TensorMap(t) => ArgShape::TensorMap(t),
                GraphArg::Buffer { index, elem } => {
                    let param = || kernel.params().get(i).map(|p| p.name.clone()).unwrap_or_else(|| "-".into());
                    let b = self.bound.get(*index).ok_or_else(|| RuntimeError::BadArgument {
                        kernel: kernel.name().to_owned(),
                        index: i,
                        param: param(),
                        problem: "the buffer was bound to another graph".into(),
                    })?;
                    let writes = kernel.params().get(i).is_some_and(|p| matches!(p.kind, ParamKind::Global { mutable: true, .. }));
                    if writes && !matches!(b.storage, CudaBuf::Write(_)) {
                        return Err(RuntimeError::BadArgument {
                            kernel: kernel.name().to_owned(),
                            index: i,
                            param: param(),
                            problem: "the kernel may write this buffer: bind it with `bind_mut`".into(),
                        });
                    }
                    ArgShape::Buffer(*elem)
                }
            });
        }
        // The checks `Device::launch` runs, on what they read of the arguments.
        let cfg = cfg.resolved_for(kernel)?;
        check_arg_shapes(kernel, shapes.into_iter())?;
        let layout = check_config(kernel, &cfg)?;
        self.stream.device().check_target(kernel)?;
        // The maps' buffers stay alive as long as the graph (it bakes their addresses in).
        let maps = args.iter().enumerate().filter_map(|(i, a)| match a {
            GraphArg::TensorMap(t) => Some((i, *t)),
            GraphArg::Scalar { .. } | GraphArg::Buffer { .. } => None,
        });
        self.holds.extend(hold_maps(kernel, maps, self.stream.device().key())?);
        self.steps.push(Step::Launch(LaunchStep { kernel: kernel.clone(), cfg, layout, args }));
        Ok(())
    }

    /// Load every function, take every address, capture the launches and instantiate.
    pub fn build(mut self) -> Result<Graph<'a>> {
        let stream = self.stream.as_cuda().expect("a graph's stream is a CUDA stream").clone();
        let d = self.device;
        // Addresses, and cudarc's ordering with earlier work, before the capture begins.
        let mut addrs = Vec::with_capacity(self.bound.len());
        for b in self.bound.iter_mut() {
            let (addr, _record) = match &mut b.storage {
                CudaBuf::Read(r) => r.device_addr(&stream),
                CudaBuf::Write(w) => w.device_addr_mut(&stream),
                CudaBuf::ReadExclusive(r) => r.device_addr(&stream),
                CudaBuf::Address(a) => (*a, cudarc::driver::SyncOnDrop::Record(None)),
            };
            addrs.push(addr);
        }
        let writable: Vec<bool> = self.bound.iter().map(|b| matches!(b.storage, CudaBuf::Write(_))).collect();
        // Every function loaded and every launch's arguments resolved, before the capture too.
        let mut ready = Vec::with_capacity(self.steps.len());
        for s in self.steps.iter_mut() {
            ready.push(match s {
                Step::Launch(l) => {
                    let (f, _) = d.prepare(&l.kernel, &l.cfg, &l.layout)?;
                    let resolved: Vec<ResolvedArg<CudaBuf>> = l
                        .args
                        .iter()
                        .map(|a| match a {
                            GraphArg::Scalar { ty, bits } => ResolvedArg::Scalar { ty: *ty, bits: *bits },
                            GraphArg::Buffer { index, .. } => ResolvedArg::Buffer(CudaBuf::Address(addrs[*index])),
                            GraphArg::TensorMap(t) => ResolvedArg::TensorMap(t),
                        })
                        .collect();
                    let slots = cuda::launch_slots(&l.kernel, resolved)?;
                    Ready::Launch { step: &*l, f, slots }
                }
                Step::Memcpy { src, dst } => {
                    Ready::Memcpy { src: addrs[*src], dst: addrs[*dst], bytes: self.bound[*dst].bytes }
                }
                Step::MemsetZeros { dst } => Ready::MemsetZeros { dst: addrs[*dst], bytes: self.bound[*dst].bytes },
                Step::Cudarc(work) => Ready::Cudarc(work),
            });
        }
        stream
            .begin_capture(cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .map_err(driver_err("beginning a graph capture"))?;
        let mut captured = Ok(());
        let scope = CaptureScope { stream: &stream, addrs: &addrs, writable: &writable };
        for r in ready.iter_mut() {
            captured = match r {
                Ready::Launch { step, f, slots } => d.enqueue(&stream, &step.kernel, &step.cfg, &f.f, slots),
                Ready::Memcpy { src, dst, bytes } => {
                    // SAFETY: two distinct bound buffers of `bytes` bytes (checked when added),
                    // borrowed for the graph's life (the source shared, the destination exclusive).
                    unsafe { cudarc::driver::result::memcpy_dtod_async(*dst, *src, *bytes, stream.cu_stream()) }
                        .map_err(driver_err("capturing a graph's memcpy"))
                }
                Ready::MemsetZeros { dst, bytes } => {
                    // SAFETY: a bound buffer of `bytes` bytes, borrowed exclusively for the graph's life.
                    unsafe { cudarc::driver::result::memset_d8_async(*dst, 0, *bytes, stream.cu_stream()) }
                        .map_err(driver_err("capturing a graph's memset"))
                }
                Ready::Cudarc(work) => work(&scope),
            };
            if captured.is_err() {
                break;
            }
        }
        drop(ready);
        // The capture ends whatever happened, so the stream leaves capture mode.
        let ended = stream.end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0));
        captured?;
        let graph = ended
            .map_err(driver_err("ending a graph capture and instantiating the graph"))?
            .ok_or_else(|| RuntimeError::Config("the graph capture produced no graph".into()))?;
        let kernels = self
            .steps
            .drain(..)
            .filter_map(|s| match s {
                Step::Launch(l) => Some(l.kernel),
                Step::Memcpy { .. } | Step::MemsetZeros { .. } | Step::Cudarc(_) => None,
            })
            .collect();
        Ok(Graph { stream: self.stream, device: d, graph, bound: self.bound, kernels, _holds: self.holds })
    }
}

/// A captured, instantiated graph; it holds its buffers' borrows (see the module).
pub struct Graph<'a> {
    stream: &'a Stream<'a>,
    device: &'a cuda::CudaDevice,
    graph: cudarc::driver::CudaGraph,
    bound: Vec<BoundBuffer<'a>>,
    kernels: Vec<Kernel>,
    _holds: Vec<LaunchHold>,
}

impl Graph<'_> {
    /// Queue one replay on the graph's stream (returns at once), ordered with other cudarc
    /// work on the bound buffers.
    pub fn replay(&mut self) -> Result<()> {
        let stream = self.stream.as_cuda().expect("a graph's stream is a CUDA stream");
        let mut records = Vec::with_capacity(self.bound.len());
        for b in self.bound.iter_mut() {
            let (_, record) = match &mut b.storage {
                CudaBuf::Read(r) => r.device_addr(stream),
                CudaBuf::Write(w) => w.device_addr_mut(stream),
                CudaBuf::ReadExclusive(r) => r.device_addr(stream),
                CudaBuf::Address(a) => (*a, cudarc::driver::SyncOnDrop::Record(None)),
            };
            records.push(record);
        }
        self.graph.launch().map_err(driver_err("replaying a graph"))?;
        // The reads and writes are recorded now, after the replay.
        drop(records);
        Ok(())
    }

    /// Wait for every replay queued so far; a fault names the starved wait when the watchdog
    /// trapped it.
    pub fn synchronize(&self) -> Result<()> {
        let stream = self.stream.as_cuda().expect("a graph's stream is a CUDA stream");
        stream.synchronize().map_err(|e| {
            let words = self.device.record.lock().unwrap_or_else(|p| p.into_inner()).read();
            let (kernel, watchdog) = self
                .kernels
                .iter()
                // The record names its kernel (`emit::watchdog::kernel_tag`).
                .find_map(|k| WatchdogReport::decode(k, &words).map(|r| (k, r)))
                .map_or((self.kernels.first().map(|k| k.name().to_owned()).unwrap_or_default(), None), |(k, r)| {
                    (k.name().to_owned(), Some(Box::new(r)))
                });
            RuntimeError::KernelFault { kernel, message: e.to_string(), watchdog, source: Some(e.into()) }
        })
    }

    /// How many Phaser launches the graph holds (its copies, fills and cudarc work aside).
    pub fn launches(&self) -> usize {
        self.kernels.len()
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        // The graph's buffers are borrowed only as long as it lives: its replays end first.
        if let Some(s) = self.stream.as_cuda() {
            let _ = s.synchronize();
        }
    }
}
