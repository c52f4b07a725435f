#[phaser::kernel(target = "sm_90")]
fn k(out: &mut [f32], taddr: u32) {
    let v = T.ptx.tcgen05.ld::<f32>(taddr);
    T.ptx.tcgen05.wait.ld();
    out[T.thread_idx()] = v;
}
fn main() {}
