// The float functions take the types PTX has them on: `exp2` an f32 (not an integer, not
// an f64: `ex2.approx` is f32 only), `recip` an f32 or f64 (not a half type: convert first),
// `min_nan` two f32s; `T.cvt` names a rounding PTX has.
#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32], wide: &[f64], h: &[bf16]) {
    let i = T.thread_idx();
    out[0] = i.exp2();
    out[1] = (wide[i].exp2()) as f32;
    out[2] = T.rcp(h[i]) as f32;
    out[3] = T.min_nan(wide[i], wide[i]) as f32;
    out[4] = T.cvt::<f32>(wide[i], "rq");
}
fn main() {}
