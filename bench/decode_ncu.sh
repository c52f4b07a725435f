#!/usr/bin/env bash
# Nsight Compute on ONE decode shape (default 64x4096x4096, K-major B): the DSL GEMM's best
# decode candidate next to cuBLAS, at base clocks (--clock-control base: both sides at the
# same fixed clock, so the ratio is the kernels', not the boost of the moment).
#
# The DSL configuration: $DECODE_CONFIG if set (a kernel name, e.g.
# phaser_gemm_128x64x64_s8_c1_g8_k4f_kmajor), else the one `bench_gemm --decode-variants`
# recorded in the choice cache for this shape ($CACHE_DIR or the user's cache; the newest
# entry for the shape on any device), else the model's choice (bench_gemm's default with
# --impl dsl is not a decode configuration, so the model's is named explicitly).
# `bench_gemm --profile` runs 3 warm-up rounds and one profiled round of each side; every
# launch of the matching kernels is profiled (a few small kernels), the summary takes the
# last instance of each kernel name (the profiled round).
#
# One pass with the sections SpeedOfLight, MemoryWorkloadAnalysis, LaunchStats, Occupancy,
# WarpStateStats, exported; then two imports of the report: the details text
# (decode_ncu_details.txt) and the raw metrics (decode_ncu_raw.csv), from which one table
# prints duration, DRAM throughput, B's bandwidth, grid, occupancy and the top stall
# reasons of each kernel side by side.
# Usage: bash bench/decode_ncu.sh [path/to/bench_gemm] [shape]
set -uo pipefail
source "$(dirname "$0")/ncu_table.sh" || exit 1
BENCH=${1:-./bin/bench_gemm}
SHAPE=${2:-64x4096x4096}
ncu_setup decode_ncu || exit 1

CONFIG=${DECODE_CONFIG:-}
if [ -z "$CONFIG" ]; then
  CACHE=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/phaser/gemm_choice}
  ENTRY=$(ls -t "$CACHE"/*/"${SHAPE}_kmajor.txt" 2>/dev/null | head -1)
  if [ -n "$ENTRY" ]; then
    CONFIG=$(head -1 "$ENTRY")
    echo "decode_ncu: the measured choice $CONFIG (from $ENTRY)"
  fi
fi
if [ -z "$CONFIG" ]; then
  CONFIG=$("$BENCH" --print-choices --b kmajor --shapes "$SHAPE" | sed -n 's/^choose [^:]*: \([^ ]*\) .*/\1/p' | head -1)
  echo "decode_ncu: no measured choice for $SHAPE; the model's $CONFIG"
fi
[ -n "$CONFIG" ] || { echo "decode_ncu: no configuration to profile" >&2; exit 1; }

REP="$OUTDIR/decode_ncu"
rm -f "$REP.ncu-rep"
# The DSL GEMM's entry is gemm_dsl (and split-K's second launch gemm_splitk_reduce); cuBLAS's
# are nvjet_* / sm90_xmma_* / cutlass* (and its own split-K reductions).
FILTER='regex:gemm|nvjet|xmma|cutlass|splitK|reduce|gemv'
"$NCU" --clock-control base --kernel-name "$FILTER" \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread \
  --export "$REP" --force-overwrite \
  "$BENCH" --profile --impl dsl --b kmajor --config-name "$CONFIG" --shapes "$SHAPE" > "$OUTDIR/decode_ncu_run.txt" 2>&1
echo "profile pass: rc=$? (program and ncu output in $OUTDIR/decode_ncu_run.txt)"
grep '^profile' "$OUTDIR/decode_ncu_run.txt"
"$NCU" -i "$REP.ncu-rep" --page details > "$OUTDIR/decode_ncu_details.txt" 2>&1
"$NCU" -i "$REP.ncu-rep" --page raw --csv > "$OUTDIR/decode_ncu_raw.csv" 2>&1
echo "details in $OUTDIR/decode_ncu_details.txt, raw metrics in $OUTDIR/decode_ncu_raw.csv"
ncu_table decode "$OUTDIR/decode_ncu_raw.csv" "$SHAPE" "$CONFIG"
