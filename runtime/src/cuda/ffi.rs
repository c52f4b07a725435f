//! The raw CUDA driver calls the backend makes beyond cudarc's safe layer, each behind a safe
//! function whose inputs make the call sound: the one module of the CUDA backend with
//! `unsafe`, so the policy modules (`jit`, `launch`, `tensor_map`, `record`, `device`) hold
//! none. Every function checks what its `// SAFETY:` argument relies on, or takes it by type.

use super::CudaBuf;
use crate::launch::LaunchConfig;
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream, DeviceRepr, DriverError, PushKernelArg};
use phaser_codegen::ir::{Param, ParamKind};
use std::ffi::{c_void, CStr};
use std::sync::Arc;

/// The error a wrapper returns for inputs it refuses before calling the driver (the driver's
/// own code for them).
fn invalid() -> DriverError {
    DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)
}

/// Whether the dynamic loader finds libcuda (with dynamic loading cudarc panics on first use
/// when it is missing, so this is asked before anything else).
#[cfg(feature = "dynamic-loading")]
pub(crate) fn libcuda_present() -> bool {
    // SAFETY: only asks the dynamic loader whether the library loads; no driver call is made.
    unsafe { sys::is_culib_present() }
}

/// With libcuda linked (another crate chose cudarc's `dynamic-linking`), the program would
/// not have started without it.
#[cfg(not(feature = "dynamic-loading"))]
pub(crate) fn libcuda_present() -> bool {
    true
}

/// Whether the dynamic loader finds NCCL (cudarc panics on first use when it is missing).
#[cfg(all(feature = "nccl", feature = "dynamic-loading"))]
pub(crate) fn libnccl_present() -> bool {
    // SAFETY: only asks the dynamic loader whether the library loads; no NCCL call is made.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// With the libraries linked, the program would not have started without NCCL.
#[cfg(all(feature = "nccl", not(feature = "dynamic-loading")))]
pub(crate) fn libnccl_present() -> bool {
    true
}

/// The driver's CUDA version (`cuDriverGetVersion`: 13000 for 13.0).
pub(crate) fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0;
    // SAFETY: the driver writes one int through the pointer, which is live for the call.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// Whether `from`'s GPU can address `to`'s memory (`cuDeviceCanAccessPeer`).
pub(crate) fn can_access_peer(from: &CudaContext, to: &CudaContext) -> Result<bool, DriverError> {
    let mut can = 0;
    // SAFETY: both device handles come from live contexts; the driver writes one int through
    // the pointer, which is live for the call.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, from.cu_device(), to.cu_device()) }.result()?;
    Ok(can != 0)
}

/// Let kernels of context `from` address the memory of context `to`
/// (`cuCtxEnablePeerAccess`, flags 0); already enabled is success.
pub(crate) fn enable_peer_access(from: &CudaContext, to: &CudaContext) -> Result<(), DriverError> {
    from.bind_to_thread()?;
    // SAFETY: `to`'s handle is a live context (its `Arc` is borrowed for the call); the call
    // acts on the current context, `from`, bound just above; flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(to.cu_ctx(), 0) }.result() {
        Err(DriverError(sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)) => Ok(()),
        other => other,
    }
}

/// Why a link with the driver's JIT linker failed.
pub(crate) enum LinkError {
    /// `cuLinkCreate` itself failed.
    Create(DriverError),
    /// Adding or linking the PTX failed (`source: None`: the linker returned no cubin); the
    /// linker's error log.
    Link { log: String, source: Option<DriverError> },
}

