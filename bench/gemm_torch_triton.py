"""bf16 GEMM throughput of torch.matmul (cuBLAS) and of Triton's Hopper matmul at the shapes
of bench_gemm (C = A @ B, A M x K row-major, B K-major (stored N x K) or N-major (K x N);
f32 accumulation, bf16 out), in the same device run as the Phaser benchmark and timed the
way bench_gemm times every row (examples/src/timing.rs `interleaved`): per shape and layout,
0.5 s of sustained load alternating torch and Triton, then 10 rounds of one ~20 ms batch of
back-to-back launches of each, in alternating order, enqueued back to back; the median batch
per side, per launch. The SM clock is sampled during the timed batches when NVML is there.

The Triton kernel is the Hopper-tuned one of Triton's own tutorial
(python/tutorials/09-persistent-matmul.py, `matmul_kernel_tma_persistent`): persistent,
grouped tile order, TMA loads and stores through host-side tensor descriptors, optional
epilogue subtiling, autotuned over the tutorial's configurations with 8 warps that fit the
227 KiB of shared memory (16; the autotuner picks per shape and layout, the winner is printed).
Prints one table; exit 0 unless the device or torch is missing (then it says so).

    python3 bench/gemm_torch_triton.py                 # the four performance shapes
    python3 bench/gemm_torch_triton.py 4096x4096x4096  # any shapes
"""

import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("gemm_torch_triton: torch is not installed")
    sys.exit(0)

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (512, 8192, 8192)]
WARMUP_S = 0.5
RUNS = 10
SMEM_BYTES = 227 * 1024

