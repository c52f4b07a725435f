#[phaser::kernel(target = "sm_100a")]
fn k() {
    let slot = T.alloc_shared::<u32>([1]);
    T.ptx.tcgen05.alloc(slot, 96);
}
fn main() {}
