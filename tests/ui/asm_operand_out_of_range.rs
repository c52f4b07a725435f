#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let x = T.thread_idx();
    let mut y = 0u32;
    T.asm("add.u32 {2}, {0}, 1;", [x], [y]);
    out[x] = y;
}
fn main() {}
