#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let flags = T.alloc_shared::<u32>([4]);
    out[0] = T.ld.ordered(flags, 0, "acquire", "gpu");
}
fn main() {}
