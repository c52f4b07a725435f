#!/usr/bin/env python3
"""PyTorch baselines for examples/bench_stream.rs, on the same bytes.

    python3 bench/torch_copy.py                 # 16384 x 16384 f32 (1 GiB in, 1 GiB out)
    python3 bench/torch_copy.py --rows 32768 --runs 20

Times (CUDA events, median of --runs after --warmup) for:
  - torch copy_            (y.copy_(x): the device-to-device copy baseline)
  - torch addcmul a*x+b    (one fused elementwise kernel: y = b + x * a, scalars as 0-d tensors)
GB/s counts bytes read + written (2 x tensor bytes). Prints one table at the end.
"""
import argparse
import statistics

import torch


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
        times.append(start.elapsed_time(end))  # milliseconds
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
    a, b = 1.75, -0.25
    at = torch.tensor(a, device=dev)
    bt = torch.tensor(b, device=dev)
    moved = 2 * n * 4
    print(f"device: {torch.cuda.get_device_name()}; tensor {args.rows} x {args.cols} f32 = "
          f"{n * 4 / 2**30:.2f} GiB in + out; torch {torch.__version__}")

    rows = []
    med, mn = bench(lambda: y.copy_(x), args.runs, args.warmup)
    ok = bool(torch.equal(y, x))
    rows.append(("torch copy_", med, mn, ok))
    copy_bw = moved / (med * 1e-3) / 1e9

    y.fill_(float("nan"))
    med, mn = bench(lambda: torch.addcmul(bt, x, at, out=y), args.runs, args.warmup)
    ok = bool(torch.allclose(y, x * a + b, rtol=1e-6, atol=1e-6))
    rows.append(("torch addcmul a*x+b", med, mn, ok))

    print()
    print("| variant | median ms | min ms | GB/s (read+write) | % of copy | output check |")
    print("|---|---|---|---|---|---|")
    for name, med, mn, ok in rows:
        bw = moved / (med * 1e-3) / 1e9
        print(f"| {name} | {med:.3f} | {mn:.3f} | {bw:.0f} | {100 * bw / copy_bw:.1f} | {'ok' if ok else 'FAIL'} |")


if __name__ == "__main__":
    main()
