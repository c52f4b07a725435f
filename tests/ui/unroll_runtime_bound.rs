#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32], n: u32) {
    let mut acc = T.registers::<u32>([8]);
    #[unroll]
    for i in 0..n {
        acc[i] += 1;
    }
    out[0] = acc[0];
}
fn main() {}
