#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tid = T.thread_idx();
    out[0] = tid.wrapping_add(1);
}
fn main() {}
