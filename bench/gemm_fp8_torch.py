"""cuBLASLt FP8 through torch._scaled_mm on the inputs bench_gemm_fp8 dumped (e4m3 A M x K and
B N x K, K-major, bf16 C), in the same device run, timed the way bench_gemm_fp8 times the
Phaser GEMMs (examples/src/timing.rs `interleaved_on`): 0.5 s of sustained load, then 10
batches of ~20 ms of back-to-back launches, enqueued back to back; the median batch, per launch.

Per shape (a folder DIR/MxNxK/ with meta.json):
- per-tensor: torch._scaled_mm(a, b.t(), scale_a, scale_b, out_dtype=bfloat16), timed; its C
  and Phaser's per-tensor C are compared;
- blockwise (A 1x128, B 128x128 scales): Phaser's C is compared with torch's f32 matmul of the
  dequantized inputs; torch._scaled_mm with those scales is timed if this torch has it on
  sm_90 and its C agrees with that product (else the row says why not).
Tolerance: |C_phaser - C_torch| <= 2^-7 |C_torch| + 2^-9 sqrt(K0 / 128) (|A| |B|^T)[i, j]
(dequantized; K0 the K the tensor core accumulates unpromoted: 128 blockwise, K per-tensor),
over every element. Blockwise, each of bench_gemm_fp8's kernels (FRAGS 1, FRAGS 2 as
`blockwise_frags2`, the scales through shared memory as `blockwise_smem_scales`, with split-K as
`blockwise_smem_scales_split{S}[_c1]`) is compared and put against the one cuBLASLt time;
the fused e4m3 output (`blockwise_e4m3_out`: e4m3 bytes and a scale per row and 128 columns)
is dequantized and held to e4m3's tolerance (compare_e4m3), its time put against cuBLASLt's bf16 C. Per-tensor, torch runs with use_fast_accum=True (all of K in the tensor
core, as Phaser's kernel); its default (promoted) is timed and printed too. Prints one table; exit 1 if a comparison fails, 0 if torch or the dump
is missing (it says so).

    ./bin/bench_gemm_fp8 --dump DIR && python3 bench/gemm_fp8_torch.py DIR
"""

import json
import os
import statistics
import sys
import time

if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
    print("gemm_fp8_torch: no dump folder given (run ./bin/bench_gemm_fp8 --dump DIR, then this with DIR)")
    sys.exit(0)

try:
    import torch
except ImportError:
    print("gemm_fp8_torch: torch is not installed")
    sys.exit(0)

WARMUP_S = 0.5
RUNS = 10
BATCH_S = 0.02


def load(path, dtype, shape):
    raw = open(path, "rb").read()
    t = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
    return t.view(dtype).reshape(shape).cuda()


def timed(fn, flops):
    """Median seconds per launch: sustained load, then RUNS batches between CUDA events."""
    fn()
    torch.cuda.synchronize()
    per_batch = max(1, min(500, int(BATCH_S * 1.0e15 / flops) + 1))
    t0 = time.time()
    while time.time() - t0 < WARMUP_S:
        for _ in range(per_batch):
            fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / per_batch)
    return statistics.median(times)


def compare(ours, theirs, magnitude, unpromoted_k=128):
    err = (ours.float() - theirs.float()).abs()
    tol = theirs.float().abs() * 2.0**-7 + magnitude * 2.0**-9 * max(1.0, unpromoted_k / 128) ** 0.5
    ratio = (err / tol).nan_to_num(nan=float("inf"))
    worst = ratio.max().item()
    bad = int((ratio > 1).sum().item())
    return worst, bad


def compare_e4m3(ours, scales, reference, magnitude):
    """The e4m3 output (bytes M x N, scales per row and 128-column block) dequantized against the
    f32 product: gemm_fp8_dsl's Quantized::tolerance_e4m3, 2^-4 (|ref| + acc) + acc + 2^-10 s,
    acc = 2^-9 (|A| |B|^T)[i, j] (one K block unpromoted)."""
    s = scales.t().repeat_interleave(128, dim=1)[:, : ours.shape[1]]
    got = ours.float() * s
    acc = magnitude * 2.0**-9
    tol = (reference.abs() + acc) * 2.0**-4 * (1 + 2.0**-20) + acc + s * 2.0**-10
    ratio = ((got - reference).abs() / tol).nan_to_num(nan=float("inf"))
    return ratio.max().item(), int((ratio > 1).sum().item())


