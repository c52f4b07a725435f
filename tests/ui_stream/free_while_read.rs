// Freeing a kernel's input while the launch reading it is in flight.
#[phaser::kernel(target = "sm_90a")]
fn copy(out: &mut [f32], inp: &[f32]) {
    let tid = T.thread_idx();
    out[tid] = inp[tid];
}

fn main() {
    let dev = phaser::Device::sim(Default::default());
    let stream = dev.stream().unwrap();
    let inp = dev.upload(&[1.0f32; 32]).unwrap();
    let mut out = dev.alloc::<f32>(32).unwrap();
    let run = copy::launch_on(&stream, phaser::LaunchConfig::linear(1, 32), &mut out, &inp).unwrap();
    drop(inp);
    run.wait().unwrap();
}
