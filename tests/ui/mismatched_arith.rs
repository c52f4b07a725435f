#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32], scale: f32) {
    let tid = T.thread_idx();
    out[0] = tid * scale;
}
fn main() {}
