//! GPU tests: run on the H200 by `.ci/gpu-bundle` (`--include-ignored`); without a GPU they
//! are ignored, never silently passed. Each compares against a CPU reference on fresh random
//! inputs, with outputs poisoned first.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type, Value};
use phaser::runtime::RuntimeError;
use phaser::{Arg, Device, LaunchConfig, Target};
use phaser_examples::gallery::{self, fresh_seed, random_f32, Size};

fn gpu() -> Device {
    Device::cuda(0).expect("these tests need a CUDA GPU")
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gallery_examples_pass_on_the_gpu_small_and_full() {
    let dev = gpu();
    let (mut failed, mut skipped, mut passed) = (Vec::new(), Vec::new(), 0);
    // The small size (what the mutation suite simulates) and the full one.
    for size in [Size::Small, Size::Full] {
        for e in gallery::examples() {
            let seed = fresh_seed();
            match gallery::run(&e, &dev, size, seed) {
                Ok(r) if r.outcome.passed => {
                    passed += 1;
                    eprintln!("pass {} ({size:?}): {}", e.name, r.outcome.detail)
                }
                // Kernels for another architecture (sm_100a on an H200): not a pass.
                Ok(r) if r.outcome.skipped => {
                    eprintln!("skip {} ({size:?}): {}", e.name, r.outcome.detail);
                    skipped.push(e.name);
                }
                Ok(r) => failed.push(format!("{} ({size:?}): {}", e.name, r.outcome.detail)),
                Err(err) => failed.push(format!("{} ({size:?}, seed {seed}): {err}", e.name)),
            }
        }
    }
    eprintln!("{passed} passed, {} failed, {} skipped ({:?})", failed.len(), skipped.len(), skipped);
    assert!(failed.is_empty(), "{failed:#?}");
    // Only examples whose kernels this GPU cannot run may be skipped.
    for name in &skipped {
        let e = gallery::find(name).unwrap();
        let kernels = (e.kernels)(phaser::Target::Sm90a).unwrap();
        assert!(kernels.iter().any(|k| k.target().is_arch_specific() && k.target() != phaser::Target::Sm90a), "{name}");
    }
}

/// `reverse_dyn_smem(input, out, n)`: thread 0 copies the `n` inputs into dynamic shared
/// memory and arrives; every thread waits, then writes the reversed data. Launched with more
/// than 48 KiB of dynamic shared memory it checks the opt-in attribute path.
fn reverse_through_dynamic_smem() -> phaser::Kernel {
    let mut k = KernelBuilder::new("reverse_dyn_smem", Target::Sm90a);
    let input = k.param_global("input", Type::F32, false);
    let out = k.param_global("out", Type::F32, true);
    let len = k.param("n", Type::U32);
    let bars = k.alloc_barriers("ready", 1);
    let smem = k.dynamic_shared(Type::F32, 0);
    let tid = k.thread_idx(Dim::X);
    let threads = k.block_dim(Dim::X);
    let bar = k.barrier_at(bars, Value::u32(0));
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(1)));
    k.cta_sync();
    k.if_then(is0, |k| {
        k.for_range(Value::u32(0), len, |k, i| {
            let v = k.ld_global(input, i);
            k.st_shared(smem, i, v);
        });
        k.mbarrier_arrive(bar);
    });
    k.mbarrier_wait(bar, Value::u32(0));
    let i = k.var(tid);
    k.while_(
        |k| k.lt(Value::Reg(i), len),
        |k| {
            let last = k.sub(len, Value::u32(1));
            let j = k.sub(last, Value::Reg(i));
            let v = k.ld_shared(smem, j);
            k.st_global(out, Value::Reg(i), v);
            let next = k.add(Value::Reg(i), threads);
            k.assign(i, next);
        },
    );
    k.finish().unwrap()
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn dynamic_shared_memory_above_48k_with_random_data() {
    let dev = gpu();
    let k = reverse_through_dynamic_smem();
    // 100 KB of f32, and a count that is not a multiple of the block.
    for n in [25_000u32, 12_289] {
        let seed = fresh_seed();
        let data = random_f32(n as usize, seed);
        let input = dev.upload(&data).unwrap();
        let out = dev.upload(&vec![f32::NAN; n as usize]).unwrap();
        let cfg = LaunchConfig::linear(1, 256).with_dynamic_shared(n * 4);
        dev.launch(&k, cfg, &[Arg::buffer(&input), Arg::buffer(&out), Arg::scalar(n)]).unwrap();
        let got = dev.download(&out).unwrap();
        let want: Vec<f32> = data.iter().rev().copied().collect();
        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "n = {n}: mismatch (seed {seed})");
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn wrong_target_and_bad_arguments_are_clear_errors() {
    let dev = gpu();
    let mut k = KernelBuilder::new("blackwell_only", Target::Sm100a);
    let bars = k.alloc_barriers("b", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    k.mbarrier_init(b, Value::u32(1));
    let k = k.finish().unwrap();
    let err = dev.launch(&k, LaunchConfig::linear(1, 32), &[]).unwrap_err();
    assert!(matches!(err, RuntimeError::TargetMismatch { .. }), "{err}");
    assert!(err.to_string().contains("sm_100a code runs only on compute capability 10.0"), "{err}");

    // The same argument checks run on the simulator in `sim_launch_args.rs`.
    let k = reverse_through_dynamic_smem();
    let buf = dev.alloc::<u32>(16).unwrap();
    let err = dev.launch(&k, LaunchConfig::linear(1, 32).with_dynamic_shared(64), &[Arg::buffer(&buf)]).unwrap_err();
    assert!(err.to_string().contains("takes 3 arguments, 1 were given"), "{err}");
    let f = dev.alloc::<f32>(16).unwrap();
    let err = dev
        .launch(
            &k,
            LaunchConfig::linear(1, 32).with_dynamic_shared(64),
            &[Arg::buffer(&buf), Arg::buffer(&f), Arg::scalar(16u32)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("argument 0 (`input`): expected a buffer of f32, got a buffer of u32"), "{err}");
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn modules_are_cached_by_ptx() {
    let dev = gpu();
    let Device::Cuda(cuda) = &dev else { unreachable!() };
    let k = phaser_examples::gallery::seeds::phase_flip(Target::Sm90a).unwrap();
    let out = dev.alloc::<u32>(5).unwrap();
    for _ in 0..3 {
        dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
    }
    assert_eq!(cuda.modules.len(), 1);
}

/// Same PTX text → the same loaded module; different text → a different one; the kernel's
/// PTX is printed once however often it is launched.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn module_cache_is_keyed_by_the_ptx_text() {
    let dev = gpu();
    let Device::Cuda(cuda) = &dev else { unreachable!() };
    let a = phaser_examples::gallery::seeds::phase_flip(Target::Sm90a).unwrap();
    let out = dev.alloc::<u32>(5).unwrap();
    for _ in 0..3 {
        dev.launch(&a, LaunchConfig::linear(1, 32), &[Arg::buffer(&out)]).unwrap();
    }
    assert_eq!(a.ptx_emissions(), 1, "PTX printed once per kernel, not per launch");
    let before = cuda.modules.len();
    let pa = a.ptx().unwrap();
    let mut b = a.to_parts();
    b.name = "phase_flip_renamed".into();
    let b = b.finish().unwrap();
    let pb = b.ptx().unwrap();
    assert_ne!(pa, pb);
    let ctx = cuda.context();
    let ma1 = cuda.modules.module(ctx, &pa, a.name()).unwrap();
    let pa_copy = String::from(&*pa); // the same text in another allocation
    let ma2 = cuda.modules.module(ctx, &pa_copy, a.name()).unwrap();
    let mb = cuda.modules.module(ctx, &pb, b.name()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&ma1, &ma2), "equal text (another allocation): the same module");
    assert!(!std::sync::Arc::ptr_eq(&ma1, &mb), "different text: a different module");
    assert_eq!(cuda.modules.len(), before + 1);
}

/// Host ↔ device round trips through the typed `CudaSlice<T>` of every element type,
/// empty buffers included; `fill` and the timed device copy too.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn typed_buffers_round_trip() {
    fn round_trip<T: phaser::runtime::Elem + PartialEq + std::fmt::Debug>(dev: &Device, data: Vec<T>, fill: T) {
        let mut a = dev.upload(&data).unwrap();
        assert_eq!(dev.download(&a).unwrap(), data, "{}", T::TYPE);
        let mut b = dev.alloc::<T>(data.len()).unwrap();
        assert_eq!(dev.download(&b).unwrap(), vec![T::default(); data.len()], "zeroed");
        let t = dev.copy(&a, &mut b).unwrap();
        assert!(t.is_some(), "GPU copies are timed");
        assert_eq!(dev.download(&b).unwrap(), data);
        dev.fill(&mut a, fill).unwrap();
        assert_eq!(dev.download(&a).unwrap(), vec![fill; data.len()]);
        let e = dev.write(&mut a, &[fill]).unwrap_err();
        if data.len() != 1 {
            assert!(matches!(e, RuntimeError::SizeMismatch { .. }), "{e}");
        }
    }
    let dev = gpu();
    let seed = fresh_seed();
    let r = phaser_examples::gallery::random_u32(1000, seed);
    round_trip(&dev, r.iter().map(|&x| x as u16).collect(), 7u16);
    round_trip(&dev, r.clone(), 0xdead_beefu32);
    round_trip(&dev, r.iter().map(|&x| (x as u64) << 20 | 3).collect(), u64::MAX);
    round_trip(&dev, r.iter().map(|&x| x as i16).collect(), -3i16);
    round_trip(&dev, r.iter().map(|&x| x as i32).collect(), i32::MIN);
    round_trip(&dev, r.iter().map(|&x| -(x as i64)).collect(), -1i64);
    round_trip(&dev, random_f32(1000, seed), -0.5f32);
    round_trip(&dev, random_f32(1000, seed).iter().map(|&x| x as f64 * 1e-3).collect(), 2.0f64);
    round_trip(&dev, random_f32(333, seed).iter().map(|&x| half::f16::from_f32(x)).collect(), half::f16::ONE);
    round_trip(&dev, random_f32(333, seed).iter().map(|&x| half::bf16::from_f32(x)).collect(), half::bf16::ONE);
    round_trip::<u32>(&dev, Vec::new(), 1);
}

/// A buffer of one backend on a device of the other is a `BackendMismatch` (no null pointer
/// reaches the GPU); a simulator-only operation on the GPU is `Unsupported`.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn buffers_of_the_other_backend_are_refused() {
    use phaser::runtime::Backend;
    let gpu_dev = gpu();
    let sim_dev = Device::sim(Default::default());
    let k = phaser_examples::gallery::seeds::phase_flip(Target::Sm90a).unwrap();
    let mut sim_buf = sim_dev.alloc::<u32>(5).unwrap();
    let mut gpu_buf = gpu_dev.alloc::<u32>(5).unwrap();
    let mismatch = |e: RuntimeError, buffer, device| {
        assert!(
            matches!(e, RuntimeError::BackendMismatch { buffer: b, device: d } if b == buffer && d == device),
            "{e}"
        )
    };
    let cfg = LaunchConfig::linear(1, 32);
    mismatch(gpu_dev.launch(&k, cfg, &[Arg::buffer(&sim_buf)]).unwrap_err(), Backend::Sim, Backend::Cuda);
    mismatch(gpu_dev.write(&mut sim_buf, &[0; 5]).unwrap_err(), Backend::Sim, Backend::Cuda);
    mismatch(gpu_dev.download(&sim_buf).unwrap_err(), Backend::Sim, Backend::Cuda);
    mismatch(sim_dev.launch(&k, cfg, &[Arg::buffer(&gpu_buf)]).unwrap_err(), Backend::Cuda, Backend::Sim);
    mismatch(sim_dev.write(&mut gpu_buf, &[0; 5]).unwrap_err(), Backend::Cuda, Backend::Sim);
    mismatch(sim_dev.copy(&sim_buf, &mut gpu_buf).unwrap_err(), Backend::Cuda, Backend::Sim);
    let e = gpu_dev.simulate(&k, cfg, &[Arg::buffer(&gpu_buf)]).unwrap_err();
    assert!(matches!(e, RuntimeError::Unsupported { needs: Backend::Sim, .. }), "{e}");
    // Both still work on their own device.
    gpu_dev.launch(&k, cfg, &[Arg::buffer(&gpu_buf)]).unwrap();
    sim_dev.launch(&k, cfg, &[Arg::buffer(&sim_buf)]).unwrap();
    assert_eq!(gpu_dev.download(&gpu_buf).unwrap(), sim_dev.download(&sim_buf).unwrap());
}

