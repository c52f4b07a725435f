#[phaser::kernel(target = "sm_90a")]
fn k(producers: u32) {
    let pipe = T.pipeline.new_async(4, producers, 1);
    T.pipeline.init(pipe);
}
fn main() {}
