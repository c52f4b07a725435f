#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let ring = T.alloc_shared::<f32>([2, 8, 32], "128B");
    let stage = T.thread_idx() % 2;
    out[0] = T.shared_addr(ring[stage]);
    out[1] = T.shared_addr(ring);
}
fn main() {}
