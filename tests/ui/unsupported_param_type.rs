#[phaser::kernel(target = "sm_90a")]
fn k(data: Vec<f32>) {}
fn main() {}
