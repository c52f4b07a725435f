#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let buf = T.alloc_shared::<f32>([256]);
    let tile = T.alloc_shared::<f32>([8, 32]);
    out[0] = buf.bytes();
    out[1] = tile.bytes(2);
}
fn main() {}
