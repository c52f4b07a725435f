#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    T.asm("ret; } .entry evil() { ret;", [], []);
    out[0] = 1;
}
fn main() {}
