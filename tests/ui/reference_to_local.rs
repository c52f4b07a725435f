#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let x = T.thread_idx();
    let r = &x;
}
fn main() {}
