//! NCCL collectives on Phaser buffers and streams, through cudarc's `nccl` module (NCCL is
//! loaded at run time: a build or a machine without it only gets
//! [`RuntimeError::NcclUnavailable`] when a communicator is asked for).
//!
//! One [`Communicator`] per GPU, one thread per GPU: every rank's thread calls
//! [`Communicator::new`] with the same [`NcclId`] (it returns once all ranks joined), or
//! [`run_ranks`] does it for the devices of this process. Collectives are queued on the rank's
//! Phaser stream and return a [`Collective`] guard that holds the buffers' borrows (shared
//! for what is sent, exclusive for what is received) until the work is done, as a
//! [`crate::Launch`] does; cudarc records each buffer's use, so a forgotten guard still
//! orders later use of the memory after the collective.
//!
//! Safety of a shared host: NVLink multicast objects (NCCL's NVLS algorithms) can take a shared
//! host's GPUs out of service, so before a communicator is made [`check_multicast_env`] sets
//! `NCCL_NVLS_ENABLE=0` when it is unset and refuses any multicast switch turned on.

use crate::buffer::{Buffer, Storage};
use crate::cuda::driver_err;
use crate::device::Device;
use crate::elem::Elem;
use crate::error::{Backend, Result, RuntimeError};
use crate::stream::Stream;
use cudarc::driver::CudaSlice;
use cudarc::nccl::result::NcclError;
use cudarc::nccl::safe::{Comm, Id, NcclType, ReduceOp as CudarcReduceOp};
use std::fmt;
use std::marker::PhantomData;

/// NCCL's switches that turn NVLink multicast on, with why each is refused. The first,
/// `NCCL_NVLS_ENABLE`, is set to 0 when unset (NCCL's default would be on where the hardware
/// has NVLS); a switch set to anything but 0 is refused.
pub const MULTICAST_SWITCHES: [(&str, &str); 2] = [
    ("NCCL_NVLS_ENABLE", "NCCL's NVLS (NVLink SHARP) algorithms create NVLink multicast objects"),
    ("NCCL_NVLSTREE_ENABLE", "NCCL's NVLS trees create NVLink multicast objects"),
];

/// Keep NVLink multicast off before NCCL reads the environment: set `NCCL_NVLS_ENABLE=0` if it
/// is unset, refuse every switch of [`MULTICAST_SWITCHES`] set to anything but 0, naming it.
/// (Setting a variable races with other threads reading the environment: call it, or make
/// the first communicator, before starting threads that do.)
pub fn check_multicast_env() -> Result<()> {
    for (i, (variable, why)) in MULTICAST_SWITCHES.iter().enumerate() {
        match std::env::var(variable) {
            Ok(v) if v.trim() == "0" => {}
            Ok(value) => return Err(RuntimeError::NvlinkMulticast { variable, value, why }),
            Err(std::env::VarError::NotUnicode(v)) => {
                return Err(RuntimeError::NvlinkMulticast { variable, value: v.to_string_lossy().into_owned(), why })
            }
            Err(std::env::VarError::NotPresent) if i == 0 => std::env::set_var(variable, "0"),
            Err(std::env::VarError::NotPresent) => {}
        }
    }
    Ok(())
}

/// cudarc's NCCL error as a [`std::error::Error`] (the source of [`RuntimeError::Nccl`]):
/// `.0` is cudarc's error, its `.0` NCCL's result code.
#[derive(Debug)]
pub struct NcclCallError(pub NcclError);

impl fmt::Display for NcclCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NCCL returned {:?}", (self.0).0)
    }
}

impl std::error::Error for NcclCallError {}

fn nccl_err(context: impl Into<String>) -> impl FnOnce(NcclError) -> RuntimeError {
    let context = context.into();
    move |e| RuntimeError::Nccl { context, source: Box::new(NcclCallError(e)) }
}

/// Whether NCCL loads; the error names what is missing.
fn require_nccl() -> Result<()> {
    if crate::cuda::libnccl_present() {
        Ok(())
    } else {
        Err(RuntimeError::NcclUnavailable {
            reason: "the NCCL library (libnccl.so.2) was not found on the loader's path; pip's nvidia-nccl-cu13 \
                     wheel has it in nvidia/nccl/lib (add that to LD_LIBRARY_PATH)"
                .into(),
            source: None,
        })
    }
}

/// What every rank of a communicator must be given: made once (by rank 0, or by the process
/// that starts the threads) and handed to every rank.
#[derive(Clone, Copy)]
pub struct NcclId(Id);

impl NcclId {
    pub fn new() -> Result<NcclId> {
        require_nccl()?;
        check_multicast_env()?;
        Id::new().map(NcclId).map_err(nccl_err("making a communicator id (ncclGetUniqueId)"))
    }

    /// Its bytes, to send to ranks of other processes.
    pub fn bytes(&self) -> [std::ffi::c_char; 128] {
        *self.0.internal()
    }

    /// The id another process made, from its [`NcclId::bytes`].
    pub fn from_bytes(bytes: [std::ffi::c_char; 128]) -> NcclId {
        NcclId(Id::uninit(bytes))
    }
}

