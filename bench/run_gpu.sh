#!/usr/bin/env bash
# Run on the H200 machine, from the repository root, with the binaries of
# bench/build_gpu_bundle.sh in .gpu/ (or the folder given as $1):
#   bash bench/run_gpu.sh            # correctness (quick + full), bandwidth sweep, torch baseline
#   SANITIZE=1 bash bench/run_gpu.sh # also compute-sanitizer (memcheck, synccheck) on the quick sizes
# Logs go to $OUT (the device tool's folder) or /tmp/phaser_out. Each step has a time limit;
# a hang (e.g. a deadlocked mbarrier wait) shows as exit code 124 for that step.
set -u
BIN=${1:-.gpu}
LOG=${OUT:-/tmp/phaser_out}
mkdir -p "$LOG"
declare -A RC
step() { # name, limit, command...
  local name=$1 limit=$2; shift 2
  echo "=== $name ==="
  timeout "$limit" "$@" 2>&1 | tee "$LOG/$name.log"
  RC[$name]=${PIPESTATUS[0]}
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$LOG/nvidia_smi.log"
step gpu_tma 240 "$BIN/gpu_tma"
step bench_stream 240 "$BIN/bench_stream"
step torch_copy 120 python3 bench/torch_copy.py
if [ "${SANITIZE:-0}" = 1 ]; then
  step sanitize_memcheck 240 compute-sanitizer --tool memcheck "$BIN/gpu_tma" --quick
  step sanitize_synccheck 240 compute-sanitizer --tool synccheck "$BIN/gpu_tma" --quick
fi
echo
echo "=== summary (exit codes; 0 = passed, 124 = timed out) ==="
for k in "${!RC[@]}"; do echo "$k: ${RC[$k]}"; done
echo "--- gpu_tma ---";      sed -n '/^| example/,$p' "$LOG/gpu_tma.log"
echo "--- bench_stream ---"; sed -n '/^| variant/,$p' "$LOG/bench_stream.log"
echo "--- torch ---";        sed -n '/^| variant/,$p' "$LOG/torch_copy.log"
