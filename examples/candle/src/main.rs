//! Phaser kernels as candle `CustomOp`s, zero-copy, on candle's own CUDA stream.
//!
//! The Phaser device is built on candle's context and stream (`Device::from_cudarc`), so a
//! Phaser launch is ordered with candle's work by the stream itself. Inputs are candle's
//! `CudaSlice`s (views at the layout's offset: no copies); outputs are allocated by candle's
//! device, written by the Phaser kernel and handed back to candle as its storage
//! (`CudaStorage::wrap_cuda_slice`). Two ops, each checked against candle's own result:
//! - `a * x + b` (f32), a one-line `#[phaser::kernel]`, against candle's `affine`;
//! - the gallery's warp-specialized bf16 GEMM (`gemm_dsl`, TMA + wgmma + 2-CTA clusters),
//!   through tensor maps over candle's memory (`Device::tensor_map_cuda`), against candle's
//!   `matmul` (cuBLAS).
//!
//! Prints the max error of each check and PASS/FAIL; exits nonzero on a failure.

use candle_core::cuda_backend::cudarc::driver::DevicePtr;
use candle_core::{CpuStorage, CudaStorage, CustomOp1, CustomOp2, DType, Layout, Shape, Tensor};
use phaser::{Arg, Device, LaunchConfig, Swizzle};
use phaser_examples::gallery::gemm_dsl;
use phaser_examples::gemm::{self, GemmConfig, GemmShape, BLOCK_K};
use std::sync::Arc;

/// `y[i] = a * x[i] + b`, one thread per element.
#[phaser::kernel(target = "sm_90a")]
fn axpb(y: &mut [f32], x: &[f32], a: f32, b: f32, n: u32) {
    let i = T.block_idx() * T.block_dim() + T.thread_idx();
    if i < n {
        y[i] = a * x[i] + b;
    }
}

/// A contiguous tensor's memory, as a view at its layout's offset (no copy).
fn contiguous<'s, T: candle_core::cuda_backend::CudaDType>(
    storage: &'s CudaStorage,
    layout: &Layout,
) -> candle_core::Result<candle_core::cuda_backend::cudarc::driver::CudaView<'s, T>> {
    let (start, end) = layout
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg("the Phaser ops take contiguous tensors".into()))?;
    Ok(storage.as_cuda_slice::<T>()?.slice(start..end))
}

fn phaser_err(e: phaser::RuntimeError) -> candle_core::Error {
    candle_core::Error::Msg(format!("phaser: {e}"))
}

/// The Phaser device must run on the storage's own stream: that is what orders the launch
/// with candle's work without events.
fn same_stream(dev: &Device, storage: &CudaStorage) -> candle_core::Result<()> {
    match dev {
        Device::Cuda(d) if Arc::ptr_eq(d.stream(), &storage.device.cuda_stream()) => Ok(()),
        _ => Err(candle_core::Error::Msg("the Phaser device is not on this tensor's candle stream".into())),
    }
}

/// `a * x + b` by the Phaser kernel.
struct PhaserAxpb {
    dev: Arc<Device>,
    a: f32,
    b: f32,
}

impl CustomOp1 for PhaserAxpb {
    fn name(&self) -> &'static str {
        "phaser-axpb"
    }

    fn cpu_fwd(&self, _: &CpuStorage, _: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        candle_core::bail!("phaser-axpb runs on CUDA tensors only")
    }

    fn cuda_fwd(&self, storage: &CudaStorage, layout: &Layout) -> candle_core::Result<(CudaStorage, Shape)> {
        same_stream(&self.dev, storage)?;
        let x = contiguous::<f32>(storage, layout)?;
        let n = layout.shape().elem_count();
        // SAFETY: uninitialized device memory that no one reads before the kernel, which
        // writes all `n` elements (one thread each, the grid covers `n`), has finished: the
        // launch below waits for it.
        let mut y = unsafe { storage.device.alloc::<f32>(n) }?;
        let threads = 256u32;
        let cfg = LaunchConfig::linear((n as u32).div_ceil(threads), threads);
        let kernel = axpb::kernel().map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        let args = [(&mut y).into(), (&x).into(), Arg::scalar(self.a), Arg::scalar(self.b), Arg::scalar(n as u32)];
        self.dev.launch(&kernel, cfg, &args).map_err(phaser_err)?;
        Ok((CudaStorage::wrap_cuda_slice(y, storage.device.clone()), layout.shape().clone()))
    }
}

