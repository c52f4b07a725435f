//! Streams: launches that return at once, ordered among themselves, with the buffers they use
//! borrowed until the work is known done.
//!
//! The borrow model is cuda-async's: [`Stream::launch`] returns a [`Launch`] guard that holds
//! every argument's borrow (shared for a buffer the kernel reads, exclusive for one it may
//! write: `Arg::buffer` / `Arg::buffer_mut`, `&b` / `&mut b`) for as long as it lives, so safe
//! code cannot read, write or free a buffer a launch still uses. [`Launch::wait`] returns the
//! launch's report or error; dropping the guard waits too and keeps an error for
//! [`Stream::synchronize`].
//!
//! A forgotten guard (`std::mem::forget`) ends the borrows early without waiting, which safe
//! code may do; what keeps that sound is the ordering under the borrows: on the GPU every
//! buffer is pushed to cudarc as it is used (a read records a read event, a write a write
//! event), and every later use of the memory through cudarc, on any stream, Phaser's
//! downloads, uploads and frees included, waits for those events (cudarc's event tracking,
//! on once a context has more than one stream, which a `Stream` makes). In the simulator a
//! launch has run when it returns. (A forgotten guard never releases the tensor maps' holds,
//! so dropping a buffer viewed by one of its maps then blocks: forgetting a guard is a leak.)
//!
//! This is the second place, beside `device.rs`, that dispatches to a backend.

use crate::args::{Arg, ResolvedArg};
use crate::buffer::LaunchHold;
use crate::cuda::{self, driver_err};
use crate::device::{Device, LaunchReport};
use crate::error::{Result, RuntimeError};
use crate::event::{Event, EventInner};
use crate::launch::LaunchConfig;
use crate::tensor_map::hold_tensor_maps;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaStream;
use phaser_codegen::Kernel;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// An ordered queue of device work on one [`Device`]; several may exist per device. Work on
/// one stream runs in launch order; work on two streams is ordered only by events
/// ([`Stream::record`], [`Stream::wait_for`]) and by cudarc's tracking of the buffers they
/// share.
///
/// `Send + Sync` (a `&Device`, cudarc's thread-safe stream, a mutex); a [`Launch`] guard is
/// `Send`, so work queued on one thread can be waited for on another.
pub struct Stream<'d> {
    device: &'d Device,
    inner: StreamInner,
    /// Errors of launches whose guards were dropped without `wait`, for `synchronize`.
    deferred: Mutex<Vec<RuntimeError>>,
}

enum StreamInner {
    /// A non-blocking stream of the device's context, its launches numbered (`LaunchQueue`).
    Cuda(cuda::LaunchQueue),
    Sim,
}

impl Device {
    /// A new stream on this device (on the GPU a non-blocking CUDA stream; the first one turns
    /// on cudarc's cross-stream event tracking, after synchronizing the context once).
    pub fn stream(&self) -> Result<Stream<'_>> {
        let inner = match self {
            Device::Cuda(d) => StreamInner::Cuda(cuda::LaunchQueue::new(
                d.context().new_stream().map_err(driver_err("creating a stream"))?,
            )),
            Device::Sim(_) => StreamInner::Sim,
        };
        Ok(Stream { device: self, inner, deferred: Mutex::default() })
    }
}

