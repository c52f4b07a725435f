#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tid = T.thread_idx();
    match tid {
        0 => out[0] = 1,
        _ => {}
    }
}
fn main() {}
