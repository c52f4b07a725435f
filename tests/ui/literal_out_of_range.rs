#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u16]) {
    out[0] = 70000;
}
fn main() {}