def main():
    root = sys.argv[1]
    # The dequantized references are f32 matmuls: full f32, never TF32.
    torch.backends.cuda.matmul.allow_tf32 = False
    failed = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("| shape | scaling | cuBLASLt (torch._scaled_mm) TFLOP/s | Phaser TFLOP/s | Phaser / cuBLASLt | "
          "Phaser C vs torch (worst / tolerance, elements outside) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shape in sorted(os.listdir(root)):
        d = os.path.join(root, shape)
        meta_path = os.path.join(d, "meta.json")
        if not os.path.isfile(meta_path):
            continue
        meta = json.load(open(meta_path))
        m, n, k = meta["m"], meta["n"], meta["k"]
        flops = 2.0 * m * n * k
        for name in ("per_tensor", "blockwise"):
            f = lambda suffix: os.path.join(d, f"{name}_{suffix}")
            if not os.path.isfile(f("a.e4m3")):
                continue  # bench_gemm_fp8 --scalings left this one out
            a = load(f("a.e4m3"), torch.float8_e4m3fn, (m, k))
            b = load(f("b.e4m3"), torch.float8_e4m3fn, (n, k))
            # FRAGS = 1's C (absent when bench_gemm_fp8 ran only --frags 2).
            c = load(f("c.bf16"), torch.bfloat16, (m, n)) if os.path.isfile(f("c.bf16")) else None
            kb = k // 128
            if name == "per_tensor":
                sa = load(f("sfa.f32"), torch.float32, (1,)).reshape(())
                sb = load(f("sfb.f32"), torch.float32, (1,)).reshape(())
                a_deq = a.float() * sa
                b_deq = b.float() * sb
            else:
                # `[K / 128][M rounded up to 4]` (gemm_fp8_dsl::sfa_stride: TMA's 16-byte strides).
                sfa = load(f("sfa.f32"), torch.float32, (kb, (m + 3) // 4 * 4))[:, :m]
                sfb = load(f("sfb.f32"), torch.float32, ((n + 127) // 128, kb))
                a_deq = a.float() * sfa.t().repeat_interleave(128, dim=1)
                b_deq = b.float() * sfb.repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)
            magnitude = a_deq.abs() @ b_deq.abs().t()
            theirs_tflops = "-"
            if name == "per_tensor":
                # use_fast_accum=True: cuBLASLt accumulates all of K in the tensor core, as
                # Phaser's per-tensor kernel does (the default promotes now and then: timed too).
                run = lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                               use_fast_accum=True)
                reference = run()
                theirs_tflops = flops / timed(run, flops) / 1e12
                promoted = lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
                print(f"{shape} per_tensor: torch._scaled_mm without fast accumulation "
                      f"{flops / timed(promoted, flops) / 1e12:.1f} TFLOP/s")
            else:
                # Phaser's blockwise C against the f32 product of the dequantized inputs; torch's
                # blockwise _scaled_mm (A: M x K/128 scales, M-contiguous; B: K/128 x N/128) is
                # timed where this torch has it on sm_90 and its C agrees with the same product.
                reference = (a_deq @ b_deq.t()).to(torch.bfloat16)
                try:
                    run = lambda: torch._scaled_mm(a, b.t(), scale_a=sfa.t(), scale_b=sfb.t(),
                                                   out_dtype=torch.bfloat16)
                    t_worst, t_bad = compare(run(), reference, magnitude)
                    if t_bad:
                        print(f"{shape} blockwise: torch's C disagrees with the dequantized product "
                              f"(worst {t_worst:.3f}): its scale layout is another; not timed")
                    else:
                        theirs_tflops = flops / timed(run, flops) / 1e12
                except Exception as e:  # noqa: BLE001 - any refusal means "not on this torch"
                    print(f"{shape} blockwise: torch._scaled_mm refuses blockwise scales here "
                          f"({type(e).__name__}: {str(e)[:160]})")
            # Blockwise: FRAGS = 1 (`blockwise_c.bf16`) and, where bench_gemm_fp8 ran them,
            # FRAGS = 2 (`blockwise_frags2_c.bf16`) and the scales through shared memory
            # (`blockwise_smem_scales_c.bf16`), each against the same reference and peer.
            variants = [(name, c)] if c is not None else []
            # And every other bf16 C bench_gemm_fp8 wrote (split-K: `blockwise_smem_scales_split{S}[_c1]`,
            # --splits; the issue order: `_turns`, --issue).
            others = sorted(x[len(f"{name}_"):-len("_c.bf16")] for x in os.listdir(d)
                            if x.startswith(f"{name}_") and x.endswith("_c.bf16") and x != f"{name}_c.bf16")
            for other in others:
                if name == "blockwise" and os.path.isfile(f(f"{other}_c.bf16")):
                    variants.append((f"{name}_{other}", load(f(f"{other}_c.bf16"), torch.bfloat16, (m, n))))
            for variant, ours_c in variants:
                worst, bad = compare(ours_c, reference, magnitude, k if name == "per_tensor" else 128)
                failed |= bad > 0
                ours = meta.get(f"{variant}_tflops")
                ratio = f"{ours / theirs_tflops:.3f}" if ours and theirs_tflops != "-" else "-"
                theirs_s = f"{theirs_tflops:.1f}" if theirs_tflops != "-" else "-"
                ours_s = f"{ours:.1f}" if ours else "-"
                print(f"| {shape} | {variant} | {theirs_s} | {ours_s} | {ratio} | {worst:.3f}, {bad} of {m * n} "
                      f"{'PASS' if bad == 0 else 'FAIL'} |")
            # The fused e4m3 output (`blockwise_e4m3_out_c.e4m3`, `_sfc.f32`: `[ceil(N / 128)][M
            # rounded up to 4]`) against the f32 product, and its time against cuBLASLt's bf16 C.
            if name == "blockwise" and os.path.isfile(f("e4m3_out_c.e4m3")):
                variant = f"{name}_e4m3_out"
                ours_c = load(f("e4m3_out_c.e4m3"), torch.float8_e4m3fn, (m, n))
                sfc = load(f("e4m3_out_sfc.f32"), torch.float32, ((n + 127) // 128, (m + 3) // 4 * 4))[:, :m]
                worst, bad = compare_e4m3(ours_c, sfc, (a_deq @ b_deq.t()), magnitude)
                failed |= bad > 0
                ours = meta.get(f"{variant}_tflops")
                ratio = f"{ours / theirs_tflops:.3f}" if ours and theirs_tflops != "-" else "-"
                theirs_s = f"{theirs_tflops:.1f}" if theirs_tflops != "-" else "-"
                ours_s = f"{ours:.1f}" if ours else "-"
                print(f"| {shape} | {variant} (e4m3 C vs cuBLASLt's bf16 C) | {theirs_s} | {ours_s} | {ratio} | "
                      f"{worst:.3f}, {bad} of {m * n} {'PASS' if bad == 0 else 'FAIL'} |")
                del ours_c, sfc
            del a, b, c, a_deq, b_deq, magnitude, reference, variants
            torch.cuda.empty_cache()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
