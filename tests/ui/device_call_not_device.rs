// A kernel calls something that is not a `#[phaser::device]` function: the message names the
// callee and the rule, never the expansion's internals.
struct Helper;
fn plain(x: u32) -> u32 {
    x
}

#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    let tid = T.thread_idx();
    out[0] = Helper(tid);
    out[1] = plain(tid);
}
fn main() {}
