#!/usr/bin/env bash
# Runs on the GPU machine: every GPU test, the gallery on the GPU, and the benchmarks.
# Logs go to $OUT (when set) and ./logs; one summary table is printed last.
cd "$(dirname "$0")"
# ONLY=regex runs just the steps whose name matches (e.g. ONLY='gallery|sim_vs_gpu|test_').
# SANITIZE=1 adds the compute-sanitizer steps (sanitize_<tool>_<example>, one process each),
# NCU=1 the Nsight Compute steps (streaming kernels, GEMM, the row reduction's bank conflicts).
# Logs go to ./logs; with $OUT set (the device tool) they come back as one archive, $OUT/logs.tgz.
LOGS=./logs; rm -rf "$LOGS"; mkdir -p "$LOGS"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null | tee "$LOGS/device.txt"
declare -a ROWS
step() {
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]]; then return 0; fi
  local t0=$(date +%s.%N)
  echo "=== $name: $*"
  timeout 300 "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  local dt=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  tail -n 40 "$LOGS/$name.log"
  local verdict=pass; [ $rc -ne 0 ] && verdict="FAIL(rc=$rc)"
  # The only filter this runner applies is the two-GPU skip below: what it filtered out was skipped.
  local tests=$(grep -E "^test result:" "$LOGS/$name.log" | tail -1 | sed 's/test result: //; s/\([0-9][0-9]*\) filtered out/\1 skipped/')
  ROWS+=("$(printf '%-48s | %-12s | %7ss | %s' "$name" "$verdict" "$dt" "$tests")")
}
step gallery_quick ./bin/phaser run --backend gpu --quick
step gallery_full ./bin/phaser run --backend gpu --full
step sim_vs_gpu ./bin/phaser diff
# cuBLAS for the GEMM reference (bench_gemm, test_gpu_gemm): cudarc dlopens libcublasLt, which
# comes with the Python package nvidia-cublas (PyTorch's dependency) on the GPU machine.
CUBLAS_LIB=$(python3 - <<'PY' 2>/dev/null
import glob, os
cands = []
try:
    import nvidia.cublas
    cands += [os.path.join(p, "lib") for p in nvidia.cublas.__path__]
except Exception:
    pass
try:
    import nvidia
    for p in nvidia.__path__:
        cands += [os.path.join(p, d, "lib") for d in ("cublas", "cu13", "cu12")]
except Exception:
    pass
for c in cands:
    if glob.glob(os.path.join(c, "libcublasLt.so*")):
        print(c)
        break
PY
)
if [ -n "$CUBLAS_LIB" ]; then
  export LD_LIBRARY_PATH="$CUBLAS_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "cuBLAS: $(ls "$CUBLAS_LIB"/libcublasLt.so* | head -1)" | tee "$LOGS/cublas.txt"
else
  echo "cuBLAS: libcublasLt not found (pip install nvidia-cublas); the GEMM comparison will fail" | tee "$LOGS/cublas.txt"
fi
# NVRTC (bench_jit's C++ comparison): libnvrtc from the Python package nvidia-cuda-nvrtc.
NVRTC_LIB=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    for p in nvidia.__path__:
        for d in ("cu13/lib", "cuda_nvrtc/lib"):
            if glob.glob(os.path.join(p, d, "libnvrtc.so*")):
                print(os.path.join(p, d))
                raise SystemExit
except ImportError:
    pass
PY
)
[ -n "$NVRTC_LIB" ] && export LD_LIBRARY_PATH="$NVRTC_LIB:${LD_LIBRARY_PATH:-}"
# NCCL (the communicator of tests/gpu_multi.rs; cudarc loads it at run time): libnccl.so.2 from
# the Python package nvidia-nccl-cu13 (nvidia/nccl/lib). Phaser sets NCCL_NVLS_ENABLE=0 itself
# and refuses any NVLink-multicast switch turned on.
NCCL_LIB=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    for p in nvidia.__path__:
        if glob.glob(os.path.join(p, "nccl", "lib", "libnccl.so*")):
            print(os.path.join(p, "nccl", "lib"))
            raise SystemExit
except ImportError:
    pass
PY
)
if [ -n "$NCCL_LIB" ]; then
  export LD_LIBRARY_PATH="$NCCL_LIB:${LD_LIBRARY_PATH:-}"
