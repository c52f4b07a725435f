//! A deadlocked kernel becomes an error, not a hung process: the wait watchdog traps.
//! Its own test binary, because a trapped kernel leaves the CUDA context unusable.

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::Value;
use phaser::runtime::RuntimeError;
use phaser::{Device, LaunchConfig, Target};
use std::time::{Duration, Instant};

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn deadlocked_wait_becomes_a_kernel_fault() {
    let dev = Device::cuda(0).expect("needs a CUDA GPU");
    // Expects 2 arrivals; only 1 thread arrives: the phase never completes.
    let mut k = KernelBuilder::new("deadlock", Target::Sm90a);
    let bars = k.alloc_barriers("b", 1);
    let b = k.barrier_at(bars, Value::u32(0));
    k.mbarrier_init(b, Value::u32(2));
    k.mbarrier_arrive(b);
    k.mbarrier_wait(b, Value::u32(0));
    let k = k.finish().unwrap();
    let t = Instant::now();
    let err = dev.launch(&k, LaunchConfig::linear(1, 1), &[]).unwrap_err();
    assert!(matches!(err, RuntimeError::KernelFault { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_secs(30), "took {:?}", t.elapsed());
    eprintln!("watchdog fired after {:?}: {err}", t.elapsed());
}
