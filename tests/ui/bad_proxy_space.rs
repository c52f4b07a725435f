#[phaser::kernel(target = "sm_90a")]
fn k() {
    T.ptx.fence.proxy_async("shared::ctaa");
}
fn main() {}
