#[phaser::kernel(target = "sm_90a")]
fn k(flags: &mut [u32]) {
    T.st.ordered(flags, 0, 1, "acquire", "sys");
}
fn main() {}
