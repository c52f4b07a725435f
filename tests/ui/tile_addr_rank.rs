#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tile = T.alloc_shared::<f32>([8, 32], "128B");
    out[0] = T.tile_addr(tile, [3]);
}
fn main() {}
