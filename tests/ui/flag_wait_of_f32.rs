#[phaser::kernel(target = "sm_90a")]
fn k(flags: &mut [f32]) {
    T.flag.wait(flags, 0, 1.0, "gpu");
}
fn main() {}
