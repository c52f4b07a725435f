const SCALE: f32 = 2.0;

#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    out[0] = SCALE * 2;
}
fn main() {}
