#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    #[unroll]
    for i in 0..8 {
        if out[i] == 0 {
            break;
        }
        out[i] = i;
    }
}
fn main() {}
