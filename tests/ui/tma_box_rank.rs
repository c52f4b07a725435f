#[phaser::kernel(target = "sm_90a")]
fn k(#[tma(box = [4, 64, 64], swizzle = "128B")] a: TensorMap<bf16, 2>, #[tma(box = [64, 512])] b: TensorMap<bf16, 2>) {}
fn main() {}
