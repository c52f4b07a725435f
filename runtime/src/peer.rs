//! Several devices: which device a device or a buffer is ([`DeviceId`]), enumeration, peer
//! access between devices and peer mappings ([`PeerView`]), the only way a kernel on one
//! device is given a buffer of another.
//!
//! A buffer passed to a launch must be the launching device's, or a peer mapping made for that
//! device (`buffer.peer(&device)`), which needs peer access enabled first
//! ([`Device::enable_peer_access`]); any other device's buffer is refused with
//! [`RuntimeError::WrongDevice`], naming the argument and both devices.
//!
//! On the GPU a peer mapping passes the peer's own address (unified addressing: every GPU's
//! memory has a distinct range), and the launch guard holds the borrow until the kernel is
//! done; cudarc's per-buffer events order work within one GPU only, so work of the owning GPU
//! on the buffer must be ordered with the peer's kernel by the application (events,
//! synchronize, or one group launch). In the simulator the devices of a system share one
//! memory (`sim/system.rs`), so the mapping is the peer's own address there too.

use crate::buffer::{Buffer, Storage};
use crate::device::{BufferArg, Device};
use crate::elem::Elem;
use crate::error::{Result, RuntimeError};
use crate::tensor_map::DeviceKey;
use crate::{cuda, sim};
use cudarc::driver::{DevicePtr, DeviceSlice};
use std::fmt;

/// Which device of its system a device is: the CUDA ordinal, or the simulated device's index
/// in its system (`Device::sim_system`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId(pub u32);

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device {}", self.0)
    }
}

/// The permission a peer mapping carries: which device may address the buffer, and the
/// address it uses there.
#[derive(Clone, Copy, Debug)]
pub struct PeerGrant {
    pub(crate) to: DeviceKey,
    pub(crate) to_id: DeviceId,
    pub(crate) addr: u64,
}

/// A buffer of one device mapped for kernels of another, borrowed shared (the kernel reads
/// it): made by [`Buffer::peer`], passed as an argument like the buffer (`&view`).
pub struct PeerView<'b, T: Elem> {
    pub(crate) buffer: &'b Buffer<T>,
    pub(crate) grant: PeerGrant,
}

/// [`PeerView`] borrowed exclusively: the peer's kernel may write it ([`Buffer::peer_mut`]).
pub struct PeerViewMut<'b, T: Elem> {
    pub(crate) buffer: &'b mut Buffer<T>,
    pub(crate) grant: PeerGrant,
}

impl<T: Elem> PeerView<'_, T> {
    /// The device the buffer is on.
    pub fn buffer_on(&self) -> DeviceId {
        self.buffer.device_id()
    }
    /// The device whose kernels may use the mapping.
    pub fn mapped_for(&self) -> DeviceId {
        self.grant.to_id
    }
}

impl<T: Elem> PeerViewMut<'_, T> {
    pub fn buffer_on(&self) -> DeviceId {
        self.buffer.device_id()
    }
    pub fn mapped_for(&self) -> DeviceId {
        self.grant.to_id
    }
}

impl<T: Elem> Buffer<T> {
    /// The device this buffer is on.
    pub fn device_id(&self) -> DeviceId {
        self.storage.as_arg().device_id()
    }

    /// This buffer mapped for kernels of `on`, a peer of its device (same system) that was
    /// given access to it ([`Device::enable_peer_access`]); a kernel on `on` reads it.
    pub fn peer(&self, on: &Device) -> Result<PeerView<'_, T>> {
        let grant = on.peer_grant(&self.storage)?;
        Ok(PeerView { buffer: self, grant })
    }

    /// [`Buffer::peer`] for a kernel that may write the buffer (borrowed exclusively).
    pub fn peer_mut(&mut self, on: &Device) -> Result<PeerViewMut<'_, T>> {
        let grant = on.peer_grant(&self.storage)?;
        Ok(PeerViewMut { buffer: self, grant })
    }
}

impl BufferArg<'_> {
    /// The device the argument's memory is on.
    pub fn device_id(&self) -> DeviceId {
        match self {
            BufferArg::Cuda(b) => DeviceId(b.context().ordinal() as u32),
            BufferArg::CudaMut(b) => DeviceId(b.context().ordinal() as u32),
            BufferArg::Sim(b) => DeviceId(b.ordinal),
            BufferArg::SimMut(b) => DeviceId(b.ordinal),
        }
    }
}

impl Device {
    /// This device's id among the devices of its system.
    pub fn id(&self) -> DeviceId {
        match self {
            Device::Cuda(d) => DeviceId(d.context().ordinal() as u32),
            Device::Sim(d) => DeviceId(d.ordinal()),
        }
    }