/// Link `ptx` (named `name` in messages) with the driver's JIT linker: line info when asked,
/// for `target` when given (else the context's device); the cubin's bytes. Needs a current
/// context.
pub(crate) fn link_ptx(
    ptx: &CStr,
    name: &CStr,
    line_info: bool,
    target: Option<sys::CUjit_target>,
) -> Result<Vec<u8>, LinkError> {
    use sys::CUjit_option as O;
    const LOG: usize = 16 * 1024;
    let mut error_log = vec![0u8; LOG];
    let mut options = vec![O::CU_JIT_ERROR_LOG_BUFFER, O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    // Option values are pointer-sized: integers travel as the pointer's value.
    let mut values: Vec<*mut c_void> = vec![error_log.as_mut_ptr().cast(), std::ptr::without_provenance_mut(LOG)];
    if line_info {
        options.push(O::CU_JIT_GENERATE_LINE_INFO);
        values.push(std::ptr::without_provenance_mut(1));
    }
    if let Some(target) = target {
        options.push(O::CU_JIT_TARGET);
        values.push(std::ptr::without_provenance_mut(target as usize));
    }
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: `options` and `values` have the same length, pair up one for one, and outlive the
    // link state (the error log buffer, `LOG` bytes as its size option says, is written until
    // cuLinkDestroy below); `state` receives the new link state.
    unsafe { sys::cuLinkCreate_v2(options.len() as u32, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }
        .result()
        .map_err(LinkError::Create)?;
    let linked = (|| {
        // SAFETY: `state` is live; `ptx` is NUL-terminated and the size includes the NUL, as
        // cuLinkAddData wants for PTX; `name` is NUL-terminated; no per-input options.
        unsafe {
            sys::cuLinkAddData_v2(
                state,
                sys::CUjitInputType::CU_JIT_INPUT_PTX,
                ptx.as_ptr() as *mut c_void,
                ptx.to_bytes_with_nul().len(),
                name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(Some)?;
        let mut cubin: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: `state` is live; the driver writes the output's address and size, which
        // point into the link state and are copied below, before cuLinkDestroy.
        unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) }.result().map_err(Some)?;
        if cubin.is_null() {
            return Err(None);
        }
        // SAFETY: the driver returned `size` bytes at `cubin` (not null), valid until
        // cuLinkDestroy; they are copied out at once.
        Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
    })();
    // SAFETY: `state` is live and destroyed once, here, after its output was copied.
    let _ = unsafe { sys::cuLinkDestroy(state) }.result();
    linked.map_err(|source| {
        let log = &error_log[..error_log.iter().position(|&b| b == 0).unwrap_or(LOG)];
        LinkError::Link { log: String::from_utf8_lossy(log).trim().to_string(), source }
    })
}

/// What `cuTensorMapEncodeTiled` needs to describe a tensor in global memory.
pub(crate) struct TiledMap<'a> {
    pub dtype: sys::CUtensorMapDataType,
    pub base: u64,
    /// Extent of each dimension, innermost first (1 to 5 of them).
    pub dims: &'a [u64],
    /// Byte stride of each dimension but the innermost (`dims.len() - 1` of them).
    pub strides: &'a [u64],
    /// The box copied per request: one extent per dimension.
    pub box_dims: &'a [u32],
    pub swizzle: sys::CUtensorMapSwizzle,
}

/// Encode a tensor map with the driver (`cuTensorMapEncodeTiled`): the 128 bytes a kernel
/// receives by value. Array lengths that do not fit the rank are refused before the call.
pub(crate) fn encode_tiled(m: &TiledMap) -> Result<[u64; 16], DriverError> {
    let rank = m.dims.len();
    if !(1..=5).contains(&rank) || m.box_dims.len() != rank || m.strides.len() != rank - 1 {
        return Err(invalid());
    }
    let elem_strides = vec![1u32; rank];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: `dims`, `box_dims` and `elem_strides` hold `rank` entries and `strides`
    // `rank - 1`, checked above, the lengths the driver reads for `rank`; `map` is a 128-byte,
    // 64-byte-aligned `CUtensorMap` the driver writes; the base address is only recorded.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            m.dtype,
            rank as u32,
            m.base as *mut c_void,
            m.dims.as_ptr(),
            m.strides.as_ptr(),
            m.box_dims.as_ptr(),
            elem_strides.as_ptr(),
            sys::CUtensorMapInterleave_enum::CU_TENSOR_MAP_INTERLEAVE_NONE,
            m.swizzle,
            sys::CUtensorMapL2promotion_enum::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill_enum::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()?;
    Ok(map.opaque)
}

/// A `CUtensorMap` passed by value: 128 bytes, 64-byte aligned, like the PTX parameter.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct TensorMapParam(pub [u64; 16]);
// SAFETY: plain bytes with the size and alignment the kernel's `.param .align 64 .b8 [128]`
// declares; any bit pattern is a valid value.
unsafe impl DeviceRepr for TensorMapParam {}

/// One kernel parameter as the driver receives it.
pub(crate) enum Slot<'a> {
    U16(u16),
    U32(u32),
    U64(u64),
    Map(TensorMapParam),
    Buffer(CudaBuf<'a>),
}

/// Whether `slots` are, one for one, what `params` declare. The kernel reads each parameter
/// at its declared size, so a launch with fewer or smaller values would read past them.
fn slots_match(params: &[Param], slots: &[Slot]) -> bool {
    params.len() == slots.len()
        && params.iter().zip(slots).all(|(p, s)| match (&p.kind, s) {
            (ParamKind::Scalar(t), Slot::U16(_)) => t.size() == 2,
            (ParamKind::Scalar(t), Slot::U32(_)) => t.size() == 4,
            (ParamKind::Scalar(t), Slot::U64(_)) => t.size() == 8,
            (ParamKind::Global { .. }, Slot::Buffer(_)) | (ParamKind::TensorMap { .. }, Slot::Map(_)) => true,
            (ParamKind::Scalar(_) | ParamKind::Global { .. } | ParamKind::TensorMap { .. }, _) => false,
        })
}

/// Launch `f` (whose parameters are `params`) on `stream` through cudarc's launch builder.
/// Slots that do not match the parameters are refused before the driver sees them. Buffers
/// are pushed as cudarc orders them: a read waits for the buffer's last write and records a
/// read, a write waits for both and records a write; an exclusive buffer used as a read (by a
/// launch that waits) travels as its address, its read recorded after the launch.
pub(crate) fn launch(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    params: &[Param],
    slots: &mut [Slot],
    cfg: &LaunchConfig,
) -> Result<(), DriverError> {
    if !slots_match(params, slots) {
        return Err(invalid());
    }
    let mut addrs = Vec::new();
    let mut guards = Vec::new();
    for s in slots.iter() {
        if let Slot::Buffer(CudaBuf::ReadExclusive(b)) = s {
            let b: &dyn super::CudaBufferArgMut = *b;
            let (addr, guard) = b.device_addr(stream);
            addrs.push(addr);
            guards.push(guard);
        }
    }
    let mut b = stream.launch_builder(f);
    let mut next_addr = addrs.iter();
    for s in slots.iter_mut() {
        match s {
            Slot::U16(v) => {
                b.arg(&*v);
            }
            Slot::U32(v) => {
                b.arg(&*v);
            }
            Slot::U64(v) => {
                b.arg(&*v);
            }
            Slot::Map(v) => {
                b.arg(&*v);
            }
            Slot::Buffer(CudaBuf::Read(s)) => s.push_arg(&mut b),
            Slot::Buffer(CudaBuf::Write(s)) => s.push_arg_mut(&mut b),
            Slot::Buffer(CudaBuf::ReadExclusive(_)) => {
                b.arg(next_addr.next().expect("one address per exclusive read, collected above"));
            }
            Slot::Buffer(CudaBuf::Address(a)) => {
                b.arg(&*a);
            }
        }
    }
    let lc = cudarc::driver::LaunchConfig {
        grid_dim: (cfg.grid[0], cfg.grid[1], cfg.grid[2]),
        block_dim: (cfg.block[0], cfg.block[1], cfg.block[2]),
        shared_mem_bytes: cfg.dynamic_shared_bytes,
    };
    // SAFETY: the builder holds one argument per kernel parameter, each of the parameter's
    // size and kind (`slots_match` above; a buffer is its 8-byte address); the slots and
    // addresses outlive the call, which copies them; every buffer belongs to this stream's
    // context (the device resolved them).
    unsafe { b.launch(lc) }.map(|_| ())?;
    drop(guards);
    Ok(())
}

/// Launch `f` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` through
/// `cuLaunchKernelEx` (cudarc's launch builder has no launch attributes). Slots that do not
/// match the parameters are refused before the driver sees them.
pub(crate) fn launch_dependent(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    params: &[Param],
    slots: &mut [Slot],
    cfg: &LaunchConfig,
) -> Result<(), DriverError> {
    if !slots_match(params, slots) {
        return Err(invalid());
    }
    ctx.bind_to_thread()?;
    // Each parameter's bytes live in `values` (scalars, buffer addresses) or in `maps` (tensor
    // maps, copied out of the slots) until the call returns; `pointers` points at them.
    let mut values: Vec<u64> = Vec::with_capacity(slots.len());
    let mut maps: Vec<TensorMapParam> = Vec::new();
    let mut guards = Vec::new();
    for s in slots.iter_mut() {
        values.push(match s {
            Slot::U16(v) => *v as u64,
            Slot::U32(v) => *v as u64,
            Slot::U64(v) => *v,
            Slot::Map(m) => {
                maps.push(*m);
                0
            }
            Slot::Buffer(b) => {
                let (addr, guard) = match b {
                    CudaBuf::Read(b) => b.device_addr(stream),
                    CudaBuf::ReadExclusive(b) => b.device_addr(stream),
                    CudaBuf::Write(b) => b.device_addr_mut(stream),
                    CudaBuf::Address(a) => (*a, cudarc::driver::SyncOnDrop::Record(None)),
                };
                guards.push(guard);
                addr
            }
        });
    }
    let mut next_map = maps.iter();
    let mut pointers: Vec<*mut c_void> = params
        .iter()
        .zip(values.iter_mut())
        .map(|(p, v)| match p.kind {
            ParamKind::TensorMap { .. } => {
                next_map.next().expect("one map per map parameter (slots_match)") as *const TensorMapParam
                    as *mut c_void
            }
            // Little-endian: a u16/u32 parameter reads the low bytes of its u64.
            ParamKind::Scalar(_) | ParamKind::Global { .. } => v as *mut u64 as *mut c_void,
        })
        .collect();
    // The value is a C union: zeroed through its padding member, then the member the id
    // selects is set (writing a union member is safe; only reading one is not).
    let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
    value.programmaticStreamSerializationAllowed = 1;
    let mut attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid[0],
        gridDimY: cfg.grid[1],
        gridDimZ: cfg.grid[2],
        blockDimX: cfg.block[0],
        blockDimY: cfg.block[1],
        blockDimZ: cfg.block[2],
        sharedMemBytes: cfg.dynamic_shared_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    // SAFETY: `pointers` holds one pointer per kernel parameter (`slots_match` above), each to
    // a live value of at least the parameter's size (scalars little-endian in a u64, tensor
    // maps the 128-byte slot), all outliving the call, which copies them; `config` and `attr`
    // outlive it too; the buffers belong to this context (the device resolved them).
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), pointers.as_mut_ptr(), std::ptr::null_mut()) }.result()?;
    drop(guards);
    Ok(())
}

