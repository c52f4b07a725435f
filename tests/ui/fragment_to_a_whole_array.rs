// An A fragment is one k-step's 4 u32: pass one row of the `[N / 16, 4]` array.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let acc = T.registers::<f32>([32]);
    let mut p = T.registers::<u32>([4, 4]);
    T.fragment.to_a(p, acc, 0);
}
fn main() {}
