// Dropping the stream while a launch on it is in flight.
#[phaser::kernel(target = "sm_90a")]
fn fill(out: &mut [f32]) {
    let tid = T.thread_idx();
    out[tid] = 1.0;
}

fn main() {
    let dev = phaser::Device::sim(Default::default());
    let stream = dev.stream().unwrap();
    let mut out = dev.alloc::<f32>(32).unwrap();
    let run = fill::launch_on(&stream, phaser::LaunchConfig::linear(1, 32), &mut out).unwrap();
    drop(stream);
    run.wait().unwrap();
}
