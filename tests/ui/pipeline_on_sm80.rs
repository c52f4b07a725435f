#[phaser::kernel(target = "sm_80")]
fn k() {
    let pipe = T.pipeline.new(2, 1);
    let st = T.pipeline.producer_state(pipe);
    T.pipeline.producer_commit(pipe, st, 4096);
}
fn main() {}
