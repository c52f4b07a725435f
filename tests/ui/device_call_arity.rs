// A device function called with too few and too many arguments: rustc counts its own
// parameters (not the builder the expansion passes), at the call.
#[phaser::device]
fn scale(x: f32) -> f32 {
    x * 2.0
}

#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    out[0] = scale();
    out[1] = scale(1.0, 2.0);
}
fn main() {}