/// `C = A * B^T` (A: M x K, B: N x K, bf16) by the gallery's DSL GEMM.
struct PhaserGemm {
    dev: Arc<Device>,
    cfg: GemmConfig,
}

impl CustomOp2 for PhaserGemm {
    fn name(&self) -> &'static str {
        "phaser-gemm-dsl"
    }

    fn cpu_fwd(&self, _: &CpuStorage, _: &Layout, _: &CpuStorage, _: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        candle_core::bail!("phaser-gemm-dsl runs on CUDA tensors only")
    }

    fn cuda_fwd(
        &self,
        sa: &CudaStorage,
        la: &Layout,
        sb: &CudaStorage,
        lb: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        same_stream(&self.dev, sa)?;
        let ((m, k), (n, kb)) = (la.shape().dims2()?, lb.shape().dims2()?);
        if k != kb {
            candle_core::bail!("phaser-gemm-dsl: A is {m} x {k} but B is {n} x {kb} (B is N x K)");
        }
        let shape = GemmShape::new(m as u32, n as u32, k as u32);
        if let Some(why) = shape.problem().or_else(|| gemm::dsl::unsupported(&self.cfg)) {
            candle_core::bail!("phaser-gemm-dsl: {why}");
        }
        let (a, b) = (contiguous::<half::bf16>(sa, la)?, contiguous::<half::bf16>(sb, lb)?);
        // SAFETY: uninitialized device memory that no one reads before the kernel has finished
        // (the launch below waits); its TMA stores write every element of C (the persistent
        // walk covers every tile, clipped at the edges).
        let mut c = unsafe { sa.device.alloc::<half::bf16>(m * n) }?;
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        let cfg = &self.cfg;
        let dev = &self.dev;
        let sw = Swizzle::B128;
        let map_a = dev.tensor_map_cuda(&a, &[k64, m64], &[BLOCK_K, cfg.block_m()], sw).map_err(phaser_err)?;
        let map_b = dev
            .tensor_map_cuda(&b, &[k64, n64], &[BLOCK_K, cfg.block_n / cfg.cluster_m], sw)
            .map_err(phaser_err)?;
        // The N-major B's map, which the kernel takes and, for this K-major B, never reads:
        // any map of its box will do.
        let map_b_kn = dev.tensor_map_cuda(&b, &[k64, n64], &[gemm_dsl::EPI, BLOCK_K], sw).map_err(phaser_err)?;
        // Zero-copy: the kernel reads candle's own memory, at the tensor's offset.
        let stream = sa.device.cuda_stream();
        let (a_addr, _) = a.device_ptr(&stream);
        if map_a.desc().base != a_addr {
            candle_core::bail!("phaser-gemm-dsl: A's tensor map does not view candle's memory");
        }
        {
            let map_c = dev.tensor_map_cuda_mut(&mut c, &[n64, m64], &[gemm_dsl::EPI, gemm_dsl::EPI], sw).map_err(phaser_err)?;
            let kernel = gemm::dsl::kernel(cfg).map_err(|e| candle_core::Error::Msg(e.to_string()))?;
            let launch = gemm::launch_config(cfg, &shape, dev.sm_count().map_err(phaser_err)?);
            // The kernel's split-K workspace, which it never touches without split-K.
            if cfg.split_k != 1 {
                candle_core::bail!("phaser-gemm-dsl: split-K is not wired into this op (split_k = {})", cfg.split_k);
            }
            let mut ws = dev.alloc::<f32>(1).map_err(phaser_err)?;
            // Split-K's fix-up flags and C as a buffer: untouched without split-K too.
            let mut flags = dev.alloc::<u32>(1).map_err(phaser_err)?;
            let mut c_out = dev.alloc::<half::bf16>(1).map_err(phaser_err)?;
            let args = [
                Arg::TensorMap(&map_a),
                Arg::TensorMap(&map_b),
                Arg::TensorMap(&map_b_kn),
                Arg::TensorMap(&map_c),
                Arg::scalar(shape.m),
                Arg::scalar(shape.n),
                Arg::scalar(shape.k),
                Arg::buffer_mut(&mut ws),
                Arg::buffer_mut(&mut flags),
                Arg::buffer_mut(&mut c_out),
            ];
            dev.launch(&kernel, launch, &args).map_err(phaser_err)?;
        }
        Ok((CudaStorage::wrap_cuda_slice(c, sa.device.clone()), Shape::from((m, n))))
    }
}

