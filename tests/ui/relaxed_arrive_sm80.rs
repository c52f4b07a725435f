// `.release.cta` is fine on sm_80; the variant chosen, `.relaxed`, is what is checked.
#[phaser::kernel(target = "sm_80")]
fn k() {
    let bars = T.alloc_barriers(1);
    T.ptx.mbarrier.arrive_sem(bars.ptr_to([0]), "release", "cta");
    T.ptx.mbarrier.arrive_sem(bars.ptr_to([0]), "relaxed", "cta");
}
fn main() {}
