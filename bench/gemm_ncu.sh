#!/usr/bin/env bash
# Nsight Compute evidence for the GEMM note (runs on the GPU machine; .ci/gpu-run.sh calls it
# with NCU=1): one 8192^3 launch of Phaser's default configuration and one of cuBLAS, both
# profiled the same way with --clock-control none (the clocks a real run gets, not ncu's base
# lock), after 3 unprofiled warm-up launches of each (bench_gemm --profile).
#
# Two passes:
#   1. sections SpeedOfLight, ComputeWorkloadAnalysis (pipe utilization), MemoryWorkloadAnalysis,
#      Occupancy, WarpStateStats (stall reasons), LaunchStats: the full text in ncu_sections.txt;
#   2. a few metrics as CSV (those this ncu knows): tensor pipe utilization, DRAM throughput,
#      achieved occupancy, SM clock, duration, and the stall reasons; printed as one table,
#      Phaser next to cuBLAS.
# Usage: bash bench/gemm_ncu.sh [path/to/bench_gemm] [shape]   (defaults: ./bin/bench_gemm, 8192x8192x8192)
set -uo pipefail
cd "$(dirname "$0")/.."
BENCH=${1:-./bin/bench_gemm}
SHAPE=${2:-8192x8192x8192}
OUTDIR=${NCU_OUT:-./logs}
mkdir -p "$OUTDIR"
NCU=${NCU_BIN:-$(command -v ncu || true)}
for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
  [ -z "$NCU" ] && [ -x "$c" ] && NCU=$c
done
[ -n "$NCU" ] || { echo "gemm_ncu: ncu (Nsight Compute) not found: install it or set NCU_BIN" >&2; exit 1; }
echo "ncu: $NCU ($("$NCU" --version | tail -1))"
# Our kernel is phaser_gemm_*, cuBLAS's are sm90_xmma_gemm_* / nvjet_* / cutlass*: skip the 3 + 3
# warm-up launches, profile the next two (one of each).
FILTER='regex:phaser_gemm|gemm|nvjet|xmma|cutlass'
COMMON=(--clock-control none --kernel-name "$FILTER" --launch-skip 6 --launch-count 2)
RUN=("$BENCH" --profile --shapes "$SHAPE")

"$NCU" "${COMMON[@]}" --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section Occupancy --section WarpStateStats --section LaunchStats "${RUN[@]}" > "$OUTDIR/ncu_sections.txt" 2>&1
echo "sections pass: rc=$? (full text in $OUTDIR/ncu_sections.txt)"

# The metrics this ncu knows (names differ between versions: keep those it lists).
WANT=(
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  dram__bytes.sum.per_second
  lts__t_bytes.sum.per_second
  sm__warps_active.avg.pct_of_peak_sustained_active
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
"$NCU" "${COMMON[@]}" --metrics "$LIST" --csv --page raw "${RUN[@]}" > "$OUTDIR/ncu_metrics.csv" 2> "$OUTDIR/ncu_metrics.err"
echo "metrics pass: rc=$? (CSV in $OUTDIR/ncu_metrics.csv)"
python3 - "$OUTDIR/ncu_metrics.csv" <<'PY'
import csv, io, sys
text = open(sys.argv[1]).read()
# The CSV starts at the header line ("ID","Process ID",...); the program's own output precedes it.
start = text.find('"ID"')
if start < 0:
    print("gemm_ncu: no CSV from ncu (see ncu_metrics.err)")
    sys.exit(1)
rows = list(csv.reader(io.StringIO(text[start:])))
header, units, data = rows[0], rows[1], rows[2:]
name_col = header.index("Kernel Name")
kernels = [(r[name_col], r) for r in data if len(r) == len(header)]
if len(kernels) < 2:
    print(f"gemm_ncu: expected 2 profiled kernels, got {len(kernels)}")
def short(n):
    return ("Phaser " if n.startswith("phaser") else "cuBLAS ") + n[:40]
print()
print("==================== ncu summary (--clock-control none) ====================")
print("| metric | unit | " + " | ".join(short(n) for n, _ in kernels) + " |")
for i, h in enumerate(header):
    if "__" not in h:
        continue
    print(f"| {h} | {units[i]} | " + " | ".join(r[i] for _, r in kernels) + " |")
PY
