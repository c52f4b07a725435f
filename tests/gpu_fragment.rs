//! `T.fragment.*` on the H200: the simulator's test (`tests/dsl_fragment.rs`) on the GPU.
//! Ignored by default; `.ci/gpu-run.sh` runs it.

mod fragment_kernels;

use fragment_kernels::*;

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn gpu_fragment_ops_match_the_layouts() {
    let dev = phaser::Device::cuda(0).expect("this test needs a CUDA GPU");
    for (limit, diag) in [(37, 0), (64, -9), (5, 40), (64, 64)] {
        check_fragment_ops(&dev, limit, diag);
    }
}
