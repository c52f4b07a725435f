#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32], n: u32) {
    out[0] = n as f32;
}

fn host(dev: &phaser::Device, buf: &mut phaser::Buffer<u32>) {
    let _ = k::launch(dev, phaser::LaunchConfig::linear(1, 32), buf, 4);
}
fn main() {}
