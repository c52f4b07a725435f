#[phaser::kernel(target = "sm_90a")]
fn k(n: u32) {
    let bars = T.alloc_barriers(n);
}
fn main() {}
