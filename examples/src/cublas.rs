//! The cuBLAS reference of the GEMM benchmark and GPU test: `C = A * B` in bf16 with f32
//! compute through cuBLASLt (cudarc's `cublaslt`, loaded at run time), on the same stream
//! as the Phaser kernels (a Phaser stream's cudarc stream, `Stream::as_cuda`), so both are
//! timed the same way in the same process.
//!
//! Row-major `C (M x N) = A (M x K) * B` is column-major `C^T (N x M) = B^T * A^T`: cuBLAS
//! multiplies `m = N, n = M, k = K` with our B as its A (N-major B: `N x K`, ld N, no
//! transpose; K-major B: `K x N`, ld K, transposed) and our A as its B (`K x M`, ld K).
//!
//! The library is found by the dynamic loader (`libcublasLt.so.13`, `.so.12`, ...): on the
//! GPU machine `.ci/gpu-run.sh` puts the Python package `nvidia-cublas`'s `lib/` on
//! `LD_LIBRARY_PATH`.

use crate::gemm::BLayout;
use crate::timing::{BenchError, BenchResult};
use cudarc::cublaslt::{result as lt, sys};
use cudarc::driver::{CudaSlice, CudaStream};
use phaser::runtime::cuda::CudaDevice;
use std::ffi::c_void;
use std::mem::size_of;

/// Workspace NVIDIA recommends for Hopper.
const WORKSPACE_BYTES: usize = 32 << 20;

fn blas(what: &str) -> impl FnOnce(lt::CublasError) -> BenchError + '_ {
    move |e| BenchError(format!("cuBLASLt {what}: {e:?}"))
}

/// A cuBLASLt handle with its workspace.
pub struct CublasLt {
    handle: sys::cublasLtHandle_t,
    workspace: CudaSlice<u8>,
}

/// One GEMM shape, planned once (descriptors and the heuristic's best algorithm).
pub struct CublasGemm {
    desc: sys::cublasLtMatmulDesc_t,
    a: sys::cublasLtMatrixLayout_t,
    b: sys::cublasLtMatrixLayout_t,
    c: sys::cublasLtMatrixLayout_t,
    algo: sys::cublasLtMatmulAlgo_t,
}

impl CublasLt {
    /// A handle, or an error that says how to make the library findable.
    pub fn new(dev: &CudaDevice) -> BenchResult<CublasLt> {
        // Linked instead (as under candle), the program would not have started without it.
        #[cfg(feature = "dynamic-loading")]
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return Err(BenchError(
                "libcublasLt was not found: install the Python package nvidia-cublas and put its lib/ \
                 on LD_LIBRARY_PATH (.ci/gpu-run.sh does)"
                    .into(),
            ));
        }
        dev.context().bind_to_thread().map_err(|e| BenchError(format!("binding the context: {e:?}")))?;
        let handle = lt::create_handle().map_err(blas("create"))?;
        let workspace = dev
            .stream()
            .alloc_zeros::<u8>(WORKSPACE_BYTES)
            .map_err(|e| BenchError(format!("allocating the cuBLASLt workspace: {e:?}")))?;
        Ok(CublasLt { handle, workspace })
    }

    /// Plan `C (m x n) = A (m x k) * B` for bf16 in and out, f32 compute and scale.
    pub fn plan(&self, m: u64, n: u64, k: u64, b_layout: BLayout) -> BenchResult<CublasGemm> {
        let bf16 = sys::cudaDataType_t::CUDA_R_16BF;
        let desc =
            lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, sys::cudaDataType_t::CUDA_R_32F)
                .map_err(blas("matmul descriptor"))?;
        let trans_a: i32 = (b_layout == BLayout::KMajor) as i32;
        // SAFETY: the descriptor is live; the attribute is a 4-byte cublasOperation_t.
        unsafe {
            lt::set_matmul_desc_attribute(
                desc,
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                &trans_a as *const i32 as *const c_void,
                size_of::<i32>(),
            )
        }
        .map_err(blas("transpose attribute"))?;
        // cuBLAS's A is our B; its B our A; its C our C (all column-major views).
        let a = match b_layout {
            BLayout::NMajor => lt::create_matrix_layout(bf16, n, k, n as i64),
            BLayout::KMajor => lt::create_matrix_layout(bf16, k, n, k as i64),
        }
        .map_err(blas("layout of B"))?;
        let b = lt::create_matrix_layout(bf16, k, m, k as i64).map_err(blas("layout of A"))?;
        let c = lt::create_matrix_layout(bf16, n, m, n as i64).map_err(blas("layout of C"))?;
        let pref = lt::create_matmul_pref().map_err(blas("preference"))?;
        let ws = WORKSPACE_BYTES;
        // SAFETY: live handles; the attribute is a usize.
        let algo = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &ws as *const usize as *const c_void,
                size_of::<usize>(),
            )
            .map_err(blas("workspace preference"))?;
            let h = lt::get_matmul_algo_heuristic(self.handle, desc, a, b, c, c, pref)
                .map_err(blas(&format!("heuristic for {m} x {n} x {k}")));
            lt::destroy_matmul_pref(pref).map_err(blas("destroy preference"))?;
            h?.algo
        };
        Ok(CublasGemm { desc, a, b, c, algo })
    }

    /// Enqueue `C = A * B` on `stream` (device addresses of the three matrices).
    pub fn run(&self, stream: &CudaStream, g: &CublasGemm, a: u64, b: u64, c: u64) -> BenchResult<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (ws, _sync) = cudarc::driver::DevicePtr::device_ptr(&self.workspace, stream);
        // SAFETY: the plan's layouts describe buffers of at least these sizes (the caller
        // allocated them for the same shape); the workspace has WORKSPACE_BYTES.
        unsafe {
            lt::matmul(
                self.handle,
                g.desc,
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
                b as *const c_void,
                g.a,
                a as *const c_void,
                g.b,
                c as *const c_void,
                g.c,
                c as *mut c_void,
                g.c,
                &g.algo,
                ws as *mut c_void,
                WORKSPACE_BYTES,
                stream.cu_stream() as sys::cudaStream_t,
            )
        }
        .map_err(blas("matmul"))
    }
}

impl Drop for CublasGemm {
    fn drop(&mut self) {
        // SAFETY: each handle was created once by `plan` and is destroyed once here.
        unsafe {
            let _ = lt::destroy_matrix_layout(self.a);
            let _ = lt::destroy_matrix_layout(self.b);
            let _ = lt::destroy_matrix_layout(self.c);
            let _ = lt::destroy_matmul_desc(self.desc);
        }
    }
}

impl Drop for CublasLt {
    fn drop(&mut self) {
        // SAFETY: created once by `new`.
        unsafe {
            let _ = lt::destroy_handle(self.handle);
        }
    }
}
