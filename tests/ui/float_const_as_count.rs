// A `const` item takes the type its use gives it, and rustc checks the item has it: an f32
// where a count is needed, and a u32 item as an f32 operand (Rust refuses `f32 * u32` too).
const SCALE: f32 = 0.5;
const BLOCK: u32 = 64;

#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32], x: &[f32]) {
    T.alloc_barriers(SCALE);
    out[0] = x[0] * BLOCK;
}
fn main() {}
