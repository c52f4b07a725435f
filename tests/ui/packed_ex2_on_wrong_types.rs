// The packed ex2 forms take a pair packed in a 32-bit integer (what `T.pack.f16x2(lo, hi)`
// gives): not an f32 (pack it first), not a u64.
#[phaser::kernel(target = "sm_90a")]
fn k(x: &[f32], w: &[u64], out: &mut [u32]) {
    let i = T.thread_idx();
    out[0] = T.ex2.f16x2(x[i]);
    out[1] = T.ex2.bf16x2(w[i]);
}
fn main() {}
