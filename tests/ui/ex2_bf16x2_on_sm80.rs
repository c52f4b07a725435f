// `ex2.approx.ftz.bf16x2` needs sm_90 (PTX 7.8); the f16x2 form builds on sm_80 (sm_75).
#[phaser::kernel(target = "sm_80")]
fn k(x: &[f32], out: &mut [u32]) {
    let i = T.thread_idx();
    out[i] = T.ex2.f16x2(T.pack.f16x2(x[i], x[i]));
    out[i + 32] = T.ex2.bf16x2(T.pack.bf16x2(x[i], x[i]));
}
fn main() {}
