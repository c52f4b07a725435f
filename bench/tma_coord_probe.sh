#!/usr/bin/env bash
# Evidence for codegen's TMA_INNER_COORD_ALIGN (bench/gpu-runs.md): builds bench/tma_coord_probe.cu
# with nvcc and runs every configuration of the H200 table in its own process (a fault poisons
# the context). The expectation is the rule: a tile-mode tensor load faults exactly when its
# innermost coordinate x element size is not a multiple of 16 bytes; outer coordinates,
# negative and out-of-bounds boxes do not matter. Prints a table; exits non-zero when any
# verdict differs from the rule. nvcc is looked for as bench/cp_async_mbarrier.sh does.
set -uo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || { [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc; } || true
if [ -z "$NVCC" ]; then
  NVCC=$(python3 -c 'import nvidia, os
for p in nvidia.__path__:
    c = os.path.join(p, "cu13", "bin", "nvcc")
    if os.path.isfile(c): print(c); break' 2>/dev/null || true)
fi
[ -n "$NVCC" ] && [ -x "$NVCC" ] || { echo "tma_coord_probe.sh: nvcc not found (set NVCC=...)" >&2; exit 1; }
echo "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
"$NVCC" -O2 -gencode=arch=compute_90a,code=sm_90a -o tma_coord_probe tma_coord_probe.cu -lcuda || exit 1

# elem_bytes W H box_w box_h x y l2
CONFIGS=(
  "4 48 40 20 8 30 35 0" "4 48 40 20 8 30 35 2" "4 48 40 20 8 0 0 0" "4 48 40 20 8 0 0 2"
  "4 48 40 20 8 32 0 0" "4 48 40 20 8 32 35 0" "4 48 40 20 8 28 35 0" "4 48 40 20 8 0 35 0"
  "4 48 40 20 8 -4 0 0" "4 48 40 20 8 -3 0 0" "4 48 40 20 8 -3 -3 0" "4 48 40 20 8 4 -3 0"
  "4 48 40 20 8 29 0 0" "4 48 40 20 8 31 0 0" "4 48 40 20 8 1 0 0" "4 48 40 20 8 1 35 0"
  "4 48 40 16 8 4 0 0" "4 48 40 16 8 2 0 0" "4 48 40 16 8 1 0 0" "4 48 40 16 8 30 0 0"
  "2 40 10 8 4 0 0 0" "2 40 10 8 4 0 -3 0" "2 40 10 8 4 -3 -3 0" "2 40 10 8 4 35 0 0"
  "2 40 10 8 4 3 0 0" "2 40 10 8 4 -8 -3 0" "2 40 10 8 4 32 0 0" "2 40 10 16 4 32 8 0"
)
bad=0
printf '%-5s %-7s %-8s %-10s %-4s %-8s %-28s %s\n' elem tensor box coords l2 expect got verdict
for c in "${CONFIGS[@]}"; do
  read -r elem w h bw bh x y l2 <<<"$c"
  if (( (x * elem) % 16 == 0 )); then expect=OK; else expect=FAULT; fi
  got=$(timeout 30 ./tma_coord_probe "$elem" "$w" "$h" "$bw" "$bh" "$x" "$y" "$l2" 2>&1 | head -1)
  [ -n "$got" ] || got="(no output)"
  case "$got" in OK) seen=OK ;; CUDA_ERROR_*|cuda*) seen=FAULT ;; *) seen="?" ;; esac
  verdict=as-expected
  [ "$seen" = "$expect" ] || { verdict=DIFFERS; bad=1; }
  ty=u32; [ "$elem" = 2 ] && ty=u16
  printf '%-5s %-7s %-8s %-10s %-4s %-8s %-28s %s\n' "$ty" "${w}x$h" "[$bw,$bh]" "($x,$y)" "$l2" "$expect" "$got" "$verdict"
done
if [ $bad -ne 0 ]; then
  echo "tma_coord_probe: some verdicts differ from the rule (inner coordinate x element size % 16 == 0)"
  exit 1
fi
echo "tma_coord_probe: every verdict follows the rule"
