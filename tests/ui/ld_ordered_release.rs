#[phaser::kernel(target = "sm_90a")]
fn k(flags: &mut [u32]) {
    let v = T.ld.ordered(flags, 0, "release", "gpu");
}
fn main() {}
