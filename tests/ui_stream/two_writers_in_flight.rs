// Two launches in flight that both write one buffer (on two streams: a race).
#[phaser::kernel(target = "sm_90a")]
fn fill(out: &mut [f32]) {
    let tid = T.thread_idx();
    out[tid] = 1.0;
}

fn main() {
    let dev = phaser::Device::sim(Default::default());
    let (s1, s2) = (dev.stream().unwrap(), dev.stream().unwrap());
    let mut out = dev.alloc::<f32>(32).unwrap();
    let a = fill::launch_on(&s1, phaser::LaunchConfig::linear(1, 32), &mut out).unwrap();
    let b = fill::launch_on(&s2, phaser::LaunchConfig::linear(1, 32), &mut out).unwrap();
    a.wait().unwrap();
    b.wait().unwrap();
}
