# The Nsight Compute scripts' common part, sourced by bench/gemm_ncu.sh, bench/gemm_fp8_ncu.sh
# and bench/decode_ncu.sh: finding ncu, the stall reasons they ask for, the metrics this ncu
# knows, and the tables printed from ncu's raw CSV (bench/ncu_table.py; checked on saved CSVs in
# bench/testdata/ncu/ by examples/tests/bench_scripts.rs, no GPU needed).
# Sourcing it moves to the root the scripts run from (the repository's or the GPU bundle's).
NCU_TABLE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$NCU_TABLE_DIR/.." || return 1

# ncu_setup WHO: makes OUTDIR ($NCU_OUT, default ./logs), sets NCU (NCU_BIN, else PATH, else
# the usual install places) and prints its version; fails, naming WHO, where there is none.
ncu_setup() {
  OUTDIR=${NCU_OUT:-./logs}
  mkdir -p "$OUTDIR"
  NCU=${NCU_BIN:-$(command -v ncu || true)}
  local c
  for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
    [ -z "$NCU" ] && [ -x "$c" ] && NCU=$c
  done
  [ -n "$NCU" ] || { echo "$1: ncu (Nsight Compute) not found: install it or set NCU_BIN" >&2; return 1; }
  echo "ncu: $NCU ($("$NCU" --version | tail -1))"
}

# What every table shows of a launch: the SM clock, the duration, registers per thread, the
# grid, and the issue-stall reasons (cycles per issued instruction).
NCU_COMMON=(sm__cycles_elapsed.avg.per_second gpu__time_duration.sum launch__registers_per_thread launch__grid_size)
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle membar sleeping \
         dispatch_stall lg_throttle no_instruction branch_resolving selected not_selected misc; do
  NCU_COMMON+=("smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio")
done

# ncu_known_metrics METRIC...: sets LIST to those this ncu knows (names differ between
# versions), comma-separated, and notes each it lacks.
ncu_known_metrics() {
  local known m base metrics=()
  known=$("$NCU" --query-metrics 2>/dev/null | awk '{print $1}')
  for m in "$@"; do
    base=${m%%.*}
    grep -qx "$base" <<<"$known" && metrics+=("$m") || echo "note: this ncu has no metric $base"
  done
  LIST=$(IFS=,; echo "${metrics[*]}")
}

# ncu_table KIND CSV... : the summary table of KIND (gemm, fp8, decode) from ncu's raw CSV(s).
ncu_table() {
  python3 "$NCU_TABLE_DIR/ncu_table.py" "$@"
}
