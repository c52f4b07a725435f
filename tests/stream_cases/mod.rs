//! Stream, event and thread cases that run the same on both backends: `tests/streams.rs`
//! runs them in the simulator, `tests/gpu_streams.rs` on the GPU.
#![allow(dead_code)] // each test binary runs some of the cases

use phaser::{Device, LaunchConfig};

/// `out[tid] = inp[tid] + add`, one thread per element.
#[phaser::kernel(target = "sm_90a")]
pub fn add_into(out: &mut [f32], inp: &[f32], add: f32) {
    let tid = T.thread_idx();
    out[tid] = inp[tid] + add;
}

pub const N: u32 = 64;

pub fn iota() -> Vec<f32> {
    (0..N).map(|i| i as f32).collect()
}

/// `launch_on` returns a guard; its `wait` gives the report, and the output is written. A
/// launch is timed on the device only when its config asks (`with_timing`).
pub fn a_stream_launch_waits_for_its_report(dev: &Device) {
    let stream = dev.stream().unwrap();
    let inp = dev.upload(&iota()).unwrap();
    let mut out = dev.alloc::<f32>(N as usize).unwrap();
    let run = add_into::launch_on(&stream, LaunchConfig::linear(1, N), &mut out, &inp, 0.5).unwrap();
    let report = run.wait().unwrap();
    assert!(report.elapsed.is_none(), "an untimed launch reports no device time: {report:?}");
    assert_eq!(report.sim.is_some(), !dev.is_gpu());
    let want: Vec<f32> = iota().iter().map(|x| x + 0.5).collect();
    assert_eq!(dev.download(&out).unwrap(), want);
    let timed = LaunchConfig::linear(1, N).with_timing();
    let report = add_into::launch_on(&stream, timed, &mut out, &inp, 1.5).unwrap().wait().unwrap();
    assert_eq!(report.elapsed.is_some(), dev.is_gpu(), "device time on the GPU only: {report:?}");
    let want: Vec<f32> = iota().iter().map(|x| x + 1.5).collect();
    assert_eq!(dev.download(&out).unwrap(), want);
}

/// Guards of many untimed launches waited for out of order, some polled first: each is done
/// once waited for, and the last launch's output is the one left.
pub fn guards_are_waited_for_in_any_order(dev: &Device) {
    let stream = dev.stream().unwrap();
    let inp = dev.upload(&iota()).unwrap();
    let mut outs: Vec<_> = (0..8).map(|_| dev.alloc::<f32>(N as usize).unwrap()).collect();
    let cfg = LaunchConfig::linear(1, N);
    let mut guards: Vec<_> = outs
        .iter_mut()
        .enumerate()
        .map(|(i, out)| add_into::launch_on(&stream, cfg, out, &inp, i as f32).unwrap())
        .collect();
    let last = guards.pop().unwrap();
    last.wait().unwrap();
    // The stream runs in order: every earlier launch is done once the last one is.
    assert!(guards.iter().all(|g| g.is_done()));
    for g in guards.into_iter().rev() {
        g.wait().unwrap();
    }
    for (i, out) in outs.iter().enumerate() {
        let want: Vec<f32> = iota().iter().map(|x| x + i as f32).collect();
        assert_eq!(dev.download(out).unwrap(), want, "launch {i}");
    }
}

/// Two streams, each writing its own buffer from one shared input, both in flight at once;
/// then a third launch on the second stream reads the first stream's output after waiting
/// for the first stream's event.
pub fn two_streams_ordered_by_an_event(dev: &Device) {
    let (s1, s2) = (dev.stream().unwrap(), dev.stream().unwrap());
    let inp = dev.upload(&iota()).unwrap();
    let mut a = dev.alloc::<f32>(N as usize).unwrap();
    let mut b = dev.alloc::<f32>(N as usize).unwrap();
    let cfg = LaunchConfig::linear(1, N);
    {
        let ga = add_into::launch_on(&s1, cfg, &mut a, &inp, 1.0).unwrap();
        let gb = add_into::launch_on(&s2, cfg, &mut b, &inp, 2.0).unwrap();
        gb.wait().unwrap();
        ga.wait().unwrap();
    }
    let ga = add_into::launch_on(&s1, cfg, &mut a, &inp, 10.0).unwrap();
    let done = s1.record().unwrap();
    drop(ga);
    s2.wait_for(&done).unwrap();
    let gb = add_into::launch_on(&s2, cfg, &mut b, &a, 100.0).unwrap();
    gb.wait().unwrap();
    s1.synchronize().unwrap();
    s2.synchronize().unwrap();
    assert!(done.is_complete().unwrap());
    let want: Vec<f32> = iota().iter().map(|x| x + 110.0).collect();
    assert_eq!(dev.download(&b).unwrap(), want);
}

/// Several threads share one device; each launches on its own stream into its own buffers.
pub fn launches_from_several_threads(dev: &Device) {
    let inp = dev.upload(&iota()).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let inp = &inp;
            scope.spawn(move || {
                let stream = dev.stream().unwrap();
                let mut out = dev.alloc::<f32>(N as usize).unwrap();
                for round in 0..3u32 {
                    let add = (t * 10 + round) as f32;
                    add_into::launch_on(&stream, LaunchConfig::linear(1, N), &mut out, inp, add)
                        .unwrap()
                        .wait()
                        .unwrap();
                    let want: Vec<f32> = iota().iter().map(|x| x + add).collect();
                    assert_eq!(dev.download(&out).unwrap(), want, "thread {t}, round {round}");
                }
            });
        }
    });
}

/// The handles an application shares between threads.
pub fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Device>();
    send_sync::<phaser::Stream<'static>>();
    send_sync::<phaser::Event>();
    send_sync::<phaser::Buffer<f32>>();
    fn send<T: Send>() {}
    send::<phaser::Launch<'static>>();
}
