//! One error type for everything the runtime can report, in the backend-neutral core: it
//! names no backend. A driver error stays attached as the `source` ([`BackendError`]); the
//! simulator's findings stay structured data (`crate::report`).

use crate::peer::DeviceId;
use crate::report::{Finding, SimReport};
use crate::watchdog::WatchdogReport;
use phaser_codegen::arch::SharedOverLimit;
use phaser_codegen::CodegenError;
use std::fmt;

/// The two backends a [`crate::Device`] or a [`crate::Buffer`] can belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cuda,
    Sim,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cuda => "CUDA GPU",
            Backend::Sim => "simulator",
        })
    }
}

/// The backend's own error under a [`RuntimeError`], kept as its `source`: for the CUDA
/// backend, cudarc's `DriverError` (`downcast_ref::<cudarc::driver::DriverError>()` reads it).
pub type BackendError = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    #[error("no CUDA GPU is available: {reason}")]
    NoGpu {
        reason: String,
        #[source]
        source: Option<BackendError>,
    },
    #[error("CUDA driver error while {context}: {source}")]
    Driver {
        context: String,
        #[source]
        source: BackendError,
    },
    #[error("kernel `{kernel}` targets {target}, which cannot run on this device (compute capability {major}.{minor}); {hint}")]
    TargetMismatch { kernel: String, target: String, major: i32, minor: i32, hint: String },
    #[error("kernel `{kernel}`: argument {index} (`{param}`): {problem}")]
    BadArgument { kernel: String, index: usize, param: String, problem: String },
    #[error("kernel `{kernel}`: launch configuration: {problem}")]
    BadLaunch { kernel: String, problem: String },
    /// The launch's shared memory exceeds the kernel's target limit (checked identically on
    /// both backends, before the GPU sees it).
    #[error(transparent)]
    SharedMemory(#[from] SharedOverLimit),
    /// The kernel faulted on the device. When a blocking wait's watchdog fired, `watchdog`
    /// names every starved wait (grouped by barrier and parity), the likely root and how to
    /// replay the launch in the simulator.
    #[error("{}", fault_text(kernel, message, watchdog.as_deref()))]
    KernelFault {
        kernel: String,
        message: String,
        watchdog: Option<Box<WatchdogReport>>,
        #[source]
        source: Option<BackendError>,
    },
    /// The driver's JIT rejected the PTX (its log says why).
    #[error("the CUDA JIT could not compile kernel `{kernel}`{}", if log.is_empty() { String::new() } else { format!(":\n{log}") })]
    Jit {
        kernel: String,
        log: String,
        #[source]
        source: Option<BackendError>,
    },
    /// Two buffers (or a buffer and host data) of different lengths.
    #[error("size mismatch {what}: {expected} elements expected, {found} given")]
    SizeMismatch { what: &'static str, expected: usize, found: usize },
    /// A buffer of one backend handed to a device of the other.
    #[error("a {buffer} buffer cannot be used by a {device} device")]
    BackendMismatch { buffer: Backend, device: Backend },
    /// A buffer of the same backend but another device (another simulator, another CUDA
    /// context, or a device that was dropped); `param` names the kernel argument it was
    /// passed as, at a launch.
    #[error("the buffer{} belongs to another {backend} device (or to one that was dropped)", param.as_ref().map(|p| format!(" passed as `{p}`")).unwrap_or_default())]
    ForeignBuffer { backend: Backend, param: Option<String> },
    /// A buffer of another device of the same system (another GPU of the process, another
    /// simulated device of the system), used without a peer mapping for this device: `param`
    /// names the kernel argument at a launch; `mapped_for` the device its peer mapping was
    /// made for, when it was passed through one.
    #[error("{}", wrong_device_text(param.as_deref(), *buffer_on, *used_on, *mapped_for))]
    WrongDevice { param: Option<String>, buffer_on: DeviceId, used_on: DeviceId, mapped_for: Option<DeviceId> },
    /// Peer access (or a peer mapping) between two devices that cannot have it, or before it
    /// was enabled.
    #[error("peer access from {from} to {to}'s memory: {problem}")]
    PeerAccess {
        from: DeviceId,
        to: DeviceId,
        problem: String,
        #[source]
        source: Option<BackendError>,
    },
    /// The NCCL library could not be loaded (or lacks what is needed); cudarc's error, if it
    /// gave one, is the source.
    #[error("NCCL is not available: {reason}")]
    NcclUnavailable {
        reason: String,
        #[source]
        source: Option<BackendError>,
    },
    /// An NCCL call failed (cudarc's `NcclError` is the source).
    #[error("NCCL error while {context}: {source}")]
    Nccl {
        context: String,
        #[source]
        source: BackendError,
    },
    /// An NVLink-multicast switch of NCCL turned on in the environment: multicast objects can
    /// take a shared host's GPUs out of service, so no communicator is made.
    #[error("the environment sets `{variable}={value}`: {why}; unset it or set it to 0 (NVLink multicast objects can take a shared host's GPUs out of service, so Phaser refuses to create an NCCL communicator with it on)")]
    NvlinkMulticast { variable: &'static str, value: String, why: &'static str },
    /// A tensor map made by another device: its addresses name that device's buffers.
    #[error("the tensor map for `{param}` was made by another device (a {made_on}), not this {device}; make it with this device's `tensor_map`")]
    ForeignTensorMap { param: String, made_on: Backend, device: Backend },
    /// A tensor map whose buffer was dropped: launching it would read freed memory.
    #[error("the tensor map for `{param}` views a buffer that was dropped; keep the buffer alive while its tensor maps are used")]
    DroppedBuffer { param: String },
    /// A buffer whose size in bytes overflows the address space (`len` x element size).
    #[error(
        "a buffer of {len} {elem} elements does not fit in memory: {len} x {size} bytes overflows the address space"
    )]
    BufferTooLarge { len: usize, elem: phaser_codegen::Type, size: u32 },
    /// An operation only one backend has.
    #[error("`{operation}` needs the {needs} backend, but the device is a {device}")]
    Unsupported { operation: &'static str, needs: Backend, device: Backend },
    /// A setting (environment variable, option) that cannot be used.
    #[error("configuration: {0}")]
    Config(String),
    /// A field of `SimConfig`, `LaunchConfig` or `EmitOptions` whose value cannot be used,
    /// named.
    #[error(transparent)]
    InvalidSetting(#[from] phaser_codegen::InvalidSetting),
    #[error("tensor map: {0}")]
    TensorMap(String),
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// The simulator found protocol errors (deadlock, misuse, race): the full report, findings
    /// as data; it displays as the readable report.
    #[error("{}", .0.text())]
    Simulation(Box<SimReport>),
    /// The simulator could not finish: a resource limit (memory, steps) was reached.
    #[error("{0}")]
    SimulatorLimit(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl RuntimeError {
    /// The simulator's findings when this is [`RuntimeError::Simulation`].
    pub fn findings(&self) -> Option<&[Finding]> {
        match self {
            RuntimeError::Simulation(r) => Some(&r.findings),
            _ => None,
        }
    }
}

/// What a fault says: the watchdog's record when there is one, and that the context is gone.
fn fault_text(kernel: &str, message: &str, record: Option<&WatchdogReport>) -> String {
    let what = match record {
        Some(r) => format!("kernel `{kernel}` deadlocked: the wait watchdog trapped it ({message}): {r}"),
        None => format!(
            "kernel `{kernel}` faulted on the device ({message}); if it waits on mbarriers or flags, a watchdog timeout \
             (likely deadlock) traps the kernel: run it in the simulator for a diagnosis"
        ),
    };
    format!(
        "{what}. The CUDA context is poisoned (the fault is sticky): every later CUDA call in this process \
         fails, so restart the process for further GPU work"
    )
}

/// What [`RuntimeError::WrongDevice`] says: where the buffer is, where it was used, how to
/// pass it.
fn wrong_device_text(param: Option<&str>, on: DeviceId, used_on: DeviceId, mapped_for: Option<DeviceId>) -> String {
    let what = param.map(|p| format!("the buffer passed as `{p}`")).unwrap_or_else(|| "the buffer".into());
    match mapped_for {
        Some(m) => format!(
            "{what} is on {on} and its peer mapping was made for {m}, but it is used on {used_on}: \
             map it for {used_on} (`buffer.peer(&device)`)"
        ),
        None => format!(
            "{what} is on {on}, but it is used on {used_on}: a kernel is given a peer's buffer only through a \
             peer mapping (`Device::enable_peer_access`, then `buffer.peer(&device)`)"
        ),
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
