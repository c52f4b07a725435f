"""bf16 GEMM throughput of torch.matmul and a Triton persistent matmul at the shapes of
bench_gemm (C = A @ B, A M x K row-major, B K x N; f32 accumulation), in the same device
run as the Phaser benchmark, timed the same way: the median of CUDA-event-timed batches of
back-to-back launches (~20 ms each) after a warmup. Prints one table; exit 0 unless the
device or torch is missing (then it says so).

    python3 bench/gemm_torch_triton.py                 # the four shapes of issue 12
    python3 bench/gemm_torch_triton.py 4096x4096x4096  # any shapes
"""

import statistics
import sys

try:
    import torch
except ImportError:
    print("gemm_torch_triton: torch is not installed")
    sys.exit(0)

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (512, 8192, 8192)]

try:
    import triton
    import triton.language as tl

    @triton.jit
    def _persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        # The Triton tutorial's persistent matmul: each program walks tiles in grouped order.
        start = tl.program_id(0)
        num_m = tl.cdiv(M, BLOCK_M)
        num_n = tl.cdiv(N, BLOCK_N)
        k_tiles = tl.cdiv(K, BLOCK_K)
        num_tiles = num_m * num_n
        in_group = GROUP_M * num_n
        for tile in tl.range(start, num_tiles, NUM_SMS, flatten=True):
            group = tile // in_group
            first_m = group * GROUP_M
            size_m = min(num_m - first_m, GROUP_M)
            pid_m = first_m + (tile % size_m)
            pid_n = (tile % in_group) // size_m
            offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_am = tl.where(offs_m < M, offs_m, 0)
            offs_bn = tl.where(offs_n < N, offs_n, 0)
            offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
            offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, k_tiles):
                offs_k = kk * BLOCK_K + tl.arange(0, BLOCK_K)
                a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak,
                            mask=offs_k[None, :] < K, other=0.0)
                b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn,
                            mask=offs_k[:, None] < K, other=0.0)
                acc = tl.dot(a, b, acc)
            offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            c = acc.to(tl.bfloat16)
            tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, c,
                     mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    def triton_matmul(a, b, c, sms):
        M, K = a.shape
        _, N = b.shape
        grid = (min(sms, triton.cdiv(M, 128) * triton.cdiv(N, 256)),)
        _persistent_matmul[grid](a, b, c, M, N, K,
                                 a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                 c.stride(0), c.stride(1),
                                 BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, NUM_SMS=sms,
                                 num_stages=3, num_warps=8)
except Exception as e:  # Triton missing or its API changed: report torch only.
    triton = None
    TRITON_ERROR = f"{type(e).__name__}: {e}"


def median_time(fn, flops, runs=10, warmup=3):
    per_batch = max(1, min(500, int(2e-2 * 7e14 / flops + 0.999)))
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / per_batch)
    return statistics.median(times)


def main():
    if not torch.cuda.is_available():
        print("gemm_torch_triton: no CUDA device")
        return
    shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1:]] or SHAPES
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(f"device: {props.name}, torch {torch.__version__}, triton {getattr(triton, '__version__', '-')}")
    if triton is None:
        print(f"note: Triton unavailable ({TRITON_ERROR}): torch only")
    rows = []
    for (m, n, k) in shapes:
        flops = 2.0 * m * n * k
        g = torch.Generator(device=dev).manual_seed(m * 31 + n * 7 + k)
        a = (torch.rand((m, k), device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
        b = (torch.rand((k, n), device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
        c = torch.empty((m, n), device=dev, dtype=torch.bfloat16)
        t_torch = median_time(lambda: torch.matmul(a, b, out=c), flops)
        ref = torch.matmul(a, b)
        t_triton, err = None, "-"
        if triton is not None:
            try:
                t_triton = median_time(lambda: triton_matmul(a, b, c, props.multi_processor_count), flops)
                c.fill_(float("nan"))
                triton_matmul(a, b, c, props.multi_processor_count)
                torch.cuda.synchronize()
                tol = 2 * 2 ** -8 * ref.float().abs() + k / 2 ** 18
                bad = ((c.float() - ref.float()).abs() > tol) | c.isnan()
                err = "PASS" if not bad.any().item() else f"FAIL ({bad.sum().item()} elements)"
            except Exception as e:  # keep the torch number
                err = f"error: {type(e).__name__}: {e}"[:80]
        rows.append((f"{m}x{n}x{k}", flops / t_torch / 1e12,
                     flops / t_triton / 1e12 if t_triton else None, err))
        print(f"{m}x{n}x{k}: torch {rows[-1][1]:.1f} TFLOP/s"
              + (f", triton {rows[-1][2]:.1f} TFLOP/s ({err})" if t_triton else f", triton: {err}"))
    print()
    print("==================== torch / Triton GEMM summary (bf16, B N-major) ====================")
    print("| shape | torch.matmul TFLOP/s | Triton TFLOP/s | Triton/torch | Triton vs torch's C |")
    for shape, tt, tr, err in rows:
        ratio = f"{tr / tt:.3f}" if tr else "-"
        print(f"| {shape} | {tt:.1f} | {tr:.1f} | {ratio} | {err} |" if tr else f"| {shape} | {tt:.1f} | - | - | {err} |")


if __name__ == "__main__":
    main()
