//! The tensor-parallel GEMM with its all-gather fused (`gallery/gemm_allgather_dsl.rs`, host
//! side `gemm/tp.rs`) on the GPU: every rank's C bit-exact against the CPU reference (ternary
//! inputs: exact), two steps with growing epochs (the flags are never reset).
//! `two_gpus_allgather_gemm` needs 2 GPUs (`.ci/gpu-run.sh` skips tests named `two_gpus_*` on
//! a one-GPU machine and counts them skipped; run by hand there it fails, never passes);
//! `two_ranks_on_one_gpu_allgather_gemm` runs both ranks' buffers and kernels on GPU 0 in one
//! launch group (the pushes write the other rank's buffers directly). Run by `.ci/gpu-bundle`.

use phaser::Device;
use phaser_examples::gemm::tp::{TpGemm, TpKernels, TpTiles};

fn gpu(i: usize) -> Device {
    Device::cuda(i).unwrap_or_else(|e| panic!("needs CUDA GPU {i}: {e}"))
}

/// Two steps (epochs 1 and 2) of the `m x n x k` GEMM over `devs`' ranks, each checked.
fn steps(devs: Vec<&Device>, shape: (u32, u32, u32)) {
    let tiles = TpTiles::gallery();
    let kernels = TpKernels::new(tiles).unwrap();
    let mut tp = TpGemm::new(devs, tiles, shape, 11).unwrap();
    for epoch in 1..=2 {
        tp.launch(&kernels, epoch).unwrap_or_else(|e| panic!("epoch {epoch}: {e}"));
        if let Err(why) = tp.check().unwrap() {
            panic!("epoch {epoch}: {why}");
        }
        tp.poison_c().unwrap();
    }
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn two_ranks_on_one_gpu_allgather_gemm() {
    let dev = gpu(0);
    // 4 m-blocks per rank, 3 column tiles, 5 K blocks.
    steps(vec![&dev, &dev], (1024, 384, 320));
}

#[test]
#[ignore = "needs a GPU: run by .ci/gpu-bundle"]
fn two_gpus_allgather_gemm() {
    assert!(Device::count().unwrap() >= 2, "needs 2 GPUs (run on nvidia-h200-x2)");
    let (a, b) = (gpu(0), gpu(1));
    steps(vec![&a, &b], (1024, 384, 320));
}
