#[phaser::kernel(target = "sm_90a")]
fn k(rows: u32) {
    T.cluster_dims(2, 2, 1);
    let pipe = T.pipeline.new_multicast(4, 1, rows, 2);
    T.pipeline.init(pipe);
}
fn main() {}
