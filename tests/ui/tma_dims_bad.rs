// `dims` names each of the map's dimensions once, as identifiers.
#[phaser::kernel(target = "sm_90a")]
fn k(
    #[tma(box = [64, 64], dims = [m])] a: TensorMap<bf16, 2>,
    #[tma(box = [64, 64], dims = [m, m])] b: TensorMap<bf16, 2>,
    #[tma(box = [64, 64], dims = ["m", "k"])] c: TensorMap<bf16, 2>,
) {}
fn main() {}
