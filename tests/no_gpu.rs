//! Without a GPU, asking for one is a clear error, never a panic from a missing libcuda.

use phaser::runtime::RuntimeError;
use phaser::Device;

#[test]
fn missing_gpu_is_reported_not_panicked() {
    match Device::cuda(0) {
        Ok(d) => eprintln!("a GPU is present: {}", d.describe()),
        Err(e) => {
            assert!(matches!(e, RuntimeError::NoGpu { .. }), "{e}");
            assert!(e.to_string().starts_with("no CUDA GPU is available"), "{e}");
            let (d, why) = Device::best();
            assert!(!d.is_gpu() && why.is_some());
        }
    }
}
