//! One error type for everything the runtime can report.

use phaser_codegen::CodegenError;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("no CUDA GPU is available: {0}")]
    NoGpu(String),
    #[error("CUDA driver error in {context}: {message}")]
    Driver { context: String, message: String },
    #[error("kernel `{kernel}` targets {target}, which cannot run on this device (compute capability {major}.{minor}); {hint}")]
    TargetMismatch { kernel: String, target: String, major: i32, minor: i32, hint: String },
    #[error("kernel `{kernel}`: argument {index} (`{param}`): {problem}")]
    BadArgument { kernel: String, index: usize, param: String, problem: String },
    #[error("kernel `{kernel}`: launch configuration: {problem}")]
    BadLaunch { kernel: String, problem: String },
    #[error("kernel `{kernel}` faulted on the device ({message}); if it waits on mbarriers, a watchdog timeout (likely deadlock) traps the kernel: run it in the simulator for a diagnosis. The fault is sticky: later CUDA calls in this process fail too, so start a new process")]
    KernelFault { kernel: String, message: String },
    #[error("buffer size mismatch: {0}")]
    BufferSize(String),
    #[error("tensor map: {0}")]
    TensorMap(String),
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// The simulator found a protocol error (deadlock, misuse, race); the report says where.
    #[error("{0}")]
    Simulation(String),
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
