#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let pipe = T.pipeline.new(2, 1);
    let st = T.pipeline.producer_state(pipe);
    let copy = st;
    T.pipeline.advance(copy);
    out[0] = T.pipeline.stage(st);
}
fn main() {}
