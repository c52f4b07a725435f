#!/usr/bin/env bash
# Nsight Compute on the blockwise FP8 GEMM (bench/gemm_fp8.md, issue 23 §1): does the tensor
# core idle while each consumer warpgroup waits for its K block and promotes it? One 4096^3
# launch of gemm_fp8_dsl per variant (FRAGS 1: wait_group 0, then promote; FRAGS 2: the next
# block issued before the promotion; both reading their scales from global memory; and
# smem_scales: FRAGS 1 with the scales brought into shared memory by the producer), at ncu's base clocks (--clock-control base: the two
# variants compared at one fixed clock, not at whatever the power cap allows), each after 2
# unprofiled launches (the JIT and the first touch of the inputs), in its own process.
# Metrics (those this ncu knows): the tensor pipe's active cycles (the gmma pipe, Hopper's
# wgmma, and the hmma one as ncu names it elsewhere), issue-stall reasons per issued
# instruction, duration, SM clock, registers per thread. Printed as one table, FRAGS 1, FRAGS 2
# and smem_scales side by side; the CSVs stay in $NCU_OUT (default ./logs). Runs from the GPU bundle's root (./bin,
# ./bench), no cargo; about a minute.
# Usage: bash bench/gemm_fp8_ncu.sh [path/to/bench_gemm_fp8] [shape]   (defaults: ./bin/bench_gemm_fp8, 4096x4096x4096)
set -uo pipefail
cd "$(dirname "$0")/.."
BENCH=${1:-./bin/bench_gemm_fp8}
SHAPE=${2:-4096x4096x4096}
OUTDIR=${NCU_OUT:-./logs}
mkdir -p "$OUTDIR"
NCU=${NCU_BIN:-$(command -v ncu || true)}
for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
  [ -z "$NCU" ] && [ -x "$c" ] && NCU=$c
done
[ -n "$NCU" ] || { echo "gemm_fp8_ncu: ncu (Nsight Compute) not found: install it or set NCU_BIN" >&2; exit 1; }
echo "ncu: $NCU ($("$NCU" --version | tail -1))"

WANT=(
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  sm__cycles_elapsed.avg.per_second
  gpu__time_duration.sum
  launch__registers_per_thread
  launch__grid_size
)
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle membar sleeping \
         dispatch_stall lg_throttle no_instruction branch_resolving selected not_selected misc; do
  WANT+=("smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio")
done
KNOWN=$("$NCU" --query-metrics 2>/dev/null | awk '{print $1}')
METRICS=()
for m in "${WANT[@]}"; do
  base=${m%%.*}
  grep -qx "$base" <<<"$KNOWN" && METRICS+=("$m") || echo "note: this ncu has no metric $base"
done
LIST=$(IFS=,; echo "${METRICS[*]}")
rc=0
# name, then bench_gemm_fp8's --frags and --scales for it
for v in "frags1 1 global" "frags2 2 global" "smem_scales 1 shared"; do
  read -r name f scales <<<"$v"
  # A few launches only: no sustained warm-up, one timed batch (its launches run unprofiled).
  timeout 150 "$NCU" --clock-control base --kernel-name gemm_fp8_dsl --launch-skip 2 --launch-count 1 \
    --metrics "$LIST" --csv --page raw \
    "$BENCH" --shapes "$SHAPE" --scalings blockwise --frags "$f" --scales "$scales" --warmup-ms 0 --runs 1 \
    > "$OUTDIR/ncu_fp8_$name.csv" 2> "$OUTDIR/ncu_fp8_$name.err"
  r=$?
  echo "$name: rc=$r (CSV in $OUTDIR/ncu_fp8_$name.csv)"
  [ $r -ne 0 ] && rc=$r
done
python3 - "$OUTDIR/ncu_fp8_frags1.csv" "$OUTDIR/ncu_fp8_frags2.csv" "$OUTDIR/ncu_fp8_smem_scales.csv" <<'PY' || rc=1
import csv, io, sys
cols = []
for path in sys.argv[1:]:
    text = open(path).read()
    # The CSV starts at its header line ("ID","Process ID",...); the program's output precedes it.
    start = text.find('"ID"')
    if start < 0:
        sys.exit(f"gemm_fp8_ncu: no CSV from ncu in {path} (see the .err next to it)")
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, units, data = rows[0], rows[1], [r for r in rows[2:] if len(r) == len(rows[0])]
    if len(data) != 1:
        sys.exit(f"gemm_fp8_ncu: expected 1 profiled launch in {path}, got {len(data)}")
    cols.append(dict(zip(header, data[0])))
    units_of = dict(zip(header, units))
print()
print("==================== ncu summary (--clock-control base, gemm_fp8_dsl blockwise) ====================")
print("| metric | unit | FRAGS=1 | FRAGS=2 | smem_scales (FRAGS=1) |")
print("| --- | --- | --- | --- | --- |")
for h in cols[0]:
    if "__" in h:
        print(f"| {h} | {units_of.get(h, '')} | {cols[0].get(h, '-')} | {cols[1].get(h, '-')} | {cols[2].get(h, '-')} |")
PY
exit $rc
