// FP8 is a storage type: no register array holds it.
#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.require_block(128, 1, 1);
    let r = T.registers::<e4m3>([8]);
}
fn main() {}
