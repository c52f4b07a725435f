#[phaser::kernel(target = "sm_90a")]
fn k(input: &[f32]) {
    input[0] = 1.0;
}
fn main() {}