/// How a reduction combines the ranks' elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    Avg,
}

impl ReduceOp {
    fn cudarc(self) -> CudarcReduceOp {
        match self {
            ReduceOp::Sum => CudarcReduceOp::Sum,
            ReduceOp::Prod => CudarcReduceOp::Prod,
            ReduceOp::Max => CudarcReduceOp::Max,
            ReduceOp::Min => CudarcReduceOp::Min,
            ReduceOp::Avg => CudarcReduceOp::Avg,
        }
    }
}

/// An element type NCCL moves and reduces.
pub trait NcclElem: Elem + NcclType {}
impl<T: Elem + NcclType> NcclElem for T {}

/// One rank of an NCCL communicator: its GPU's collectives, queued on a Phaser stream.
pub struct Communicator<'s> {
    comm: Comm,
    stream: &'s Stream<'s>,
}

impl<'s> Communicator<'s> {
    /// Join the communicator `id` as `rank` of `world_size`, queuing on `stream` (a stream of
    /// a CUDA device); returns once every rank joined, so each rank calls it on its own
    /// thread.
    pub fn new(stream: &'s Stream<'s>, rank: usize, world_size: usize, id: NcclId) -> Result<Communicator<'s>> {
        let Some(cu) = stream.as_cuda() else {
            return Err(RuntimeError::Unsupported {
                operation: "Communicator::new",
                needs: Backend::Cuda,
                device: stream.device().backend(),
            });
        };
        if rank >= world_size {
            return Err(RuntimeError::Config(format!("NCCL rank {rank} of a communicator of {world_size} ranks")));
        }
        require_nccl()?;
        check_multicast_env()?;
        cu.context().bind_to_thread().map_err(driver_err("binding the CUDA context for NCCL"))?;
        let comm = Comm::from_rank(cu.clone(), rank, world_size, id.0)
            .map_err(nccl_err(format!("joining the communicator as rank {rank} of {world_size} (ncclCommInitRank)")))?;
        Ok(Communicator { comm, stream })
    }

    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub fn world_size(&self) -> usize {
        self.comm.world_size()
    }

    pub fn stream(&self) -> &'s Stream<'s> {
        self.stream
    }

    /// `buf`'s cudarc memory, when it is on this rank's GPU.
    fn mine<'b, T: Elem>(&self, buf: &'b Buffer<T>) -> Result<&'b CudaSlice<T>> {
        let dev = self.stream.device();
        match (dev, &buf.storage) {
            (Device::Cuda(d), Storage::Cuda(s)) if d.owns(s.context()) => Ok(s),
            _ => Err(dev.not_mine_storage(&buf.storage.as_arg(), None)),
        }
    }

    fn mine_mut<'b, T: Elem>(&self, buf: &'b mut Buffer<T>) -> Result<&'b mut CudaSlice<T>> {
        self.mine(buf)?;
        match &mut buf.storage {
            Storage::Cuda(s) => Ok(s),
            Storage::Sim(_) => unreachable!("checked a CUDA buffer above"),
        }
    }

    /// The first `len` elements of a buffer (a CUDA allocation holds at least one element).
    fn sizes(what: &'static str, expected: usize, found: usize) -> Result<()> {
        if expected == found {
            Ok(())
        } else {
            Err(RuntimeError::SizeMismatch { what, expected, found })
        }
    }

    /// `recv = op` over every rank's `send` (same length on every rank).
    pub fn all_reduce<'a, T: NcclElem>(
        &'a self,
        send: &'a Buffer<T>,
        recv: &'a mut Buffer<T>,
        op: ReduceOp,
    ) -> Result<Collective<'a>> {
        Self::sizes("an all-reduce's receive buffer against its send buffer", send.len(), recv.len())?;
        let (s, r) = (self.mine(send)?, self.mine_mut(recv)?);
        let n = send.len();
        self.comm
            .all_reduce(&s.slice(..n), &mut r.slice_mut(..n), &op.cudarc())
            .map_err(nccl_err("queuing an all-reduce (ncclAllReduce)"))?;
        Collective::queued(self.stream)
    }

    /// Every rank's `send` one after the other, in rank order, into `recv` (world size x
    /// `send.len()` elements).
    pub fn all_gather<'a, T: NcclElem>(
        &'a self,
        send: &'a Buffer<T>,
        recv: &'a mut Buffer<T>,
    ) -> Result<Collective<'a>> {
        Self::sizes(
            "an all-gather's receive buffer (world size x the send buffer)",
            send.len() * self.world_size(),
            recv.len(),
        )?;
        let n = recv.len();
        let (s, r) = (self.mine(send)?, self.mine_mut(recv)?);
        self.comm
            .all_gather(&s.slice(..send.len()), &mut r.slice_mut(..n))
            .map_err(nccl_err("queuing an all-gather (ncclAllGather)"))?;
        Collective::queued(self.stream)
    }

    /// `op` over every rank's `send`, rank `i` receiving the `i`-th part (`send` is world
    /// size x `recv.len()` elements).
    pub fn reduce_scatter<'a, T: NcclElem>(
        &'a self,
        send: &'a Buffer<T>,
        recv: &'a mut Buffer<T>,
        op: ReduceOp,
    ) -> Result<Collective<'a>> {
        Self::sizes(
            "a reduce-scatter's send buffer (world size x the receive buffer)",
            recv.len() * self.world_size(),
            send.len(),
        )?;
        let n = recv.len();
        let (s, r) = (self.mine(send)?, self.mine_mut(recv)?);
        self.comm
            .reduce_scatter(&s.slice(..send.len()), &mut r.slice_mut(..n), &op.cudarc())
            .map_err(nccl_err("queuing a reduce-scatter (ncclReduceScatter)"))?;
        Collective::queued(self.stream)
    }

    /// Send `send` to rank `peer` (which receives it with [`Communicator::recv`]).
    pub fn send<'a, T: NcclElem>(&'a self, send: &'a Buffer<T>, peer: usize) -> Result<Collective<'a>> {
        self.peer_rank(peer)?;
        let s = self.mine(send)?;
        self.comm
            .send(&s.slice(..send.len()), peer as i32)
            .map_err(nccl_err(format!("queuing a send to rank {peer} (ncclSend)")))?;
        Collective::queued(self.stream)
    }

    /// Receive into `recv` what rank `peer` sends.
    pub fn recv<'a, T: NcclElem>(&'a self, recv: &'a mut Buffer<T>, peer: usize) -> Result<Collective<'a>> {
        self.peer_rank(peer)?;
        let n = recv.len();
        let r = self.mine_mut(recv)?;
        self.comm
            .recv(&mut r.slice_mut(..n), peer as i32)
            .map_err(nccl_err(format!("queuing a receive from rank {peer} (ncclRecv)")))?;
        Collective::queued(self.stream)
    }

    fn peer_rank(&self, peer: usize) -> Result<()> {
        if peer >= self.world_size() || peer == self.rank() {
            return Err(RuntimeError::Config(format!(
                "rank {} cannot exchange with rank {peer} in a communicator of {} ranks",
                self.rank(),
                self.world_size()
            )));
        }
        Ok(())
    }
}

