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

/// The application's own cudarc PTX: `dst[i] = 2 * src[i]`, launched by cudarc inside a graph.
const DOUBLE_INTO_PTX: &str = r#".version 8.0
.target sm_90
.address_size 64

.visible .entry double_into(.param .u64 dst, .param .u64 src, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    .reg .f32 %f<3>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [src];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.u32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mul.wide.u32 %rd3, %r5, 4;
    add.u64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, %f1;
    add.u64 %rd5, %rd1, %rd3;
    st.global.f32 [%rd5], %f2;
DONE:
    ret;
}
"#;

/// A graph that mixes the application's cudarc work with Phaser launches, in one capture:
/// a memset, a Phaser launch, a cudarc kernel launched on the capturing `CudaStream` (on the
/// application's own `CudaSlice`), a Phaser launch reading that slice, and a memcpy. Every
/// step reads what the one before wrote, so a step out of order changes the result; the
/// memset resets the chain, so two replays give what one does.
#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn a_graph_orders_cudarc_work_with_phaser_launches() {
    use phaser::runtime::cudarc::driver::{CudaContext, LaunchConfig as CudarcLaunch, PushKernelArg};
    let ctx = CudaContext::new(0).unwrap();
    let app_stream = ctx.new_stream().unwrap();
    let dev = Device::from_cudarc(ctx.clone(), app_stream.clone()).unwrap();
    let stream = dev.stream().unwrap();
    let module = ctx.load_module(phaser::runtime::cudarc::nvrtc::Ptx::from_src(DOUBLE_INTO_PTX)).unwrap();
    let double_into = module.load_function("double_into").unwrap();
    let k = add_into::kernel().unwrap();
    let cfg = LaunchConfig::linear(1, N);
    let mut a = dev.upload(&iota()).unwrap();
    let mut b = dev.upload(&vec![-1.0f32; N as usize]).unwrap();
    let mut c = app_stream.alloc_zeros::<f32>(N as usize).unwrap();
    let short = dev.alloc::<f32>(N as usize / 2).unwrap();
    {
        let mut g = stream.graph().unwrap();
        let (ga, gb, gc) = (g.bind_mut(&mut a).unwrap(), g.bind_mut(&mut b).unwrap(), g.bind_cudarc_mut(&mut c).unwrap());
        let gshort = g.bind(&short).unwrap();
        // Bad steps are refused when added, naming the problem.
        let e = g.memcpy(ga, gshort).unwrap_err().to_string();
        assert!(e.contains("destination is bound shared"), "{e}");
        let e = g.memcpy(gshort, ga).unwrap_err().to_string();
        assert!(e.contains("128 bytes but the destination 256"), "{e}");
        g.memset_zeros(ga).unwrap(); // a = 0
        g.launch(&k, cfg, [gb.into(), ga.into(), 1.0f32.into()]).unwrap(); // b = a + 1 = 1
        let f = &double_into;
        g.cudarc(move |scope| {
            let (dst, src) = (scope.addr_mut(gc)?, scope.addr(gb)?);
            let mut launch = scope.stream().launch_builder(f);
            launch.arg(&dst).arg(&src).arg(&N);
            let grid = CudarcLaunch { grid_dim: (1, 1, 1), block_dim: (N, 1, 1), shared_mem_bytes: 0 };
            // SAFETY: the PTX's parameters are (u64, u64, u32); both buffers hold N f32s.
            unsafe { launch.launch(grid) }.map(|_| ()).map_err(|e| phaser::RuntimeError::Config(e.to_string()))
        }); // c = 2 * b = 2
        g.launch(&k, cfg, [ga.into(), gc.into(), 3.0f32.into()]).unwrap(); // a = c + 3 = 5
        g.memcpy(gc, gb).unwrap(); // b = c = 2
        let mut graph = g.build().unwrap();
        assert_eq!(graph.launches(), 2);
        graph.replay().unwrap();
        graph.replay().unwrap();
        graph.synchronize().unwrap();
    }
    assert_eq!(dev.download(&a).unwrap(), vec![5.0; N as usize]);
    assert_eq!(dev.download(&b).unwrap(), vec![2.0; N as usize]);
    assert_eq!(app_stream.clone_dtoh(&c).unwrap(), vec![2.0; N as usize]);
}
