// Row reductions are of an f32 accumulator, not of any register array.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let idx = T.registers::<u32>([32]);
    let m = T.fragment.row_max(idx, 0);
}
fn main() {}
