#[phaser::kernel(target = "sm_91a")]
fn k() {}
fn main() {}
