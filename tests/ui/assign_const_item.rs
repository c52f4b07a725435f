const ROWS: u32 = 8;

#[phaser::kernel(target = "sm_90a")]
fn k(out: &mut [u32]) {
    ROWS = 3;
    out[0] = ROWS;
}
fn main() {}
