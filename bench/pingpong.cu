// The mbarrier ping-pong in CUDA C++, the way CUTLASS writes it
// (cutlass/arch/barrier.h `ClusterBarrier`: `try_wait.parity` with the 10 ms suspend-time hint
// in a retry loop, `arrive` on a 32-bit shared address, remote arrive through `mapa`).
// The Phaser versions are built with the builder API in examples/src/bin/bench_pingpong.rs,
// which loads this file's cubin and times both in the same process.
//
// Build (on the GPU machine; bench/pingpong.sh does it):
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -cubin -o pingpong.cubin pingpong.cu
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o pingpong pingpong.cu   # standalone timing
//
// Protocol, per round trip (barriers initialized with 1 expected arrival):
//   warp 0: lane 0 arrives on `ping`; the warp waits on `pong` (parity = round & 1)
//   warp 1: the warp waits on `ping`; lane 0 arrives on `pong`
// One arrive and one wait per side per round trip. The cluster variant puts one warp in each
// of two CTAs of a cluster: the arrive goes to the peer CTA's barrier (`mapa` +
// `mbarrier.arrive.shared::cluster`, CUTLASS's form), the wait is on the own CTA's barrier.
//
// Loop shapes: nvcc unrolls the loops below 4x by itself (`pingpong_cta`, `pingpong_cluster`:
// constant parities, one loop test per 4 round trips); the `_rolled` kernels are the same code
// with `#pragma unroll 1`. bench_pingpong compares each with the Phaser kernel of the same
// shape (examples/src/pingpong.rs: unroll 4 and 1).

#include <cstdint>
#include <cstdio>
#include <cstdlib>

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void bar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// CUTLASS ClusterBarrier::wait.
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t phase) {
  uint32_t ticks = 0x989680;
  asm volatile(
      "{\n\t"
      ".reg .pred       P1; \n\t"
      "LAB_WAIT: \n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2; \n\t"
      "@P1 bra DONE; \n\t"
      "bra     LAB_WAIT; \n\t"
      "DONE: \n\t"
      "}" ::"r"(bar),
      "r"(phase), "r"(ticks)
      : "memory");
}

// CUTLASS ClusterBarrier::arrive(cta_id, pred) for a remote CTA.
__device__ __forceinline__ void bar_arrive_remote(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n\t"
      ".reg .b32 remAddr32;\n\t"
      "mapa.shared::cluster.u32  remAddr32, %0, %1;\n\t"
      "mbarrier.arrive.shared::cluster.b64  _, [remAddr32];\n\t"
      "}" ::"r"(bar),
      "r"(cta)
      : "memory");
}

// The loop bodies, shared by the unrolled and rolled kernels.
#define CTA_SIDE_A          \
  if (lane == 0) bar_arrive(ping); \
  bar_wait(pong, r & 1);
#define CTA_SIDE_B          \
  bar_wait(ping, r & 1);    \
  if (lane == 0) bar_arrive(pong);
#define CLUSTER_SIDE_A                          \
  if (lane == 0) bar_arrive_remote(bar, peer); \
  bar_wait(bar, r & 1);
#define CLUSTER_SIDE_B    \
  bar_wait(bar, r & 1);   \
  if (lane == 0) bar_arrive_remote(bar, peer);

#define CTA_PROLOGUE                                                        \
  __shared__ alignas(8) uint64_t bars[2];                                   \
  const uint32_t ping = smem_u32(&bars[0]), pong = smem_u32(&bars[1]);      \
  if (threadIdx.x == 0) {                                                   \
    bar_init(ping, 1);                                                      \
    bar_init(pong, 1);                                                      \
  }                                                                         \
  __syncthreads();                                                          \
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;

extern "C" __global__ void __launch_bounds__(64, 1) pingpong_cta(uint32_t rounds) {
  CTA_PROLOGUE
  if (warp == 0) {
    for (uint32_t r = 0; r < rounds; ++r) { CTA_SIDE_A }
  } else {
    for (uint32_t r = 0; r < rounds; ++r) { CTA_SIDE_B }
  }
}

extern "C" __global__ void __launch_bounds__(64, 1) pingpong_cta_rolled(uint32_t rounds) {
  CTA_PROLOGUE
  if (warp == 0) {
#pragma unroll 1
    for (uint32_t r = 0; r < rounds; ++r) { CTA_SIDE_A }
  } else {
#pragma unroll 1
    for (uint32_t r = 0; r < rounds; ++r) { CTA_SIDE_B }
  }
}

#define CLUSTER_PROLOGUE                                                                             \
  __shared__ alignas(8) uint64_t bars[1];                                                            \
  const uint32_t bar = smem_u32(&bars[0]);                                                           \
  uint32_t rank;                                                                                     \
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));                                       \
  if (threadIdx.x == 0) {                                                                            \
    bar_init(bar, 1);                                                                                \
    asm volatile("fence.mbarrier_init.release.cluster;");                                            \
  }                                                                                                  \
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory"); \
  const uint32_t lane = threadIdx.x % 32;                                                            \
  const uint32_t peer = rank ^ 1;

// No CTA may exit while its peer can still arrive on its barrier.
#define CLUSTER_EPILOGUE \
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32, 1) pingpong_cluster_rolled(uint32_t rounds) {
  CLUSTER_PROLOGUE
  if (rank == 0) {
#pragma unroll 1
    for (uint32_t r = 0; r < rounds; ++r) { CLUSTER_SIDE_A }
  } else {
#pragma unroll 1
    for (uint32_t r = 0; r < rounds; ++r) { CLUSTER_SIDE_B }
  }
  CLUSTER_EPILOGUE
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32, 1) pingpong_cluster(uint32_t rounds) {
  CLUSTER_PROLOGUE
  if (rank == 0) {
    for (uint32_t r = 0; r < rounds; ++r) { CLUSTER_SIDE_A }
  } else {
    for (uint32_t r = 0; r < rounds; ++r) { CLUSTER_SIDE_B }
  }
  CLUSTER_EPILOGUE
}

#ifndef PINGPONG_NO_MAIN
#include <cuda_runtime.h>

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e = (x);                                                               \
    if (e != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

template <typename F>
static float time_ms(F launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a));
  launch();
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

int main(int argc, char** argv) {
  uint32_t rounds = argc > 1 ? (uint32_t)atoi(argv[1]) : 1000000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  const char* names[] = {"cta", "cluster", "cta_rolled", "cluster_rolled"};
  for (int variant = 0; variant < 4; ++variant) {
    float best = 1e30f;
    for (int i = 0; i < reps + 1; ++i) {
      float ms = time_ms([&] {
        switch (variant) {
          case 0: pingpong_cta<<<1, 64>>>(rounds); break;
          case 1: pingpong_cluster<<<2, 32>>>(rounds); break;
          case 2: pingpong_cta_rolled<<<1, 64>>>(rounds); break;
          default: pingpong_cluster_rolled<<<2, 32>>>(rounds); break;
        }
      });
      if (i > 0 && ms < best) best = ms;  // the first run warms up
    }
    printf("nvcc_%s_ns_per_round_trip=%.1f\n", names[variant], best * 1e6f / rounds);
  }
  return 0;
}
#endif