/// The largest `|got - want|`, and whether every element is within `tolerance(want)`.
fn compare(got: &Tensor, want: &Tensor, tolerance: impl Fn(f64) -> f64) -> candle_core::Result<(f64, bool)> {
    let got = got.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
    let want = want.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
    let mut max = 0f64;
    let mut ok = got.len() == want.len();
    for (g, w) in got.iter().zip(&want) {
        let d = (*g as f64 - *w as f64).abs();
        max = max.max(if d.is_nan() { f64::INFINITY } else { d });
        ok &= d <= tolerance(*w as f64);
    }
    Ok((max, ok))
}

fn report(name: &str, (max, ok): (f64, bool), failed: &mut bool) {
    println!("{name}: max |phaser - candle| = {max:e}: {}", if ok { "PASS" } else { "FAIL" });
    *failed |= !ok;
}

fn main() -> candle_core::Result<()> {
    let gpu = candle_core::Device::new_cuda(0)?;
    let cuda = gpu.as_cuda_device()?;
    let stream = cuda.cuda_stream();
    // Phaser on candle's context and stream.
    let dev = Arc::new(Device::from_cudarc(stream.context().clone(), stream.clone()).map_err(phaser_err)?);
    println!("{} (Phaser on candle's stream)", dev.describe());
    let mut failed = false;

    // Elementwise: an odd length, and a view at an offset (a narrowed tensor).
    let x = Tensor::randn(0f32, 1f32, 1_000_003, &gpu)?;
    let (a, b) = (1.5f32, -0.25f32);
    let op = || PhaserAxpb { dev: dev.clone(), a, b };
    let f32_close = |w: f64| 1e-6 * w.abs() + 1e-6;
    report("axpb 1000003", compare(&x.apply_op1_no_bwd(&op())?, &x.affine(a as f64, b as f64)?, f32_close)?, &mut failed);
    let part = x.narrow(0, 17, 4096)?;
    report("axpb view [17..4113]", compare(&part.apply_op1_no_bwd(&op())?, &part.affine(a as f64, b as f64)?, f32_close)?, &mut failed);

    // The gallery's DSL GEMM against candle's matmul, both gallery configurations.
    for (cluster, shapes) in [(true, [(2048, 2048, 2048), (1000, 200, 136)]), (false, [(4096, 4096, 4096), (520, 264, 72)])] {
        let cfg = gemm::dsl::config(cluster);
        for (m, n, k) in shapes {
            // Ternary inputs: every product is exact in f32, so both must round the same value.
            let ternary = |r: usize, c: usize| -> candle_core::Result<Tensor> {
                (Tensor::rand(0f32, 3f32, (r, c), &gpu)?.floor()? - 1.0)?.clamp(-1f32, 1f32)?.to_dtype(DType::BF16)
            };
            let (ta, tb) = (ternary(m, k)?, ternary(n, k)?);
            let got = ta.apply_op2_no_bwd(&tb, &PhaserGemm { dev: dev.clone(), cfg: cfg.clone() })?;
            let want = ta.matmul(&tb.t()?)?;
            report(&format!("{} {m}x{n}x{k} ternary (exact)", cfg.kernel_name()), compare(&got, &want, |_| 0.0)?, &mut failed);
            // Normal inputs: the two differ by their bf16 roundings of differently ordered sums.
            let (ra, rb) = (Tensor::randn(0f32, 1f32, (m, k), &gpu)?.to_dtype(DType::BF16)?, Tensor::randn(0f32, 1f32, (n, k), &gpu)?.to_dtype(DType::BF16)?);
            let got = ra.apply_op2_no_bwd(&rb, &PhaserGemm { dev: dev.clone(), cfg: cfg.clone() })?;
            let want = ra.matmul(&rb.t()?)?;
            report(&format!("{} {m}x{n}x{k} randn", cfg.kernel_name()), compare(&got, &want, |w| gemm::tolerance(w, k as u32))?, &mut failed);
        }
    }
    if failed {
        println!("FAIL");
        std::process::exit(1);
    }
    println!("PASS");
    Ok(())
}
