#[phaser::kernel(target = "sm_90a")]
fn k() {
    let phase = 0;
    phase ^= 1;
}
fn main() {}