/// One rank per device, each on its own thread with a stream of its device: `f` runs on every
/// rank (rank `i` on `devices[i]`) and the results come back in rank order (the first error,
/// if any).
pub fn run_ranks<R: Send>(devices: &[Device], f: impl Fn(&Communicator<'_>) -> Result<R> + Sync) -> Result<Vec<R>> {
    let id = NcclId::new()?;
    let n = devices.len();
    std::thread::scope(|s| {
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(rank, dev)| {
                let f = &f;
                s.spawn(move || {
                    let stream = dev.stream()?;
                    let comm = Communicator::new(&stream, rank, n, id)?;
                    f(&comm)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// A queued collective: holds its buffers' borrows until [`Collective::wait`] (or drop, which
/// waits too) sees the stream's work up to it done.
#[must_use = "dropping the guard waits for the collective"]
pub struct Collective<'a> {
    event: Option<cudarc::driver::CudaEvent>,
    _borrows: PhantomData<&'a mut ()>,
}

impl<'a> Collective<'a> {
    fn queued(stream: &Stream<'_>) -> Result<Collective<'a>> {
        let cu = stream.as_cuda().expect("a communicator's stream is a CUDA stream");
        let event = cu.record_event(None).map_err(driver_err("recording a collective's completion event"))?;
        Ok(Collective { event: Some(event), _borrows: PhantomData })
    }

    /// Wait until the collective is done (its errors surface here).
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        match self.event.take() {
            Some(e) => e.synchronize().map_err(driver_err("waiting for a collective")),
            None => Ok(()),
        }
    }
}

impl Drop for Collective<'_> {
    fn drop(&mut self) {
        // An error here shows again at the stream's next synchronizing call.
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one test of this binary that touches NCCL's variables (the environment is the
    /// process's).
    #[test]
    fn multicast_switches_are_kept_off() {
        std::env::remove_var("NCCL_NVLS_ENABLE");
        std::env::remove_var("NCCL_NVLSTREE_ENABLE");
        check_multicast_env().unwrap();
        assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"), "unset, it is turned off");
        assert!(std::env::var("NCCL_NVLSTREE_ENABLE").is_err(), "only NVLS itself is set");
        for (variable, value) in [("NCCL_NVLS_ENABLE", "1"), ("NCCL_NVLS_ENABLE", "2"), ("NCCL_NVLSTREE_ENABLE", "1")] {
            std::env::set_var(variable, value);
            let e = check_multicast_env().unwrap_err();
            match &e {
                RuntimeError::NvlinkMulticast { variable: v, value: got, .. } => {
                    assert_eq!((*v, got.as_str()), (variable, value))
                }
                other => panic!("{other}"),
            }
            assert!(e.to_string().starts_with(&format!("the environment sets `{variable}={value}`")), "{e}");
            std::env::set_var(variable, "0");
        }
        check_multicast_env().unwrap();
        std::env::remove_var("NCCL_NVLSTREE_ENABLE");
    }
}
