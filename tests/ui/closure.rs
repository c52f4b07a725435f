#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let double = |x: u32| x * 2;
    out[0] = 1;
}
fn main() {}
