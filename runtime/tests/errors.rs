//! The runtime's errors are typed: each failure has its own variant carrying data, and the
//! launch-time shared-memory check is the target's limit from codegen's table.

use phaser_codegen::builder::KernelBuilder;
use phaser_codegen::ir::{Dim, Type, Value};
use phaser_codegen::Target;
use phaser_runtime::sim::{Category, SimConfig};
use phaser_runtime::{Arg, Backend, Device, LaunchConfig, RuntimeError};
use proptest::prelude::*;

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

/// Thread 0 writes `out[0] = 7`.
fn store_kernel() -> phaser_codegen::Kernel {
    let mut k = KernelBuilder::new("store", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| k.st_global(out, Value::u32(0), Value::u32(7)));
    k.finish().unwrap()
}

#[test]
fn a_buffer_of_another_simulator_is_a_foreign_buffer() {
    let (a, b) = (sim(), sim());
    let mut theirs = b.upload(&[1u32, 2, 3]).unwrap();
    let ours = a.alloc::<u32>(3).unwrap();
    let foreign = |e: RuntimeError| matches!(e, RuntimeError::ForeignBuffer { backend: Backend::Sim, .. });
    assert!(foreign(a.download(&theirs).unwrap_err()));
    assert!(foreign(a.write(&mut theirs, &[4, 5, 6]).unwrap_err()));
    assert!(foreign(a.buffer_addr(&theirs).unwrap_err()));
    let mut ours_mut = ours;
    assert!(foreign(a.copy(&theirs, &mut ours_mut).unwrap_err()));
    let e = a.launch(&store_kernel(), LaunchConfig::linear(1, 32), &[Arg::buffer(&theirs)]).unwrap_err();
    assert!(foreign(e), "launch");
    let e = a.simulate(&store_kernel(), LaunchConfig::linear(1, 32), &[Arg::buffer(&theirs)]).unwrap_err();
    assert!(foreign(e), "simulate");
    // The other device's buffer is untouched and still works there.
    assert_eq!(b.download(&theirs).unwrap(), [1, 2, 3]);
    b.launch(&store_kernel(), LaunchConfig::linear(1, 32), &[Arg::buffer(&theirs)]).unwrap();
    assert_eq!(b.download(&theirs).unwrap(), [7, 2, 3]);
}

#[test]
fn a_length_mismatch_is_a_size_mismatch() {
    let dev = sim();
    let mut buf = dev.alloc::<f32>(4).unwrap();
    let e = dev.write(&mut buf, &[1.0; 5]).unwrap_err();
    assert!(matches!(e, RuntimeError::SizeMismatch { expected: 4, found: 5, .. }), "{e}");
    assert_eq!(e.to_string(), "size mismatch writing host data into a buffer: 4 elements expected, 5 given");
    dev.write(&mut buf, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    dev.fill(&mut buf, -1.0).unwrap();
    assert_eq!(dev.download(&buf).unwrap(), [-1.0; 4]);
}

#[test]
fn backend_mismatch_names_both_backends() {
    // Without a GPU only the simulator side can be built; the GPU side is in examples/tests/gpu.rs.
    let e = RuntimeError::BackendMismatch { buffer: Backend::Cuda, device: Backend::Sim };
    assert_eq!(e.to_string(), "a CUDA GPU buffer cannot be used by a simulator device");
}

#[test]
fn protocol_errors_carry_the_findings_as_data() {
    // Two arrivals expected, one given: thread 0 waits forever.
    let mut k = KernelBuilder::new("deadlock", Target::Sm90a);
    let out = k.param_global("out", Type::U32, true);
    let bars = k.alloc_barriers("bar", 1);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    let bar = k.barrier_at(bars, Value::u32(0));
    k.if_then(is0, |k| k.mbarrier_init(bar, Value::u32(2)));
    k.cta_sync();
    k.if_then(is0, |k| {
        k.mbarrier_arrive(bar);
        k.mbarrier_wait(bar, Value::u32(0));
        k.st_global(out, Value::u32(0), Value::u32(1));
    });
    let k = k.finish().unwrap();
    let dev = sim();
    let buf = dev.alloc::<u32>(1).unwrap();
    let e = dev.launch(&k, LaunchConfig::linear(1, 32), &[Arg::buffer(&buf)]).unwrap_err();
    let findings = e.findings().expect("a simulation error");
    assert_eq!(findings[0].category, Category::Deadlock);
    assert_eq!(findings[0].thread, Some(0));
    assert_eq!(findings[0].barrier.as_ref().map(|b| b.name.as_str()), Some("bar"));
    let RuntimeError::Simulation(report) = &e else { unreachable!() };
    assert_eq!(e.to_string(), report.text(), "Display is the readable report");
    assert!(e.to_string().contains("error[deadlock]"), "{e}");
}

/// A kernel using dynamic shared memory behind `static_words` u32s of static shared memory.
fn smem_kernel(target: Target, static_words: u32) -> phaser_codegen::Kernel {
    let mut k = KernelBuilder::new("smem", target);
    let out = k.param_global("out", Type::U32, true);
    if static_words > 0 {
        let _ = k.alloc_shared("pad", Type::U32, static_words);
    }
    let dynamic = k.dynamic_shared(Type::U32, 0);
    let tid = k.thread_idx(Dim::X);
    let is0 = k.eq(tid, Value::u32(0));
    k.if_then(is0, |k| {
        k.st_shared(dynamic, Value::u32(0), Value::u32(5));
        let v = k.ld_shared(dynamic, Value::u32(0));
        k.st_global(out, Value::u32(0), v);
    });
    k.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The launch check is the target's limit from the table: the last byte that fits runs,
    /// one more is refused with `SharedMemory`, before any simulation.
    #[test]
    fn dynamic_shared_memory_is_bounded_by_the_target(t in 0..Target::ALL.len(), static_words in 0u32..2048) {
        let target = Target::ALL[t];
        let k = smem_kernel(target, static_words);
        let base = (static_words as u64 * 4).div_ceil(1024) * 1024;
        let limit = target.limits().max_shared_per_block as u64;
        let fits = (limit - base) as u32;
        let dev = Device::sim(SimConfig { race_check: false, ..SimConfig::default() });
        let mut out = dev.alloc::<u32>(1).unwrap();
        dev.fill(&mut out, 0).unwrap();
        let cfg = LaunchConfig::linear(1, 32);
        dev.launch(&k, cfg.with_dynamic_shared(fits), &[Arg::buffer(&out)]).unwrap();
        prop_assert_eq!(dev.download(&out).unwrap(), vec![5]);
        let e = dev.launch(&k, cfg.with_dynamic_shared(fits + 1), &[Arg::buffer(&out)]).unwrap_err();
        match e {
            RuntimeError::SharedMemory(over) => {
                prop_assert_eq!(over.limit as u64, limit);
                prop_assert_eq!(over.total, limit + 1);
                prop_assert_eq!(over.target, target);
            }
            other => prop_assert!(false, "expected SharedMemory, got {}", other),
        }
    }
}

#[test]
fn errors_cross_threads_and_keep_their_source() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<RuntimeError>(); // usable with `anyhow` / `Box<dyn Error + Send + Sync>`
    let io = RuntimeError::Io { context: "writing".into(), source: std::io::Error::other("disk full") };
    let source = std::error::Error::source(&io).expect("the cause is kept as the source");
    assert_eq!(source.to_string(), "disk full");
}
