#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let tile = T.alloc_shared::<f32>([8, 32], "128B");
    out[0] = tile[8][0];
    tile[0][32] = 1.0;
}
fn main() {}
