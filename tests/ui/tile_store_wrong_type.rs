#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tile = T.alloc_shared::<f32>([8, 32], "128B");
    tile[0][0] = out[0];
    out[1] = tile[0];
}
fn main() {}
