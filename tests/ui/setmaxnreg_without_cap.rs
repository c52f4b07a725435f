#[phaser::kernel(target = "sm_90a")]
fn k() {
    if T.warpgroup_idx() == 0 {
        T.ptx.setmaxnreg.dec(40);
    } else {
        T.ptx.setmaxnreg.inc(232);
    }
}
fn main() {}
