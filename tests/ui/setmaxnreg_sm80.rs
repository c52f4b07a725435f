#[phaser::kernel(target = "sm_80")]
fn k() {
    T.ptx.setmaxnreg.inc(232);
}
fn main() {}
