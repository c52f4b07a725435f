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
fn guards_are_waited_for_in_any_order_gpu() {
    guards_are_waited_for_in_any_order(&gpu());
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

/// The application's own cudarc memory as kernel arguments (whole slices and views with an
/// offset and length), on a device built over the application's context and stream; a
/// Phaser buffer read back through cudarc.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn cudarc_memory_in_and_out_without_copies() {
    use phaser::Arg;
    let ctx = phaser::runtime::cudarc::driver::CudaContext::new(0).unwrap();
    let app_stream = ctx.new_stream().unwrap();
    let dev = Device::from_cudarc(ctx.clone(), app_stream.clone()).unwrap();
    let stream = dev.stream().unwrap();
    let k = add_into::kernel().unwrap();
    let cfg = LaunchConfig::linear(1, N);

    // Whole slices: `out` written, `inp` read.
    let inp = app_stream.clone_htod(&iota()).unwrap();
    let mut out = app_stream.alloc_zeros::<f32>(N as usize).unwrap();
    stream.launch(&k, cfg, [(&mut out).into(), (&inp).into(), Arg::scalar(3.0f32)]).unwrap().wait().unwrap();
    let got = app_stream.clone_dtoh(&out).unwrap();
    assert_eq!(got, iota().iter().map(|x| x + 3.0).collect::<Vec<_>>());

    // Views: 32 threads read inp[16..48] and write out2[8..40]; the rest stays zero.
    let mut out2 = app_stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let view = inp.slice(16..48);
        let mut dst = out2.slice_mut(8..40);
        let small = LaunchConfig::linear(1, 32);
        stream.launch(&k, small, [(&mut dst).into(), (&view).into(), Arg::scalar(1.0f32)]).unwrap().wait().unwrap();
    }
    let got = app_stream.clone_dtoh(&out2).unwrap();
    let want: Vec<f32> = (0..N).map(|i| if (8..40).contains(&i) { (i + 8) as f32 + 1.0 } else { 0.0 }).collect();
    assert_eq!(got, want);

    // Phaser out: a Phaser buffer read by the application's cudarc code.
    let pinp = dev.upload(&iota()).unwrap();
    let mut pout = dev.alloc::<f32>(N as usize).unwrap();
    add_into::launch_on(&stream, cfg, &mut pout, &pinp, 7.0).unwrap().wait().unwrap();
    let got = app_stream.clone_dtoh(pout.as_cuda_slice().unwrap()).unwrap();
    assert_eq!(got, iota().iter().map(|x| x + 7.0).collect::<Vec<_>>());
}

/// A graph of 100 dependent launches (two buffers written in turn) captured once and replayed
/// twice: the replays run in order, each launch after the one before.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_graph_of_100_launches_replays_in_order() {
    let dev = gpu();
    let stream = dev.stream().unwrap();
    let mut a = dev.upload(&vec![0.0f32; N as usize]).unwrap();
    let mut b = dev.alloc::<f32>(N as usize).unwrap();
    let k = add_into::kernel().unwrap();
    let cfg = LaunchConfig::linear(1, N);
    {
        let mut g = stream.graph().unwrap();
        let (ga, gb) = (g.bind_mut(&mut a).unwrap(), g.bind_mut(&mut b).unwrap());
        for _ in 0..50 {
            g.launch(&k, cfg, [gb.into(), ga.into(), 1.0f32.into()]).unwrap();
            g.launch(&k, cfg, [ga.into(), gb.into(), 1.0f32.into()]).unwrap();
        }
        let mut graph = g.build().unwrap();
        assert_eq!(graph.launches(), 100);
        graph.replay().unwrap();
        graph.replay().unwrap();
        graph.synchronize().unwrap();
    }
    assert_eq!(dev.download(&a).unwrap(), vec![200.0; N as usize]);
    assert_eq!(dev.download(&b).unwrap(), vec![199.0; N as usize]);
}
