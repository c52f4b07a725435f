#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let mut phase = 0;
    out[0] = phse;
}
fn main() {}
