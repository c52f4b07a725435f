#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let mut i = 0;
    #[unroll]
    while i < 4 {
        out[i] = i;
        i += 1;
    }
}
fn main() {}
