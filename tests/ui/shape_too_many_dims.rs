#[phaser::kernel(target = "sm_90a")]
fn k() {
    let tile = T.alloc_shared::<f32>([1, 2, 3, 4, 5, 6]);
    let shape = T.alloc_shared::<f32>(256);
}
fn main() {}
