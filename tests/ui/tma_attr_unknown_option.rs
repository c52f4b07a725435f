#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(boxes = [64, 64])] a: TensorMap<bf16, 2>, #[tma(swizzle = "128b")] b: TensorMap<bf16, 2>) {}
fn main() {}
