// The gallery's seed_producer_consumer kernel in CUDA C++ with `cuda::ptx` (libcu++): what
// bench_jit compiles with NVRTC, next to Phaser's build + PTX print + driver JIT of the same
// kernel. Thread 0 fills data[i] = 1.5 * i and arrives on a count-1 barrier; threads 1-4 wait
// for phase 0 and copy the 32 values out.
#include <cuda/ptx>

extern "C" __global__ void __launch_bounds__(32) seed_producer_consumer_cpp(float* out) {
    __shared__ unsigned long long bar;
    __shared__ float data[32];
    const unsigned tid = threadIdx.x;
    if (tid == 0) cuda::ptx::mbarrier_init(&bar, 1);
    __syncthreads();
    if (tid == 0) {
        for (int i = 0; i < 32; ++i) data[i] = 1.5f * i;
        (void)cuda::ptx::mbarrier_arrive(&bar);
    }
    if (tid >= 1 && tid <= 4) {
        while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0u)) {
        }
        for (int i = 0; i < 32; ++i) out[(tid - 1) * 32 + i] = data[i];
    }
}
