//! The DSL's language core on the GPU (run by `.ci/gpu-bundle`): the same kernels and checks
//! as `tests/dsl_lang.rs` runs in the simulator, so typed tiles read what the hardware's TMA
//! wrote with every swizzle, register arrays compute bit-exact sums, and a tensor map that
//! does not match the kernel's declaration is a launch error on the CUDA backend too.

mod lang_kernels;

use lang_kernels::*;
use phaser::Device;

fn gpu() -> Device {
    Device::cuda(0).expect("these tests need a CUDA GPU")
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn compile_time_values_on_the_gpu() {
    check_compile_time_values(&gpu());
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn register_arrays_on_the_gpu() {
    let dev = gpu();
    check_register_sums(&dev);
    check_helper_registers(&dev);
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn tiles_read_what_the_tma_wrote_on_the_gpu() {
    check_tiles(&gpu());
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn mismatched_maps_are_launch_errors_on_the_gpu() {
    check_launch_errors(&gpu());
}