impl<'d> Stream<'d> {
    pub fn device(&self) -> &'d Device {
        self.device
    }

    /// The cudarc stream (GPU only), to queue the application's own cudarc work in order with
    /// Phaser's launches.
    pub fn as_cuda(&self) -> Option<&Arc<CudaStream>> {
        match &self.inner {
            StreamInner::Cuda(q) => Some(q.stream()),
            StreamInner::Sim => None,
        }
    }

    /// Queue `kernel` on this stream and return at once (in the simulator: once it ran). The
    /// same checks as [`Device::launch`] run first; a buffer the kernel may write must be
    /// passed exclusively (`&mut`, [`Arg::buffer_mut`]). The guard holds the arguments'
    /// borrows until the work is done.
    ///
    /// On the GPU the launch makes the driver calls cudarc's own launch makes and no others
    /// (no events: its guard waits on a fence of the stream, recorded once for every launch
    /// queued by then), unless `cfg` asks for device timing ([`LaunchConfig::with_timing`]).
    /// Its host work is O(arguments): the kernel's checks and function are cached beside it.
    pub fn launch<'a>(
        &'a self,
        kernel: impl StreamKernel<'a>,
        cfg: LaunchConfig,
        args: impl IntoIterator<Item = Arg<'a>>,
    ) -> Result<Launch<'a>> {
        self.launch_with(kernel, cfg, args, true)
    }

    /// [`Stream::launch`] for a group launch (`crate::launch_group`), which waits for every
    /// launch before it returns: a buffer the kernel writes may be passed shared.
    pub(crate) fn launch_in_group<'a>(
        &'a self,
        kernel: impl StreamKernel<'a>,
        cfg: LaunchConfig,
        args: impl IntoIterator<Item = Arg<'a>>,
    ) -> Result<Launch<'a>> {
        self.launch_with(kernel, cfg, args, false)
    }

    /// Load `kernel`'s module for a launch of `cfg` with `args` (and set its function's
    /// attributes) without launching it: [`crate::launch_group`] loads every member before
    /// the first is queued, because loading a module waits for the device's running kernels,
    /// so a member that waits for a later one would hold that one's load back forever (seen on
    /// the H200: the waiting GEMM's watchdog trapped). The simulator loads nothing.
    pub(crate) fn preload(&self, kernel: &Kernel, cfg: LaunchConfig, args: &[Arg<'_>]) -> Result<()> {
        let dev = self.device;
        let (cfg, layout) = dev.checked(kernel, cfg, args)?;
        if let Device::Cuda(d) = dev {
            dev.check_target(kernel)?;
            d.prepare(kernel, &cfg, &layout)?;
        }
        Ok(())
    }

    fn launch_with<'a>(
        &'a self,
        kernel: impl StreamKernel<'a>,
        cfg: LaunchConfig,
        args: impl IntoIterator<Item = Arg<'a>>,
        exclusive_writes: bool,
    ) -> Result<Launch<'a>> {
        let kernel = kernel.into_cow();
        let args: Vec<Arg<'a>> = args.into_iter().collect();
        let dev = self.device;
        let (cfg, layout) = dev.checked(&kernel, cfg, &args)?;
        if exclusive_writes {
            check_exclusive(&kernel, &args)?;
        }
        let holds = hold_tensor_maps(&kernel, &args, dev.key())?;
        let pending = match (&self.inner, dev) {
            (StreamInner::Cuda(queue), Device::Cuda(d)) => {
                dev.check_target(&kernel)?;
                // Straight into the driver's slots (one vector; the count was checked).
                let mut slots = Vec::with_capacity(args.len());
                for (i, (a, p)) in args.into_iter().zip(kernel.params()).enumerate() {
                    let resolved = match a {
                        Arg::Scalar { ty, bits } => ResolvedArg::Scalar { ty, bits },
                        Arg::TensorMap(t) => ResolvedArg::TensorMap(t),
                        Arg::Buffer { storage, peer, .. } => {
                            let own = storage.cuda().is_some_and(|b| b.context().is_some_and(|c| d.owns(c)));
                            match (own, dev.granted(peer.as_ref())) {
                                (true, _) => ResolvedArg::Buffer(storage.into_cuda().expect("a CUDA buffer")),
                                // The peer's address; the guard's lifetime holds the borrow.
                                (false, Some(g)) => ResolvedArg::Buffer(cuda::CudaBuf::Address(g.addr)),
                                (false, None) => return Err(dev.not_mine_arg(&kernel, i, &storage, peer.as_ref())),
                            }
                        }
                    };
                    slots.push(cuda::launch_slot(resolved, p)?);
                }
                Pending::Cuda(d, d.launch_async(queue, &kernel, &cfg, &layout, slots)?)
            }
            (StreamInner::Sim, Device::Sim(d)) => {
                let resolved = dev.resolve(&kernel, &args, |s| Device::sim_args(d, s), Device::sim_peer)?;
                Pending::Sim(d.launch(&kernel, &cfg, &resolved).map(Box::new))
            }
            (StreamInner::Cuda(_), Device::Sim(_)) | (StreamInner::Sim, Device::Cuda(_)) => {
                unreachable!("a stream is made by its device, of the device's backend")
            }
        };
        Ok(Launch { stream: self, kernel, pending: Some(pending), _holds: holds })
    }

    /// Record an event at this point of the stream's work (timing enabled on the GPU).
    pub fn record(&self) -> Result<Event> {
        let inner = match (&self.inner, self.device) {
            (StreamInner::Cuda(q), _) => EventInner::Cuda(
                q.stream()
                    .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                    .map_err(driver_err("recording an event"))?,
            ),
            (StreamInner::Sim, Device::Sim(d)) => EventInner::Sim(d.id()),
            (StreamInner::Sim, Device::Cuda(_)) => unreachable!("a stream is made by its device"),
        };
        Ok(Event { inner })
    }

    /// Make this stream's later work wait until `event`'s work is done (on the device: the
    /// host does not block). An event of another device is refused.
    pub fn wait_for(&self, event: &Event) -> Result<()> {
        match (&self.inner, &event.inner, self.device) {
            (StreamInner::Cuda(q), EventInner::Cuda(e), _) => {
                q.stream().wait(e).map_err(driver_err("waiting for an event"))
            }
            (StreamInner::Sim, EventInner::Sim(id), Device::Sim(d)) if *id == d.id() => Ok(()),
            (StreamInner::Sim, EventInner::Sim(_), _) => {
                Err(RuntimeError::Config("a simulator stream was asked to wait for another simulator's event".into()))
            }
            (StreamInner::Cuda(_), EventInner::Sim(_), _) | (StreamInner::Sim, EventInner::Cuda(_), _) => {
                Err(RuntimeError::BackendMismatch { buffer: event.backend(), device: self.device.backend() })
            }
        }
    }

    /// Wait on the host until every launch queued so far is done; the first error of a launch
    /// whose guard was dropped without [`Launch::wait`] comes back here (faults, simulator
    /// findings), the others with it are dropped.
    pub fn synchronize(&self) -> Result<()> {
        if let StreamInner::Cuda(q) = &self.inner {
            q.stream().synchronize().map_err(driver_err("synchronizing a stream"))?;
        }
        let first = self.deferred.lock().unwrap_or_else(|p| p.into_inner()).drain(..).next();
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        // cudarc destroys the stream when its last `Arc` goes; queued work still completes.
        if let StreamInner::Cuda(q) = &self.inner {
            let _ = q.stream().synchronize();
        }
    }
}

