#!/usr/bin/env python3
"""Triton's `y = a*x + b` on the bytes of examples/bin/bench_stream.rs, against torch's copy,
measured in the same process (the GPU bundle runs it right after bench_stream, so both
ratios come from one device run; see bench/stream.md).

    python3 bench/stream_triton.py                     # 16384 x 16384 f32 (1 GiB in, 1 GiB out)
    python3 bench/stream_triton.py --runs 1 --warmup 0 # one launch per variant (for ncu)

Variants: the plain masked Triton kernel over BLOCK elements per program for a few BLOCK /
num_warps choices (the best is reported as "triton best"), and torch's addcmul for reference.
Times: CUDA events, median of --runs after --warmup. Outputs are checked against torch's
fused a*x+b (torch.addcmul rounds once, as fma does). GB/s counts bytes read + written.
"""
import argparse
import statistics

import torch
import triton
import triton.language as tl


@triton.jit
def axpb_kernel(x_ptr, y_ptr, a, b, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, a * x + b, mask=mask)


def bench(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=16384)
    ap.add_argument("--cols", type=int, default=16384)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    dev = torch.device("cuda")
    n = args.rows * args.cols
    x = torch.rand(args.rows, args.cols, device=dev) * 2 - 1
    y = torch.full_like(x, float("nan"))
    a, b = 0.94509983, -0.61786056
    want = torch.addcmul(torch.full_like(x, b), x, torch.tensor(a, device=dev))
    moved = 2 * n * 4
    print(f"device: {torch.cuda.get_device_name()}; tensor {args.rows} x {args.cols} f32; "
          f"torch {torch.__version__}, triton {triton.__version__}; {args.warmup} warm-up + {args.runs} timed runs")
    rows = []

    def record(name, fn, check):
        y.fill_(float("nan"))
        med, mn = bench(fn, args.runs, args.warmup)
        ok = "ok" if check() else "WRONG"
        rows.append((name, med, mn, ok))
        print(f"{name}: median {med:.3f} ms, {moved / med / 1e6:.0f} GB/s, {ok}")

    record("torch copy_", lambda: y.copy_(x), lambda: torch.equal(y, x))
    copy_before = rows[-1][1]
    for block, warps in [(1024, 4), (2048, 4), (4096, 4), (4096, 8), (8192, 8), (16384, 8)]:
        grid = (triton.cdiv(n, block),)
        record(f"triton a*x+b BLOCK={block} warps={warps}",
               lambda block=block, warps=warps, grid=grid: axpb_kernel[grid](x, y, a, b, n, BLOCK=block, num_warps=warps),
               lambda: torch.allclose(y, want, rtol=0, atol=1e-6))
    record("torch addcmul a*x+b", lambda: torch.addcmul(torch.tensor(b, device=dev), x, torch.tensor(a, device=dev), out=y),
           lambda: torch.allclose(y, want, rtol=0, atol=1e-6))
    record("torch copy_ (again)", lambda: y.copy_(x), lambda: torch.equal(y, x))
    copy_ms = statistics.median([copy_before, rows[-1][1]])
    print()
    print("| variant | median ms | min ms | GB/s (read+write) | % of torch copy | output check |")
    print("|---|---|---|---|---|---|")
    for name, med, mn, ok in rows:
        print(f"| {name} | {med:.3f} | {mn:.3f} | {moved / med / 1e6:.0f} | {100 * copy_ms / med:.1f} | {ok} |")
    tri = [r for r in rows if r[0].startswith("triton")]
    best = min(tri, key=lambda r: r[1])
    print(f"\ntriton best: {best[0]} at {100 * copy_ms / best[1]:.1f}% of the copy")
    if any(r[3] != "ok" for r in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