/// `N` words of pinned host memory mapped into the device's address space: the device writes
/// them through [`MappedWords::device_addr`], the host reads them even after a kernel fault
/// poisoned the context (no copy from device memory is needed).
pub(crate) struct MappedWords<const N: usize> {
    host: *mut u32,
    device_addr: u64,
    ctx: Arc<CudaContext>,
}

// SAFETY: the words are plain host memory owned by this value (freed once, in `drop`); the
// pointer is not tied to the thread that allocated it (PORTABLE: every context may use it).
// Moving the value to another thread moves that ownership; `&self` methods only do volatile
// word accesses, and sharing across threads is not offered (no `Sync`: users wrap it in a
// mutex, as `CudaDevice` does).
unsafe impl<const N: usize> Send for MappedWords<N> {}

impl<const N: usize> MappedWords<N> {
    /// Allocate and map the words (zeroed) in `ctx`.
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<MappedWords<N>, DriverError> {
        ctx.bind_to_thread()?;
        let mut host = std::ptr::null_mut();
        // SAFETY: `host` receives a fresh allocation of `N * 4` bytes; DEVICEMAP maps it into
        // the device's address space, PORTABLE into every context.
        unsafe {
            sys::cuMemHostAlloc(&mut host, N * 4, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE)
        }
        .result()?;
        // From here on `drop` frees the allocation, whatever fails next.
        let mut words = MappedWords { host: host.cast(), device_addr: 0, ctx: ctx.clone() };
        // SAFETY: `host` is the mapped allocation made above; the flags must be 0.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut words.device_addr, host, 0) }.result()?;
        words.clear();
        Ok(words)
    }

