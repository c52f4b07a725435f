//! `T.ptx.wgmma.*` on the H200 (run by `.ci/gpu-bundle`): the kernel and check of
//! `tests/dsl_wgmma.rs` (simulator) on the hardware's tensor cores: every form of `mma_async`
//! (K-major and MN-major B, negated multiplicands, A from registers) is exact.

mod wgmma_kernels;

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn every_wgmma_form_is_exact_on_the_gpu() {
    wgmma_kernels::check_wgmma_forms(&phaser::Device::cuda(0).expect("this test needs a CUDA GPU"));
}