TRITON_ERROR = None
try:
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    def _configs():
        # The tutorial's space (BM 128; BN 128/256; BK 64/128; 2-4 stages; subtiled epilogue or
        # not) with 8 warps (two warpgroups: a 128-row tile's accumulator needs them), less the
        # stage counts whose buffers and epilogue tile do not fit the shared memory: 16 configs.
        out = []
        for bn in (128, 256):
            for bk in (64, 128):
                for stages in (2, 3, 4):
                    for subtile in (True, False):
                        smem = stages * (128 * bk + bn * bk) * 2 + 128 * (bn // (2 if subtile else 1)) * 2
                        if smem > SMEM_BYTES:
                            continue
                        out.append(triton.Config(
                            {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8,
                             "EPILOGUE_SUBTILE": subtile},
                            num_stages=stages, num_warps=8, pre_hook=_set_block_shapes))
        return out

    def _set_block_shapes(nargs):
        bm, bn, bk = nargs["BLOCK_SIZE_M"], nargs["BLOCK_SIZE_N"], nargs["BLOCK_SIZE_K"]
        nargs["a_desc"].block_shape = [bm, bk]
        nargs["b_desc"].block_shape = [bn, bk] if nargs["B_KMAJOR"] else [bk, bn]
        nargs["c_desc"].block_shape = [bm, bn // 2] if nargs["EPILOGUE_SUBTILE"] else [bm, bn]

    @triton.jit
    def _tile(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        return pid_m, pid_n

    @triton.autotune(configs=_configs(), key=["M", "N", "K", "B_KMAJOR"])
    @triton.jit
    def _matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                               BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                               GROUP_SIZE_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr,
                               B_KMAJOR: tl.constexpr, NUM_SMS: tl.constexpr):
        start_pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
        num_tiles = num_pid_m * num_pid_n
        tile_id_c = start_pid - NUM_SMS
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
            pid_m, pid_n = _tile(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
            offs_am = pid_m * BLOCK_SIZE_M
            offs_bn = pid_n * BLOCK_SIZE_N
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for ki in range(k_tiles):
                offs_k = ki * BLOCK_SIZE_K
                a = a_desc.load([offs_am, offs_k])
                if B_KMAJOR:
                    b = b_desc.load([offs_bn, offs_k])
                    accumulator = tl.dot(a, b.T, accumulator)
                else:
                    b = b_desc.load([offs_k, offs_bn])
                    accumulator = tl.dot(a, b, accumulator)
            tile_id_c += NUM_SMS
            pid_m, pid_n = _tile(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
            offs_cm = pid_m * BLOCK_SIZE_M
            offs_cn = pid_n * BLOCK_SIZE_N
            if EPILOGUE_SUBTILE:
                acc = tl.reshape(accumulator, (BLOCK_SIZE_M, 2, BLOCK_SIZE_N // 2))
                acc = tl.permute(acc, (0, 2, 1))
                acc0, acc1 = tl.split(acc)
                c_desc.store([offs_cm, offs_cn], acc0.to(tl.bfloat16))
                c_desc.store([offs_cm, offs_cn + BLOCK_SIZE_N // 2], acc1.to(tl.bfloat16))
            else:
                c_desc.store([offs_cm, offs_cn], accumulator.to(tl.bfloat16))

    def triton_matmul(a, b, c, b_kmajor, sms):
        """C = A @ B with B given as stored: N x K when b_kmajor, else K x N."""
        M, K = a.shape
        N = b.shape[0] if b_kmajor else b.shape[1]
        dummy = [1, 1]  # the autotuner's pre-hook sets the real block shapes
        a_desc = TensorDescriptor.from_tensor(a, dummy)
        b_desc = TensorDescriptor.from_tensor(b, dummy)
        c_desc = TensorDescriptor.from_tensor(c, dummy)
        grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"])),)
        _matmul_tma_persistent[grid](a_desc, b_desc, c_desc, M, N, K, B_KMAJOR=b_kmajor, NUM_SMS=sms)

    def tuned_config(b_kmajor, m, n, k):
        cache = getattr(_matmul_tma_persistent, "cache", {})
        for key, cfg in cache.items():
            if tuple(key[:4]) == (m, n, k, b_kmajor):
                return str(cfg)
        best = getattr(_matmul_tma_persistent, "best_config", None)
        return str(best) if best is not None else "-"
except Exception as e:  # Triton missing or its API too old: report torch only.
    triton = None
    TRITON_ERROR = f"{type(e).__name__}: {e}"


def sample_clock():
    """SM clock (MHz) and power (W) through NVML via torch, or None."""
    try:
        return torch.cuda.clock_rate(), torch.cuda.power_draw() / 1000.0
    except Exception:
        return None


def interleaved(fns, flops):
    """bench_gemm's method: sustained alternating load, then alternating timed batches."""
    per_batch = max(1, min(500, int(2e-2 * 7e14 / flops + 0.999)))
    t0 = time.perf_counter()
    while True:
        for fn in fns:
            for _ in range(per_batch):
                fn()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= WARMUP_S:
            break
    batches = []
    for run in range(RUNS):
        order = range(len(fns)) if run % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(per_batch):
                fns[i]()
            end.record()
            batches.append((i, start, end))
    samples = []
    while not batches[-1][2].query() and len(samples) < 16:
        s = sample_clock()
        if s is None:
            break
        samples.append(s)
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for i, start, end in batches:
        times[i].append(start.elapsed_time(end) / 1e3 / per_batch)
    clock = (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)) if samples else None
    return [statistics.median(t) for t in times], clock


def main():
    if not torch.cuda.is_available():
        print("gemm_torch_triton: no CUDA device")
        return
    shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1:]] or SHAPES
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    print(f"device: {props.name}, torch {torch.__version__}, triton {getattr(triton, '__version__', '-')}")
    print(f"timing: {WARMUP_S * 1000:.0f} ms of sustained load alternating torch and Triton, then {RUNS} rounds of "
          "one ~20 ms batch of each in alternating order; median per launch")
    if triton is None:
        print(f"note: Triton unavailable ({TRITON_ERROR}): torch only")
    rows = []
    for (m, n, k) in shapes:
        flops = 2.0 * m * n * k
        g = torch.Generator(device=dev).manual_seed(m * 31 + n * 7 + k)
        a = (torch.rand((m, k), device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
        b_nk = (torch.rand((n, k), device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
        for layout in ("kmajor", "nmajor"):
            kmajor = layout == "kmajor"
            b = b_nk if kmajor else b_nk.t().contiguous()  # stored N x K, or K x N
            b_op = b.t() if kmajor else b  # the K x N operand
            c = torch.empty((m, n), device=dev, dtype=torch.bfloat16)
            c_t = torch.empty((m, n), device=dev, dtype=torch.bfloat16)
            ref = torch.matmul(a, b_op)
            fns = [lambda: torch.matmul(a, b_op, out=c)]
            err, cfg = "-", "-"
            if triton is not None:
                try:
                    triton_matmul(a, b, c_t, kmajor, sms)  # autotunes on first use
                    torch.cuda.synchronize()
                    cfg = tuned_config(kmajor, m, n, k)
                    c_t.fill_(float("nan"))
                    triton_matmul(a, b, c_t, kmajor, sms)
                    torch.cuda.synchronize()
                    tol = 2 * 2 ** -8 * ref.float().abs() + k / 2 ** 18
                    bad = ((c_t.float() - ref.float()).abs() > tol) | c_t.isnan()
                    err = "PASS" if not bad.any().item() else f"FAIL ({bad.sum().item()} elements)"
                    fns.append(lambda: triton_matmul(a, b, c_t, kmajor, sms))
                except Exception as e:  # keep the torch number
                    err = f"error: {type(e).__name__}: {e}"[:100]
            times, clock = interleaved(fns, flops)
            t_torch = flops / times[0] / 1e12
            t_triton = flops / times[1] / 1e12 if len(times) > 1 else None
            clk = f"{clock[0]:.0f} MHz, {clock[1]:.0f} W" if clock else "no NVML"
            rows.append((f"{m}x{n}x{k}", layout, t_torch, t_triton, err, clk, cfg))
            print(f"{m}x{n}x{k} {layout}: torch {t_torch:.1f} TFLOP/s"
                  + (f", triton {t_triton:.1f} TFLOP/s ({err}; {cfg})" if t_triton else f", triton: {err}")
                  + f" [{clk}]")
    print()
    print("==================== torch / Triton GEMM summary (bf16) ====================")
    print("| shape | B | torch.matmul TFLOP/s | Triton (TMA persistent, autotuned) TFLOP/s | Triton/torch | "
          "Triton vs torch's C | clocks |")
    for shape, layout, tt, tr, err, clk, _ in rows:
        if tr:
            print(f"| {shape} | {layout} | {tt:.1f} | {tr:.1f} | {tr / tt:.3f} | {err} | {clk} |")
        else:
            print(f"| {shape} | {layout} | {tt:.1f} | - | - | {err} | {clk} |")


if __name__ == "__main__":
    main()
