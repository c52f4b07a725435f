#[phaser::kernel(target = "sm_90a")]
fn k(counts: &[u32]) {
    T.atomic.add(counts, 0, 1);
}
fn main() {}