    /// How many CUDA GPUs this process sees (0 without a CUDA driver).
    pub fn count() -> Result<usize> {
        cuda::CudaDevice::count()
    }

    /// One device per CUDA GPU, in ordinal order (empty without a GPU).
    pub fn all() -> Result<Vec<Device>> {
        (0..Device::count()?).map(Device::cuda).collect()
    }

    /// `n` simulated devices of one system, device `i` at index `i` (`Device::id`): they
    /// share one simulated address space, may be given peer access to each other, and launch
    /// together ([`crate::launch_group`]), so a kernel on one can wait for a flag a kernel on
    /// another sets.
    pub fn sim_system(n: u32, cfg: sim::SimConfig) -> Vec<Device> {
        sim::SimDevice::system(cfg, n).into_iter().map(Device::Sim).collect()
    }

    /// Whether kernels on this device can be given access to `peer`'s memory (false for the
    /// device itself, for devices of other systems or backends).
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        match (self, peer) {
            (Device::Cuda(d), Device::Cuda(p)) => d.can_access_peer(p),
            (Device::Sim(d), Device::Sim(p)) => {
                Ok(d.system_ref().id() == p.system_ref().id() && d.system_ref().can_access(d.ordinal(), p.ordinal()))
            }
            _ => Ok(false),
        }
    }

    /// Let kernels on this device address `peer`'s memory (one direction: call it on `peer`
    /// too for the other). Enabling it twice is no error.
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        let refuse =
            |problem: String| RuntimeError::PeerAccess { from: self.id(), to: peer.id(), problem, source: None };
        if self.backend() != peer.backend() {
            return Err(RuntimeError::BackendMismatch { buffer: peer.backend(), device: self.backend() });
        }
        // The same simulated device, or two handles of one GPU.
        let same = self.key() == peer.key() || (self.is_gpu() && self.id() == peer.id());
        if same {
            return Err(refuse("a device always has access to its own memory: there is no peer to enable".into()));
        }
        if !self.can_access_peer(peer)? {
            return Err(refuse(match (self, peer) {
                (Device::Sim(..), _) => {
                    "the simulated devices belong to different systems (`Device::sim_system`)".into()
                }
                _ => "the driver reports no peer access between these GPUs (cuDeviceCanAccessPeer)".into(),
            }));
        }
        match (self, peer) {
            (Device::Cuda(d), Device::Cuda(p)) => d.enable_peer_access(p),
            (Device::Sim(d), Device::Sim(p)) => {
                d.system_ref().enable(d.ordinal(), p.ordinal());
                Ok(())
            }
            _ => unreachable!("backends compared above"),
        }
    }

    /// A tensor map over a peer's buffer for TMA loads by kernels on this device: `view` (a
    /// [`PeerView`] made for this device) viewed as [`Device::tensor_map`] views a buffer of
    /// its own, at the address the mapping gives. The only way to a map over another
    /// device's memory: [`Device::tensor_map`] refuses another device's buffer
    /// (`WrongDevice`), and so does this a view mapped for another device.
    pub fn tensor_map_peer<T: Elem>(
        &self,
        view: &PeerView<'_, T>,
        dims: &[u64],
        box_dims: &[u32],
        swizzle: crate::Swizzle,
    ) -> Result<crate::TensorMap> {
        if view.grant.to != self.key() {
            return Err(RuntimeError::WrongDevice {
                param: None,
                buffer_on: view.buffer_on(),
                used_on: self.id(),
                mapped_for: Some(view.grant.to_id),
            });
        }
        let desc = crate::tensor_map::TensorMapDesc::dense(T::TYPE, view.grant.addr, dims, box_dims, swizzle);
        self.tensor_map_from_desc(view.buffer, desc)
    }

    /// Copy a peer's buffer (`src`, a [`PeerView`] made for this device) into `dst` (this
    /// device's, same length), on this device's stream: on the GPU the driver's peer copy
    /// (cudarc's `memcpy_dtod` between contexts, `cuMemcpyPeerAsync`), timed with events as
    /// [`Device::copy`] times a local copy (the baseline of `bench_peer_copy`); the simulator
    /// copies the bytes and reports no time.
    pub fn copy_from_peer<T: Elem>(
        &self,
        src: &PeerView<'_, T>,
        dst: &mut Buffer<T>,
    ) -> Result<Option<std::time::Duration>> {
        if src.grant.to != self.key() {
            return Err(RuntimeError::WrongDevice {
                param: None,
                buffer_on: src.buffer_on(),
                used_on: self.id(),
                mapped_for: Some(src.grant.to_id),
            });
        }
        if src.buffer.len() != dst.len() {
            return Err(RuntimeError::SizeMismatch {
                what: "copying a peer's buffer into one of this device",
                expected: dst.len(),
                found: src.buffer.len(),
            });
        }
        self.buffer_addr(dst)?;
        let len = dst.len();
        match (self, &src.buffer.storage, &mut dst.storage) {
            (Device::Cuda(d), Storage::Cuda(s), Storage::Cuda(t)) => Ok(Some(d.copy_timed(s, t, len)?)),
            (Device::Sim(d), Storage::Sim(s), Storage::Sim(t)) => {
                let bytes = d.read_in_system(s);
                d.write(t, &bytes)?;
                Ok(None)
            }
            _ => Err(RuntimeError::BackendMismatch {
                buffer: src.buffer.storage.as_arg().backend(),
                device: self.backend(),
            }),
        }
    }

    /// Whether kernels on this device were given access to the memory of device `to`.
    fn peer_enabled(&self, to: DeviceId) -> bool {
        match self {
            Device::Cuda(d) => d.peer_enabled(to.0),
            Device::Sim(d) => d.system_ref().enabled(d.ordinal(), to.0),
        }
    }

    /// The grant of a peer mapping of `storage` for kernels of this device.
    pub(crate) fn peer_grant<T>(&self, storage: &Storage<T>) -> Result<PeerGrant> {
        let arg = storage.as_arg();
        if arg.backend() != self.backend() {
            return Err(RuntimeError::BackendMismatch { buffer: arg.backend(), device: self.backend() });
        }
        let on = arg.device_id();
        let refuse = |problem: String| RuntimeError::PeerAccess { from: self.id(), to: on, problem, source: None };
        if let (Device::Sim(d), Some(b)) = (self, arg.sim()) {
            if !d.same_system(b) {
                return Err(refuse("the buffer belongs to a simulated device of another system".into()));
            }
        }
        if on == self.id() {
            return Err(refuse("the buffer is on this device already: pass the buffer itself".into()));
        }
        if !self.peer_enabled(on) {
            return Err(refuse(format!(
                "peer access is not enabled: call `enable_peer_access` on {} with {on} first",
                self.id()
            )));
        }
        let addr = match storage {
            // The owner's own stream records the read: no stream of another GPU is used.
            Storage::Cuda(s) => s.device_ptr(DeviceSlice::stream(s)).0,
            Storage::Sim(b) => b.addr,
        };
        Ok(PeerGrant { to: self.key(), to_id: self.id(), addr })
    }

    /// The error for a buffer argument this device does not own and `grant` (its peer
    /// mapping, if any) does not let it use: another device of its system (`WrongDevice`),
    /// another system or a dropped device (`ForeignBuffer`), another backend.
    pub(crate) fn not_mine_storage(&self, storage: &BufferArg<'_>, grant: Option<&PeerGrant>) -> RuntimeError {
        let backend = storage.backend();
        if backend != self.backend() {
            return RuntimeError::BackendMismatch { buffer: backend, device: self.backend() };
        }
        let same_system = match self {
            Device::Sim(d) => storage.sim().is_some_and(|b| d.same_system(b)),
            // Every GPU of the process is one system.
            Device::Cuda(_) => true,
        };
        let on = storage.device_id();
        if same_system && on != self.id() {
            RuntimeError::WrongDevice {
                param: None,
                buffer_on: on,
                used_on: self.id(),
                mapped_for: grant.map(|g| g.to_id),
            }
        } else {
            RuntimeError::ForeignBuffer { backend, param: None }
        }
    }
}