/// Dynamic shared memory above the kernel's target limit is refused before the GPU sees
/// it, with the same error as the simulator's; the last byte that fits runs on both.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn shared_memory_over_the_target_limit_is_refused_identically() {
    let gpu_dev = gpu();
    let sim_dev = Device::sim(Default::default());
    let k = reverse_through_dynamic_smem();
    let limit = Target::Sm90a.limits().max_shared_per_block;
    let base = k.shared_layout().dynamic_base as u32;
    let n = 64u32;
    let data = random_f32(n as usize, fresh_seed());
    let mut results = Vec::new();
    for dev in [&gpu_dev, &sim_dev] {
        let input = dev.upload(&data).unwrap();
        let out = dev.alloc::<f32>(n as usize).unwrap();
        let args = [Arg::buffer(&input), Arg::buffer(&out), Arg::scalar(n)];
        let over = dev.launch(&k, LaunchConfig::linear(1, 64).with_dynamic_shared(limit - base + 1), &args);
        let Err(RuntimeError::SharedMemory(over)) = over else { panic!("{}: not refused", dev.describe()) };
        assert_eq!((over.total, over.limit), (limit as u64 + 1, limit));
        dev.launch(&k, LaunchConfig::linear(1, 64).with_dynamic_shared(limit - base), &args).unwrap();
        results.push((over, dev.download(&out).unwrap()));
    }
    assert_eq!(results[0].0, results[1].0, "the same refusal on both backends");
    let want: Vec<f32> = data.iter().rev().copied().collect();
    assert_eq!(results[0].1, want);
    assert_eq!(results[1].1, want);
}

/// A 16-CTA cluster needs the non-portable opt-in the launch sets; every CTA reports its rank.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn non_portable_cluster_of_16_launches() {
    let mut k = KernelBuilder::new("cluster16", Target::Sm90a);
    k.cluster(16, 1, 1);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        let cta = k.block_idx(Dim::X);
        let rank = k.cluster_cta_rank();
        let size = k.cluster_size();
        let v = k.mul(size, Value::u32(100));
        let v = k.add(v, rank);
        k.st_global(out, cta, v);
    });
    let k = k.finish().unwrap();
    let dev = gpu();
    let mut out = dev.alloc::<u32>(32).unwrap();
    dev.fill(&mut out, u32::MAX).unwrap();
    dev.launch(&k, LaunchConfig::linear(32, 32), &[Arg::buffer(&out)]).unwrap();
    let want: Vec<u32> = (0..32).map(|i| 1600 + i % 16).collect();
    assert_eq!(dev.download(&out).unwrap(), want);
}
