#[phaser::kernel(target = "sm_90a")]
fn k(counts: &mut [u32]) {
    T.red.add(counts, 0, 1, "acquire", "gpu");
}
fn main() {}
