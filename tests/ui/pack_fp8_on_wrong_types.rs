// The FP8 pair packs convert two f32s: not an integer (convert it first), not an f64.
#[phaser::kernel(target = "sm_90a")]
fn k(w: &[u32], d: &[f64], out: &mut [u16]) {
    let i = T.thread_idx();
    out[0] = T.pack.e4m3x2(w[i], 1.0);
    out[1] = T.pack.e5m2x2(0.5, d[i]);
}
fn main() {}
