#[phaser::kernel(target = "sm_90a")]
fn k(tmap: TensorMap<2>) {
    let tile = T.alloc_shared::<f32>([256]);
    let bars = T.alloc_barriers(1);
    T.ptx.cp_async.bulk.tensor.g2s(T.shared_addr(tile), tmap, [0, 0, 0], bars.ptr_to([0]));
}
fn main() {}
