"""Forward attention throughput of torch's scaled_dot_product_attention with each backend it
has (cuDNN, flash, memory-efficient) at the shapes of bench_attention, in the same device run
as the Phaser benchmark and timed the way bench_attention times its rows (examples/src/timing.rs
`interleaved_on`): per shape and backend, 0.5 s of sustained load of that backend alone, then
10 batches of ~20 ms of back-to-back launches, enqueued back to back; the median batch, per
launch. The SM clock is sampled during that backend's timed batches when NVML (pynvml) is
there. (Until run 17 the backends alternated, so cuDNN's batches ran between the slower
backends' and drew on the power they left: a higher clock than any sustained load gets.)

Shapes: head dim 64/128/256 x sequence 1k/4k/8k/16k x causal and not; batch = 16384 / seq,
heads = 2048 / d (FlashAttention-3's benchmark: 16k tokens), bf16, [batch, heads, seq, d].
TFLOP/s = 4 * B * H * S^2 * D / t, halved when causal. A backend that refuses a shape (flash
has no d256 on some builds) is reported as such, not timed.

    python3 bench/attention_torch.py               # every shape
    python3 bench/attention_torch.py 128x8192      # head dim x sequence
"""

import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError as e:
    print(f"attention_torch: torch (with torch.nn.attention) is not installed: {e}")
    sys.exit(0)

WARMUP_S = 0.5
RUNS = 10
BACKENDS = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # no NVML: no clock column
    _NVML = None


def clock_mhz():
    if _NVML is None:
        return None
    return pynvml.nvmlDeviceGetClockInfo(_NVML, pynvml.NVML_CLOCK_SM)


def shapes(argv):
    if argv:
        out = []
        for a in argv:
            d, s = a.split("x")
            out.append((int(d), int(s)))
        return out
    return [(d, s) for d in (64, 128, 256) for s in (1024, 4096, 8192, 16384)]


def flops(b, h, s, d, causal):
    f = 4.0 * b * h * s * s * d
    return f / 2 if causal else f


def main():
    if not torch.cuda.is_available():
        print("attention_torch: no CUDA device")
        return 0
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    rows = []
    for d, s in shapes(sys.argv[1:]):
        b, h = max(1, 16384 // s), 2048 // d
        gen = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.bfloat16, generator=gen) * 2 - 1 for _ in range(3))
        for causal in (False, True):
            runnable = []
            for name, backend in BACKENDS:
                def one(backend=backend):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                try:
                    one()
                    torch.cuda.synchronize()
                    runnable.append((name, one))
                except RuntimeError as e:
                    rows.append((d, s, causal, name, None, None, f"refused: {str(e).splitlines()[0][:80]}"))
            if not runnable:
                continue
            f = flops(b, h, s, d, causal)
            per_batch = max(1, min(200, int(2.0e-2 * 5.0e14 / f + 0.999)))
            # Each backend under its own sustained load, as bench_attention times each of its
            # variants: interleaved with the slower backends, cuDNN ran in the power headroom
            # their batches left (run 17 of bench/attention.md), a clock no sustained load gets.
            for name, one in runnable:
                t0 = time.time()
                while True:
                    for _ in range(per_batch):
                        one()
                    torch.cuda.synchronize()
                    if time.time() - t0 >= WARMUP_S:
                        break
                batches = []
                for r in range(RUNS):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    for _ in range(per_batch):
                        one()
                    end.record()
                    batches.append((start, end))
                clocks = []
                while not batches[-1][1].query() and len(clocks) < 16:
                    c = clock_mhz()
                    if c is None:
                        break
                    clocks.append(c)
                torch.cuda.synchronize()
                mhz = statistics.median(clocks) if clocks else None
                ts = sorted(st.elapsed_time(en) / 1e3 / per_batch for st, en in batches)
                t = ts[len(ts) // 2]
                rows.append((d, s, causal, name, t, f / t / 1e12, f"{mhz:.0f} MHz" if mhz else "no NVML"))
    print(f"{'d':>4} {'seq':>6} {'causal':>7} {'backend':>10} {'ms':>9} {'TFLOP/s':>9}  clock")
    for d, s, causal, name, t, tf, note in rows:
        if t is None:
            print(f"{d:>4} {s:>6} {str(causal):>7} {name:>10} {'-':>9} {'-':>9}  {note}")
        else:
            print(f"{d:>4} {s:>6} {str(causal):>7} {name:>10} {t * 1e3:>9.3f} {tf:>9.1f}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
