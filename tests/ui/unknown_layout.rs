#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [f32]) {
    let tile = T.alloc_shared::<f32>([8, 32], "128");
    out[0] = tile[0][0];
}
fn main() {}
