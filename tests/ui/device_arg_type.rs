#[phaser::device]
fn scale(x: f32) -> f32 {
    x * 2.0
}

#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let tid = T.thread_idx();
    out[0] = scale(tid);
}
fn main() {}
