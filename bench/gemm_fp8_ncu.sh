#!/usr/bin/env bash
# Nsight Compute on the blockwise FP8 GEMM (bench/gemm_fp8.md, issue 23 §1): does the tensor
# core idle while each consumer warpgroup waits for its K block and promotes it? One 4096^3
# launch of gemm_fp8_dsl per variant (FRAGS 1: wait_group 0, then promote; FRAGS 2: the next
# block issued before the promotion; both reading their scales from global memory; and
# smem_scales: FRAGS 1 with the scales brought into shared memory by the producer; and
# smem_scales_turns: that kernel with its warpgroups issuing in turns, `--issue turns`; and
# smem_scales_wgrel: it releasing each stage once per warpgroup, `--release warpgroup`), at ncu's base clocks (--clock-control base: the two
# variants compared at one fixed clock, not at whatever the power cap allows), each after 2
# unprofiled launches (the JIT and the first touch of the inputs), in its own process.
# Metrics (those this ncu knows): the tensor pipe's active cycles (the gmma pipe, Hopper's
# wgmma, and the hmma one as ncu names it elsewhere), issue-stall reasons per issued
# instruction, duration, SM clock, registers per thread. Printed as one table, FRAGS 1, FRAGS 2
# and smem_scales side by side; the CSVs stay in $NCU_OUT (default ./logs). Runs from the GPU bundle's root (./bin,
# ./bench), no cargo; about a minute.
# Usage: bash bench/gemm_fp8_ncu.sh [path/to/bench_gemm_fp8] [shape]   (defaults: ./bin/bench_gemm_fp8, 4096x4096x4096)
set -uo pipefail
source "$(dirname "$0")/ncu_table.sh" || exit 1
BENCH=${1:-./bin/bench_gemm_fp8}
SHAPE=${2:-4096x4096x4096}
ncu_setup gemm_fp8_ncu || exit 1

WANT=(
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  "${NCU_COMMON[@]}"
)
ncu_known_metrics "${WANT[@]}"
rc=0
# name, then bench_gemm_fp8's --frags, --scales, --issue and --release for it
for v in "frags1 1 global together warp" "frags2 2 global together warp" "smem_scales 1 shared together warp" \
  "smem_scales_turns 1 shared turns warp" "smem_scales_wgrel 1 shared together warpgroup"; do
  read -r name f scales issue release <<<"$v"
  # A few launches only: no sustained warm-up, one timed batch (its launches run unprofiled).
  timeout 150 "$NCU" --clock-control base --kernel-name gemm_fp8_dsl --launch-skip 2 --launch-count 1 \
    --metrics "$LIST" --csv --page raw \
    "$BENCH" --shapes "$SHAPE" --scalings blockwise --frags "$f" --scales "$scales" --issue "$issue" --release "$release" --outputs bf16 --warmup-ms 0 --runs 1 \
    > "$OUTDIR/ncu_fp8_$name.csv" 2> "$OUTDIR/ncu_fp8_$name.err"
  r=$?
  echo "$name: rc=$r (CSV in $OUTDIR/ncu_fp8_$name.csv)"
  [ $r -ne 0 ] && rc=$r
done
ncu_table fp8 "$OUTDIR/ncu_fp8_frags1.csv" "$OUTDIR/ncu_fp8_frags2.csv" "$OUTDIR/ncu_fp8_smem_scales.csv" \
  "$OUTDIR/ncu_fp8_smem_scales_turns.csv" "$OUTDIR/ncu_fp8_smem_scales_wgrel.csv" || rc=1
exit $rc
