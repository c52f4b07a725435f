#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tile = T.alloc_shared::<u32>([128]);
    let m = T.ptx.ldmatrix.x4(T.shared_elem_addr(tile, T.lane_idx() * 4), "transposed");
    out[0] = m[0];
}
fn main() {}
