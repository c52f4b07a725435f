// Does a tile-mode TMA tensor load fault at this inner coordinate? (bench/gpu-runs.md,
// codegen's TMA_INNER_COORD_ALIGN: the inner coordinate x element size must be a multiple of
// 16 bytes, or the kernel faults with CUDA_ERROR_ILLEGAL_INSTRUCTION.)
// One configuration per process: a fault poisons the context. bench/tma_coord_probe.sh runs
// the table and checks every verdict.
//
// usage: tma_coord_probe ELEM_BYTES W H BOX_W BOX_H X Y [L2]
//   a W x H tensor of u16 (ELEM_BYTES 2) or u32 (4), box BOX_W x BOX_H, loaded at (X, Y)
//   with X the innermost coordinate; L2 is the CUtensorMapL2promotion (0 none, 2 256B).
// prints "OK" or the CUDA error's name; exits 0 either way (2 on a usage/setup error).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                     \
  do {                                                               \
    CUresult r_ = (x);                                               \
    if (r_ != CUDA_SUCCESS) {                                        \
      const char* s_ = "?";                                          \
      cuGetErrorName(r_, &s_);                                       \
      printf("SETUP-ERROR %s: %s\n", #x, s_);                        \
      return 2;                                                      \
    }                                                                \
  } while (0)

// Thread 0 issues the load (completing `bytes` on an mbarrier); every thread waits, then
// copies the box out.
extern "C" __global__ void probe(const __grid_constant__ CUtensorMap map, unsigned* out, int x, int y,
                                 unsigned bytes) {
  extern __shared__ __align__(1024) unsigned char box[];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned d = (unsigned)__cvta_generic_to_shared(box);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(d),
        "l"(&map), "r"(x), "r"(y), "r"(b)
        : "memory");
  }
  __syncthreads();
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(b));
  for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) out[i] = ((unsigned*)box)[i];
}

int main(int argc, char** argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: %s ELEM_BYTES W H BOX_W BOX_H X Y [L2]\n", argv[0]);
    return 2;
  }
  int elem = atoi(argv[1]);
  uint64_t w = strtoull(argv[2], 0, 10), h = strtoull(argv[3], 0, 10);
  uint32_t bw = atoi(argv[4]), bh = atoi(argv[5]);
  int x = atoi(argv[6]), y = atoi(argv[7]);
  int l2 = argc > 8 ? atoi(argv[8]) : 0;
  if (elem != 2 && elem != 4) {
    fprintf(stderr, "ELEM_BYTES must be 2 or 4\n");
    return 2;
  }
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUdeviceptr g, out;
  CHECK(cuMemAlloc(&g, w * h * elem));
  std::vector<unsigned char> host(w * h * elem);
  for (size_t i = 0; i < host.size(); i++) host[i] = (unsigned char)(i * 7 + 1);
  CHECK(cuMemcpyHtoD(g, host.data(), host.size()));
  unsigned bytes = bw * bh * elem;
  CHECK(cuMemAlloc(&out, bytes));
  CUtensorMap map;
  cuuint64_t dims[2] = {w, h};
  cuuint64_t strides[1] = {w * elem};
  cuuint32_t box[2] = {bw, bh};
  cuuint32_t estrides[2] = {1, 1};
  CHECK(cuTensorMapEncodeTiled(&map, elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32, 2,
                               (void*)g, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_NONE, (CUtensorMapL2promotion)l2,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  unsigned* o = (unsigned*)out;
  probe<<<1, 32, 1024>>>(map, o, x, y, bytes);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", e == cudaSuccess ? "OK" : cudaGetErrorName(e));
  return 0;
}
