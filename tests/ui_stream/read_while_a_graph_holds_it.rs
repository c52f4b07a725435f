// Reading a buffer on the host while a graph that writes it still exists.
#[phaser::kernel(target = "sm_90a")]
fn fill(out: &mut [f32]) {
    let tid = T.thread_idx();
    out[tid] = 1.0;
}

fn main() {
    let dev = phaser::Device::sim(Default::default());
    let stream = dev.stream().unwrap();
    let mut out = dev.alloc::<f32>(32).unwrap();
    let mut g = stream.graph().unwrap();
    let o = g.bind_mut(&mut out).unwrap();
    g.launch(&fill::kernel().unwrap(), phaser::LaunchConfig::linear(1, 32), [o.into()]).unwrap();
    let mut graph = g.build().unwrap();
    let _early = dev.download(&out);
    graph.replay().unwrap();
}
