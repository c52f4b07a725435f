#[phaser::kernel(target = "sm_90a")]
fn k(a: TensorMap<f32, 1>) {
    let buf = T.alloc_shared::<f32>([256]);
    let bars = T.alloc_barriers(1);
    T.tma.load(buf, a, [0], bars.ptr_to([0]));
}
fn main() {}
