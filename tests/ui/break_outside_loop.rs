#[phaser::kernel(target = "sm_90a")]
fn k() {
    let tid = T.thread_idx();
    if tid == 0 {
        break;
    }
}
fn main() {}
