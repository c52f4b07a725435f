#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tid = T.thread_idx();
    if tid {
        out[0] = 1;
    }
}
fn main() {}
