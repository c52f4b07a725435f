#[phaser::kernel(target = "sm_90a")]
fn k(#[comptime] SCALE: f32) {}
fn main() {}
