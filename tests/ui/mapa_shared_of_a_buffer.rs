#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    T.cluster_dims(2, 1, 1);
    let peer = T.ptx.mapa_shared(out, 1);
}
fn main() {}
