#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let pair = (T.thread_idx(), 2);
    let x = [1u32; 4];
    out[0] = b'a';
}
fn main() {}