else
  echo "NCCL: libnccl not found (pip install nvidia-nccl-cu13); the NCCL tests of test_gpu_multi will fail" | tee "$LOGS/nccl.txt"
fi
# Phaser kernels as candle CustomOps on candle's stream (examples/candle), checked against
# candle's affine and matmul. The binary links libcublas, libcublasLt, libcurand, libnvrtc (candle's
# cudarc) and libcudart (candle-kernels' libmoe.a): the nvidia cu13 wheels' lib/ goes on the path.
if [ -x ./bin/candle_custom_op ]; then
  CU_LIBS=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit
dirs = []
for p in nvidia.__path__:
    for lib in ("libcublas.so.13", "libcublasLt.so.13", "libcurand.so.10", "libnvrtc.so.13", "libcudart.so.13"):
        dirs += [os.path.dirname(f) for f in glob.glob(os.path.join(p, "*", "lib", lib))]
print(":".join(dict.fromkeys(dirs)))
PY
)
  step candle_custom_op env LD_LIBRARY_PATH="${CU_LIBS:+$CU_LIBS:}${LD_LIBRARY_PATH:-}" ./bin/candle_custom_op
fi
# Tests named two_gpus_* need a second GPU: on a one-GPU machine they are filtered out, and
# their step's row counts them as skipped (never as passed).
GPUS=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
ONE_GPU_SKIP=(); [ "$GPUS" -ge 2 ] || ONE_GPU_SKIP=(--skip two_gpus_)
for t in ./bin/test_*; do step "$(basename "$t")" "$t" --include-ignored --test-threads=1 "${ONE_GPU_SKIP[@]}"; done
# The nvcc side of the ping-pong benchmark: builds bench/pingpong.cubin for bench_pingpong.
[ -f bench/pingpong.sh ] && step pingpong_nvcc bash bench/pingpong.sh
# The TMA inner-coordinate rule the simulator checks (TMA_INNER_COORD_ALIGN): the H200 probe
# table, each configuration in its own process; fails when a verdict differs from the rule.
[ -f bench/tma_coord_probe.sh ] && step tma_coord_probe bash bench/tma_coord_probe.sh
# Benchmarks (BENCH_ARGS, e.g. "--sweep", goes to each).
for b in ./bin/bench_*; do
  case "$(basename "$b")" in bench_jit | bench_gemm_fp8) continue ;; esac
  [ -x "$b" ] && step "$(basename "$b")" "$b" ${BENCH_ARGS:-}
