#[phaser::kernel(target = "sm_90a")]
fn k() -> u32 {
    0
}
fn main() {}
