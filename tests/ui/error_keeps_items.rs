#[phaser::kernel(target = "sm_90a")]
fn broken(out: &mut [u32], n: u32, #[comptime] S: u32) {
    out[0] = n + 1.5;
}

#[phaser::device]
fn helper(x: u32) -> u32 {
    x.frobnicate()
}

#[phaser::kernel(target = "sm_90a")]
fn caller(out: &mut [u32]) {
    out[0] = helper(1);
}

// Only the macro's errors: the kernel's API still exists, so these calls add nothing.
fn host(dev: &phaser::Device, out: &mut phaser::Buffer<u32>) {
    let _ = broken::launch(dev, phaser::LaunchConfig::linear(1, 32), out, 4, 2);
    let _ = broken::kernel_for(2).unwrap().name();
    let _ = broken::ptx_for(2);
    let _ = broken::build(broken::TARGET, 3);
    let _ = broken::specializations() + broken::NAME.len();
}
fn main() {}
