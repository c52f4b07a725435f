//! Streams, events and launches from several threads in the simulator: the same API as the GPU
//! (`tests/gpu_streams.rs` runs the same cases there); launches run in stream order and their
//! findings come back when they are waited for or at `Stream::synchronize`.

mod stream_cases;

use phaser::runtime::sim::SimConfig;
use phaser::{Arg, Device, LaunchConfig, RuntimeError};
use stream_cases::*;

fn sim() -> Device {
    Device::sim(SimConfig::default())
}

#[test]
fn a_stream_launch_waits_for_its_report_sim() {
    a_stream_launch_waits_for_its_report(&sim());
}

#[test]
fn guards_are_waited_for_in_any_order_sim() {
    guards_are_waited_for_in_any_order(&sim());
}

#[test]
fn two_streams_ordered_by_an_event_sim() {
    two_streams_ordered_by_an_event(&sim());
}

#[test]
fn launches_from_several_threads_sim() {
    launches_from_several_threads(&sim());
}

#[test]
fn handles_are_send_and_sync_sim() {
    handles_are_send_and_sync();
}

/// Thread 0 initialises a barrier for two arrivals, nobody arrives, everyone waits.
#[phaser::kernel(target = "sm_90a")]
fn starves(out: &mut [u32]) {
    let bar = T.alloc_barriers(1);
    let tid = T.thread_idx();
    if tid == 0 {
        T.ptx.mbarrier.init(bar.ptr_to([0]), 2);
    }
    T.cuda.cta_sync();
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0);
    out[tid] = 1;
}

fn is_deadlock(e: &RuntimeError) -> bool {
    e.findings().is_some_and(|f| !f.is_empty())
}

#[test]
fn findings_come_back_when_waited_for() {
    let dev = sim();
    let stream = dev.stream().unwrap();
    let mut out = dev.alloc::<u32>(32).unwrap();
    let e = starves::launch_on(&stream, LaunchConfig::linear(1, 32), &mut out).unwrap().wait().unwrap_err();
    assert!(matches!(e, RuntimeError::Simulation(_)) && is_deadlock(&e), "{e}");
    stream.synchronize().expect("a waited-for error is not reported twice");
}

#[test]
fn findings_of_a_dropped_guard_come_back_at_synchronize() {
    let dev = sim();
    let stream = dev.stream().unwrap();
    let mut out = dev.alloc::<u32>(32).unwrap();
    drop(starves::launch_on(&stream, LaunchConfig::linear(1, 32), &mut out).unwrap());
    let e = stream.synchronize().unwrap_err();
    assert!(matches!(e, RuntimeError::Simulation(_)) && is_deadlock(&e), "{e}");
    stream.synchronize().expect("reported once");
}

#[test]
fn a_written_buffer_passed_shared_is_refused() {
    let dev = sim();
    let stream = dev.stream().unwrap();
    let inp = dev.upload(&iota()).unwrap();
    let out = dev.alloc::<f32>(N as usize).unwrap();
    let k = add_into::kernel().unwrap();
    let e = stream
        .launch(&k, LaunchConfig::linear(1, N), [Arg::buffer(&out), Arg::buffer(&inp), Arg::scalar(1.0f32)])
        .err()
        .expect("refused");
    assert!(matches!(&e, RuntimeError::BadArgument { param, .. } if param == "out"), "{e}");
    assert!(e.to_string().contains("needs it exclusively"), "{e}");
}

#[test]
fn a_buffer_of_another_simulator_is_refused_by_name() {
    let (dev, other) = (sim(), sim());
    let stream = dev.stream().unwrap();
    let inp = other.upload(&iota()).unwrap();
    let mut out = dev.alloc::<f32>(N as usize).unwrap();
    let e = add_into::launch_on(&stream, LaunchConfig::linear(1, N), &mut out, &inp, 1.0).err().expect("refused");
    assert!(matches!(&e, RuntimeError::ForeignBuffer { param: Some(p), .. } if p == "inp"), "{e}");
}

#[test]
fn events_order_but_do_not_time_in_the_simulator() {
    let dev = sim();
    let stream = dev.stream().unwrap();
    let (a, b) = (stream.record().unwrap(), stream.record().unwrap());
    b.synchronize().unwrap();
    let e = b.elapsed_since(&a).unwrap_err();
    assert!(matches!(e, RuntimeError::Unsupported { needs: phaser::runtime::Backend::Cuda, .. }), "{e}");
    let other = sim();
    let e = other.stream().unwrap().wait_for(&a).unwrap_err();
    assert!(e.to_string().contains("another simulator's event"), "{e}");
}

#[test]
fn graphs_need_the_gpu() {
    let dev = sim();
    let stream = dev.stream().unwrap();
    let e = stream.graph().err().expect("refused");
    assert!(matches!(e, RuntimeError::Unsupported { needs: phaser::runtime::Backend::Cuda, .. }), "{e}");
}
