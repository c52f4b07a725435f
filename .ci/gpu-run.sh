#!/usr/bin/env bash
# Runs on the GPU machine: every GPU test, the gallery on the GPU, and the benchmarks.
# Logs go to $OUT (when set) and ./logs; one summary table is printed last.
cd "$(dirname "$0")"
LOGS=${OUT:-./logs}; mkdir -p "$LOGS"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null | tee "$LOGS/device.txt"
declare -a ROWS
step() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  echo "=== $name: $*"
  timeout 300 "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  local dt=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  tail -n 40 "$LOGS/$name.log"
  local verdict=pass; [ $rc -ne 0 ] && verdict="FAIL(rc=$rc)"
  local tests=$(grep -E "^test result:" "$LOGS/$name.log" | tail -1 | sed 's/test result: //')
  ROWS+=("$(printf '%-28s | %-12s | %7ss | %s' "$name" "$verdict" "$dt" "$tests")")
}
step gallery_quick ./bin/phaser run --backend gpu --quick
step gallery_full ./bin/phaser run --backend gpu --full
step sim_vs_gpu ./bin/phaser diff
for t in ./bin/test_*; do step "$(basename "$t")" "$t" --include-ignored --test-threads=1; done
# Benchmarks (BENCH_ARGS, e.g. "--sweep", goes to each).
for b in ./bin/bench_*; do [ -x "$b" ] && step "$(basename "$b")" "$b" ${BENCH_ARGS:-}; done
for p in ./bench/*.py; do [ -f "$p" ] && step "$(basename "$p" .py)" python3 "$p"; done
if [ "${SANITIZE:-0}" = 1 ]; then
  step sanitize_memcheck compute-sanitizer --tool memcheck ./bin/phaser run --backend gpu --quick
  step sanitize_synccheck compute-sanitizer --tool synccheck ./bin/phaser run --backend gpu --quick
fi
echo
echo "==================== GPU summary ($(date -u +%FT%TZ), $(head -1 "$LOGS/device.txt")) ===================="
printf '%-28s | %-12s | %8s | %s\n' step result time "tests"
for r in "${ROWS[@]}"; do echo "$r"; done
