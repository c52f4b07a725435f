#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [64, 64])] n: u32) {}
fn main() {}