done
# Every streaming variant (TMA ring knobs, the DSL's stream_ldg shapes) against the copy, one
# process (bench/stream.md); Triton's a*x+b and torch's copy run below in the same device run.
[ -x ./bin/bench_stream ] && step bench_stream_sweep ./bin/bench_stream --sweep --stages 3,4,8
# Toolchain latency (bench/jit.md): with the driver's JIT cache as configured, then disabled.
step bench_jit ./bin/bench_jit --reference bench/jit_reference.cu
step bench_jit_cache_disabled env CUDA_CACHE_DISABLE=1 ./bin/bench_jit --reference bench/jit_reference.cu
# What the watchdog costs the cold JIT (its per-wait record/trap code is most of a small
# kernel's PTX): the same, with every kernel printed without the watchdog.
step bench_jit_no_watchdog env CUDA_CACHE_DISABLE=1 PHASER_WAIT_LOOP=none ./bin/bench_jit --reference bench/jit_reference.cu
# Line info reaches the tools (bench/lineinfo.sh: each step passes only if the tool shows the
# Rust file/line the diagnostic expects).
for m in memcheck nvdisasm cudagdb ncu; do step "lineinfo_$m" bash bench/lineinfo.sh "$m"; done
# The same memcheck through the linker path (PHASER_JIT_LINE_INFO=1: cuLink with
# CU_JIT_GENERATE_LINE_INFO); the steps above use the default plain driver JIT.
step lineinfo_memcheck_linked_jit env PHASER_JIT_LINE_INFO=1 bash bench/lineinfo.sh memcheck
for p in ./bench/*.py; do
  case "$(basename "$p")" in gemm_fp8_torch.py) continue ;; esac
  [ -f "$p" ] && step "$(basename "$p" .py)" python3 "$p"
done
# FP8 GEMMs (bench/gemm_fp8.md): Phaser's two (per-tensor, blockwise) at issue 23's shapes,
# their inputs and C dumped; then cuBLASLt FP8 (torch._scaled_mm) timed the same way on the same
# inputs, each Phaser C compared with torch's. The dump is gigabytes: removed after.
step bench_gemm_fp8 ./bin/bench_gemm_fp8 --dump "$LOGS/fp8"
step gemm_fp8_torch python3 bench/gemm_fp8_torch.py "$LOGS/fp8"
rm -rf "$LOGS/fp8"
# Split-K of the blockwise FP8 GEMM at small M (issue 23, bench/gemm_fp8.md): the shared-scales
# kernel with 1-4 slices, with and without a cluster, each alone against cuBLASLt FP8 (blockwise
# and per-tensor) on the same inputs; every C checked (f64 in the bench, torch's in the script).
step bench_gemm_fp8_splitk ./bin/bench_gemm_fp8 --shapes 64x8192x8192,128x8192x8192 --frags 1 \
  --scales shared --outputs bf16 --splits 1,2,3,4 --split-clusters 1,2 --dump "$LOGS/fp8split"
step gemm_fp8_torch_splitk python3 bench/gemm_fp8_torch.py "$LOGS/fp8split"
rm -rf "$LOGS/fp8split"
# What the faster wait buys the streaming kernel: bench_stream again with the runtime's kernels
# printed in the other wait layouts (PHASER_WAIT_LOOP; the bench_stream step above is the
# default, first-try), at the depths that matter.
for form in hinted-first in-loop none; do
  [ -x ./bin/bench_stream ] && step "bench_stream_wait_$form" env PHASER_WAIT_LOOP=$form ./bin/bench_stream --stages 3,4,6
done
# GEMM=1: the GEMM sweep over tile shape, stages and cluster size (minutes; every row times
# Phaser and cuBLAS interleaved, the same way as the perf rows).
if [ "${GEMM:-0}" = 1 ]; then
  step gemm_sweep ./bin/bench_gemm --sweep
  step gemm_sweep_nmajor ./bin/bench_gemm --perf --b nmajor --shapes 4096x4096x4096,8192x8192x8192 --block-n 128 --wg-m 128
  # The DSL GEMM on N-major B (no cluster), checked and timed, and with split-K at a decode shape.
  step gemm_nmajor_dsl ./bin/bench_gemm --b nmajor --impl dsl --shapes 4096x4096x4096,8192x8192x8192
  step gemm_nmajor_dsl_splitk ./bin/bench_gemm --perf --b nmajor --impl dsl --block-n 128 --split-k 4 --shapes 64x4096x4096
fi
# GEMM_SHAPES=1: issue 23 §2's shapes (decode and prefill M, both B layouts, DeepSeek's
# 7168 x 2112 x 7168), each with the configuration GemmConfig::choose prints, against cuBLAS.
if [ "${GEMM_SHAPES:-0}" = 1 ]; then
  step gemm_shapes ./bin/bench_gemm --shape-sweep
  # Wave quantization (bench/gemm.md, "Tile widths"): DeepSeek's shapes at today's 128 x 256
  # tiles and at the 128 x 192 the chooser now takes (N = 2112 is 11 tiles of 192), each row
  # interleaved with cuBLAS; 4096^3 (where 128 x 256 stays the choice) as the control.
  step gemm_tile_widths ./bin/bench_gemm --perf --shapes 7168x2112x7168,2112x7168x7168,4096x4096x4096 \
    --config-name phaser_gemm_128x256x64_s4_c2_g8_kmajor,phaser_gemm_128x192x64_s4_c2_g8_kmajor,phaser_gemm_128x192x64_s4_c1_g8_kmajor,phaser_gemm_128x256x64_s4_c2_g8_nmajor,phaser_gemm_128x256x64_s4_c1_g8_nmajor,phaser_gemm_128x192x64_s4_c1_g8_nmajor
  # The 192-row tile (three consumer warpgroups, the DSL GEMM's; bench/gemm.md, "192-row
  # tiles"): M = 2112 is 11 rows of 192 (cuBLAS's tile there), 16.5 of 128. Against the
  # 128-row tiles run 22a timed, and the 64 x 256 tile the model picked for K-major B before
  # run 23a (now 192 x 128 c1 for both layouts); 7168 x 2112 x 7168 as the transposed control.
  step gemm_tile_rows ./bin/bench_gemm --perf --impl dsl --shapes 2112x7168x7168,7168x2112x7168 \
    --config-name phaser_gemm_192x128x64_s4_c1_g8_kmajor,phaser_gemm_192x128x64_s4_c2_g8_kmajor,phaser_gemm_192x192x64_s3_c1_g8_kmajor,phaser_gemm_192x192x64_s3_c2_g8_kmajor,phaser_gemm_128x256x64_s4_c2_g8_kmajor,phaser_gemm_128x192x64_s4_c1_g8_kmajor,phaser_gemm_64x256x64_s5_c1_g8_kmajor,phaser_gemm_192x128x64_s4_c1_g8_nmajor,phaser_gemm_192x192x64_s3_c1_g8_nmajor,phaser_gemm_128x192x64_s4_c1_g8_nmajor,phaser_gemm_128x256x64_s4_c1_g8_nmajor
  # The shapes whose choice moved with run 23a's rates (64 x 256 at 0.83, gemm_choice.rs
  # `tile_efficiency`): the old pick against the new one.
  step gemm_choice_moved ./bin/bench_gemm --perf --impl dsl --shapes 256x8192x4096,512x4096x4096,512x4096x8192 \
    --config-name phaser_gemm_64x256x64_s5_c1_g8_kmajor,phaser_gemm_128x128x64_s6_c1_g8_kmajor,phaser_gemm_128x128x64_s6_c2_g8_kmajor
fi
# DECODE=1: the decode autotune (bench/gemm.md, "Decode shapes"): every decode candidate of
# the DSL GEMM (tile x stages x split x reduce) at M in {1, 16, 64, 128, 256} x N, K in {4096,
# 8192}, for K-major and N-major B, interleaved with cuBLAS, the best per shape and layout
# recorded in a choice cache under $LOGS (<= 5 minutes); then ncu at base clocks on 64x4096x4096 for the recorded best and cuBLAS
# (<= 2 minutes); then the shape sweep of those shapes taking the recorded choices.
if [ "${DECODE:-0}" = 1 ]; then
  step gemm_decode ./bin/bench_gemm --decode-variants --cache-dir "$LOGS/gemm_choice"
  step gemm_decode_ncu env NCU_OUT="$LOGS" CACHE_DIR="$LOGS/gemm_choice" bash bench/decode_ncu.sh ./bin/bench_gemm 64x4096x4096
  # The narrow tiles (bench/gemm.md, "Decode: narrow tiles"): 64 x 32 and 128 x 32 (C from the
  # registers) and 64 x 64 without split-K, the full method, at the N = 4096 decode shapes.
  step gemm_decode_narrow ./bin/bench_gemm --perf --impl dsl \
    --shapes 1x4096x4096,16x4096x4096,64x4096x4096,1x4096x8192,16x4096x8192,64x4096x8192,64x8192x4096,128x4096x4096 \
    --config-name phaser_gemm_64x32x64_s8_c1_g8_kmajor,phaser_gemm_64x64x64_s8_c1_g8_kmajor,phaser_gemm_128x32x64_s8_c1_g8_kmajor
  # Why the 64 x 64 tile without split-K takes about twice as long per launch at M = 1 as at
  # M = 64 (run 26; bench/gemm.md, "Decode: narrow tiles"): the time against M (only the A
  # box's rows past M change: TMA fills them with zeros), beside a split-K tile; then ncu at
  # base clocks of both M (each its own folder: decode_ncu.sh names its files alike).
  step gemm_decode_m_sweep ./bin/bench_gemm --perf --impl dsl --b kmajor --runs 5 \
    --shapes 1x4096x4096,2x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,48x4096x4096,63x4096x4096,64x4096x4096 \
    --config-name phaser_gemm_64x64x64_s8_c1_g8_kmajor,phaser_gemm_64x256x64_s5_c1_g8_k8_kmajor
  # The same tile reading A through a copy of 64 rows, zeros past M (`--pad-a-rows`): no A
  # box row out of bounds. Near the M = 64 time at M = 1 and 16, TMA's zero fill is the cost.
  step gemm_decode_m_padded ./bin/bench_gemm --perf --impl dsl --b kmajor --runs 5 --pad-a-rows 64 \
    --shapes 1x4096x4096,16x4096x4096,64x4096x4096 --config-name phaser_gemm_64x64x64_s8_c1_g8_kmajor
  # The fix to try if it is (`Tiles::a_box_rows`): the same tiles with a 16-row A box, TMA
  # filling no row past M on any K block, at M = 1 and 16, beside the tiles' own.
  step gemm_decode_a_box ./bin/bench_gemm --perf --impl dsl --b kmajor --runs 5 \
    --shapes 1x4096x4096,16x4096x4096,1x8192x4096,16x8192x4096,1x8192x8192,16x8192x8192 \
    --config-name phaser_gemm_64x64x64_s8_c1_g8_kmajor,phaser_gemm_64x64x64_s8_c1_g8_a16_kmajor,phaser_gemm_64x256x64_s5_c1_g8_k8_kmajor,phaser_gemm_64x256x64_s5_c1_g8_k8_a16_kmajor
  for m in 1 64; do
    step "gemm_decode_ncu_m$m" env NCU_OUT="$LOGS/decode_ncu_m$m" DECODE_CONFIG=phaser_gemm_64x64x64_s8_c1_g8_kmajor \
      bash bench/decode_ncu.sh ./bin/bench_gemm "${m}x4096x4096"
  done
  step gemm_decode_measured ./bin/bench_gemm --shape-sweep --impl dsl --cache-dir "$LOGS/gemm_choice" \
    --shapes 1x4096x4096,1x8192x8192,16x4096x4096,64x4096x4096,64x4096x8192,64x8192x8192,128x8192x4096,128x8192x8192,256x4096x4096,256x4096x8192
fi
# NCU=1: Nsight Compute's DRAM throughput of the streaming kernels: every stream_axpb and
# stream_ldg variant of bench_stream --sweep, then the Triton kernel and torch's copy, one launch each (bench/stream.md);
# and the shared-memory bank conflicts of the row reduction (its consumers read 32 consecutive
# words per warp: the two counters must be 0), measured on the real kernel.
if [ "${NCU:-0}" = 1 ]; then
  step gemm_ncu env NCU_OUT="$LOGS" bash bench/gemm_ncu.sh ./bin/bench_gemm 8192x8192x8192
  # The blockwise FP8 GEMM at base clocks, FRAGS 1 and 2 (bench/gemm_fp8.md).
  step gemm_fp8_ncu env NCU_OUT="$LOGS" bash bench/gemm_fp8_ncu.sh ./bin/bench_gemm_fp8 4096x4096x4096
  # The FP8 tile widths at 8192^3 (bench/gemm_fp8.md, run 25's shared-memory hypothesis: the
  # 128-wide tile's wgmmas read more shared memory per flop than the 192-wide one's): ncu's
  # details of one launch each, at base clocks, in the step's log (one file, not a CSV each).
  step gemm_fp8_ncu_widths bash -c 'for w in 128 192; do echo "=== block-n $w"; ncu --clock-control base \
      --kernel-name gemm_fp8_dsl --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --page details ./bin/bench_gemm_fp8 \
      --shapes 8192x8192x8192 --scalings blockwise --frags 1 --scales shared --outputs bf16 --block-n $w \
      --warmup-ms 0 --runs 1 || exit 1; done'
  NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum.per_second,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
  step ncu_stream_axpb ncu --clock-control none --metrics "$NCU_METRICS" -k regex:stream_ ./bin/bench_stream --runs 1 --warmup 0 --sweep --stages 3,4,8
  step ncu_stream_triton ncu --clock-control none --target-processes all --metrics "$NCU_METRICS" -k 'regex:axpb_kernel|copy|elementwise' python3 bench/stream_triton.py --runs 1 --warmup 0
  BANK_METRICS=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  step ncu_row_reduce_banks bash -c "ncu --clock-control none --kernel-name dsl_row_reduce --metrics $BANK_METRICS --csv \
      ./bin/phaser run --backend gpu --full --only dsl_row_reduce > '$LOGS/ncu_row_reduce.csv' \
    && python3 - '$LOGS/ncu_row_reduce.csv' <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 3]
head = next((r for r in rows if 'Metric Name' in r), None)
if head is None:
    sys.exit('no ncu metrics in the output (did the kernel run under ncu?)')
name, value = head.index('Metric Name'), head.index('Metric Value')
seen = [(r[name], float(r[value].replace(',', ''))) for r in rows if r is not head and 'bank_conflicts' in r[name]]
for n, v in seen:
    print(f'{n} = {v:g}')
if len(seen) < 2 or any(v != 0 for _, v in seen):
    sys.exit('dsl_row_reduce: shared-memory bank conflicts (or no measurement)')
print('dsl_row_reduce: no shared-memory bank conflicts')
PY"
fi
# SANITIZE=1: every gallery example under each compute-sanitizer tool, each run its own process
# (a fault under one tool cannot poison the others); a generous watchdog, since the tools slow
# kernels down. Then the CUDA C++ build of cp_async_mbarrier under synccheck and racecheck, both forms.
if [ "${SANITIZE:-0}" = 1 ]; then
  EXAMPLES=$(./bin/phaser list --json | python3 -c 'import json, sys; print("\n".join(e["name"] for e in json.load(sys.stdin)["examples"]))')
  for tool in memcheck racecheck synccheck initcheck; do
    for ex in $EXAMPLES; do
      step "sanitize_${tool}_$ex" env PHASER_WATCHDOG=60s compute-sanitizer --tool "$tool" --error-exitcode 9 ./bin/phaser run --backend gpu --quick --only "$ex" --exact
    done
  done
  step cpp_cp_async_build bash bench/cp_async_mbarrier.sh
  # racecheck too: does nvcc's build of the protocol get the same cp.async write / read
  # "race" as Phaser's (bench/sanitizers.md)?
  for tool in synccheck racecheck; do
    for v in plain noinc; do
      step "sanitize_${tool}_cpp_cp_async_$v" compute-sanitizer --tool "$tool" --error-exitcode 9 ./bench/cp_async_mbarrier "$v"
    done
  done
fi
# The numbers the notes need, from the logs above (compact).
highlights() {
  local f
  for f in bench_gemm gemm_sweep gemm_sweep_nmajor gemm_nmajor_dsl gemm_nmajor_dsl_splitk gemm_shapes gemm_tile_widths gemm_tile_rows gemm_choice_moved; do
    [ -f "$LOGS/$f.log" ] || continue
    echo "--- $f"
    grep -E '^timing|^\| checks' "$LOGS/$f.log"
    # The perf table, and the three best rows per shape of the sweep (sorted by ratio).
    awk -F'|' '/^\| shape \| B \|/{p=1} /^\| sweep shape/{p=0; s=1; print; next}
               p && /^\|/{print} s && /^\|/{n[$2]++; if (n[$2] <= 3) print}' "$LOGS/$f.log"
  done
  for f in bench_gemm_fp8 gemm_fp8_torch bench_gemm_fp8_splitk gemm_fp8_torch_splitk; do
    [ -f "$LOGS/$f.log" ] || continue
    echo "--- $f"
    grep -E '^\|' "$LOGS/$f.log"
  done
  for f in bench_pingpong gemm_torch_triton gemm_ncu gemm_fp8_ncu; do
    [ -f "$LOGS/$f.log" ] || continue
    echo "--- $f"
    awk '/====================/{s=1} s' "$LOGS/$f.log" | grep -E '^\|' | head -32
  done
  for f in bench_stream bench_stream_wait_hinted-first bench_stream_wait_in-loop bench_stream_wait_none; do
    [ -f "$LOGS/$f.log" ] && echo "--- $f" && grep -E '^\| (cuMemcpy|stream_axpb_s[346] |stream_ldg_v2 )|^best' "$LOGS/$f.log"
  done
  f=ncu_row_reduce_banks
  [ -f "$LOGS/$f.log" ] && echo "--- $f" && grep -E 'bank_conflicts|dsl_row_reduce:' "$LOGS/$f.log"
}
highlights > "$LOGS/highlights.txt" 2>/dev/null
echo
echo "==================== highlights ===================="
cat "$LOGS/highlights.txt"
echo
echo "==================== GPU summary ($(date -u +%FT%TZ), $(head -1 "$LOGS/device.txt")) ===================="
printf '%-48s | %-12s | %8s | %s\n' step result time "tests"
for r in "${ROWS[@]}"; do echo "$r"; done
if [ -n "${OUT:-}" ]; then
  printf '%s\n' "${ROWS[@]}" > "$LOGS/summary.txt"
  tar czf "$OUT/logs.tgz" -C "$LOGS" .
fi
