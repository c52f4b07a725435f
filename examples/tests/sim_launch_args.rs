//! Launch arguments are checked against the kernel's parameters before anything runs, and
//! buffers that are too short are caught, on the simulator (the GPU test
//! `gpu.rs::wrong_target_and_bad_arguments_are_clear_errors` repeats the shared checks there).

use phaser::codegen::builder::KernelBuilder;
use phaser::codegen::ir::{Dim, Type};
use phaser::runtime::sim::Category;
use phaser::runtime::{RuntimeError, Swizzle};
use phaser::{Arg, Device, LaunchConfig, Target};

/// `copy(input: &[f32], out: &mut [f32], n: u32)`: `out[i] = input[i]` for `i < n`, one
/// element per thread.
fn copy_kernel() -> phaser::Kernel {
    let mut k = KernelBuilder::new("copy", Target::Sm90a);
    let input = k.param_global("input", Type::F32, false);
    let out = k.param_global("out", Type::F32, true);
    let n = k.param("n", Type::U32);
    let tid = k.thread_idx(Dim::X);
    let live = k.lt(tid, n);
    k.if_then(live, |k| {
        let v = k.ld_global(input, tid);
        k.st_global(out, tid, v);
    });
    k.finish().unwrap()
}

fn sim() -> Device {
    Device::sim(Default::default())
}

fn launch_err(dev: &Device, args: &[Arg]) -> RuntimeError {
    dev.launch(&copy_kernel(), LaunchConfig::linear(1, 32), args).expect_err("the launch must be refused")
}

#[test]
fn the_right_arguments_run() {
    let dev = sim();
    let input = dev.upload(&[1.5f32; 32]).unwrap();
    let out = dev.upload(&[f32::NAN; 32]).unwrap();
    dev.launch(
        &copy_kernel(),
        LaunchConfig::linear(1, 32),
        &[Arg::buffer(&input), Arg::buffer(&out), Arg::scalar(32u32)],
    )
    .unwrap();
    assert_eq!(dev.download(&out).unwrap(), [1.5f32; 32]);
}

#[test]
fn wrong_argument_count_names_the_counts() {
    let dev = sim();
    let buf = dev.alloc::<f32>(32).unwrap();
    let e = launch_err(&dev, &[Arg::buffer(&buf)]);
    assert!(matches!(e, RuntimeError::BadArgument { .. }), "{e:?}");
    assert_eq!(e.to_string(), "kernel `copy`: argument 1 (`out`): the kernel takes 3 arguments, 1 were given");
    let e = launch_err(&dev, &[Arg::buffer(&buf), Arg::buffer(&buf), Arg::scalar(1u32), Arg::scalar(2u32)]);
    assert!(e.to_string().contains("the kernel takes 3 arguments, 4 were given"), "{e}");
}

#[test]
fn wrong_argument_types_name_the_parameter() {
    let dev = sim();
    let f = dev.alloc::<f32>(32).unwrap();
    let u = dev.alloc::<u32>(32).unwrap();
    let e = launch_err(&dev, &[Arg::buffer(&u), Arg::buffer(&f), Arg::scalar(32u32)]);
    assert_eq!(e.to_string(), "kernel `copy`: argument 0 (`input`): expected a buffer of f32, got a buffer of u32");
    let e = launch_err(&dev, &[Arg::buffer(&f), Arg::buffer(&f), Arg::scalar(32i32)]);
    assert!(e.to_string().contains("argument 2 (`n`): expected a u32 scalar, got a s32 scalar"), "{e}");
    let e = launch_err(&dev, &[Arg::buffer(&f), Arg::scalar(1.0f32), Arg::scalar(32u32)]);
    assert!(e.to_string().contains("argument 1 (`out`): expected a buffer of f32, got a f32 scalar"), "{e}");
    let map = dev.tensor_map(&f, &[32], &[32], Swizzle::None).unwrap();
    let e = launch_err(&dev, &[Arg::TensorMap(&map), Arg::buffer(&f), Arg::scalar(32u32)]);
    assert!(e.to_string().contains("argument 0 (`input`): expected a buffer of f32, got a tensor map"), "{e}");
}

#[test]
fn a_buffer_shorter_than_the_kernel_reads_is_out_of_bounds() {
    let dev = sim();
    let input = dev.upload(&[1.0f32; 16]).unwrap();
    let out = dev.alloc::<f32>(32).unwrap();
    let e = launch_err(&dev, &[Arg::buffer(&input), Arg::buffer(&out), Arg::scalar(32u32)]);
    let RuntimeError::Simulation(report) = &e else { panic!("expected a simulator finding, got {e:?}") };
    let oob: Vec<_> = report.findings.iter().filter(|f| f.category == Category::OutOfBounds).collect();
    assert!(!oob.is_empty() && oob.iter().all(|f| f.message.contains("global load of 4 bytes")), "{e}");
}

#[test]
fn host_data_of_the_wrong_length_is_refused() {
    let dev = sim();
    let mut buf = dev.alloc::<u32>(8).unwrap();
    let e = dev.write(&mut buf, &[1u32; 7]).unwrap_err();
    assert!(matches!(e, RuntimeError::SizeMismatch { expected: 8, found: 7, .. }), "{e:?}");
    assert!(e.to_string().contains("8 elements expected, 7 given"), "{e}");
    let e = dev.tensor_map(&buf, &[4, 4], &[4, 4], Swizzle::None).unwrap_err();
    assert!(e.to_string().contains("reaches 64 bytes but the buffer holds 32"), "{e}");
}
