#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    #[unroll]
    for i in 0..4 {
        i += 1;
        out[i] = i;
    }
}
fn main() {}
