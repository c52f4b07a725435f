//! Streams, events and launches from several threads on the GPU: the cases of
//! `tests/streams.rs` (which runs them in the simulator), plus device timing with events and
//! the application's own cudarc memory as kernel arguments. Run by `.ci/gpu-bundle`.

mod stream_cases;

use phaser::{Device, LaunchConfig};
use stream_cases::*;

fn gpu() -> Device {
    Device::cuda(0).expect("needs a CUDA GPU")
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_stream_launch_waits_for_its_report_gpu() {
    a_stream_launch_waits_for_its_report(&gpu());
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn two_streams_ordered_by_an_event_gpu() {
    two_streams_ordered_by_an_event(&gpu());
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn launches_from_several_threads_gpu() {
    launches_from_several_threads(&gpu());
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn events_time_the_work_between_them() {
    let dev = gpu();
    let stream = dev.stream().unwrap();
    let inp = dev.upload(&iota()).unwrap();
    let mut out = dev.alloc::<f32>(N as usize).unwrap();
    let start = stream.record().unwrap();
    for _ in 0..10 {
        add_into::launch_on(&stream, LaunchConfig::linear(1, N), &mut out, &inp, 1.0).unwrap().wait().unwrap();
    }
    let end = stream.record().unwrap();
    let t = end.elapsed_since(&start).unwrap();
    assert!(t > std::time::Duration::ZERO && t < std::time::Duration::from_secs(5), "{t:?}");
}