    /// The address kernels write the words at.
    pub(crate) fn device_addr(&self) -> u64 {
        self.device_addr
    }

    /// Zero every word.
    pub(crate) fn clear(&self) {
        for i in 0..N {
            // SAFETY: `i` < N, the allocation's length in words; volatile, because the device
            // writes the same memory behind the compiler's back.
            unsafe { self.host.add(i).write_volatile(0) };
        }
    }

    /// Zero the words at `indices` (those past the end are ignored).
    pub(crate) fn zero(&self, indices: impl IntoIterator<Item = usize>) {
        for i in indices.into_iter().filter(|&i| i < N) {
            // SAFETY: as in `clear`: `i` < N.
            unsafe { self.host.add(i).write_volatile(0) };
        }
    }

    /// The words as the device left them.
    pub(crate) fn read(&self) -> [u32; N] {
        let mut w = [0u32; N];
        for (i, x) in w.iter_mut().enumerate() {
            // SAFETY: as in `clear`.
            *x = unsafe { self.host.add(i).read_volatile() };
        }
        w
    }
}

impl<const N: usize> Drop for MappedWords<N> {
    fn drop(&mut self) {
        // A poisoned context may refuse; the process is about to restart GPU work anyway.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: `host` came from cuMemHostAlloc and is freed once, here.
        let _ = unsafe { sys::cuMemFreeHost(self.host.cast()) }.result();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phaser_codegen::builder::KernelBuilder;
    use phaser_codegen::{Target, Type};

    fn params(types: &[Type]) -> Vec<Param> {
        let mut k = KernelBuilder::new("p", Target::Sm90a);
        for (i, t) in types.iter().enumerate() {
            k.param(&format!("x{i}"), *t);
        }
        k.finish().unwrap().params().to_vec()
    }

    #[test]
    fn slots_must_match_the_parameters_one_for_one() {
        let p = params(&[Type::U16, Type::F32, Type::U64]);
        assert!(slots_match(&p, &[Slot::U16(1), Slot::U32(2), Slot::U64(3)]));
        assert!(!slots_match(&p, &[Slot::U16(1), Slot::U32(2)]), "one missing");
        assert!(!slots_match(&p, &[Slot::U16(1), Slot::U32(2), Slot::U64(3), Slot::U64(4)]), "one too many");
        assert!(!slots_match(&p, &[Slot::U16(1), Slot::U64(2), Slot::U64(3)]), "a scalar of another size");
        assert!(!slots_match(&p, &[Slot::U16(1), Slot::U32(2), Slot::Map(TensorMapParam([0; 16]))]), "a map");
    }

    #[test]
    fn tensor_map_arrays_that_do_not_fit_the_rank_never_reach_the_driver() {
        let map = |dims: &'static [u64], strides: &'static [u64], box_dims: &'static [u32]| TiledMap {
            dtype: sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            base: 0,
            dims,
            strides,
            box_dims,
            swizzle: sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        };
        let refused =
            |m: TiledMap| matches!(encode_tiled(&m), Err(e) if e.0 == sys::CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(refused(map(&[], &[], &[])), "rank 0");
        assert!(refused(map(&[1; 6], &[4; 5], &[1; 6])), "rank 6");
        assert!(refused(map(&[64, 8], &[], &[64, 8])), "a stride missing");
        assert!(refused(map(&[64, 8], &[256], &[64])), "a box extent missing");
    }
}