/// A kernel as [`Stream::launch`] takes it: borrowed for the launch's life, or owned by it
/// (what the DSL's `launch_on` passes: its kernel is built for the call).
pub trait StreamKernel<'a> {
    fn into_cow(self) -> Cow<'a, Kernel>;
}

impl<'a> StreamKernel<'a> for &'a Kernel {
    fn into_cow(self) -> Cow<'a, Kernel> {
        Cow::Borrowed(self)
    }
}

impl<'a> StreamKernel<'a> for Kernel {
    fn into_cow(self) -> Cow<'a, Kernel> {
        Cow::Owned(self)
    }
}

/// A buffer the kernel may write, passed shared: an async launch must hold it exclusively.
fn check_exclusive(kernel: &Kernel, args: &[Arg]) -> Result<()> {
    for (i, (p, a)) in kernel.params().iter().zip(args).enumerate() {
        if let (phaser_codegen::ir::ParamKind::Global { mutable: true, .. }, Arg::Buffer { storage, .. }) = (&p.kind, a)
        {
            if !storage.is_exclusive() {
                return Err(RuntimeError::BadArgument {
                    kernel: kernel.name().to_owned(),
                    index: i,
                    param: p.name.clone(),
                    problem: "the kernel may write this buffer, so a stream launch needs it exclusively: pass \
                              `&mut buffer` (`Arg::buffer_mut`)"
                        .into(),
                });
            }
        }
    }
    Ok(())
}

/// What a launch left to wait for.
enum Pending<'a> {
    Cuda(&'a cuda::CudaDevice, cuda::Submitted),
    /// The simulator ran the launch already: its report, or its error (findings included).
    Sim(Result<Box<crate::sim::SimReport>>),
}

/// A launch in flight on a [`Stream`]. It holds the borrows of the launch's arguments (and of
/// the stream) until it is waited for or dropped; both wait for the kernel.
#[must_use = "a launch is waited for when its guard is dropped: keep it while other work proceeds, or `wait` for its report"]
pub struct Launch<'a> {
    stream: &'a Stream<'a>,
    kernel: Cow<'a, Kernel>,
    pending: Option<Pending<'a>>,
    _holds: Vec<LaunchHold>,
}

impl Launch<'_> {
    /// Wait for the kernel: its report (device time on the GPU, the simulator's report), or
    /// its error (a fault with the watchdog's record, the simulator's findings).
    pub fn wait(mut self) -> Result<LaunchReport> {
        let pending = self.pending.take().expect("a launch is waited for once");
        finish(self.stream, &self.kernel, pending)
    }

    /// Whether the kernel is done (never blocks; a fault shows as done, reported by `wait`).
    /// An untimed GPU launch counts as done once the stream's work queued before this call
    /// is: its stream records one event for it (and for every launch queued by then).
    pub fn is_done(&self) -> bool {
        match (&self.pending, &self.stream.inner) {
            (Some(Pending::Cuda(_, s)), StreamInner::Cuda(q)) => s.is_done(q),
            (Some(Pending::Cuda(..)), StreamInner::Sim) => unreachable!("a CUDA launch is on a CUDA stream"),
            (Some(Pending::Sim(_)) | None, _) => true,
        }
    }

    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

fn finish(stream: &Stream, kernel: &Kernel, pending: Pending) -> Result<LaunchReport> {
    match (pending, &stream.inner) {
        (Pending::Cuda(d, s), StreamInner::Cuda(q)) => Ok(LaunchReport { elapsed: d.wait(kernel, &s, q)?, sim: None }),
        (Pending::Cuda(..), StreamInner::Sim) => unreachable!("a CUDA launch is on a CUDA stream"),
        (Pending::Sim(r), _) => Ok(LaunchReport { elapsed: None, sim: Some(*r?) }),
    }
}

impl Drop for Launch<'_> {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.take() {
            if let Err(e) = finish(self.stream, &self.kernel, pending) {
                self.stream.deferred.lock().unwrap_or_else(|p| p.into_inner()).push(e);
            }
        }
    }
}
