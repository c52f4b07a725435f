// The gallery's `cp_async_mbarrier` kernel (examples/src/gallery/cp_async_mbarrier.rs) written
// in CUDA C++ with inline PTX, to settle compute-sanitizer synccheck's "Missing wait" report on
// the non-.noinc `cp.async.mbarrier.arrive`: if nvcc's build of the same protocol gets the same
// report, the report is about the instruction form, not about Phaser's code.
//
// Block of 128 threads: threads 0-63 produce, warps 2-3 consume; tiles of 256 u32 (1 KiB) go
// through 3 stages with full/empty mbarriers per stage (producers start at parity 1, consumers
// at parity 0). Producer p waits empty[s], copies 16 bytes (cp.async.cg) into slot p and
// signals full[s] with cp.async.mbarrier.arrive — with .noinc (`full` expects the 64 triggered
// arrivals), or without it (net-zero: the instruction raises the pending count first, so each
// producer also arrives normally). Consumer c waits full[s], reads slot (c + 17) % 64 (another
// thread's copy), each consumer warp's lane 0 releases the stage on empty[s], and
// out = x * 3 + tile.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -lineinfo -o cp_async_mbarrier bench/cp_async_mbarrier.cu
//   ./cp_async_mbarrier plain|noinc            # checks the output, prints PASS/FAIL
//   compute-sanitizer --tool synccheck ./cp_async_mbarrier plain
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr uint32_t STAGES = 3, PRODUCERS = 64, CONSUMER_WARPS = 2;
constexpr uint32_t THREADS = PRODUCERS + 32 * CONSUMER_WARPS;
constexpr uint32_t SLOT_BYTES = 16, TILE_BYTES = PRODUCERS * SLOT_BYTES, TILE_ELEMS = TILE_BYTES / 4;
constexpr uint32_t SLOT_SHIFT = 17;

__device__ __forceinline__ uint32_t smem(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
}
// The sm_80 wait: spin on test_wait.parity (as the Rust kernel does).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
    uint32_t done = 0;
    while (!done) {
        asm volatile(
            "{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(smem(bar)), "r"(parity)
            : "memory");
    }
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(dst)), "l"(src) : "memory");
}
template <bool NOINC>
__device__ __forceinline__ void cp_async_arrive(uint64_t* bar) {
    if (NOINC) {
        asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem(bar)) : "memory");
    } else {
        asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" ::"r"(smem(bar)) : "memory");
    }
}

template <bool NOINC>
__global__ void __launch_bounds__(THREADS) cp_async_mbarrier(const uint32_t* inp, uint32_t* out, uint32_t ntiles) {
    __shared__ alignas(16) uint32_t tiles[STAGES * TILE_ELEMS];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const uint32_t tid = threadIdx.x;
    if (tid == 0) {
        for (uint32_t s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], PRODUCERS);
            mbar_init(&empty[s], CONSUMER_WARPS);
        }
    }
    __syncthreads();  // publishes the inits inside the CTA
    uint32_t stage = 0;
    if (tid < PRODUCERS) {
        uint32_t phase = 1;  // producers start at parity 1
        for (uint32_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
            mbar_wait(&empty[stage], phase);
            cp_async16(&tiles[stage * TILE_ELEMS + tid * (SLOT_BYTES / 4)], &inp[t * TILE_ELEMS + tid * (SLOT_BYTES / 4)]);
            cp_async_arrive<NOINC>(&full[stage]);
            if (!NOINC) mbar_arrive(&full[stage]);  // the triggered arrival was net-zero
            if (++stage == STAGES) { stage = 0; phase ^= 1; }
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
    } else {
        const uint32_t c = tid - PRODUCERS;
        uint32_t phase = 0;  // consumers start at parity 0
        for (uint32_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
            mbar_wait(&full[stage], phase);
            // Each consumer reads 4 words of another thread's 16-byte slot.
            for (uint32_t w = 0; w < 4; ++w) {
                const uint32_t slot = (c + SLOT_SHIFT) % PRODUCERS;
                const uint32_t e = slot * (SLOT_BYTES / 4) + w;
                const uint32_t x = tiles[stage * TILE_ELEMS + e];
                out[t * TILE_ELEMS + e] = x * 3u + t;
            }
            __syncwarp();
            if ((c & 31) == 0) mbar_arrive(&empty[stage]);
            if (++stage == STAGES) { stage = 0; phase ^= 1; }
        }
    }
}

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e = (x);                                                                  \
        if (e != cudaSuccess) {                                                               \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

int main(int argc, char** argv) {
    const bool noinc = argc > 1 && std::strcmp(argv[1], "noinc") == 0;
    const uint32_t ntiles = 64, grid = 2;
    std::vector<uint32_t> in(ntiles * TILE_ELEMS), out(in.size(), 0xDEADBEEF);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
    uint32_t *din, *dout;
    CHECK(cudaMalloc(&din, in.size() * 4));
    CHECK(cudaMalloc(&dout, out.size() * 4));
    CHECK(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dout, out.data(), out.size() * 4, cudaMemcpyHostToDevice));
    if (noinc) {
        cp_async_mbarrier<true><<<grid, THREADS>>>(din, dout, ntiles);
    } else {
        cp_async_mbarrier<false><<<grid, THREADS>>>(din, dout, ntiles);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (uint32_t t = 0; t < ntiles; ++t)
        for (uint32_t e = 0; e < TILE_ELEMS; ++e) {
            const size_t i = size_t(t) * TILE_ELEMS + e;
            wrong += out[i] != in[i] * 3u + t;
        }
    std::printf("%s cp_async_mbarrier (%s): %zu of %zu outputs wrong\n", wrong ? "FAIL" : "PASS",
                noinc ? ".noinc" : "plain + mbarrier.arrive", wrong, out.size());
    return wrong ? 1 : 0;
}
