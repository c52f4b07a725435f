#[phaser::kernel(target = "sm_90a")]
fn k() {
    let pipe = T.pipeline.new(3, 4);
    let bars = T.alloc_barriers(2);
    let st = T.pipeline.consumer_state(pipe);
    T.pipeline.consumer_wait(bars.ptr_to([0]), st);
    T.pipeline.advance(pipe);
}
fn main() {}