impl<'a, 'b: 'a, T: Elem> From<&'a PeerView<'b, T>> for crate::Arg<'a> {
    fn from(v: &'a PeerView<'b, T>) -> Self {
        crate::Arg::Buffer {
            elem: T::TYPE,
            len: v.buffer.len(),
            storage: v.buffer.storage.as_arg(),
            peer: Some(v.grant),
        }
    }
}

impl<'a, 'b: 'a, T: Elem> From<&'a mut PeerViewMut<'b, T>> for crate::Arg<'a> {
    fn from(v: &'a mut PeerViewMut<'b, T>) -> Self {
        let len = v.buffer.len();
        crate::Arg::Buffer { elem: T::TYPE, len, storage: v.buffer.storage.as_arg_mut(), peer: Some(v.grant) }
    }
}

impl<T: Elem> fmt::Debug for PeerView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PeerView<{}>({} elements on {}, mapped for {})",
            T::TYPE,
            self.buffer.len(),
            self.buffer_on(),
            self.grant.to_id
        )
    }
}

impl<T: Elem> fmt::Debug for PeerViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PeerViewMut<{}>({} elements on {}, mapped for {})",
            T::TYPE,
            self.buffer.len(),
            self.buffer_on(),
            self.grant.to_id
        )
    }
}
