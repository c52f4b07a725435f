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
source "$(dirname "$0")/ncu_table.sh" || exit 1
BENCH=${1:-./bin/bench_gemm}
SHAPE=${2:-8192x8192x8192}
ncu_setup gemm_ncu || exit 1
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
  "${NCU_COMMON[@]}"
)
ncu_known_metrics "${WANT[@]}"
"$NCU" "${COMMON[@]}" --metrics "$LIST" --csv --page raw "${RUN[@]}" > "$OUTDIR/ncu_metrics.csv" 2> "$OUTDIR/ncu_metrics.err"
echo "metrics pass: rc=$? (CSV in $OUTDIR/ncu_metrics.csv)"
ncu_table gemm "$OUTDIR/ncu_metrics.csv"
