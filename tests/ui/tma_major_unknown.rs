// `major` is "k" or "mn".
#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [64, 64], swizzle = "128B", major = "row")] v: TensorMap<bf16, 2>) {
    let _ = v;
}
fn main() {}
