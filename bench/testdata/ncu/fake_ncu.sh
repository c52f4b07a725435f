#!/usr/bin/env bash
# A stand-in for ncu (NCU_BIN) that prints the saved CSVs next to it where the scripts ask for
# CSV: bench/gemm_ncu.sh, gemm_fp8_ncu.sh and decode_ncu.sh run end to end without a GPU
# (examples/tests/bench_scripts.rs). It runs no program.
here=$(cd "$(dirname "$0")" && pwd)
args=" $* "
# What it was asked, one call a line, where the test wants to read it.
[ -n "${FAKE_NCU_LOG:-}" ] && echo "$*" >> "$FAKE_NCU_LOG"
case "$args" in
  *" --version "*) echo "NVIDIA (R) Nsight Compute Command Line Profiler (stand-in)" ;;
  # Every metric a script asks for, but the hmma pipe's (the scripts note what is missing).
  *" --query-metrics "*)
    for m in sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_cycles_active sm__throughput \
             sm__inst_executed_pipe_fma dram__throughput dram__bytes lts__t_bytes sm__warps_active \
             sm__cycles_elapsed gpu__time_duration launch__registers_per_thread launch__grid_size; do
      echo "$m  Counter  a metric"
    done
    for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle membar sleeping \
             dispatch_stall lg_throttle no_instruction branch_resolving selected not_selected misc; do
      echo "smsp__average_warps_issue_stalled_${r}_per_issue_active  Ratio  a stall"
    done ;;
  *" -i "*" --page raw "*) cat "$here/decode_raw.csv" ;;
  *" -i "*) echo "details page (stand-in)" ;;
  *" --export "*) echo "profile 64x4096x4096 kmajor (stand-in)" ;;
  *" --frags 1 --scales global "*) cat "$here/fp8_frags1.csv" ;;
  *" --frags 2 --scales global "*) cat "$here/fp8_frags2.csv" ;;
  *" --frags 1 --scales shared --issue turns "*) cat "$here/fp8_smem_scales_turns.csv" ;;
  *" --frags 1 --scales shared --issue together --release warpgroup "*) cat "$here/fp8_smem_scales_wgrel.csv" ;;
  *" --frags 1 --scales shared "*) cat "$here/fp8_smem_scales.csv" ;;
  *" --csv "*) cat "$here/gemm_metrics.csv" ;;
  *) echo "sections (stand-in)" ;;
esac
