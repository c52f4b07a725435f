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
fn gallery_examples_pass_on_the_gpu() {
    let dev = gpu();
    let mut failed = Vec::new();
    for e in gallery::examples() {
        match (e.run)(&dev, Size::Full) {
            Ok(o) if o.passed => eprintln!("pass {}: {}", o.name, o.detail),
            Ok(o) => failed.push(format!("{}: {}", o.name, o.detail)),
            Err(err) => failed.push(format!("{}: {err}", e.name)),
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Thread 0 copies a random input into >48 KiB of dynamic shared memory and arrives; every
/// thread waits, then writes the reversed data. Checks the dynamic-smem attribute path.
fn reverse_through_dynamic_smem(n: u32) -> phaser::Kernel {
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
    let _ = n;
    k.finish().unwrap()
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn dynamic_shared_memory_above_48k_with_random_data() {
    let dev = gpu();
    let n = 25_000u32; // 100 KB of f32
    let k = reverse_through_dynamic_smem(n);
    let seed = fresh_seed();
    let data = random_f32(n as usize, seed);
    let input = dev.upload(&data).unwrap();
    let out = dev.upload(&vec![f32::NAN; n as usize]).unwrap();
    let cfg = LaunchConfig::linear(1, 256).with_dynamic_shared(n * 4);
    dev.launch(&k, cfg, &[Arg::buffer(&input), Arg::buffer(&out), Arg::scalar(n)]).unwrap();
    let got = dev.download(&out).unwrap();
    let want: Vec<f32> = data.iter().rev().copied().collect();
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "mismatch (seed {seed})");
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

    let k = reverse_through_dynamic_smem(16);
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
